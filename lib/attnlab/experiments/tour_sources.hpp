// The sources of the tour's claims in the tour's language.
#pragma once

#include "attnlab/core/enums.hpp"

#include <string>

namespace attnlab {

// SOURCE as the claims table shows it in LANG: as written for English; for Chinese, with its
// English phrases said in Chinese and the articles' titles in 《》.
std::string source_in(Lang lang, const std::string& source);

}  // namespace attnlab

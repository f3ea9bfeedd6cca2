// The articles' statements about models and papers, each with the source that settles it.
#pragma once

#include "attnlab/core/tour_report.hpp"

#include <string>
#include <vector>

namespace attnlab {

// The facts of one tour section, in the given language.
std::vector<TourFact> article_facts(const std::string& section, Lang lang);

}  // namespace attnlab

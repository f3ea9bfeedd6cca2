// Where position enters the attention block: the one choice `attend`, `permute-test` and the
// tour share. Light enough for the app to include.
#pragma once

#include <array>
#include <string_view>
#include <utility>

namespace attnlab {

enum class PeKind { none, sinusoidal, rope, alibi };
constexpr auto enum_names(PeKind)
{
    return std::array{std::pair{PeKind::none, std::string_view("none")},
                      std::pair{PeKind::sinusoidal, std::string_view("sinusoidal")},
                      std::pair{PeKind::rope, std::string_view("rope")},
                      std::pair{PeKind::alibi, std::string_view("alibi")}};
}

}  // namespace attnlab

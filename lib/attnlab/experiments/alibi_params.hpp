// `alibi`'s parameters and entry point, light enough for the app to include.
#pragma once

#include <string>
#include <vector>

#include "attnlab/core/report.hpp"

namespace attnlab {

// paper:  the paper's reference implementation (get_slopes): for a power of two H,
//         m_h = 2^(-8(h+1)/H); otherwise the slopes of the nearest lower power of two c,
//         followed by every other slope of 2c (2^(-4(2k+1)/c), k = 0, 1, ...). BLOOM's
//         build_alibi_tensor computes the same.
// simple: the articles' formula m_h = 2^(-8(h+1)/H) for every H.
enum class SlopeRule { paper, simple };
constexpr auto enum_names(SlopeRule)
{
    return std::array{std::pair{SlopeRule::paper, std::string_view("paper")},
                      std::pair{SlopeRule::simple, std::string_view("simple")}};
}

// symmetric: -m |i - j|, both directions (encoder-style, the articles).
// causal:    -m (i - j) for j <= i, and the causal mask (-inf) above the diagonal (the paper).
enum class AlibiVariant { symmetric, causal };
constexpr auto enum_names(AlibiVariant)
{
    return std::array{std::pair{AlibiVariant::symmetric, std::string_view("symmetric")},
                      std::pair{AlibiVariant::causal, std::string_view("causal")}};
}

struct AlibiParams {
    long heads = 4;   // H
    long len = 8;     // L
    long dim = 8;     // d of the random q and k
    SlopeRule slopes = SlopeRule::paper;
    AlibiVariant variant = AlibiVariant::symmetric;
};

Report run_alibi(const AlibiParams& p, const RunContext& ctx);
// The tensors it declares, with their axes.
std::vector<TensorInfo> alibi_tensor_infos();
// The arguments that reproduce a run with these parameters ("alibi", then the options that
// differ from the defaults).
std::vector<std::string> alibi_command(const AlibiParams& p);

}  // namespace attnlab

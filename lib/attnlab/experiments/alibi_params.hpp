// `alibi`'s parameters and entry point, light enough for the app to include.
#pragma once

#include <string>
#include <vector>

#include "attnlab/core/report.hpp"

namespace attnlab {

// Two rules, which agree when H is a power of two:
// reference-code: the paper's reference implementation (get_slopes in
//         ofirpress/attention_with_linear_biases): for a power of two H, m_h = 2^(-8(h+1)/H);
//         otherwise the slopes of the nearest lower power of two c, followed by every other
//         slope of 2c (2^(-4(2k+1)/c), k = 0, 1, ...). BLOOM's build_alibi_tensor computes the
//         same.
// paper-text: the paper's text (Press et al. 2022, §3: "the geometric sequence that starts at
//         2^(-8/n) and uses that same value as its ratio"), which is the articles' formula
//         m_h = 2^(-8(h+1)/H), for every H.
// The spellings before these names, paper and simple, are accepted with a note.
enum class SlopeRule { reference_code, paper_text };
constexpr auto enum_names(SlopeRule)
{
    return std::array{std::pair{SlopeRule::reference_code, std::string_view("reference-code")},
                      std::pair{SlopeRule::paper_text, std::string_view("paper-text")}};
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
    SlopeRule slopes = SlopeRule::reference_code;
    AlibiVariant variant = AlibiVariant::symmetric;
};

Report run_alibi(const AlibiParams& p, const RunContext& ctx);
// The tensors it declares, with their axes.
std::vector<TensorInfo> alibi_tensor_infos();
// The arguments that reproduce a run with these parameters ("alibi", then the options that
// differ from the defaults).
std::vector<std::string> alibi_command(const AlibiParams& p);

}  // namespace attnlab

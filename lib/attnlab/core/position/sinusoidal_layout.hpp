// The two layouts of the sinusoidal table and the two ways its frequencies are computed: the
// conventions a port must match. Light enough for the params headers to include.
#pragma once

#include <array>
#include <string_view>
#include <utility>

namespace attnlab {

// interleaved: the paper's sin/cos alternation, w_i = base^(-2i/D).
// concat:      [sin | cos] halves with w_i = base^(-i/(P-1)), as tensor2tensor's
//              get_timing_signal_1d and fairseq's SinusoidalPositionalEmbedding build them.
enum class PeLayout { interleaved, concat };
constexpr auto enum_names(PeLayout)
{
    return std::array{std::pair{PeLayout::interleaved, std::string_view("interleaved")},
                      std::pair{PeLayout::concat, std::string_view("concat")}};
}

// exp-log: w_i = exp(2i * (-ln(base) / D)), as the Annotated Transformer and the articles.
// pow:     w_i = 1 / base^(2i / D), as most RoPE code computes its frequencies.
enum class FreqMethod { exp_log, pow };
constexpr auto enum_names(FreqMethod)
{
    return std::array{std::pair{FreqMethod::exp_log, std::string_view("exp-log")},
                      std::pair{FreqMethod::pow, std::string_view("pow")}};
}

}  // namespace attnlab

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

// The frequencies, independently of the layout (each layout's own is its default):
//   paper: w_i = base^(-2i/D), the paper's §3.5 (with D odd, still 2i/D);
//   t2t:   w_i = base^(-i/max(P-1, 1)), tensor2tensor's get_timing_signal_1d and fairseq's
//          SinusoidalPositionalEmbedding (P = floor(D/2) pairs).
// With min_timescale m (tensor2tensor's; 1 elsewhere) the rule is tensor2tensor's code,
// w_i = m (base/m)^(-e_i) for the exponent e_i above: its code multiplies by m.
enum class PeFrequencies { paper, t2t };
constexpr auto enum_names(PeFrequencies)
{
    return std::array{std::pair{PeFrequencies::paper, std::string_view("paper")},
                      std::pair{PeFrequencies::t2t, std::string_view("t2t")}};
}
constexpr PeFrequencies default_frequencies(PeLayout layout) { return layout == PeLayout::interleaved ? PeFrequencies::paper : PeFrequencies::t2t; }

struct PeFreqRule {
    PeFrequencies frequencies = PeFrequencies::paper;
    double min_timescale = 1.0;
};

// exp-log: w_i = exp(2i * (-ln(base) / D)), as the Annotated Transformer and the articles.
// pow:     w_i = 1 / base^(2i / D), as most RoPE code computes its frequencies.
enum class FreqMethod { exp_log, pow };
constexpr auto enum_names(FreqMethod)
{
    return std::array{std::pair{FreqMethod::exp_log, std::string_view("exp-log")},
                      std::pair{FreqMethod::pow, std::string_view("pow")}};
}

}  // namespace attnlab

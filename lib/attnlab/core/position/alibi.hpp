// ALiBi's slopes and biases (Press, Smith, Lewis, ICLR 2022): head h adds -m_h * distance to
// its attention scores; nothing is added to the embeddings. The attention kernel computes the
// same bias tile by tile from the slopes (attention_tiled.cpp).
// Sizes: H heads, L queries, S keys.
#pragma once

#include "attnlab/core/xt.hpp"

#include <array>
#include <string_view>
#include <utility>
#include <vector>

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

// Whether the rule gives the geometric sequence m_h = 2^(-8(h+1)/H): paper-text always,
// reference-code when H is a power of two.
bool alibi_slopes_geometric(long heads, SlopeRule rule);

// slopes: [H], in float64 (the reference computes them in Python floats).
std::vector<double> alibi_slopes(long heads, SlopeRule rule);
// The paper's text (§3) taken literally: the geometric sequence that starts at 2^(-8/H) and
// has that same ratio, as a running product.
std::vector<double> paper_text_slopes(long heads);

// bias: [H, L, S] for query i at position first_query + i and key j at position j (a
// decoder step after cached keys puts its queries past them).
template <class T>
Ten3<T> alibi_bias(const std::vector<double>& slopes, long queries, long keys, AlibiVariant v, long first_query = 0);
// The symmetric bias of self-attention between tokens at given positions (any integers):
// bias[h][i][j] = -m_h |positions[i] - positions[j]|.
template <class T>
Ten3<T> alibi_bias_at(const std::vector<double>& slopes, const std::vector<long>& positions);

// BLOOM's shortcut: bias m_h * j that depends on the key alone, with the causal mask.
template <class T>
Ten3<T> alibi_bias_key_only(const std::vector<double>& slopes, long len);

}  // namespace attnlab

// ALiBi, attention with linear biases (Press, Smith, Lewis, ICLR 2022): nothing is added to
// the embeddings; head h adds -m_h * distance to its attention scores.
// Sizes: H heads, L positions, d per-head dimension.
#pragma once

#include "attnlab/report.hpp"

#include <vector>

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

// slopes: [H], in float64 (the reference computes them in Python floats).
std::vector<double> alibi_slopes(long heads, SlopeRule rule);

// bias: [H, L, S] with the query i and key j; queries and keys both start at position 0.
template <class T>
Ten3<T> alibi_bias(const std::vector<double>& slopes, long queries, long keys, AlibiVariant v);

// BLOOM's shortcut: bias m_h * j that depends on the key alone, with the causal mask.
template <class T>
Ten3<T> alibi_bias_key_only(const std::vector<double>& slopes, long len);

// --- measurements behind the checks ---
double max_abs_diagonal(const Ten3<double>& bias);
double max_finite(const Ten3<double>& bias);
// max over heads and diagonals (i - j fixed) of the spread of the finite entries.
double max_diagonal_spread(const Ten3<double>& bias);
// Number of (head, query, distance) where the weight does not fall strictly with distance,
// for weights [H, L, L] computed from equal raw scores. Only weights that are still normal
// numbers (>= smallest_normal of the dtype) are held to it: subnormals lose their bits.
long decay_violations(const Ten3<double>& weights, AlibiVariant v, double smallest_normal);

struct AlibiParams {
    long heads = 4;   // H
    long len = 8;     // L
    long dim = 8;     // d of the random q and k
    SlopeRule slopes = SlopeRule::paper;
    AlibiVariant variant = AlibiVariant::symmetric;
};

Report run_alibi(const AlibiParams& p, const RunContext& ctx);

}  // namespace attnlab

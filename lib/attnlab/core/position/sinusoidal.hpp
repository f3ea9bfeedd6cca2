// Sinusoidal positional encoding, Attention Is All You Need (Vaswani et al. 2017) §3.5:
//   PE(pos, 2i) = sin(pos * w_i),  PE(pos, 2i+1) = cos(pos * w_i),  w_i = base^(-2i/D).
// Sizes: L positions, D encoding dimension (even), P = D/2 frequencies.
#pragma once

#include "attnlab/core/enums.hpp"
#include "attnlab/core/position/angles.hpp"
#include "attnlab/core/position/sinusoidal_layout.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/core/xt.hpp"

#include <cstddef>
#include <vector>

namespace attnlab {

// freq: [P], P = floor(D/2), by the rule (sinusoidal_layout.hpp); the layout's own rule
// (interleaved: paper, concat: t2t) where none is given.
template <class T>
Vec<T> pe_frequencies(long dim, double base, const PeFreqRule& rule, FreqMethod method);
template <class T>
Vec<T> pe_frequencies(long dim, double base, PeLayout layout, FreqMethod method)
{
    return pe_frequencies<T>(dim, base, PeFreqRule{default_frequencies(layout), 1.0}, method);
}

// The same frequencies in long double, the reference the two methods are measured against.
std::vector<long double> pe_frequencies_reference(long dim, double base, const PeFreqRule& rule);
inline std::vector<long double> pe_frequencies_reference(long dim, double base, PeLayout layout)
{
    return pe_frequencies_reference(dim, base, PeFreqRule{default_frequencies(layout), 1.0});
}

// pe: [L, D] from freq [P].
template <class T>
Mat<T> sinusoidal_table(long len, const Vec<T>& freq, PeLayout layout);
// The same rows at given positions (any integers): row t is PE(positions[t]).
template <class T>
Mat<T> sinusoidal_rows(const std::vector<long>& positions, const Vec<T>& freq, PeLayout layout);

// The table of the other layout, its dimensions reordered into this layout's order.
template <class T>
Mat<T> other_layout_reordered(long len, long dim, double base, PeLayout layout, FreqMethod m);

// --- measurements behind the checks: each reads any [L, D] table ---

// max |PE(0) - expected row 0| where row 0 is [0,1,0,1,...] (interleaved) or [0..0,1..1].
double row0_error(const Tensor& pe, PeLayout layout);

// max over p of |PE(p+k) - M(k) PE(p)|, M(k) block-diagonal rotations by k*w_i (float64).
double shift_error(const Tensor& pe, const Tensor& freq, PeLayout layout, long k);

// Over all pairs (p, p+k) with 1 <= k <= max_offset: the smallest |PE(p) - PE(p+k)| (inf if
// there is no pair), and the largest spread over p of PE(p).PE(p+k) for one k.
double min_pair_distance(const Tensor& pe, std::size_t max_offset);
double max_dot_spread(const Tensor& pe, std::size_t max_offset);
// The most max_dot_spread can measure on a correct table of `len` rows computed in dtype
// from freq: rounding alone, for the claim "PE(p).PE(p+k) depends on k alone".
double dot_spread_bound(DType dtype, long len, const Tensor& freq);

// The largest offset whose pairs fit a fixed work budget (about 2^30 multiply-adds, a second
// or so): every pair for the usual sizes, the nearest offsets only for very long tables.
std::size_t pair_offset_budget(long len, long dim);

// max over i of w_{i+1} / w_i (below 1 when the frequencies fall strictly).
double max_freq_ratio(const Tensor& freq);

// max over i of |w_i - ref_i| / ref_i.
template <class T>
double max_rel_error(const Vec<T>& freq, const std::vector<long double>& ref);

}  // namespace attnlab

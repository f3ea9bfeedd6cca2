// Rotary position embedding, RoFormer (Su et al. 2021): each 2-D pair of a query or key is
// rotated by m * theta_i at position m, theta_i = base^(-2i/r); the frequencies with the
// context-extension methods of Hugging Face transformers and llama.cpp, the cos/sin cache,
// the rotation and its inverse. Sizes: L positions, d per-head dimension, r rotary dimensions
// (<= d), P = r/2 pairs.
#pragma once

#include "attnlab/core/position/angles.hpp"
#include "attnlab/core/position/rope_scaling.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/core/xt.hpp"

#include <utility>
#include <vector>

namespace attnlab {

struct RopeFrequencies {
    std::vector<double> theta;           // [P] as used, after scaling
    std::vector<double> theta_unscaled;  // [P]
    double attention_factor = 1.0;       // HF multiplies cos and sin by it
    double base_used = 0.0;              // after ntk/dynamic
};

// theta for r rotary dimensions at sequence length L (dynamic needs L). Computed in T as
// PyTorch computes them in float32, returned widened to double.
template <class T>
RopeFrequencies rope_frequencies(long rotary_dim, double base, const RopeScalingParams& s, long len);

// The same frequencies in long double, for the precision check.
std::vector<long double> rope_frequencies_exact(long rotary_dim, double base, const RopeScalingParams& s,
                                                long len);

// cos and sin of m * theta_i: [L, P] each, angles rounded in T.
template <class T>
struct RopeCache {
    Mat<T> cos;
    Mat<T> sin;
};
template <class T>
RopeCache<T> rope_cache(long len, const std::vector<double>& theta);
// The same at given positions: row t holds the angles of position positions[t].
// The positions in a --input positions file: whole numbers within +-2^24 (InputError otherwise).
std::vector<long> whole_positions(const Tensor& given);

template <class T>
RopeCache<T> rope_cache_at(const std::vector<long>& positions, const std::vector<double>& theta);

// The dimensions (a, b) of pair i among P pairs: (2i, 2i+1) interleaved, (i, i+P) half.
inline std::pair<long, long> rope_pair(RopeStyle style, long i, long P)
{
    return style == RopeStyle::interleaved ? std::pair{2 * i, 2 * i + 1} : std::pair{i, i + P};
}

// forward rotates by +m*theta; inverse by -m*theta: the inverse of a rotation is its
// transpose, which is the same matrix with the sine's sign flipped.
enum class Direction { forward, inverse };

// Rotates one vector x [d] at the position whose cos/sin rows are given ([P] each); the
// dimensions from r on pass through.
template <class T>
void rope_rotate(const T* x, T* out, long d, long r, const T* cos_m, const T* sin_m, RopeStyle style,
                 Direction dir);

// x [B, H, L, d] rotated position by position: row m sits at position first_position + m
// (a decoder step after cached keys starts past them, as Hugging Face's position_ids).
template <class T>
Ten4<T> rope_apply(const Ten4<T>& x, const RopeCache<T>& cache, long rotary_dim, RopeStyle style,
                   Direction dir = Direction::forward, long first_position = 0);

// Dimension order that turns a half-style vector into an interleaved one: perm[2i] = i,
// perm[2i+1] = i + P (dimensions from r on map to themselves).
std::vector<long> half_to_interleaved(long d, long r);

// RoFormer §3.4.3: the relative upper bound (1/P) sum_{j=1..P} |S_j|,
// S_j = sum_{k<j} exp(i * distance * theta_k), for distance 0..n-1.
std::vector<double> rope_decay(const std::vector<double>& theta, long n);

}  // namespace attnlab

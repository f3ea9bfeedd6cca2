// What rope.cpp (the compute, the descriptor) and rope_checks.cpp (the checks and notes) share.
#pragma once

#include "attnlab/core/measure.hpp"
#include "attnlab/experiments/precision.hpp"
#include "attnlab/experiments/rope.hpp"

#include <algorithm>
#include <vector>

namespace attnlab::rope_detail {

inline long rotary(const RopeParams& p) { return p.rotary_dim.value_or(p.dim); }

// The sequence length the frequencies are made for: Hugging Face's dynamic_rope_update takes
// max(position_ids) + 1, so with --positions that (unless --dynamic-length len), and --len
// otherwise (positions 0..len-1).
inline long scaled_len(const RopeParams& p)
{
    if (p.positions.empty() || p.dynamic_length == DynamicLength::len) return p.len;
    return *std::max_element(p.positions.begin(), p.positions.end()) + 1;
}

template <class T>
RopeFrequencies freq_of(const RopeParams& p)
{
    return rope_frequencies<T>(rotary(p), p.base, p.scaling, scaled_len(p));
}

// x [d] rotated to position m.
template <class T>
std::vector<T> rotated_at(const RopeParams& p, const RopeCache<T>& cache, const std::vector<T>& x, long m)
{
    const auto P = cache.cos.shape(1);
    std::vector<T> out(x.size());
    rope_rotate(x.data(), out.data(), p.dim, rotary(p), cache.cos.data() + m * P, cache.sin.data() + m * P, p.style,
                Direction::forward);
    return out;
}

template <class T>
double dot(const std::vector<T>& a, const std::vector<T>& b)
{
    double s = 0.0;
    for (std::size_t j = 0; j < a.size(); ++j) s += static_cast<double>(a[j]) * static_cast<double>(b[j]);
    return s;
}

// The first token's q and k (batch 0, head 0, position 0), as a vector of T.
// The positions the KV-compression fold is measured over: up to kFoldPositions of the
// sampled ones, evenly spread (its cost is 3 n^2 d).
constexpr std::size_t kFoldPositions = 256;
inline std::vector<long> fold_positions(long len)
{
    const std::vector<long> all = sampled_positions(len);
    const std::size_t n = std::min(all.size(), kFoldPositions);
    std::vector<long> out(n);
    for (std::size_t i = 0; i < n; ++i) out[i] = all[i * all.size() / n];
    return out;
}

// The frequencies the compute used (kept in the run), for the checks.
inline const std::vector<double>& theta_of(const Run& run) { return resolved_as<RopeFrequencies>(run).theta; }

template <class T>
std::vector<T> first_vector(const Tensor& x)
{
    const std::size_t d = x.shape.back();
    std::vector<T> v(d);
    for (std::size_t j = 0; j < d; ++j) v[j] = static_cast<T>(x.values[j]);
    return v;
}

// Angle precision: m * theta_i rounded in T against the exact product in long double, the
// worst of each position.
template <class T>
Vec<double> angle_errors(const RopeParams& p, const std::vector<double>& theta, AngleWorst* worst = nullptr)
{
    return angle_errors_by_position<T>(p.len, theta, rope_frequencies_exact(rotary(p), p.base, p.scaling, scaled_len(p)), worst);
}

// The positions a run rotated its tokens by (its "positions" tensor).
inline std::vector<long> positions_of(const Run& run)
{
    std::vector<long> out;
    for (double m : run.at("positions").values) out.push_back(static_cast<long>(m));
    return out;
}

// The checks and notes that judge a run computed in T.
template <class T>
std::vector<CheckDef<RopeParams>> rope_checks();
template <class T>
std::vector<NoteFn<RopeParams>> rope_notes();

}  // namespace attnlab::rope_detail

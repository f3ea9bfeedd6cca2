// ALiBi, attention with linear biases (Press, Smith, Lewis, ICLR 2022): nothing is added to
// the embeddings; head h adds -m_h * distance to its attention scores.
// Sizes: H heads, L positions, d per-head dimension.
#pragma once

#include "attnlab/core/position/alibi.hpp"
#include "attnlab/core/xt.hpp"
#include "attnlab/experiments/alibi_params.hpp"
#include "attnlab/experiments/experiment.hpp"

#include <vector>

namespace attnlab {

// max_h |a_h - b_h| / |b_h| (inf when the lengths differ).
double max_rel_gap(const std::vector<double>& a, const std::vector<double>& b);

// --- measurements behind the checks: each reads any [H, L, S] tensor ---
double max_abs_diagonal(const Tensor& bias);
// The largest finite entry (-inf when there is none); NaN if any entry is NaN.
double max_finite(const Tensor& bias);
// Number of (head, query, distance) where the weight does not fall strictly with distance,
// for weights [H, L, L] computed from equal raw scores. Only weights that are still normal
// numbers (>= smallest_normal of the dtype) are held to it: subnormals lose their bits.
// Heads whose one-step ratio gap 1 - exp(-m_h) is at most `resolution` are not counted: their
// neighbouring weights may round to one value (empty gaps: every head counts).
long decay_violations(const Tensor& weights, AlibiVariant v, double smallest_normal, const std::vector<double>& step_gaps = {},
                      double resolution = 0.0);

const Experiment<AlibiParams>& alibi_experiment();

}  // namespace attnlab

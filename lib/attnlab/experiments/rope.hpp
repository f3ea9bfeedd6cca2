// Rotary position embedding, RoFormer (Su et al. 2021): each 2-D pair of a query or key is
// rotated by m * theta_i at position m, theta_i = base^(-2i/r). Then q_m . k_n depends on
// m - n alone, which this file proves numerically on any input.
// Sizes: B batch, H heads, L positions, d per-head dimension, r rotary dimensions (<= d),
// P = r/2 pairs.
#pragma once

#include "attnlab/core/position/rope.hpp"
#include "attnlab/core/xt.hpp"
#include "attnlab/experiments/experiment.hpp"
#include "attnlab/experiments/rope_params.hpp"

#include <optional>
#include <vector>

namespace attnlab {

const Experiment<RopeParams>& rope_experiment();

}  // namespace attnlab

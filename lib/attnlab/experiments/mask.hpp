// `mask`: causal, padding and sliding-window masks in PyTorch's conventions, with their checks.
// Sizes: B batch, L queries, S keys.
#pragma once

#include "attnlab/core/attention.hpp"
#include "attnlab/core/position/masks.hpp"
#include "attnlab/experiments/experiment.hpp"
#include "attnlab/experiments/mask_params.hpp"

namespace attnlab {

// The spec the parameters describe; throws InputError for combinations that make no sense.
MaskSpec mask_spec(const MaskParams& p);
// "-inf", "-1e9" or any number; refuses NaN and +inf.
double parse_fill(const std::string& text);

const Experiment<MaskParams>& mask_experiment();

}  // namespace attnlab

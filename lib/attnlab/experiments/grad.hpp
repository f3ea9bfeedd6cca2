// `grad`: the backward pass of the attention block. It takes every option of `attend` and
// draws the same x and weights, so `attend --save` and `grad --save` hold the same forward
// tensors; the upstream gradient d_out [B, L, E] (dloss/dout_merged) is drawn from the seed or
// given with --input d_out=FILE. Each gradient d_T has the shape and axes of T.
#pragma once

#include "attnlab/experiments/attend_params.hpp"
#include "attnlab/experiments/experiment.hpp"

namespace attnlab {

const Experiment<AttendParams>& grad_experiment();
Report run_grad(const AttendParams& p, const RunContext& ctx);

}  // namespace attnlab

// `attend`: the whole attention block, from embeddings to output, with its checks.
#pragma once

#include "attnlab/experiments/attend_params.hpp"
#include "attnlab/model/block.hpp"
#include "attnlab/experiments/experiment.hpp"

namespace attnlab {

const Experiment<AttendParams>& attend_experiment();

}  // namespace attnlab

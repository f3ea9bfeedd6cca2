// `pe`: sinusoidal positional encoding as an experiment (the formulas are in
// core/position/sinusoidal.hpp).
#pragma once

#include "attnlab/core/position/sinusoidal.hpp"
#include "attnlab/core/xt.hpp"
#include "attnlab/experiments/experiment.hpp"
#include "attnlab/experiments/pe_params.hpp"

#include <vector>

namespace attnlab {

// Throws InputError for sizes the formula cannot take (odd D, L > max-len, ...).
void validate(const PeParams& p);

const Experiment<PeParams>& pe_experiment();

}  // namespace attnlab

// The kernel benchmark as an experiment: for tests that run its checks on doctored figures.
#pragma once

#include "attnlab/experiments/bench_params.hpp"
#include "attnlab/experiments/experiment.hpp"

namespace attnlab {

const Experiment<BenchParams>& bench_experiment();

}  // namespace attnlab

// Checks shared by the experiments whose figures depend on the dtype's precision.
#pragma once

#include "attnlab/experiments/experiment.hpp"

#include <optional>

namespace attnlab {

// angle_error [pos] (the largest |angle in the dtype - exact angle| of each position, in
// radians): how it grows with position, the last eighth of the positions against the first
// (position 0 left out: its angle is exactly 0). A demonstration: the usual tables show it.
std::optional<Check> angle_error_growth(const Tensor& angle_error, const CheckEnv& env);

}  // namespace attnlab

// Holding a learner's tensor against the run's: the comparison itself, independent of any
// experiment (shapes, max |diff|, elements outside rtol/atol, the worst element, where the
// two start to differ along the leading axis).
#pragma once

#include "attnlab/core/report.hpp"

namespace attnlab {

// Fills the comparison fields of c (not properties or diagnosis). A shape mismatch is a
// failed comparison, never an error.
void compare_tensors(const Tensor& expected, const Tensor& got, double rtol, double atol, Comparison& c);

// Whether got equals expected within rtol/atol everywhere (same shape), and the max |diff|.
bool tensors_match(const Tensor& expected, const Tensor& got, double rtol, double atol, double* max_diff);

}  // namespace attnlab

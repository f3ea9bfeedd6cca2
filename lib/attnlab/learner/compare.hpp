// Holding a learner's tensor against the run's: the comparison itself, independent of any
// experiment (shapes, max |diff|, the elements outside the tolerance of core/error_model.hpp,
// the worst element, the range along every axis where they differ, non-finite values, and
// the kinds of difference a layout or a mask type explains).
#pragma once

#include "attnlab/core/error_model.hpp"
#include "attnlab/core/report.hpp"

namespace attnlab {

// Fills the comparison fields of c (not properties, diagnosis or notes). A shape mismatch is
// a failed comparison, never an error.
void compare_tensors(const Tensor& expected, const Tensor& got, const Tolerance& tol, Comparison& c);

// Whether got equals expected within the tolerance everywhere (same shape), and the max |diff|.
bool tensors_match(const Tensor& expected, const Tensor& got, const Tolerance& tol, double* max_diff);

// Whether a catalogued mistake leads, when it does not match: the answer lies at most half as
// far from the mistake as from the reference, in the count of non-finite disagreements and in
// the root of the summed squares over the finite elements alike (so the mistake explains at
// least three quarters of the squared difference), and nearer in one of them. An all-zero
// starter is as far from "mask after the softmax" as from the reference: no lead.
bool explains_most(const Tensor& mistake, const Tensor& expected, const Tensor& got);

// The kinds of difference that explain a failed comparison without a wrong value: a shape
// that differs by size-1 axes, the right values under an axis permutation (transposed),
// the right values in other places (permuted), a 0/1 mask given for an additive one (or the
// reverse), non-finite values where the reference has numbers. Adds to c.kinds and c.notes.
void detect_kinds(const Tensor& expected, const Tensor& got, const Tolerance& tol, Lang lang, Comparison& c);

}  // namespace attnlab

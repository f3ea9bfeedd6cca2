// The one error model behind every tolerance that judges a tensor. docs/check.md, "The error model"
// states it for readers; each check's own derivation sits beside the check and uses these
// names.
//
// u(T), the unit roundoff of a dtype: the largest relative error of rounding a real number
// to T (half the spacing of T's numbers at 1): float64 2^-53, float32 2^-24, float16 2^-11,
// bfloat16 2^-8.
//
// First-order bounds (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed.,
// §2.2 and §3.1), used by the checks:
//   - one rounding:                          u |x|
//   - a sum or dot product of n terms:       n u sum |terms|
//   - a rotation by an angle computed in T:  u |angle| (per rounding that made the angle)
//
// A learner's tensor G (--against) is judged element by element against the run's tensor R:
//
//   |G_k - R_k| <= u(S) |R_k| + kReferenceFactor * max(r_C, u(C) M) + r_R + s(S)
//
//   S    the storage precision: the coarser of the file's dtype and the run's (a float16
//        file is held to float16 rounding of the reference values, and no more);
//   C    the compute precision the learner is allowed: the run's dtype;
//   r_C  the error a plain reference computed in C makes on this same input, measured:
//        max |ref_C - ref_float64| (the rule flash-attention's tests use), over the tensor's
//        ordinary elements;
//   M    the largest ordinary |ref_float64|; u(C) M is the floor of r_C (a reference that
//        happens to round exactly does not make the tolerance zero);
//   r_R  the run's own error, max |R - ref_float64| (0 when C is the run's dtype: it is r_C);
//   s(S) half the smallest subnormal spacing of S (float16: 2^-25), the absolute error of
//        rounding a value in S's subnormal range.
// kReferenceFactor = 2: a learner's computation and ours are each within r_C of the exact
// value, so two correct answers are within 2 r_C of each other.
//
// Ordinary elements are the finite ones below kFillMagnitude: a mask's fill (-1e9) is a
// constant rounded once, not arithmetic, so it is judged relative to itself (u(S) + 2 u(C))
// and does not set the tolerance of the scores beside it.
//
// The floor: no tolerance may reach kMaxToleranceFraction of M. A comparison whose tolerance
// would is refused (an input error naming the figures): two correct answers in that dtype
// differ by as much as the values themselves, so no verdict would mean anything.
#pragma once

#include "attnlab/core/enums.hpp"
#include "attnlab/core/tensor.hpp"

#include <optional>
#include <string>

namespace attnlab {

double unit_roundoff(DType dtype);
// Half the smallest subnormal spacing: the absolute rounding error near 0.
double subnormal_half_spacing(DType dtype);
// The relative error of storing the whole number n in dtype: 0 while T holds it exactly
// (|n| <= 2^p for p significand bits: 2048 in float16, 256 in bfloat16), else u(T).
double whole_number_rounding(DType dtype, double n);
// The relative error of an angle m * w computed in dtype from a w already in it, for
// positions m up to max_position: the product rounded (u), and m itself where the dtype
// cannot hold it.
double angle_rel_error(DType dtype, double max_position);
// The coarser (larger unit roundoff) of two dtypes.
DType coarser(DType a, DType b);
// The precision an element type carries; nullopt for exact types (bool, int64).
std::optional<DType> precision_of(Elem elem);

// The relative bound of a result made by `ops` operations and rounded `stores` times when
// stored. float16 and bfloat16 runs accumulate in float32 and round once when they store, as
// PyTorch's CPU kernels do (core/narrow.hpp): stores u(T) + ops 2u(float32). float32 and
// float64 compute in T throughout: ops 2u(T) (eps(T) per operation, as the checks count).
double accumulate_then_store(DType dtype, double ops, double stores);

constexpr double kReferenceFactor = 2.0;
constexpr double kFillMagnitude = 1e6;
constexpr double kMaxToleranceFraction = 1.0 / 8.0;

// A tensor's ordinary magnitude and the error of one computation of it, both measured
// against the float64 reference over the ordinary elements.
struct ReferenceError {
    double max_abs = 0.0;  // M
    double error = 0.0;    // max |ref_C - ref_float64|, NaN-ruled
};
ReferenceError measure_reference_error(const Tensor& in_dtype, const Tensor& float64_ref);

// Where a tensor is judged: its storage precision S and compute precision C.
struct Precision {
    DType storage = DType::float32;
    DType compute = DType::float32;
};

// The element-wise tolerance of the rule above. Fill elements (|R_k| >= kFillMagnitude) use
// fill_rtol alone.
struct Tolerance {
    double rtol = 0.0;
    double atol = 0.0;
    double fill_rtol = 0.0;
};
Tolerance judging_tolerance(Precision at, const ReferenceError& compute_error, double run_error);

// Whether the tolerance reaches kMaxToleranceFraction of M (the comparison cannot tell).
bool tolerance_too_large(const Tolerance& tol, double max_abs);

// |got - expected| within the tolerance, for one element (non-finite: equal, NaN-ruled).
bool within(double expected, double got, const Tolerance& tol);

}  // namespace attnlab

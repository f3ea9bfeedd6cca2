// exp over an array, vectorised, for the softmax of the attention kernel; and the other row
// steps of that softmax.
//
// Method (Cody and Waite's reduction, then a polynomial; compiled for every target of isa.hpp,
// the active one chosen at run time):
//   n = round(x / ln 2),  r = x - n ln2_hi - n ln2_lo  (|r| <= ln 2 / 2),
//   exp(x) = 2^n * P(r),  P of degree 6 fitted to exp's relative error on [-ln2/2, ln2/2]
//   (float: 3.1e-9 before its coefficients are rounded) or the Taylor polynomial of degree 12
//   (double); 2^n is built from the bits of the rounded sum that gave n.
// Error bound (tests/test_kernel.cpp measures it against std::exp over the domain):
//   float:  relative error at most 4 ulp (2.4e-7) for x in [-87.3, 0] (measured: 7.6e-8);
//   double: relative error at most 4 ulp (8.9e-16) for x in [-708, 0].
// Domain: the softmax only takes exp of x <= 0 (a score minus its row's max). Near and below
// the end of the normal range the result is 0 (float: x < -87.68; in [-87.68, -87.3) it is
// 2^-126 P(r), rounded to a subnormal; double: x < -708), an absolute error under 1.2e-38
// (float) or 2.3e-308 (double) against 1 for the row's largest term; -inf gives 0 and NaN
// gives NaN. x > 0 is outside the domain.
#pragma once

#include <cstddef>

namespace attnlab {

void exp_inplace(float* x, std::size_t n);
void exp_inplace(double* x, std::size_t n);

// The row steps of the attention kernel's streaming softmax, compiled the same way. Their
// reductions run sixteen lanes in a fixed order, so the targets with FMA (avx2, avx512) give
// the same figures, and those without (scalar, sse4) the same as each other.
// The largest of start and x[0..n), NaN ignored (as softmax_inplace ignores it).
float row_max(const float* x, std::size_t n, float start);
double row_max(const double* x, std::size_t n, double start);
// x = exp(x - shift) (as exp_inplace), and returns the sum of the new x. The float version
// has an AVX-512 body of its own in intrinsics, with the same bits (fast_exp.cpp).
float exp_shifted_sum(float* x, std::size_t n, float shift);
double exp_shifted_sum(double* x, std::size_t n, double shift);
// x *= by, and out = x / by: one rounding each, the same for every target.
void scale_inplace(float* x, std::size_t n, float by);
void scale_inplace(double* x, std::size_t n, double by);
void divide_into(float* out, const float* x, std::size_t n, float by);
void divide_into(double* out, const double* x, std::size_t n, double by);

}  // namespace attnlab

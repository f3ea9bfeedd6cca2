// The measurements behind the checks, each written once. They read any tensor, however it
// was made (our compute, a fixture, a learner's file), and return float64 figures.
//
// One NaN rule for every comparison: NaN against NaN counts as equal, NaN on one side as
// infinitely far, and equal infinities as equal. A figure that is NaN never passes a check.
// Never use std::max on measured values: std::max(worst, nan) silently drops the NaN; use
// worse() instead.
#pragma once

#include "attnlab/core/tensor.hpp"

#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace attnlab {

// The larger of two figures, NaN winning: once a measurement has seen NaN it stays NaN.
inline double worse(double acc, double v)
{
    if (std::isnan(acc) || std::isnan(v)) return std::numeric_limits<double>::quiet_NaN();
    return v > acc ? v : acc;
}

// |a - b| under the NaN rule above.
inline double diff_nan_rule(double a, double b)
{
    const bool na = std::isnan(a), nb = std::isnan(b);
    if (na && nb) return 0.0;
    if (na || nb) return std::numeric_limits<double>::infinity();
    if (a == b) return 0.0;  // equal infinities too
    return std::abs(a - b);
}

// max |a - b| over n elements, under the NaN rule.
template <class A, class B>
double max_abs_diff(const A* a, const B* b, std::size_t n)
{
    double worst = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        const double d = diff_nan_rule(static_cast<double>(a[i]), static_cast<double>(b[i]));
        worst = d > worst ? d : worst;
    }
    return worst;
}
// Two tensors of one shape (a shape mismatch is a programming error here).
double max_abs_diff(const Tensor& a, const Tensor& b);
// Any two contiguous containers of one size (xtensor's, std::vector).
template <class CA, class CB>
double max_abs_diff(const CA& a, const CB& b)
{
    return max_abs_diff(a.data(), b.data(), a.size());
}

// max |x|; NaN if any element is NaN.
template <class A>
double max_abs(const A* a, std::size_t n)
{
    double worst = 0.0;
    for (std::size_t i = 0; i < n; ++i) worst = worse(worst, std::abs(static_cast<double>(a[i])));
    return worst;
}
double max_abs(const Tensor& t);
template <class C>
double max_abs(const C& c)
{
    return max_abs(c.data(), c.size());
}

template <class A>
long count_nan(const A* a, std::size_t n)
{
    long count = 0;
    for (std::size_t i = 0; i < n; ++i) count += std::isnan(static_cast<double>(a[i])) ? 1 : 0;
    return count;
}
long count_nan(const Tensor& t);

// The Toeplitz defect of the last two axes: over every leading index and every diagonal
// (i - j fixed), the spread max - min of its entries. A diagonal whose entries are all the
// same infinity has spread 0; a mix of infinite and finite entries, inf; any NaN, NaN.
double max_diagonal_spread(const Tensor& t);
// The same for a square matrix of tokens at given positions: the largest spread among the
// cells (i, j) that share positions[i] - positions[j] (the diagonals when positions count 0, 1, 2, ...).
double max_spread_by_offset(const Tensor& t, const std::vector<long>& positions);
template <class V>
double diagonal_spread(const V* m, std::size_t rows, std::size_t cols);

// Rows of the last axis: lead is the flat index over the leading axes, i the row.
using RowPredicate = std::function<bool(std::size_t lead, std::size_t i)>;
using CellPredicate = std::function<bool(std::size_t lead, std::size_t i, std::size_t j)>;

// max |sum_j w - 1| over the rows that are not skipped (fully masked rows, say).
double max_row_sum_error(const Tensor& w, const RowPredicate& skip);
// max |w| where hidden(lead, i, j); NaN if a hidden weight is NaN.
double max_masked_weight(const Tensor& w, const CellPredicate& hidden);

// Query rows [begin, end).
struct RowRange {
    long begin = 0;
    long end = 0;
};
// The multiply-adds a budgeted check's reference pass may take.
constexpr double kCheckBudget = 67108864.0;  // 2^26

// Rows a budgeted check looks at: every row when len * work_per_row fits the budget (2^26
// multiply-adds, or len <= 96), otherwise the first rows, those from len / 2 on and the last
// rows, 32 of each or as many as the budget holds (at least 1).
std::vector<RowRange> sampled_rows(long len, double work_per_row);
// "over all rows", or "over rows 0..31, 2032..2063, 4064..4095".
std::string rows_description(const std::vector<RowRange>& rows, long len, Lang lang);
// Positions an all-pairs check visits: all of them up to 1024, else the first 128, the last
// 128 and 256 spread evenly between (so both ends of a long context are always measured).
std::vector<long> sampled_positions(long len);

// Orthonormal vectors spanning the given ones (modified Gram-Schmidt, run twice for accuracy);
// a vector that adds less than 1e-12 of the largest norm to the span is dropped.
std::vector<std::vector<double>> orthonormal_span(const std::vector<std::vector<double>>& vs);
// ||S - U (U^T S V) V^T||_F for S [n, n] row-major and orthonormal U, V (vectors of n): what is
// left of S outside every U a V^T, i.e. the least-squares residual of the best fit
// S ~ X A Y^T when U spans X's columns and V spans Y's.
double outside_span(const std::vector<double>& S, std::size_t n, const std::vector<std::vector<double>>& U,
                    const std::vector<std::vector<double>>& V);

}  // namespace attnlab

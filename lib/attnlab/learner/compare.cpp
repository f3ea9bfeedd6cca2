#include "attnlab/learner/compare.hpp"

#include "attnlab/core/measure.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attnlab {

namespace {

std::vector<std::size_t> unravel(std::size_t flat, const std::vector<std::size_t>& shape)
{
    std::vector<std::size_t> index(shape.size());
    for (std::size_t a = shape.size(); a-- > 0;) {
        index[a] = flat % shape[a];
        flat /= shape[a];
    }
    return index;
}

// Along every axis, the first and last index of an element outside the tolerance.
std::vector<AxisRange> differing_ranges(const Tensor& e, const std::vector<std::size_t>& first,
                                        const std::vector<std::size_t>& last)
{
    std::vector<AxisRange> out;
    for (std::size_t a = 0; a < e.shape.size(); ++a) {
        const std::string axis = a < e.axes.size() ? e.axes[a] : fmt::format("axis{}", a);
        out.push_back({axis, first[a], last[a], e.shape[a]});
    }
    return out;
}

// A non-finite value where the reference holds a number.
void count_nonfinite(double expected, double got, NonFiniteCount& n)
{
    if (!std::isfinite(expected) || std::isfinite(got)) return;
    if (std::isnan(got)) ++n.nan;
    else if (got > 0) ++n.posinf;
    else ++n.neginf;
}

}  // namespace

bool tensors_match(const Tensor& expected, const Tensor& got, const Tolerance& tol, double* max_diff)
{
    if (expected.shape != got.shape) return false;
    *max_diff = max_abs_diff(expected, Tensor{got.name, got.axes, got.elem, expected.shape, got.values});
    for (std::size_t k = 0; k < expected.size(); ++k)
        if (!within(expected.values[k], got.values[k], tol)) return false;
    return true;
}

namespace {

// How far got lies from t (same shape): the elements where either is not finite and they are
// not the same value (NaN with NaN, inf with inf of its sign), and the root of the summed
// squares of the differences over the rest.
struct Gap {
    std::size_t nonfinite = 0;
    double l2 = 0.0;
};

Gap gap(const Tensor& t, const Tensor& got)
{
    Gap g;
    double sum = 0.0;
    for (std::size_t k = 0; k < t.size(); ++k) {
        const double a = t.values[k], b = got.values[k];
        if (std::isfinite(a) && std::isfinite(b)) sum += (a - b) * (a - b);
        else if (!(a == b || (std::isnan(a) && std::isnan(b)))) ++g.nonfinite;
    }
    g.l2 = std::sqrt(sum);
    return g;
}

}  // namespace

bool explains_most(const Tensor& mistake, const Tensor& expected, const Tensor& got)
{
    if (mistake.shape != got.shape || expected.shape != got.shape) return false;
    const Gap m = gap(mistake, got), r = gap(expected, got);
    return 2 * m.nonfinite <= r.nonfinite && 2 * m.l2 <= r.l2 && (m.nonfinite < r.nonfinite || m.l2 < r.l2);
}

void compare_tensors(const Tensor& expected, const Tensor& got, const Tolerance& tol, Comparison& c)
{
    c.shape_expected = expected.shape;
    c.shape_got = got.shape;
    c.rtol = tol.rtol;
    c.atol = tol.atol;
    c.total = expected.size();
    c.mismatched = 0;
    c.nonfinite = {};
    c.where.clear();
    c.worst_index.clear();
    c.expected_elem = expected.elem;
    c.got_elem = got.elem;
    if (expected.shape != got.shape) {
        c.passed = false;
        c.max_abs_diff = std::numeric_limits<double>::infinity();
        c.mismatched = c.total;
        return;
    }
    double worst = -1.0;
    std::vector<std::size_t> first(expected.rank(), SIZE_MAX), last(expected.rank(), 0);
    for (std::size_t k = 0; k < expected.size(); ++k) {
        const double e = expected.values[k], g = got.values[k];
        const double d = diff_nan_rule(e, g);
        count_nonfinite(e, g, c.nonfinite);
        if (!within(e, g, tol)) {
            ++c.mismatched;
            const auto index = unravel(k, expected.shape);
            for (std::size_t a = 0; a < index.size(); ++a) {
                first[a] = std::min(first[a], index[a]);
                last[a] = std::max(last[a], index[a]);
            }
        }
        if (d > worst) {
            worst = d;
            c.worst_index = unravel(k, expected.shape);
            c.worst_expected = e;
            c.worst_got = g;
        }
    }
    c.max_abs_diff = std::max(worst, 0.0);
    c.passed = c.mismatched == 0;
    if (!c.passed) c.where = differing_ranges(expected, first, last);
}

}  // namespace attnlab

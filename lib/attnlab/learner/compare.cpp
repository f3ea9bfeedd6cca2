#include "attnlab/learner/compare.hpp"

#include "attnlab/core/measure.hpp"

#include <fmt/format.h>

namespace attnlab {

namespace {

// Within atol + rtol |e|; where either side is not finite, only the same infinity or NaN on
// both sides is close (an infinite e must not make the tolerance infinite).
bool close(double e, double g, double rtol, double atol)
{
    if (!std::isfinite(e) || !std::isfinite(g)) return diff_nan_rule(e, g) == 0.0;
    return std::abs(e - g) <= atol + rtol * std::abs(e);
}

std::vector<std::size_t> unravel(std::size_t flat, const std::vector<std::size_t>& shape)
{
    std::vector<std::size_t> index(shape.size());
    for (std::size_t a = shape.size(); a-- > 0;) {
        index[a] = flat % shape[a];
        flat /= shape[a];
    }
    return index;
}

// "rows 0-3 match; from row 4 on they differ", along the leading axis.
std::string where_they_differ(const Tensor& e, const Tensor& g, double rtol, double atol)
{
    if (e.rank() == 0 || e.size() == 0) return {};
    const std::size_t rows = e.shape[0], per = e.size() / rows;
    std::size_t first_bad = rows;
    for (std::size_t r = 0; r < rows && first_bad == rows; ++r)
        for (std::size_t k = r * per; k < (r + 1) * per; ++k)
            if (!close(e.values[k], g.values[k], rtol, atol)) {
                first_bad = r;
                break;
            }
    const std::string axis = e.axes.empty() ? "row" : e.axes[0];
    if (first_bad == rows) return fmt::format("every {} matches", axis);
    if (first_bad == 0) return fmt::format("they differ from {} 0 on", axis);
    return fmt::format("{0} 0-{1} match; from {0} {2} on they differ", axis, first_bad - 1, first_bad);
}

}  // namespace

bool tensors_match(const Tensor& expected, const Tensor& got, double rtol, double atol, double* max_diff)
{
    if (expected.shape != got.shape) return false;
    *max_diff = max_abs_diff(expected, Tensor{got.name, got.axes, got.elem, expected.shape, got.values});
    for (std::size_t k = 0; k < expected.size(); ++k)
        if (!close(expected.values[k], got.values[k], rtol, atol)) return false;
    return true;
}

void compare_tensors(const Tensor& expected, const Tensor& got, double rtol, double atol, Comparison& c)
{
    c.shape_expected = expected.shape;
    c.shape_got = got.shape;
    c.rtol = rtol;
    c.atol = atol;
    c.total = expected.size();
    if (expected.shape != got.shape) {
        c.passed = false;
        c.max_abs_diff = std::numeric_limits<double>::infinity();
        c.mismatched = c.total;
        c.where = "the shapes differ";
        return;
    }
    double worst = -1.0;
    for (std::size_t k = 0; k < expected.size(); ++k) {
        const double d = diff_nan_rule(expected.values[k], got.values[k]);
        c.mismatched += close(expected.values[k], got.values[k], rtol, atol) ? 0 : 1;
        if (d > worst) {
            worst = d;
            c.worst_index = unravel(k, expected.shape);
            c.worst_expected = expected.values[k];
            c.worst_got = got.values[k];
        }
    }
    c.max_abs_diff = std::max(worst, 0.0);
    c.passed = c.mismatched == 0;
    c.where = where_they_differ(expected, got, rtol, atol);
}

}  // namespace attnlab

// Small measurements shared by the checks of every experiment. They work on any contiguous
// xtensor container (any rank), and return float64 figures.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace attnlab {

// max |a - b| over all elements; NaN if any difference is NaN.
template <class A, class B>
double max_abs_diff(const A& a, const B& b)
{
    double worst = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double d = std::abs(static_cast<double>(a.data()[i]) - static_cast<double>(b.data()[i]));
        if (std::isnan(d)) return d;
        worst = std::max(worst, d);
    }
    return worst;
}

// max |a| over all elements.
template <class A>
double max_abs(const A& a)
{
    double worst = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(static_cast<double>(a.data()[i])));
    return worst;
}

}  // namespace attnlab

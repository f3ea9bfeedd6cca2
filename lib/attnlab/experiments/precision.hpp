// Checks shared by the experiments whose figures depend on the dtype's precision.
#pragma once

#include "attnlab/core/measure.hpp"
#include "attnlab/core/xt.hpp"
#include "attnlab/experiments/experiment.hpp"

#include <cmath>
#include <optional>
#include <vector>

namespace attnlab {

// The largest angle error and where it is.
struct AngleWorst {
    double error = 0.0;
    long pos = 0, pair = 0;
};

// pe's and rope's angle_error [pos]: the largest |pos * w_i in T - pos * w_i exact| of each
// position, in radians, the angle rounded as the tables compute it (the position and w_i held
// in T, their product rounded in T). freq holds values of T; exact the same frequencies in
// long double. Row r is position first + r.
template <class T>
Vec<double> angle_errors_by_position(long len, const std::vector<double>& freq, const std::vector<long double>& exact,
                                     AngleWorst* worst = nullptr, long first = 0)
{
    Vec<double> out = xt::zeros<double>({static_cast<std::size_t>(len)});
    for (long row = 0; row < len; ++row)
        for (std::size_t i = 0; i < freq.size(); ++i) {
            const long pos = first + row;
            const T angle = static_cast<T>(pos) * static_cast<T>(freq[i]);
            const auto e = static_cast<double>(std::abs(static_cast<long double>(angle) - static_cast<long double>(pos) * exact[i]));
            out(row) = worse(out(row), e);
            if (worst && e > worst->error) *worst = {e, pos, static_cast<long>(i)};
        }
    return out;
}

// angle_error [pos] (the largest |angle in the dtype - exact angle| of each position, in
// radians): how it grows with position, the last eighth of the positions against the first
// (position 0 left out: its angle is exactly 0). A demonstration: the usual tables show it.
std::optional<Check> angle_error_growth(const Tensor& angle_error, const CheckEnv& env);

}  // namespace attnlab

#include "attnlab/experiments/precision.hpp"

#include "attnlab/core/measure.hpp"

#include <algorithm>

namespace attnlab {

namespace {

double max_over(const Tensor& t, std::size_t begin, std::size_t end)
{
    double worst = 0.0;
    for (std::size_t i = begin; i < end; ++i) worst = worse(worst, t.values[i]);
    return worst;
}

}  // namespace

std::optional<Check> angle_error_growth(const Tensor& angle_error, const CheckEnv& env)
{
    const std::size_t L = angle_error.size();
    if (L < 16) return std::nullopt;
    const std::size_t eighth = L / 8;
    const double near = max_over(angle_error, 1, 1 + eighth), far = max_over(angle_error, L - eighth, L);
    return demonstration(tr(env, "the angle error grows with position in {}: far positions are rotated less exactly than near ones",
                            "{} 下角度误差随位置增长：远处位置的旋转不如近处精确", name_of(env.dtype)),
                         tr(env, "max angle error (rad) over positions {}..{}, against positions 1..{}", "位置 {}..{} 上的最大角度误差（弧度），对比位置 1..{}",
                            L - eighth, L - 1, eighth),
                         far, near, Compare::gt);
}

}  // namespace attnlab

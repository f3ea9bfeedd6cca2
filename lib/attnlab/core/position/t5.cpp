#include "attnlab/core/position/t5.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace attnlab {

T5Side t5_side(T5Direction direction, long buckets)
{
    const long side = direction == T5Direction::bidirectional ? buckets / 2 : buckets;
    return {side, side / 2, direction == T5Direction::bidirectional ? side : 0};
}

long t5_distance(long offset, T5Direction direction)
{
    return direction == T5Direction::bidirectional ? std::labs(offset) : std::max(-offset, 0L);
}

long t5_bucket(long offset, T5Direction direction, long buckets, long max_distance)
{
    const T5Side side = t5_side(direction, buckets);
    const long base = offset > 0 ? side.base_of_later : 0, n = t5_distance(offset, direction);
    if (n < side.max_exact) return base + n;
    // torch.log(rp.float() / max_exact) / math.log(max_distance / max_exact) * (buckets - max_exact),
    // each step in float32 (a Python float meets a float32 tensor as float32), then .to(long).
    const float quotient = static_cast<float>(n) / static_cast<float>(side.max_exact);
    const float denominator = static_cast<float>(std::log(static_cast<double>(max_distance) / static_cast<double>(side.max_exact)));
    const float x = std::log(quotient) / denominator * static_cast<float>(side.buckets - side.max_exact);
    return base + std::min(side.max_exact + static_cast<long>(x), side.buckets - 1);
}

long double t5_log_position(long distance, const T5Side& side, long max_distance)
{
    const long double e = side.max_exact;
    return std::log(static_cast<long double>(distance) / e) / std::log(static_cast<long double>(max_distance) / e) *
           static_cast<long double>(side.buckets - side.max_exact);
}

}  // namespace attnlab

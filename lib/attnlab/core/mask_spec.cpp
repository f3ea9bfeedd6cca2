#include "attnlab/core/mask_spec.hpp"

#include <algorithm>
#include <cstddef>

namespace attnlab {

bool MaskSpec::masked(long b, long i, long j) const
{
    const long reach = i + offset();  // the last key query i may see (diagonal 1)
    switch (kind) {
    case MaskKind::none: return false;
    case MaskKind::causal: return j - i - offset() >= diagonal;
    case MaskKind::padding: return j >= lengths[static_cast<std::size_t>(b)];
    case MaskKind::both:
        return j >= lengths[static_cast<std::size_t>(b)] || j - i - offset() >= diagonal;
    case MaskKind::window: return j - i - offset() >= diagonal || reach - j >= window;
    }
    return false;
}

std::pair<long, long> MaskSpec::visible_range(long b, long i) const
{
    const long causal_end = std::clamp(i + offset() + diagonal, 0L, keys);  // j - i - offset < diagonal
    const long length = has_padding() ? std::clamp(lengths[static_cast<std::size_t>(b)], 0L, keys) : keys;
    switch (kind) {
    case MaskKind::none: return {0, keys};
    case MaskKind::causal: return {0, causal_end};
    case MaskKind::padding: return {0, length};
    case MaskKind::both: return {0, std::min(length, causal_end)};
    case MaskKind::window: return {std::clamp(i + offset() - window + 1, 0L, keys), causal_end};
    }
    return {0, keys};
}

bool MaskSpec::row_fully_masked(long b, long i) const
{
    for (long j = 0; j < keys; ++j)
        if (!masked(b, i, j)) return false;
    return true;
}

long MaskSpec::expected_visible(long b, long i) const
{
    const auto [first, second] = visible_range(b, i);
    return std::max(0L, second - first);
}

}  // namespace attnlab

#include "attnlab/experiments/averages.hpp"

#include "attnlab/core/measure.hpp"

#include <cmath>

namespace attnlab {

namespace {

// Keys [first, second) query i of sequence b sees.
std::pair<long, long> seen(const MaskSpec& mask, long b, long i, long keys)
{
    if (mask.kind == MaskKind::none) return {0, keys};
    return mask.visible_range(b, i);
}

}  // namespace

AverageFigures measure_averages(const Tensor& out, bool merged, const Tensor& v, const MaskSpec& mask, long heads)
{
    AverageFigures f;
    const long B = static_cast<long>(v.shape[0]), KV = static_cast<long>(v.shape[1]), S = static_cast<long>(v.shape[2]);
    const long d = static_cast<long>(v.shape[3]);
    const long L = static_cast<long>(merged ? out.shape[1] : out.shape[2]);
    auto out_at = [&](long b, long h, long i, long c) {
        const long flat = merged ? (b * L + i) * heads * d + h * d + c : ((b * heads + h) * L + i) * d + c;
        return static_cast<double>(out.values[static_cast<std::size_t>(flat)]);
    };
    auto v_at = [&](long b, long g, long j, long c) { return static_cast<double>(v.values[static_cast<std::size_t>(((b * KV + g) * S + j) * d + c)]); };
    for (long b = 0; b < B; ++b)
        for (long h = 0; h < heads; ++h)
            for (long i = 0; i < L; ++i) {
                const auto [first, last] = seen(mask, b, i, S);
                if (first >= last) continue;
                f.widest = std::max(f.widest, last - first);
                const long g = h / (heads / KV);
                for (long c = 0; c < d; ++c) {
                    double lo = INFINITY, hi = -INFINITY;
                    for (long j = first; j < last; ++j) lo = std::min(lo, v_at(b, g, j, c)), hi = std::max(hi, v_at(b, g, j, c));
                    f.value_scale = worse(f.value_scale, std::max(std::abs(lo), std::abs(hi)));
                    const double o = out_at(b, h, i, c);
                    f.excess = worse(f.excess, std::isnan(o) ? o : std::max({0.0, lo - o, o - hi}));
                    if (i == 0 && first == 0 && last == 1) {
                        f.first_row_alone = true;
                        f.first_row = worse(f.first_row, diff_nan_rule(o, v_at(b, g, 0, c)));
                    }
                }
            }
    return f;
}

}  // namespace attnlab

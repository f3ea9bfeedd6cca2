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

// Whether neither end of the intervals ever moves back.
bool monotone(const std::vector<std::pair<long, long>>& spans)
{
    for (std::size_t i = 1; i < spans.size(); ++i)
        if (spans[i].first < spans[i - 1].first || spans[i].second < spans[i - 1].second) return false;
    return true;
}

std::vector<Extremes> scanned_extremes(const std::vector<double>& col, const std::vector<std::pair<long, long>>& spans)
{
    std::vector<Extremes> out;
    for (const auto& [first, last] : spans) {
        Extremes e;
        for (long j = first; j < last; ++j) e.lo = std::min(e.lo, col[static_cast<std::size_t>(j)]), e.hi = std::max(e.hi, col[static_cast<std::size_t>(j)]);
        out.push_back(e);
    }
    return out;
}

}  // namespace

std::vector<Extremes> interval_extremes(const std::vector<double>& col, const std::vector<std::pair<long, long>>& spans)
{
    if (!monotone(spans)) return scanned_extremes(col, spans);
    // Sliding-window extremes: each queue holds the indices that may still be an interval's
    // smallest (largest) value, their values increasing (decreasing) from the front. An index
    // enters each queue once, so a queue is a vector with a moving front.
    std::vector<long> low(col.size()), high(col.size());
    std::size_t low_front = 0, low_end = 0, high_front = 0, high_end = 0;
    const auto at = [&](long j) { return col[static_cast<std::size_t>(j)]; };
    std::vector<Extremes> out;
    out.reserve(spans.size());
    long next = 0;
    for (const auto& [first, last] : spans) {
        for (; next < last; ++next) {
            const double x = at(next);
            if (std::isnan(x)) continue;  // as std::min and std::max in the scan: a NaN is passed over
            while (low_end > low_front && at(low[low_end - 1]) >= x) --low_end;
            while (high_end > high_front && at(high[high_end - 1]) <= x) --high_end;
            low[low_end++] = next, high[high_end++] = next;
        }
        while (low_front < low_end && low[low_front] < first) ++low_front;
        while (high_front < high_end && high[high_front] < first) ++high_front;
        Extremes e;
        if (first < last && low_front < low_end) e = {at(low[low_front]), at(high[high_front])};
        out.push_back(e);
    }
    return out;
}

AverageFigures measure_averages(const Tensor& out, bool merged, const Tensor& v, const MaskSpec& mask, long heads)
{
    AverageFigures f;
    const long B = static_cast<long>(v.shape[0]), KV = static_cast<long>(v.shape[1]), S = static_cast<long>(v.shape[2]);
    const long d = static_cast<long>(v.shape[3]), group = heads / KV;
    const long L = static_cast<long>(merged ? out.shape[1] : out.shape[2]);
    auto out_at = [&](long b, long h, long i, long c) {
        const long flat = merged ? (b * L + i) * heads * d + h * d + c : ((b * heads + h) * L + i) * d + c;
        return static_cast<double>(out.values[static_cast<std::size_t>(flat)]);
    };
    std::vector<double> col(static_cast<std::size_t>(S));
    for (long b = 0; b < B; ++b) {
        std::vector<std::pair<long, long>> spans;
        for (long i = 0; i < L; ++i) spans.push_back(seen(mask, b, i, S));
        for (const auto& [first, last] : spans) f.widest = std::max(f.widest, last - first);
        for (long g = 0; g < KV; ++g)
            for (long c = 0; c < d; ++c) {
                for (long j = 0; j < S; ++j) col[static_cast<std::size_t>(j)] = v.values[static_cast<std::size_t>(((b * KV + g) * S + j) * d + c)];
                const std::vector<Extremes> range = interval_extremes(col, spans);
                for (long h = g * group; h < (g + 1) * group; ++h)
                    for (long i = 0; i < L; ++i) {
                        const auto [first, last] = spans[static_cast<std::size_t>(i)];
                        if (first >= last) continue;
                        const auto [lo, hi] = range[static_cast<std::size_t>(i)];
                        f.value_scale = worse(f.value_scale, std::max(std::abs(lo), std::abs(hi)));
                        const double o = out_at(b, h, i, c);
                        f.excess = worse(f.excess, std::isnan(o) ? o : std::max({0.0, lo - o, o - hi}));
                        if (i == 0 && first == 0 && last == 1) {
                            f.first_row_alone = true;
                            f.first_row = worse(f.first_row, diff_nan_rule(o, col[0]));
                        }
                    }
            }
    }
    return f;
}

}  // namespace attnlab

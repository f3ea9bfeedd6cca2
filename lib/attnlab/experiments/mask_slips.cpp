#include "attnlab/experiments/mask_slips.hpp"

#include <algorithm>
#include <cmath>

namespace attnlab {

const std::vector<SlipInfo>& mask_slips()
{
    static const std::vector<SlipInfo> all = {
        {MaskSlip::flipped, "mask_flipped",
         "the triangle is flipped: the mask hides the past and the query itself, and shows the future (masked_fill(tril(ones) == 1, -inf) "
         "where triu(ones, diagonal=1) was needed)",
         "三角形反了：掩码遮住了过去和查询自己，露出了未来（用了 masked_fill(tril(ones) == 1, -inf)，应为 triu(ones, diagonal=1)）"},
        {MaskSlip::off_by_one, "mask_off_by_one",
         "the triangle is one key off: each query also sees the next key (triu(..., diagonal=2) where diagonal=1 was needed)",
         "三角形错了一位：每个查询还看到了下一个键（用了 triu(..., diagonal=2)，应为 diagonal=1）"},
        {MaskSlip::on_queries, "padding_on_queries",
         "padding is applied to the queries (rows) instead of the keys: key_padding_mask[b] must hide columns j >= lengths[b]",
         "填充加在了查询（行）上，而不是键上：key_padding_mask[b] 应遮住 j >= lengths[b] 的列"},
        {MaskSlip::after_softmax, "mask_after_softmax",
         "the masked weights were zeroed after the softmax and the rows not renormalised: add -inf to the scores before the softmax",
         "在 softmax 之后才把被屏蔽的权重置零，且没有重新归一化：应在 softmax 之前给得分加上 -inf"},
        {MaskSlip::fully_masked_plain, "fully_masked_row_nan",
         "a row with no visible key went through a plain softmax and became NaN: use a safe softmax (zeros there), or give that row "
         "a key it may see",
         "一行没有任何可见的键，经过普通 softmax 变成了 NaN：改用 safe softmax（该行为 0），或让这一行至少能看到一个键"},
    };
    return all;
}

namespace {

bool pad_hides(const MaskSpec& m, long b, long j) { return m.has_padding() && j >= m.lengths[static_cast<std::size_t>(b)]; }

// The spec's triangle (causal or window) alone, without padding.
MaskSpec triangle_of(const MaskSpec& m)
{
    MaskSpec t = m;
    if (t.kind == MaskKind::both) t.kind = MaskKind::causal;
    return t;
}

bool any_row_fully_masked(const MaskSpec& m)
{
    for (long b = 0; b < m.batch(); ++b)
        for (long i = 0; i < m.queries; ++i)
            if (m.row_fully_masked(b, i)) return true;
    return false;
}

}  // namespace

std::optional<Hide> slip_rule(MaskSlip slip, const MaskSpec& m, SoftmaxKind run_softmax)
{
    switch (slip) {
    case MaskSlip::flipped:
        if (m.kind != MaskKind::causal && m.kind != MaskKind::both) return std::nullopt;
        return Hide([m, t = triangle_of(m)](long b, long i, long j) { return pad_hides(m, b, j) || !t.masked(b, i, j); });
    case MaskSlip::off_by_one: {
        if (!m.has_causal()) return std::nullopt;
        MaskSpec late = m;
        late.diagonal = m.diagonal + 1;
        return Hide([late](long b, long i, long j) { return late.masked(b, i, j); });
    }
    case MaskSlip::on_queries:
        if (!m.has_padding()) return std::nullopt;
        return Hide([m, t = triangle_of(m)](long b, long i, long j) {
            return i >= m.lengths[static_cast<std::size_t>(b)] || (m.kind == MaskKind::both && t.masked(b, i, j));
        });
    case MaskSlip::after_softmax:
        if (m.kind == MaskKind::none) return std::nullopt;
        return Hide([m](long b, long i, long j) { return m.masked(b, i, j); });
    case MaskSlip::fully_masked_plain:
        if (run_softmax == SoftmaxKind::plain || !std::isinf(m.fill) || !any_row_fully_masked(m)) return std::nullopt;
        return Hide([m](long b, long i, long j) { return m.masked(b, i, j); });
    }
    return std::nullopt;
}

SoftmaxKind slip_softmax(MaskSlip slip, SoftmaxKind run_softmax)
{
    return slip == MaskSlip::fully_masked_plain ? SoftmaxKind::plain : run_softmax;
}

std::vector<double> slip_weights(MaskSlip slip, const Tensor& raw, std::size_t heads, const Hide& hide, double fill, SoftmaxKind kind)
{
    const std::size_t S = raw.shape.back(), L = raw.shape[raw.rank() - 2], rows = raw.size() / S;
    std::vector<double> w = raw.values.to_vector();
    const bool after = slip == MaskSlip::after_softmax;
    for (std::size_t r = 0; r < rows; ++r) {
        const auto b = static_cast<long>(r / L / heads), i = static_cast<long>(r % L);
        double* row = w.data() + r * S;
        if (!after)
            for (std::size_t j = 0; j < S; ++j) row[j] += hide(b, i, static_cast<long>(j)) ? fill : 0.0;
        softmax_inplace(row, S, after ? SoftmaxKind::plain : kind);
        if (after)
            for (std::size_t j = 0; j < S; ++j) row[j] = hide(b, i, static_cast<long>(j)) ? 0.0 : row[j];
    }
    return w;
}

Tensor additive_hiding(const Tensor& like, const Hide& hide, double fill)
{
    const std::size_t S = like.shape.back(), L = like.shape[like.rank() - 2];
    std::vector<double> values(like.size());
    for (std::size_t k = 0; k < like.size(); ++k) {
        const auto b = static_cast<long>(k / (L * S)), i = static_cast<long>(k / S % L), j = static_cast<long>(k % S);
        values[k] = hide(b, i, j) ? fill : 0.0;
    }
    return Tensor{like.name, like.axes, Elem::float64, like.shape, values};
}

}  // namespace attnlab

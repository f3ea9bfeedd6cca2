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
        {MaskSlip::future_visible, "future_visible",
         "the triangle is flipped the other way: each query sees itself and the future, and the strict past is hidden (keep = triu(ones), "
         "or the mask transposed)",
         "三角形反了（另一种）：每个查询看到自己和未来，过去被遮住（用了 keep = triu(ones)，或把掩码转置了）"},
        {MaskSlip::diagonal_masked, "diagonal_masked", "the diagonal is masked too: triu(..., diagonal=0) where diagonal=1 was needed",
         "对角线也被屏蔽了：用了 triu(..., diagonal=0)，应为 diagonal=1"},
        {MaskSlip::off_by_one, "mask_off_by_one",
         "the triangle is one key off: each query also sees the next key (triu(..., diagonal=2) where diagonal=1 was needed)",
         "三角形错了一位：每个查询还看到了下一个键（用了 triu(..., diagonal=2)，应为 diagonal=1）"},
        {MaskSlip::on_queries, "padding_on_queries",
         "padding is applied to the queries (rows) instead of the keys: key_padding_mask[b] must hide columns j >= lengths[b]",
         "填充加在了查询（行）上，而不是键上：key_padding_mask[b] 应遮住 j >= lengths[b] 的列"},
        {MaskSlip::padding_one_late, "padding_one_late",
         "padding starts one position late: keys j > lengths[b] hidden instead of j >= lengths[b]",
         "填充晚了一个位置：遮住的是 j > lengths[b] 的键，应为 j >= lengths[b]"},
        {MaskSlip::bool_inverted, "bool_inverted",
         "the boolean convention is inverted: the keys meant to be seen are hidden and the padding is shown (True means may attend in "
         "scaled_dot_product_attention, must not in nn.MultiheadAttention)",
         "布尔约定反了：该看的键被遮住，填充反而可见（scaled_dot_product_attention 中 True 表示可以关注，nn.MultiheadAttention 中表示不可）"},
        {MaskSlip::multiplied, "mask_multiplied",
         "the scores were multiplied by a 0/1 mask instead of adding -inf: hidden keys get score 0 and keep weight",
         "得分乘以了 0/1 掩码，而不是加上 -inf：被屏蔽的键得分为 0，仍有权重"},
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

// The slips of the triangle, or nothing where the spec has no triangle for them.
std::optional<Hide> triangle_rule(MaskSlip slip, const MaskSpec& m)
{
    const MaskSpec t = triangle_of(m);
    const bool plain_causal = m.kind == MaskKind::causal || m.kind == MaskKind::both;
    if (slip == MaskSlip::flipped && plain_causal) return Hide([m, t](long b, long i, long j) { return pad_hides(m, b, j) || !t.masked(b, i, j); });
    // the triangle mirrored: key j hidden from query i when query j would hide key i
    if (slip == MaskSlip::future_visible && plain_causal && m.queries == m.keys)
        return Hide([m, t](long b, long i, long j) { return pad_hides(m, b, j) || t.masked(b, j, i); });
    const bool early = slip == MaskSlip::diagonal_masked;
    if ((early || slip == MaskSlip::off_by_one) && m.has_causal() && (!early || m.diagonal == 1)) {
        MaskSpec moved = m;
        moved.diagonal = m.diagonal + (early ? -1 : 1);
        return Hide([moved](long b, long i, long j) { return moved.masked(b, i, j); });
    }
    return std::nullopt;
}

// The slips of padding, or nothing where the spec has no padding.
std::optional<Hide> padding_rule(MaskSlip slip, const MaskSpec& m)
{
    if (!m.has_padding()) return std::nullopt;
    const MaskSpec t = triangle_of(m);
    const bool both = m.kind == MaskKind::both;
    const auto len = [m](long b) { return m.lengths[static_cast<std::size_t>(b)]; };
    if (slip == MaskSlip::on_queries) return Hide([t, both, len](long b, long i, long j) { return i >= len(b) || (both && t.masked(b, i, j)); });
    if (slip == MaskSlip::padding_one_late) return Hide([t, both, len](long b, long i, long j) { return j > len(b) || (both && t.masked(b, i, j)); });
    // (a causal triangle's complement is mask_flipped: named once, there)
    if (slip == MaskSlip::bool_inverted) return Hide([m](long b, long i, long j) { return !m.masked(b, i, j); });
    return std::nullopt;
}

}  // namespace

std::optional<Hide> slip_rule(MaskSlip slip, const MaskSpec& m, SoftmaxKind run_softmax)
{
    if (hides_other_keys(slip)) {
        auto rule = triangle_rule(slip, m);
        return rule ? rule : padding_rule(slip, m);
    }
    if (slip == MaskSlip::fully_masked_plain && (run_softmax == SoftmaxKind::plain || !std::isinf(m.fill) || !any_row_fully_masked(m))) return std::nullopt;
    if (m.kind == MaskKind::none) return std::nullopt;
    return Hide([m](long b, long i, long j) { return m.masked(b, i, j); });
}

SoftmaxKind slip_softmax(MaskSlip slip, SoftmaxKind run_softmax)
{
    return slip == MaskSlip::fully_masked_plain ? SoftmaxKind::plain : run_softmax;
}

std::vector<double> slip_scores(MaskSlip slip, const Tensor& raw, std::size_t heads, const Hide& hide, double fill)
{
    const std::size_t S = raw.shape.back(), L = raw.shape[raw.rank() - 2], rows = raw.size() / S;
    std::vector<double> w = raw.values.to_vector();
    if (slip == MaskSlip::after_softmax) return w;
    for (std::size_t r = 0; r < rows; ++r) {
        const auto b = static_cast<long>(r / L / heads), i = static_cast<long>(r % L);
        double* row = w.data() + r * S;
        for (std::size_t j = 0; j < S; ++j)
            if (hide(b, i, static_cast<long>(j))) row[j] = slip == MaskSlip::multiplied ? 0.0 : row[j] + fill;
    }
    return w;
}

std::vector<double> slip_weights(MaskSlip slip, const Tensor& raw, std::size_t heads, const Hide& hide, double fill, SoftmaxKind kind)
{
    const std::size_t S = raw.shape.back(), L = raw.shape[raw.rank() - 2], rows = raw.size() / S;
    std::vector<double> w = slip_scores(slip, raw, heads, hide, fill);
    const bool after = slip == MaskSlip::after_softmax;
    for (std::size_t r = 0; r < rows; ++r) {
        const auto b = static_cast<long>(r / L / heads), i = static_cast<long>(r % L);
        double* row = w.data() + r * S;
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

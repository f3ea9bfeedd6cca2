// The kinds of difference detect_kinds() names (compare.hpp): each is a test on the two
// tensors and a sentence that says what to change.
#include "attnlab/learner/compare.hpp"

#include "attnlab/core/measure.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

namespace attnlab {

namespace {

void add(Comparison& c, const std::string& kind, std::string note)
{
    c.kinds.push_back(kind);
    c.notes.push_back(std::move(note));
}


bool all_within(const std::vector<double>& e, const std::vector<double>& g, const Tolerance& tol)
{
    for (std::size_t k = 0; k < e.size(); ++k)
        if (!within(e[k], g[k], tol)) return false;
    return true;
}

std::vector<std::size_t> without_ones(std::vector<std::size_t> shape)
{
    shape.erase(std::remove(shape.begin(), shape.end(), std::size_t{1}), shape.end());
    return shape;
}

// got read with its axes in the order `perm` of the expected ones: got[index permuted].
std::vector<double> permuted_axes(const Tensor& got, const std::vector<std::size_t>& perm, const std::vector<std::size_t>& shape)
{
    std::vector<std::size_t> got_strides(got.rank(), 1);
    for (std::size_t a = got.rank(); a-- > 1;) got_strides[a - 1] = got_strides[a] * got.shape[a];
    std::vector<double> out(got.size());
    std::vector<std::size_t> index(shape.size(), 0);
    for (std::size_t k = 0; k < out.size(); ++k) {
        std::size_t flat = 0;
        for (std::size_t a = 0; a < shape.size(); ++a) flat += index[a] * got_strides[perm[a]];
        out[k] = got.values[flat];
        for (std::size_t a = shape.size(); a-- > 0;) {
            if (++index[a] < shape[a]) break;
            index[a] = 0;
        }
    }
    return out;
}

// An axis order other than the identity under which got holds the expected values.
std::optional<std::vector<std::size_t>> matching_transpose(const Tensor& e, const Tensor& g, const Tolerance& tol)
{
    if (e.rank() != g.rank() || e.rank() < 2 || e.rank() > 5 || e.size() != g.size() || e.size() < 2) return std::nullopt;
    std::vector<std::size_t> perm(e.rank());
    std::iota(perm.begin(), perm.end(), 0);
    const std::vector<double> expected = e.values.to_vector();
    while (std::next_permutation(perm.begin(), perm.end())) {
        bool fits = true;
        for (std::size_t a = 0; a < perm.size(); ++a) fits = fits && g.shape[perm[a]] == e.shape[a];
        if (fits && all_within(expected, permuted_axes(g, perm, e.shape), tol)) return perm;
    }
    return std::nullopt;
}

bool is_additive_mask(const Tensor& t)
{
    bool hidden = false;
    for (double v : t.values) {
        if (v != 0.0 && !(v <= -kFillMagnitude)) return false;
        hidden = hidden || v != 0.0;
    }
    return hidden && t.size() > 0;
}
// A 0/1 tensor that holds both.
bool is_zero_one(const Tensor& t)
{
    bool zero = false, one = false;
    for (double v : t.values) {
        if (v != 0.0 && v != 1.0) return false;
        (v == 0.0 ? zero : one) = true;
    }
    return zero && one;
}

// The one value every element of t holds, if they all hold one (NaN holds none).
std::optional<double> constant_value(const Tensor& t)
{
    if (t.size() < 2 || !(t.values[0] == t.values[0])) return std::nullopt;
    for (double v : t.values)
        if (v != t.values[0]) return std::nullopt;
    return t.values[0];
}

// An answer that holds one value throughout, where the reference does not: the untouched
// starter (zeros), or a function that ignores its inputs.
void constant_kinds(const Tensor& e, const Tensor& g, bool zh, Comparison& c)
{
    const auto v = constant_value(g);
    if (!v || constant_value(e)) return;
    if (*v == 0.0) {
        add(c, "all_zero", zh ? "每个元素都是 0，正如起始代码的占位 np.zeros：还没有算出任何东西；在“你的代码：开始/结束”之间写出计算"
                              : "every element is 0, as the starter's placeholder np.zeros is: nothing is computed yet; write the computation between "
                                "\"your code: start\" and \"your code: end\"");
        return;
    }
    add(c, "constant", fmt::format(zh ? "每个元素都是 {:.6g}：答案不随位置或输入而变，看看是否返回了一个常数或广播错了" : "every element is {:.6g}: the answer does not vary with position or input; check for a constant returned or a broadcast gone wrong", *v));
}

void layout_kinds(const Tensor& e, const Tensor& g, const Tolerance& tol, bool zh, Comparison& c)
{
    if (e.shape != g.shape && e.size() == g.size() && without_ones(e.shape) == without_ones(g.shape)) {
        const bool same_values = all_within(e.values.to_vector(), g.values.to_vector(), tol);
        add(c, "squeezable_shape",
            fmt::format(zh ? "你的形状 {} 与 {} 只差大小为 1 的轴{}：reshape 成 {}" : "your shape {} differs from {} only by size-1 axes{}: reshape it to {}",
                        shape_text(g.shape), shape_text(e.shape),
                        same_values ? (zh ? "，值是对的" : ", and the values are right") : "", shape_text(e.shape)));
        return;
    }
    if (const auto perm = matching_transpose(e, g, tol)) {
        add(c, "transposed",
            fmt::format(zh ? "你的张量是参考答案换了轴的顺序：按轴 ({}) 转置（transpose/permute）即可" : "your tensor holds the reference with its axes in another order: transpose it (axes ({}) of yours)",
                        fmt::join(*perm, ", ")));
        return;
    }
    if (e.size() != g.size() || e.size() < 2) return;
    if (e.shape != g.shape && all_within(e.values.to_vector(), g.values.to_vector(), tol)) {  // the same values in the same order
        add(c, "reshaped", fmt::format(zh ? "你的值与参考答案相同、顺序也相同，只是形状是 {}：reshape 成 {} 即可" : "your values are the reference's in the same order, in the shape {}: reshape it to {}",
                                       shape_text(g.shape), shape_text(e.shape)));
        return;
    }
    std::vector<double> se = e.values.to_vector(), sg = g.values.to_vector();
    std::sort(se.begin(), se.end());
    std::sort(sg.begin(), sg.end());
    if (all_within(se, sg, tol)) {
        add(c, "permuted", zh ? "你的值与参考答案相同，但位置不同（别的布局或顺序）" : "your values are the reference's, in other places (another layout or order)");
    }
}

// Which boolean convention a 0/1 answer to an additive mask follows, and the conversion.
std::string boolean_note(const Tensor& e, const Tensor& g, bool zh)
{
    bool ones_hidden = true, ones_visible = true;
    for (std::size_t k = 0; k < e.size(); ++k) {
        const bool hidden = e.values[k] != 0.0, one = g.values[k] == 1.0;
        ones_hidden = ones_hidden && hidden == one;
        ones_visible = ones_visible && hidden != one;
    }
    if (ones_hidden)
        return zh ? "你给的是布尔掩码，True 标出被遮住的位置（nn.MultiheadAttention 的 attn_mask、key_padding_mask 的约定）；这里要加性掩码：np.where(mask, -np.inf, 0.0)"
                  : "yours is a boolean mask, True where hidden (the convention of nn.MultiheadAttention's attn_mask and key_padding_mask); this tensor is "
                    "additive: np.where(mask, -np.inf, 0.0)";
    if (ones_visible)
        return zh ? "你给的是布尔掩码，True 标出可见的位置（scaled_dot_product_attention 的布尔 attn_mask 约定）；这里要加性掩码：np.where(mask, 0.0, -np.inf)"
                  : "yours is a boolean mask, True where a query may look (the convention of scaled_dot_product_attention's boolean attn_mask); this tensor is "
                    "additive: np.where(mask, 0.0, -np.inf)";
    return zh ? "你给的是 0/1（布尔）掩码，且遮住的位置也不对；这里要的是加性掩码：可见处 0，遮住处 -inf"
              : "yours is a 0/1 (boolean) mask, hiding other positions too; this tensor is additive: 0 where visible, -inf where hidden";
}

// Whether every NaN of got lies in a row (along the last axis) that is NaN throughout, and
// whether each such row is one the reference holds at zero throughout (a row meant to see no
// key, under a safe softmax).
struct NanRows {
    bool whole = true, meant_empty = true;
};

NanRows nan_rows(const Tensor& e, const Tensor& got)
{
    NanRows out;
    if (got.rank() == 0) return {false, false};
    const std::size_t S = got.shape.back();
    const bool same_shape = e.shape == got.shape;
    for (std::size_t r = 0; r * S < got.size(); ++r) {
        std::size_t nan = 0;
        bool zero = same_shape;
        for (std::size_t j = 0; j < S; ++j) {
            nan += std::isnan(got.values[r * S + j]) ? 1 : 0;
            zero = zero && e.values[r * S + j] == 0.0;
        }
        out.whole = out.whole && (nan == 0 || nan == S);
        out.meant_empty = out.meant_empty && (nan == 0 || zero);
    }
    return out;
}

// What NaN in the answer says: a row that sees no key (safe softmax advice only where the
// reference's row sees none either), or 0 * inf.
std::string nan_advice(const Tensor& e, const Tensor& got, bool zh)
{
    const NanRows rows = nan_rows(e, got);
    if (rows.whole && rows.meant_empty)
        return zh ? "；NaN 占满了整行：这些行本就没有可见的键，普通 softmax 在 -inf - (-inf) 处得到 NaN（用 safe softmax，让这些行为 0）"
                  : "; the NaN fill whole rows that are meant to see no key, where a plain softmax meets -inf - (-inf) (use a safe softmax: zeros there)";
    if (rows.whole)
        return zh ? "；NaN 占满了整行：这些行在参考答案里能看到键，而你的掩码把它们的键全遮住了：检查掩码遮住了哪些键（三角形或布尔约定反了？）"
                  : "; the NaN fill whole rows that should see keys: your mask hides every key of them; check which keys it hides (a flipped "
                    "triangle or an inverted boolean?)";
    return zh ? "；NaN 常来自 0 * inf（如 -inf * triu(ones) 中的 0 乘 -inf）：用 masked_fill 或 where 构造掩码"
              : "; NaN often comes from 0 * inf (in -inf * triu(ones), the zeros times -inf): build the mask with masked_fill or where";
}

}  // namespace

void detect_kinds(const Tensor& expected, const Tensor& got, const Tolerance& tol, Lang lang, Comparison& c)
{
    const bool zh = lang == Lang::zh;
    const NonFiniteCount& n = c.nonfinite;
    if (n.total() > 0) {
        std::string note = fmt::format(zh ? "参考答案是有限数的地方，你的张量有 {} 个 NaN、{} 个 +inf、{} 个 -inf" : "{} NaN, {} +inf and {} -inf where the reference holds numbers",
                                       n.nan, n.posinf, n.neginf);
        if (n.nan > 0) note += nan_advice(expected, got, zh);
        add(c, "nonfinite", note);
    }
    if (expected.shape == got.shape) constant_kinds(expected, got, zh, c);
    if (expected.shape == got.shape && is_additive_mask(expected) && is_zero_one(got)) {
        add(c, "boolean_vs_additive", boolean_note(expected, got, zh));
    } else if (expected.shape == got.shape && is_zero_one(expected) && is_additive_mask(got)) {
        add(c, "boolean_vs_additive", zh ? "你给的是加性掩码（0 与 -inf）；这里要的是 0/1（布尔）掩码" : "yours is an additive mask (0 and -inf); this tensor is a 0/1 (boolean) mask");
    }
    layout_kinds(expected, got, tol, zh, c);
}

}  // namespace attnlab

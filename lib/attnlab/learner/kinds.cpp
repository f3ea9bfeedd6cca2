// The kinds of difference detect_kinds() names (compare.hpp): each is a test on the two
// tensors and a sentence that says what to change.
#include "attnlab/learner/compare.hpp"

#include "attnlab/core/measure.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numeric>

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
bool is_zero_one(const Tensor& t)
{
    for (double v : t.values)
        if (v != 0.0 && v != 1.0) return false;
    return t.size() > 0;
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

// Whether every NaN of t lies in a row (along the last axis) that is NaN throughout.
bool nan_fills_whole_rows(const Tensor& t)
{
    if (t.rank() == 0) return false;
    const std::size_t S = t.shape.back();
    for (std::size_t r = 0; r * S < t.size(); ++r) {
        std::size_t nan = 0;
        for (std::size_t j = 0; j < S; ++j) nan += std::isnan(t.values[r * S + j]) ? 1 : 0;
        if (nan != 0 && nan != S) return false;
    }
    return true;
}

}  // namespace

void detect_kinds(const Tensor& expected, const Tensor& got, const Tolerance& tol, Lang lang, Comparison& c)
{
    const bool zh = lang == Lang::zh;
    const NonFiniteCount& n = c.nonfinite;
    if (n.total() > 0) {
        std::string note = fmt::format(zh ? "参考答案是有限数的地方，你的张量有 {} 个 NaN、{} 个 +inf、{} 个 -inf" : "{} NaN, {} +inf and {} -inf where the reference holds numbers",
                                       n.nan, n.posinf, n.neginf);
        if (n.nan > 0 && nan_fills_whole_rows(got)) {
            note += zh ? "；NaN 占满了整行：这些行没有任何可见的键，普通 softmax 在 -inf - (-inf) 处得到 NaN（用 safe softmax，或让每行至少看到一个键）"
                       : "; the NaN fill whole rows: rows with no visible key, where a plain softmax meets -inf - (-inf) (use a safe softmax, or give each "
                         "row a key it may see)";
        } else if (n.nan > 0) {
            note += zh ? "；NaN 常来自 0 * inf（如 -inf * triu(ones) 中的 0 乘 -inf）：用 masked_fill 或 where 构造掩码"
                       : "; NaN often comes from 0 * inf (in -inf * triu(ones), the zeros times -inf): build the mask with masked_fill or where";
        }
        add(c, "nonfinite", note);
    }
    if (expected.shape == got.shape && is_additive_mask(expected) && is_zero_one(got)) {
        add(c, "boolean_vs_additive", zh ? "你给的是 0/1（布尔）掩码；这里要的是加性掩码：可见处 0，遮住处 -inf" : "yours is a 0/1 (boolean) mask; this tensor is additive: 0 where visible, -inf where hidden");
    } else if (expected.shape == got.shape && is_zero_one(expected) && is_additive_mask(got)) {
        add(c, "boolean_vs_additive", zh ? "你给的是加性掩码（0 与 -inf）；这里要的是 0/1（布尔）掩码" : "yours is an additive mask (0 and -inf); this tensor is a 0/1 (boolean) mask");
    }
    layout_kinds(expected, got, tol, zh, c);
}

}  // namespace attnlab

// `mask`'s checks and notes: each claim beside the measurement that judges it.
#include "attnlab/experiments/mask_internal.hpp"

#include "attnlab/core/error_model.hpp"
#include "attnlab/core/half.hpp"
#include "attnlab/core/measure.hpp"
#include "attnlab/core/rng.hpp"
#include "attnlab/io/embedded.hpp"
#include "attnlab/io/npy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace attnlab::mask_detail {

namespace {

// --- checks ---

template <class T>
std::optional<Check> check_tril(const MaskParams&, const Run& run, const CheckEnv& env)
{
    const MaskSpec& m = resolved_as<MaskSpec>(run);
    if (m.kind != MaskKind::causal) return std::nullopt;
    const Mat<T> ref = causal_reference_tril<T>(m.queries, m.keys, m.align, m.diagonal, static_cast<T>(m.fill));
    const Tensor& mask = run.at("mask");
    double differing = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) differing += mask.values[i] != static_cast<double>(ref.data()[i]);
    return exact_zero(tr(env,
                         "the causal mask triu(fill, diagonal={}) equals the lower-triangular "
                         "construction where(tril(ones, diagonal={}), 0, fill)",
                         "因果掩码 triu(fill, diagonal={}) 与下三角构造 where(tril(ones, diagonal={}), 0, fill) 逐元素相同", m.diagonal,
                         m.diagonal - 1),
                      tr(env, "elements that differ", "不同的元素个数"), differing);
}

// What the visibility check expects, in words that match the figure it measures.
std::string visibility_claim(const MaskSpec& m, const CheckEnv& env)
{
    const long k = m.offset() + m.diagonal;  // row i sees keys 0 .. i + offset + diagonal - 1
    const std::string reach = k == 0 ? "i" : k > 0 ? fmt::format("i+{}", k) : fmt::format("i-{}", -k);
    switch (m.kind) {
    case MaskKind::causal: return tr(env, "row i sees exactly {} keys", "第 i 行恰好看到 {} 个键", reach);
    case MaskKind::padding: return tr(env, "row i of sequence b sees exactly lengths[b] keys", "序列 b 的第 i 行恰好看到 lengths[b] 个键");
    case MaskKind::both:
        return tr(env, "row i of sequence b sees exactly min(lengths[b], {}) keys", "序列 b 的第 i 行恰好看到 min(lengths[b], {}) 个键", reach);
    case MaskKind::window:
        // keys i+offset-W+1 .. i+offset+diagonal-1: W + diagonal - 1 of them where none is cut
        return tr(env, "row i sees exactly min({}, {}) keys (the window)", "第 i 行恰好看到 min({}, {}) 个键（窗口）", reach, m.window + m.diagonal - 1);
    case MaskKind::none: break;
    }
    return {};
}

std::optional<Check> check_visible(const MaskParams&, const Run& run, const CheckEnv& env)
{
    const MaskSpec& m = resolved_as<MaskSpec>(run);
    return exact_zero(visibility_claim(m, env), tr(env, "rows with another count", "个数不对的行数"),
                      static_cast<double>(rows_with_wrong_visibility(run.at("mask"), m)));
}

std::optional<Check> check_rows_sum(const MaskParams&, const Run& run, const CheckEnv& env)
{
    const MaskSpec& m = resolved_as<MaskSpec>(run);
    // S exps and sums and the division, then (16 bits) each weight rounded once when stored:
    // those roundings add up to at most u(T) sum_j w = u(T).
    return at_most(tr(env, "every softmax row that is not fully masked sums to 1", "每一行未被完全屏蔽的 softmax 之和为 1"), "max |sum_j w - 1|",
                   max_row_sum_error(run.at("weights"), m), accumulate_then_store(env.dtype, dsize(m.keys) + 4.0, 1.0), 1.0);
}

// The (batch, query) rows the spec hides entirely.
std::vector<std::pair<long, long>> fully_masked_rows(const MaskParams& p, const MaskSpec& m)
{
    std::vector<std::pair<long, long>> rows;
    for (long b = 0; b < batch_of(p, m); ++b)
        for (long i = 0; i < m.queries; ++i)
            if (m.row_fully_masked(b, i)) rows.emplace_back(b, i);
    return rows;
}

// Whether the fill hides exactly: -inf, or a finite fill so far below the scores that exp of
// a hidden score minus the row's largest underflows to 0 even in float64 (below -745), with
// room for hidden_scores_ignored's perturbation (|10 z| < 100), and no row that sees no key.
// A finite fill nearer than that (--fill -1.79), or a fully masked row under any finite fill,
// leaks weight by design: the exact-zero checks then show the leak, a demonstration, not an
// invariant of the run; so does the boolean conventions' (-inf) agreement with it.
bool fill_hides_exactly(const MaskParams& p, const Run& run)
{
    const MaskSpec& m = resolved_as<MaskSpec>(run);
    if (std::isinf(m.fill)) return true;
    // a row that sees no key spreads its weight evenly over the hidden ones under a finite fill
    if (!fully_masked_rows(p, m).empty()) return false;
    double lo = 0.0, hi = 0.0;
    for (double v : run.at("scores").values) lo = std::min(lo, v), hi = std::max(hi, v);
    return m.fill + (hi - lo) + 100.0 < -745.0;
}

std::optional<Check> exact_under_fill(Check c, const MaskParams& p, const Run& run)
{
    if (!fill_hides_exactly(p, run)) c.role = Role::demonstration;
    return c;
}

std::optional<Check> check_masked_zero(const MaskParams& p, const Run& run, const CheckEnv& env)
{
    return exact_under_fill(exact_zero(tr(env, "every masked weight is exactly 0, not merely small", "每个被屏蔽的权重恰好为 0，而不只是很小"),
                      tr(env, "max |w| at masked keys", "被屏蔽键上的 max |w|"),
                      max_masked_weight(run.at("weights"), resolved_as<MaskSpec>(run))),
                            p, run);
}

std::optional<Check> check_row0(const MaskParams& p, const Run& run, const CheckEnv& env)
{
    const MaskSpec& m = resolved_as<MaskSpec>(run);
    const bool causal_part = m.kind == MaskKind::causal || m.kind == MaskKind::both;
    const bool no_empty = std::all_of(m.lengths.begin(), m.lengths.end(), [](long n) { return n > 0; });
    // row 0 sees exactly key 0 only where offset + diagonal = 1 (the usual upper-left triangle)
    if (!causal_part || m.offset() + m.diagonal != 1 || (m.kind == MaskKind::both && !no_empty)) return std::nullopt;
    const Tensor& w = run.at("weights");
    const std::size_t L = w.dim(1), S = w.dim(2);
    double err = 0.0;
    for (std::size_t b = 0; b < w.dim(0); ++b)
        for (std::size_t j = 0; j < S; ++j) err = worse(err, std::abs(w.values[b * L * S + j] - (j == 0 ? 1.0 : 0.0)));
    return exact_under_fill(exact_zero(tr(env, "row 0 of the causal weights is [1, 0, ..., 0]", "因果权重的第 0 行是 [1, 0, ..., 0]"), "max |w[0] - e_0|", err), p, run);
}

std::optional<Check> check_no_nan(const MaskParams&, const Run& run, const CheckEnv& env)
{
    return exact_zero(tr(env, "no attention weight is NaN", "没有任何注意力权重是 NaN"), tr(env, "NaN weights", "NaN 权重个数"), static_cast<double>(count_nan(run.at("weights"))));
}

std::optional<Check> check_complement(const MaskParams&, const Run& run, const CheckEnv& env)
{
    if (!run.has("key_padding_mask")) return std::nullopt;
    const Tensor& kpm = run.at("key_padding_mask");
    const Tensor& amb = run.at("attn_mask_bool");
    double same = 0;
    for (std::size_t i = 0; i < kpm.size(); ++i) same += kpm.values[i] == amb.values[i];
    return exact_zero(tr(env, "key_padding_mask (true = ignore) is the complement of attn_mask (true = may attend)",
                         "key_padding_mask（true = 忽略）是 attn_mask（true = 可关注）的补集"),
                      tr(env, "positions where the two agree", "两者相同的位置数"), same);
}

// Hugging Face's combined boolean (sdpa_mask) is true exactly where the additive mask is 0.
std::optional<Check> check_sdpa_combined(const MaskParams&, const Run& run, const CheckEnv& env)
{
    if (!run.has("sdpa_mask_bool") || !run.has("mask")) return std::nullopt;
    const Tensor& sdpa = run.at("sdpa_mask_bool");
    const Tensor& mask = run.at("mask");
    if (sdpa.size() != mask.size()) return std::nullopt;
    double differ = 0;
    for (std::size_t k = 0; k < sdpa.size(); ++k) differ += (sdpa.values[k] != 0.0) != (mask.values[k] == 0.0);
    return exact_zero(tr(env, "sdpa_mask_bool (true = may attend) holds padding and the causal triangle together: true exactly where the additive mask is 0",
                         "sdpa_mask_bool（true = 可关注）同时含填充与因果三角：恰在加性掩码为 0 处为 true"),
                      tr(env, "positions where they disagree", "两者不一致的位置数"), differ);
}

template <class T>
std::optional<Check> check_same_weights(const MaskParams& p, const Run& run, const CheckEnv& env)
{
    const MaskSpec& m = resolved_as<MaskSpec>(run);
    if (m.kind != MaskKind::padding) return std::nullopt;
    const Ten3<T> scores = from_tensor<T, 3>(run.at("scores"));
    const Ten3<T> w = masked_softmax_additive(scores, m, p.softmax);
    const Ten3<T> w_kpm = masked_softmax_key_padding(scores, key_padding_mask(m), p.softmax);
    const Ten3<T> w_amb = masked_softmax_attn_bool(scores, attn_mask_bool(m), p.softmax);
    return exact_under_fill(bit_identical(tr(env, "key_padding_mask, boolean attn_mask and the additive mask give the same weights",
                                             "key_padding_mask、布尔 attn_mask 与加性掩码给出相同的权重"),
                                          "max |w_bool - w_additive| (NaN = NaN)", worse(max_abs_diff(w_kpm, w), max_abs_diff(w_amb, w))),
                            p, run);
}

// Causality of the result: the scores of hidden keys must not matter at all.
template <class T>
std::optional<Check> check_hidden_ignored(const MaskParams& p, const Run& run, const CheckEnv& env)
{
    const MaskSpec& m = resolved_as<MaskSpec>(run);
    Ten3<T> changed = from_tensor<T, 3>(run.at("scores"));
    Rng rng(env.seed, stream::perturb);
    for (std::size_t b = 0; b < changed.shape(0); ++b)
        for (long i = 0; i < m.queries; ++i)
            for (long j = 0; j < m.keys; ++j)
                if (m.masked(static_cast<long>(b), i, j)) changed(b, i, j) += static_cast<T>(10.0 * rng.normal());
    const Ten3<T> w_changed = masked_softmax_additive(changed, m, p.softmax);
    const Ten3<T> w = masked_softmax_additive(from_tensor<T, 3>(run.at("scores")), m, p.softmax);
    return exact_under_fill(bit_identical(tr(env, "changing the scores of masked keys leaves every row's weights bit-identical",
                                             "改变被屏蔽键的得分，每一行的权重逐位不变"),
                                          "max |w_changed - w|", max_abs_diff(w_changed, w)),
                            p, run);
}

// "Attention 的两个补丁" §5.3: scaled_dot_product_attention's boolean mask puts True where
// positions are masked. PyTorch's rule is the opposite (True = may attend), so a mask built
// that way sends every row's weight to the padding: the figure is the largest mass a row
// puts on its padded keys.
std::optional<Check> check_sdpa_bool(const MaskParams&, const Run& run, const CheckEnv& env)
{
    const MaskSpec& m = resolved_as<MaskSpec>(run);
    if (!run.has("weights_bool_inverted")) return std::nullopt;
    const Tensor& w = run.at("weights_bool_inverted");
    const std::size_t L = w.dim(1), S = w.dim(2);
    double worst = 0.0;
    for (std::size_t b = 0; b < w.dim(0); ++b)
        for (std::size_t i = 0; i < L; ++i) {
            double mass = 0.0;
            for (auto j = static_cast<std::size_t>(m.lengths[b]); j < S; ++j) mass += w.values[(b * L + i) * S + j];
            worst = worse(worst, mass);
        }
    return quoting(article_claim(tr(env, "scaled_dot_product_attention's boolean attn_mask masks the positions set to True (§5.3)",
                            "scaled_dot_product_attention 的布尔 attn_mask 屏蔽值为 True 的位置（§5.3）"),
                         tr(env, "largest weight mass on padded keys when key_padding_mask (True = padding) is passed as attn_mask",
                            "把 key_padding_mask（True = padding）当作 attn_mask 传入时，填充键上的最大权重和"),
                         worst, 0.0),
                   "bool 类型的 mask（True 位置屏蔽）",
                   tr(env, "a boolean mask passed to the attention call hides the positions set to True",
                      "传给注意力函数的布尔掩码，会屏蔽值为 True 的位置"));
}

// "Attention 的两个补丁" §5.3 and FAQ Q12: -1e9 is used instead of -inf "to avoid fp16
// overflow". Stored in float16 (PyTorch's .half() rounding), a finite fill stays finite only
// up to 65504 in magnitude: -1e9 becomes -inf, the very value it was to avoid.
std::optional<Check> check_fill_fp16(const MaskParams& p, const Run&, const CheckEnv& env)
{
    const double fill = parse_fill(p.fill);
    if (!std::isfinite(fill)) return std::nullopt;
    return quoting(article_claim(tr(env, "filling with {} instead of -inf avoids float16 overflow (§5.3, FAQ Q12: -1e9 'to avoid fp16 overflow')",
                            "用 {} 代替 -inf 填充可以避免 float16 溢出（§5.3、FAQ Q12：用 -1e9“防止 fp16 溢出”）", p.fill),
                         tr(env, "|float16({})| as PyTorch's .half() rounds it (bfloat16 keeps {})", "按 PyTorch .half() 舍入的 |float16({})|（bfloat16 保留为 {}）",
                            p.fill, fmt::format("{:.9g}", round_to_bfloat16(fill))),
                         std::abs(round_to_half(fill)), 65504.0),
                   "工程上常用 -1e9 替代 -inf 防止 fp16 溢出",
                   tr(env, "a large finite fill such as -1e9 keeps masked scores finite in float16, where -inf would cause trouble",
                      "用 -1e9 这样的有限大数填充，在 float16 下被屏蔽的得分仍是有限值，而 -inf 会出问题"));
}

// "Attention 的两个补丁" §5.3: -inf "triggers NaN in some fused kernels, because exp(-inf) may
// overflow in fp16". exp(-inf) is 0 exactly in every IEEE format, float16 included; the NaN of
// a fully masked row comes from the max subtraction, (-inf) - (-inf).
std::optional<Check> check_nan_from_exp(const MaskParams& p, const Run& run, const CheckEnv& env)
{
    const double fill = parse_fill(p.fill);
    if (std::isfinite(fill) || fully_masked_rows(p, resolved_as<MaskSpec>(run)).empty()) return std::nullopt;
    const double exp_half = round_to_half(std::exp(fill)), shifted = round_to_half(fill - fill);
    return quoting(article_claim(tr(env, "a -inf fill gives NaN because exp(-inf) overflows in float16 (§5.3)", "用 -inf 填充会出 NaN，是因为 exp(-inf) 在 float16 下溢出（§5.3）"),
                         tr(env, "|exp(-inf)| in float16 (the NaN of a fully masked row is the max subtraction: (-inf) - (-inf) = {})",
                            "float16 下的 |exp(-inf)|（整行被屏蔽时的 NaN 来自减去最大值：(-inf) - (-inf) = {}）", std::isnan(shifted) ? std::string("nan") : fmt::format("{}", shifted)),
                         std::abs(exp_half), 65504.0, Compare::gt),
                   "因为 exp(-inf) 在 fp16 下可能溢出",
                   tr(env, "the NaN that a -inf fill can give in fused float16 kernels comes from exp(-inf) itself",
                      "-inf 填充在 float16 fused kernel 里出现的 NaN，来自 exp(-inf) 本身"));
}

// What the fill does to a fully masked row in the run's dtype: -1e9 keeps it finite (uniform
// once the scores vanish beside it) in float32 and bfloat16, and is -inf in float16, so the
// row is NaN there: §5.3's reason for -1e9 fails in the very dtype it names.
std::optional<Check> check_fill_row_finite(const MaskParams& p, const Run& run, const CheckEnv& env)
{
    const MaskSpec& m = resolved_as<MaskSpec>(run);
    const double fill = parse_fill(p.fill);
    if (!std::isfinite(fill) || p.softmax != SoftmaxKind::plain) return std::nullopt;
    const Tensor& w = run.at("weights");
    const std::size_t L = w.dim(1), S = w.dim(2);
    long rows = 0, nan = 0;
    for (std::size_t b = 0; b < w.dim(0); ++b)
        for (std::size_t i = 0; i < L; ++i) {
            if (!m.row_fully_masked(static_cast<long>(b), static_cast<long>(i))) continue;
            ++rows;
            for (std::size_t j = 0; j < S; ++j) nan += std::isnan(w.values[(b * L + i) * S + j]) ? 1 : 0;
        }
    if (rows == 0) return std::nullopt;
    return quoting(article_claim(tr(env, "with fill {} a fully masked row keeps finite weights in {} (§5.3: -1e9 'to avoid fp16 overflow')",
                            "填充 {} 时，完全被屏蔽的行在 {} 下的权重保持有限（§5.3：用 -1e9“防止 fp16 溢出”）", p.fill, name_of(env.dtype)),
                         tr(env, "NaN weights in the {} fully masked rows (the fill is {} in {})", "{0} 个完全被屏蔽的行中的 NaN 权重（填充值在 {2} 下为 {1}）", rows,
                            fmt::format("{:.9g}", round_to_dtype(fill, env.dtype)), name_of(env.dtype)),
                         static_cast<double>(nan), 0.0),
                   "工程上常用 -1e9 替代…效果几乎一样但数值更稳",
                   tr(env, "with -1e9 in place of -inf, even a row with every key masked comes out as finite numbers",
                      "用 -1e9 代替 -inf，即使一行的所有键都被屏蔽，结果仍是有限的数"));
}

// float16 and bfloat16: the softmax written op by op as exp(s) / sum exp(s), each result
// stored in the dtype, on row (0, 0) of the scores shifted (in float64, then stored) so that
// its max sits 0.5 past ln(max finite): 11.09 in float16, 88.72 in bfloat16. Against
// softmax(s - max s), the form PyTorch's softmax computes.
struct ShiftedRow {
    double threshold = 0.0, top = 0.0, own_max = 0.0;
    long naive_bad = 0, safe_bad = 0, n = 0;
};

template <class T>
std::optional<ShiftedRow> shifted_softmax(const Tensor& scores)
{
    if (!is_narrow<T>) return std::nullopt;  // 88.7 in float32, 709.8 in float64: out of the usual scores' reach
    ShiftedRow r;
    r.threshold = std::log(static_cast<double>(std::numeric_limits<T>::max()));
    r.top = r.threshold + 0.5;
    r.n = static_cast<long>(scores.shape.back());
    double mx = -std::numeric_limits<double>::infinity();
    for (long j = 0; j < r.n; ++j)
        if (std::isfinite(scores.values[j])) mx = std::max(mx, scores.values[j]);
    if (!std::isfinite(mx)) return std::nullopt;
    r.own_max = mx;
    std::vector<T> row(static_cast<std::size_t>(r.n)), e(row.size());
    Accum<T> sum = 0;
    for (std::size_t j = 0; j < row.size(); ++j) {
        row[j] = static_cast<T>(scores.values[j] - mx + r.top);
        e[j] = static_cast<T>(std::exp(static_cast<Accum<T>>(row[j])));
        sum += static_cast<Accum<T>>(e[j]);
    }
    const auto total = static_cast<T>(sum);
    for (std::size_t j = 0; j < row.size(); ++j) r.naive_bad += std::isfinite(static_cast<double>(e[j] / total)) ? 0 : 1;
    softmax_inplace(row.data(), row.size(), SoftmaxKind::plain);
    for (const T w : row) r.safe_bad += std::isfinite(static_cast<double>(w)) ? 0 : 1;
    return r;
}

template <class T>
std::optional<Check> check_naive_overflow(const MaskParams&, const Run& run, const CheckEnv& env)
{
    const auto r = shifted_softmax<T>(run.at("scores"));
    if (!r) return std::nullopt;
    return demonstration(tr(env, "exp(s) / sum exp(s) without subtracting the row max overflows in {} once a score passes ln(max) = {:.4g}",
                            "不减去行最大值直接算 exp(s) / sum exp(s)，在 {} 下只要得分超过 ln(max) = {:.4g} 就会溢出", name_of(env.dtype), r->threshold),
                         tr(env, "inf or NaN weights of the {} in scores row (0, 0) shifted to max {:.4g} (its own max {:.3g})",
                            "把得分第 (0, 0) 行平移到最大值 {1:.4g}（原最大值 {2:.3g}）后，{0} 个权重中 inf 或 NaN 的个数", r->n, r->top, r->own_max),
                         static_cast<double>(r->naive_bad), 0.0, Compare::gt);
}

template <class T>
std::optional<Check> check_safe_no_overflow(const MaskParams&, const Run& run, const CheckEnv& env)
{
    const auto r = shifted_softmax<T>(run.at("scores"));
    if (!r) return std::nullopt;
    return exact_zero(tr(env, "softmax(s - max s) of the same shifted row has no inf or NaN in {}", "同一平移后的行，softmax(s - max s) 在 {} 下没有 inf 或 NaN",
                         name_of(env.dtype)),
                      tr(env, "inf or NaN weights of the {} in scores row (0, 0) shifted to max {:.4g}", "把得分第 (0, 0) 行平移到最大值 {1:.4g} 后，{0} 个权重中 inf 或 NaN 的个数", r->n,
                         r->top),
                      static_cast<double>(r->safe_bad));
}

std::optional<Check> check_leak(const MaskParams& p, const Run& run, const CheckEnv& env)
{
    if (!p.multiply) return std::nullopt;
    return quoting(article_claim(tr(env,
                            "multiplying by a 0/1 mask leaks only a very small probability mass to masked keys "
                            "(taking 'very small' as below 1%)",
                            "乘以 0/1 掩码只会把“很小”的概率泄漏到被屏蔽的键（以低于 1% 计）"),
                         tr(env, "max leaked mass per row", "每行泄漏的最大概率"), max_abs(run.at("leak")), 0.01),
                   "Softmax 之后这些位置仍然分到少量概率（虽然很小）",
                   tr(env, "a 0/1 product before softmax leaves masked keys a probability too small to matter",
                      "在 softmax 之前乘 0/1 掩码，被屏蔽的键只分到小到可以忽略的概率"));
}

// The smallest mass softmax(scores) leaves on the keys a row may see, over rows that see any.
double min_kept_mass(const Tensor& scores, const MaskSpec& m)
{
    const std::size_t L = scores.dim(1), S = scores.dim(2);
    double least = 1.0;
    for (std::size_t b = 0; b < scores.dim(0); ++b)
        for (std::size_t i = 0; i < L; ++i) {
            const auto row = scores.values.slice((b * L + i) * S, (b * L + i + 1) * S);
            const double top = *std::max_element(row.begin(), row.end());
            double all = 0.0, kept = 0.0;
            for (std::size_t j = 0; j < S; ++j) {
                const double e = std::exp(row[j] - top);
                all += e;
                if (!m.masked(static_cast<long>(b), static_cast<long>(i), static_cast<long>(j))) kept += e;
            }
            if (kept > 0.0) least = std::min(least, kept / all);
        }
    return least;
}

// The rounding bound of the weights a multiply after softmax gives, relative to w <= 1: the
// additive weights S + 4 operations and a store; p the same; p_j / sum_kept p_k doubles p's
// error and adds S + 2 operations and a store (4S + 14 operations, 4 stores). A p stored below
// the normal range is off by up to h absolutely, which dividing by the kept mass k amplifies:
// (S + 1) h / k.
double multiply_tol(const Run& run, const MaskSpec& m, DType dtype)
{
    const double S = dsize(m.keys);
    return accumulate_then_store(dtype, 4.0 * S + 14.0, 4.0) + (S + 1.0) * subnormal_half_spacing(dtype) / min_kept_mass(run.at("scores"), m);
}

// Multiplying the weights after softmax by the 0/1 mask and renormalising each row gives
// p_j / sum_kept p_k = exp(s_j) / sum_kept exp(s_k): the weights of the -inf additive mask,
// for every row that sees a key. The yardstick is that softmax over the visible keys, made
// here from the scores: with a finite --fill the run's own weights leak a little, and are not it.
std::optional<Check> check_renormalised_multiply(const MaskParams& p, const Run& run, const CheckEnv& env)
{
    if (!p.multiply) return std::nullopt;
    const MaskSpec& m = resolved_as<MaskSpec>(run);
    const Tensor &s = run.at("scores"), &r = run.at("renormalised_weights");
    const std::size_t L = s.dim(1), S = s.dim(2);
    double worst = 0.0;
    std::vector<double> row(S);
    for (std::size_t b = 0; b < s.dim(0); ++b)
        for (std::size_t i = 0; i < L; ++i) {
            if (m.row_fully_masked(static_cast<long>(b), static_cast<long>(i))) continue;
            const std::size_t at = (b * L + i) * S;
            for (std::size_t j = 0; j < S; ++j)
                row[j] = m.masked(static_cast<long>(b), static_cast<long>(i), static_cast<long>(j)) ? -std::numeric_limits<double>::infinity() : s.values[at + j];
            softmax_inplace(row.data(), S, SoftmaxKind::plain);
            for (std::size_t j = 0; j < S; ++j) worst = worse(worst, std::abs(r.values[at + j] - row[j]));
        }
    return at_most(tr(env, "multiplying the weights after softmax by the 0/1 mask and renormalising each row gives the -inf mask's weights",
                      "softmax 之后把权重乘以 0/1 掩码、再把每行重新归一化，得到的就是 -inf 掩码的权重"),
                   tr(env, "max |softmax(s) * mask01 / row sum - softmax over the visible keys| over rows that see a key",
                      "max |softmax(s) * mask01 / 行和 - 只在可见键上的 softmax|（至少看得到一个键的行）"),
                   worst, multiply_tol(run, m, env.dtype), 1.0);
}

// "Attention 的两个补丁" §7 (tips): the causal mask "cannot be multiplied straight into attn;
// only adding it lets softmax mask strictly". Multiplied straight in, after softmax, the rows
// keep only the mass on visible keys: they no longer sum to 1 and are not the additive mask's
// weights. The figure is the most mass a row loses, 1 - sum of softmax(s) * mask01; the claim
// holds while it is above rounding. Renormalising mends it (renormalised_multiply_masks).
std::optional<Check> check_multiply_after_softmax(const MaskParams& p, const Run& run, const CheckEnv& env)
{
    if (!p.multiply) return std::nullopt;
    const MaskSpec& m = resolved_as<MaskSpec>(run);
    const Check c = article_claim_numeric(tr(env, "a mask cannot be multiplied straight into the attention weights; only adding it masks strictly (§7 tips)",
                                             "掩码不能直接乘到注意力权重上；只有相加才能严格屏蔽（§7 小贴士）"),
                                          tr(env, "max over rows that see a key of 1 - sum_j softmax(s)_j * mask01_j (the mass a plain product loses)",
                                             "对至少看得到一个键的行取 1 - sum_j softmax(s)_j * mask01_j 的最大值（直接相乘丢掉的概率）"),
                                          1.0 - min_kept_mass(run.at("scores"), m), multiply_tol(run, m, env.dtype), 1.0);
    Check holds = quoting(c, "不能直接乘 attn；相加才能让 Softmax 严格屏蔽",
                          tr(env, "the product softmax(s) * mask, taken as it is, leaves rows that do not sum to 1; adding -inf before softmax is exact",
                             "直接拿 softmax(s) * mask 当权重，行和不再是 1；在 softmax 之前加 -inf 才是精确的"));
    holds.cmp = Compare::gt;  // the claim says a plain product loses mass
    return holds;
}

// Largest |a - b| over rows 0..L-2 of two [L, E] blocks of the fixture.
double early_rows_change(const Tensor& f, std::size_t a, std::size_t b)
{
    const std::size_t block = f.dim(1) * f.dim(2), early = block - f.dim(2);
    return max_abs_diff(f.values.slice(a * block, a * block + early), f.values.slice(b * block, b * block + early));
}

// "Attention 的两个补丁"'s API list: torch.nn.Transformer takes "src_mask = causal mask". It
// applies no mask unless given one, and the causal mask belongs in tgt_mask, as the article's
// own §5.3 and FAQ Q13 say. PyTorch's nn.Transformer, called with its defaults on src and on
// src with the last token redrawn (the embedded fixture), moves the encoder's earlier rows;
// given src_mask = generate_square_subsequent_mask(5), the same rows stay bit-identical.
std::optional<Check> check_src_mask_default(const MaskParams& p, const Run&, const CheckEnv& env)
{
    if (p.kind != MaskKind::causal || p.kv_len.has_value()) return std::nullopt;  // a square causal mask, as src_mask would be
    const Tensor f = parse_npy(nn_transformer_src_mask_npy(), "the embedded nn.Transformer fixture");
    return quoting(article_claim(tr(env,
                            "torch.nn.Transformer's src_mask is the causal mask (the API list): changing the last source token "
                            "leaves the encoder's earlier rows unchanged",
                            "torch.nn.Transformer 的 src_mask 是因果掩码（API 列表）：改变最后一个源 token，编码器前面的行不变"),
                         tr(env,
                            "max |memory(src') - memory(src)| over rows 0..3 of PyTorch's nn.Transformer called with its default "
                            "masks (embedded fixture, float64; with src_mask = the causal mask passed: {:.3g})",
                            "PyTorch 的 nn.Transformer 用默认掩码调用时，第 0..3 行的 max |memory(src') - memory(src)|"
                            "（内嵌 fixture，float64；显式传入 src_mask = 因果掩码时为 {:.3g}）",
                            early_rows_change(f, 5, 4)),
                         early_rows_change(f, 3, 2), 0.0),
                   "src_mask=causal mask",
                   tr(env, "nn.Transformer applies a causal mask to the source by default",
                      "nn.Transformer 默认给源序列加因果掩码"));
}

}  // namespace

template <class T>
std::vector<CheckDef<MaskParams>> mask_checks()
{
    return {{"causal_equals_tril", {"mask"}, check_tril<T>},
            {"visible_keys_per_row", {"mask"}, check_visible},
            {"rows_sum_to_one", {"weights"}, check_rows_sum},
            {"masked_weights_exactly_zero", {"weights"}, check_masked_zero},
            {"row0_one_hot", {"weights"}, check_row0},
            {"no_nan_weights", {"weights"}, check_no_nan},
            {"bool_conventions_complement", {"key_padding_mask", "attn_mask_bool"}, check_complement},
            {"sdpa_mask_is_the_whole_mask", {"sdpa_mask_bool", "mask"}, check_sdpa_combined},
            {"bool_conventions_same_weights", {"scores"}, check_same_weights<T>},
            {"hidden_scores_ignored", {"scores"}, check_hidden_ignored<T>},
            {"multiply_leak_very_small", {"leak"}, check_leak},
            {"multiply_cannot_mask", {"scores"}, check_multiply_after_softmax},
            {"renormalised_multiply_masks", {"renormalised_weights", "scores"}, check_renormalised_multiply},
            {"minus_1e9_avoids_fp16_overflow", {}, check_fill_fp16},
            {"nan_from_exp_overflow", {}, check_nan_from_exp},
            {"finite_fill_rows_stay_finite", {"weights"}, check_fill_row_finite},
            {"naive_softmax_overflows", {"scores"}, check_naive_overflow<T>},
            {"max_subtracted_softmax_finite", {"scores"}, check_safe_no_overflow<T>},
            {"sdpa_bool_true_masks", {"weights_bool_inverted"}, check_sdpa_bool},
            {"transformer_src_mask_default", {}, check_src_mask_default}};
}

namespace {

// --- notes ---

std::optional<std::string> note_alignment(const MaskParams&, const Run& run, const CheckEnv& env)
{
    const MaskSpec& m = resolved_as<MaskSpec>(run);
    if (!m.has_causal()) return std::nullopt;
    if (m.queries == m.keys) {
        return tr(env, "L = S, so upper-left (PyTorch's is_causal=True) and lower-right alignment coincide",
                  "L = S，所以左上对齐（PyTorch 的 is_causal=True）与右下对齐相同");
    }
    return tr(env,
              "alignment {}: PyTorch's is_causal=True gives upper-left (query i sees keys "
              "0..i); a decoder that appends {} queries after {} cached keys needs "
              "lower-right (the last query sees every key)",
              "对齐方式 {0}：PyTorch 的 is_causal=True 是左上对齐（查询 i 看到键 0..i）；在 {2} 个缓存键之后追加 {1} 个查询的解码器"
              "需要右下对齐（最后一个查询看到所有键）",
                       name_of(m.align), m.queries, std::max(0L, m.keys - m.queries));
}

template <class T>
std::string row_string(const Ten3<T>& w, std::size_t b, std::size_t i)
{
    std::vector<std::string> items;
    const std::size_t n = std::min<std::size_t>(w.shape(2), 6);
    for (std::size_t j = 0; j < n; ++j) {
        const double v = static_cast<double>(w(b, i, j));
        items.push_back(std::isnan(v) ? std::string("nan") : fmt::format("{:.4g}", v));
    }
    if (w.shape(2) > n) items.push_back("...");
    return fmt::format("[{}]", fmt::join(items, ", "));
}


// Fully masked rows: what each softmax choice and each fill does to them.
template <class T>
std::optional<std::string> note_fully_masked(const MaskParams& p, const Run& run, const CheckEnv& env)
{
    const MaskSpec& m = resolved_as<MaskSpec>(run);
    const std::vector<std::pair<long, long>> rows = fully_masked_rows(p, m);
    if (rows.empty()) return std::nullopt;
    std::vector<std::string> listed;
    for (std::size_t r = 0; r < std::min<std::size_t>(rows.size(), 8); ++r)
        listed.push_back(tr(env, "(batch {}, query {})", "（批次 {}，查询 {}）", rows[r].first, rows[r].second));
    MaskSpec neg_inf = m, finite = m;
    neg_inf.fill = -std::numeric_limits<double>::infinity();
    finite.fill = -1e9;
    const Ten3<T> scores = from_tensor<T, 3>(run.at("scores"));
    const auto fb = static_cast<std::size_t>(rows.front().first), fi = static_cast<std::size_t>(rows.front().second);
    return tr(env,
              "fully masked rows: {}{}; for {} they give: plain softmax with -inf {}, safe softmax {}, "
              "fill -1e9 {}, this run ({} softmax, fill {}) {}",
              "完全被屏蔽的行：{}{}；对 {} 而言：-inf 配普通 softmax 得 {}，safe softmax 得 {}，"
              "填充 -1e9 得 {}，本次运行（{} softmax，填充 {}）得 {}",
                       fmt::join(listed, ", "), listed.size() == 8 ? ", ..." : "", listed.front(),
                       row_string(masked_softmax_additive(scores, neg_inf, SoftmaxKind::plain), fb, fi),
                       row_string(masked_softmax_additive(scores, neg_inf, SoftmaxKind::safe), fb, fi),
                       row_string(masked_softmax_additive(scores, finite, SoftmaxKind::plain), fb, fi),
                       name_of(p.softmax), p.fill, row_string(from_tensor<T, 3>(run.at("weights")), fb, fi));
}

}  // namespace

// Which of the two window rules the run follows, and what the other one would show.
std::optional<std::string> note_window(const MaskParams& p, const Run&, const CheckEnv& env)
{
    if (!p.window) return std::nullopt;
    const long W = *p.window, seen = window_keys(W, p.window_convention);
    if (p.window_convention == WindowConvention::keys) {
        return tr(env, "window W = {0} (--window-convention keys): each query sees at most {0} keys, i-{1}..i; Hugging Face's 2024 "
                       "_make_causal_mask showed W + 1 = {2} (--window-convention hf2024)",
                  "窗口 W = {0}（--window-convention keys）：每个查询最多看到 {0} 个键，i-{1}..i；Hugging Face 2024 年的 "
                  "_make_causal_mask 显示 W + 1 = {2} 个（--window-convention hf2024）",
                  W, W - 1, W + 1);
    }
    return tr(env, "window W = {0} (--window-convention hf2024): each query sees at most W + 1 = {1} keys, i-{0}..i, as Hugging Face's 2024 "
                   "_make_causal_mask; Hugging Face since 2025 and Mistral's rotating cache show {0} (--window-convention keys)",
              "窗口 W = {0}（--window-convention hf2024）：每个查询最多看到 W + 1 = {1} 个键，i-{0}..i，同 Hugging Face 2024 年的 "
              "_make_causal_mask；Hugging Face 2025 年起与 Mistral 的滚动缓存显示 {0} 个（--window-convention keys）",
              W, seen);
}

template <class T>
std::vector<NoteFn<MaskParams>> mask_notes()
{
    return {note_alignment, note_window, note_fully_masked<T>};
}

#define ATTNLAB_MASK_CHECKS(T)                                  \
    template std::vector<CheckDef<MaskParams>> mask_checks<T>(); \
    template std::vector<NoteFn<MaskParams>> mask_notes<T>();
ATTNLAB_MASK_CHECKS(float)
ATTNLAB_MASK_CHECKS(double)
ATTNLAB_MASK_CHECKS(f16)
ATTNLAB_MASK_CHECKS(bf16)

}  // namespace attnlab::mask_detail

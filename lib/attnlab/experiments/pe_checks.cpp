// `pe`'s checks and notes: each claim beside the measurement that judges it.
#include "attnlab/experiments/pe_internal.hpp"

#include "attnlab/core/error_model.hpp"
#include "attnlab/core/measure.hpp"
#include "attnlab/core/rng.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attnlab::pe_detail {

namespace {

// --- checks: each a claim and its measurement ---

std::string pair_scope(const PeParams& p, const CheckEnv& env)
{
    const std::size_t max_offset = pair_offset_budget(p.len, p.dim);
    return max_offset + 1 >= static_cast<std::size_t>(p.len) ? tr(env, "over all pairs", "全部位置对")
                                                             : tr(env, "over pairs up to {} apart", "相距至多 {} 的位置对", max_offset);
}

std::optional<Check> check_row0(const PeParams& p, const Run& run, const CheckEnv& env)
{
    if (p.start_index != 0) return std::nullopt;  // row 0 is then PE(start_index)
    return exact_zero(p.layout == PeLayout::interleaved
                          ? tr(env, "row 0 is exactly [0, 1, 0, 1, ...] (sin 0, cos 0)", "第 0 行恰好是 [0, 1, 0, 1, ...]（sin 0, cos 0）")
                          : tr(env, "row 0 is exactly [0, ..., 0, 1, ..., 1] (sin 0, cos 0)",
                               "第 0 行恰好是 [0, ..., 0, 1, ..., 1]（sin 0, cos 0）"),
                      "max |PE(0) - row0|", row0_error(run.at("pe"), p.layout));
}

// fairseq's SinusoidalPositionalEmbedding and tensor2tensor's get_timing_signal_1d pad an odd
// D with a zero last column.
std::optional<Check> check_odd_column(const PeParams& p, const Run& run, const CheckEnv& env)
{
    if (p.dim % 2 == 0) return std::nullopt;
    const Tensor& pe = run.at("pe");
    double worst = 0.0;
    for (std::size_t r = 0; r < pe.dim(0); ++r) worst = worse(worst, std::abs(pe.at(r, pe.dim(1) - 1)));
    return exact_zero(tr(env, "an odd D's last column is exactly 0, as fairseq and tensor2tensor pad it", "奇数 D 的最后一列恰好为 0，与 fairseq 和 tensor2tensor 的补零一致"),
                      "max |PE[:, D-1]|", worst);
}

std::optional<Check> check_bounded(const PeParams&, const Run& run, const CheckEnv& env)
{
    return within_bound(tr(env, "every value lies in [-1, 1]", "每个值都在 [-1, 1] 内"), "max |PE|", max_abs(run.at("pe")), 1.0);
}

std::optional<Check> check_rows_distinct(const PeParams& p, const Run& run, const CheckEnv& env)
{
    if (p.len < 2) return std::nullopt;
    return greater_than(tr(env, "every position's vector is distinct", "每个位置的向量互不相同"), fmt::format("min |PE(p) - PE(q)| {}", pair_scope(p, env)),
                        min_pair_distance(run.at("pe"), pair_offset_budget(p.len, p.dim)), 0.0);
}

std::optional<Check> check_freq_falling(const PeParams&, const Run& run, const CheckEnv& env)
{
    const Tensor& freq = run.at("freq");
    if (freq.size() < 2) return std::nullopt;
    return less_than(tr(env, "frequencies fall strictly from low to high dimension", "频率从低维到高维严格递减"), "max w(i+1)/w(i)", max_freq_ratio(freq), 1.0);
}

std::optional<Check> check_shift(const PeParams& p, const Run& run, const CheckEnv& env)
{
    if (p.len <= p.shift) return std::nullopt;
    // Row p holds R(p w + d_p) plus a rounding e of each stored element, |d_p| <= a p w with a
    // the angle's relative error and |e| <= u. M(k) rotates by k w exactly (float64, from the
    // stored w), so PE(p+k) - M(k)PE(p) is a rotation by d_(p+k) - d_p, at most a (2p+k) w,
    // plus e, rotated and not: at most u (1 + sqrt 2), 3u with the sine's own error. Over
    // p <= L-1-k and the fastest frequency w_max: a (2(L-1) - k) w_max + 3u.
    // Positions run from start_index: the last is S + L - 1.
    const double u = unit_roundoff(env.dtype);
    const long last = p.start_index + p.len - 1;
    const double tol = angle_rel_error(env.dtype, dsize(last)) * dsize(2 * last - p.shift) * max_abs(run.at("freq")) + 3.0 * u +
                       8.0 * unit_roundoff(DType::float64);
    return at_most(tr(env, "relative shift is linear: PE(p+{0}) = M({0})PE(p), M built from k alone",
                      "相对位移是线性的：PE(p+{0}) = M({0})PE(p)，M 只由 k 构造", p.shift),
                   "max |PE(p+k) - M(k)PE(p)|", shift_error(run.at("pe"), run.at("freq"), p.layout, p.shift), tol, 1.0);
}

std::optional<Check> check_dot_offset(const PeParams& p, const Run& run, const CheckEnv& env)
{
    if (p.len < 3) return std::nullopt;
    // The bound's derivation sits beside dot_spread_bound (core/position/sinusoidal.cpp); the
    // dot's own size is at most |PE|^2 = P = D/2.
    const Tensor& freq = run.at("freq");
    const double tol = dot_spread_bound(env.dtype, p.start_index + p.len, freq), pairs = static_cast<double>(freq.size());
    return at_most(tr(env, "PE(p).PE(p+k) depends on k alone", "PE(p).PE(p+k) 只取决于 k"), tr(env, "max over k of spread over p, {}", "各 k 上对 p 的极差的最大值，{}", pair_scope(p, env)),
                   max_dot_spread(run.at("pe"), pair_offset_budget(p.len, p.dim)), tol, pairs);
}

// A property of the module, not of a table: slicing the precomputed rows changes nothing.
template <class T>
std::optional<Check> check_slice(const PeParams& p, const Run&, const CheckEnv& env)
{
    const Vec<T> freq = frequencies_of<T>(p, p.freq_method);
    const Mat<T> sliced = xt::view(table_rows<T>(p, freq, p.max_len), xt::range(0, p.len), xt::all());
    const Mat<T> direct = table_rows<T>(p, freq, p.len);
    return bit_identical(tr(env, "slicing {0} precomputed rows to {1} equals computing {1} directly",
                            "把预先计算的 {0} 行切片到 {1} 行，与直接计算 {1} 行逐位相同", p.max_len, p.len),
                         "max |table[:L] - PE_L|", max_abs_diff(sliced, direct));
}

// Both ways of computing w_i against a long-double reference.
template <class T>
double freq_error(const PeParams& p, FreqMethod method)
{
    return max_rel_error(frequencies_of<T>(p, method), pe_frequencies_reference(p.dim, p.base, rule_of(p)));
}

// Each method rounds an exponent of size up to ln(base/m); that error is multiplied into the
// result, hence the bound eps * (2 ln(base/m) + 4), and one more rounding for a factor m other
// than 1 (times 1 is exact).
double freq_tol(const PeParams& p, const CheckEnv& env)
{
    return env.eps * (2.0 * std::abs(std::log(p.base / p.min_timescale)) + (p.min_timescale == 1.0 ? 4.0 : 5.0));
}

template <class T>
std::optional<Check> check_exp_log(const PeParams& p, const Run&, const CheckEnv& env)
{
    return at_most(tr(env, "exp-log frequencies match the exact w_i", "exp-log 计算的频率与精确的 w_i 一致"), "max rel error vs long double",
                   freq_error<T>(p, FreqMethod::exp_log), freq_tol(p, env), 1.0);
}

template <class T>
std::optional<Check> check_pow(const PeParams& p, const Run&, const CheckEnv& env)
{
    return at_most(tr(env, "pow frequencies match the exact w_i", "pow 计算的频率与精确的 w_i 一致"), "max rel error vs long double", freq_error<T>(p, FreqMethod::pow),
                   freq_tol(p, env), 1.0);
}

// A common comment on the exp-log form ("computed in log space") is that it is the more
// accurate of the two; measure it rather than take it on trust.
template <class T>
std::optional<Check> check_log_space(const PeParams& p, const Run&, const CheckEnv& env)
{
    const double err_exp = freq_error<T>(p, FreqMethod::exp_log), err_pow = freq_error<T>(p, FreqMethod::pow);
    const double ratio = err_pow > 0.0 ? err_exp / err_pow : (err_exp > 0.0 ? INFINITY : 1.0);
    return quoting(article_claim(tr(env, "computing w_i in log space (exp-log) is at least as accurate as 1 / base^(2i/D) (pow)",
                            "在对数空间计算 w_i（exp-log）至少与 1 / base^(2i/D)（pow）一样精确"),
                         "rel error exp-log / rel error pow", ratio, 1.0),
                   "10000 ** (2i / d_model)…数值精度会出问题",
                   tr(env, "at large d_model the pow form loses accuracy that the log-space form keeps",
                      "d_model 很大时，pow 写法会损失精度，而对数空间的写法不会"));
}

// The two conventions as their code builds them: interleaved with the paper's frequencies,
// concat with tensor2tensor's, from position 0 with m = 1, D even.
bool conventional(const PeParams& p)
{
    return rule_of(p).frequencies == default_frequencies(p.layout) && p.min_timescale == 1.0 && p.start_index == 0 && p.dim % 2 == 0;
}

// Only a permutation apart? The two layouts use different frequencies (exponent
// denominators D and P-1), so a checkpoint cannot be ported by reordering alone.
template <class T>
std::optional<Check> check_layouts(const PeParams& p, const Run& run, const CheckEnv& env)
{
    if (p.dim < 4 || p.len < 2 || !conventional(p)) return std::nullopt;  // see note_layouts_skipped
    const Mat<T> other = other_layout_reordered<T>(p.len, p.dim, p.base, p.layout, p.freq_method);
    return greater_than(tr(env, "interleaved and concat layouts differ by more than a reordering of dimensions",
                           "交错布局与拼接布局的差别不止是维度的重新排列"),
                        "max |PE - reorder(other layout)|", max_abs_diff(run.at("pe"), to_tensor("other", {"pos", "dim"}, other, elem_of<T>())), 0.0);
}

double embed_scale(const PeParams& p) { return p.scale_embed ? std::sqrt(dsize(p.dim)) : 1.0; }

// max over (b, j) of the spread over positions i of H[b, i, j] - s X[b, i, j]: how much the
// added code tells positions apart. s X is rounded in T as the compute rounded it.
template <class T>
double added_code_spread(const Tensor& h, const Tensor& x, const PeParams& p)
{
    const auto s = static_cast<Compute<T>>(embed_scale(p));
    const std::size_t B = h.dim(0), L = h.dim(1), D = h.dim(2);
    double worst = 0.0;
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t j = 0; j < D; ++j) {
            double lo = std::numeric_limits<double>::infinity(), hi = -lo;
            for (std::size_t i = 0; i < L; ++i) {
                const std::size_t at = (b * L + i) * D + j;
                const double added = h.values[at] - static_cast<double>(static_cast<T>(s * static_cast<Compute<T>>(x.values[at])));
                lo = std::min(lo, added);
                hi = std::max(hi, added);
            }
            worst = worse(worst, hi - lo);
        }
    return worst;
}

// max |H - s X - PE| over the batch, and max |H|.
template <class T>
std::pair<double, double> broadcast_error(const Tensor& h, const Tensor& x, const Tensor& pe, const PeParams& p)
{
    const auto s = static_cast<Compute<T>>(embed_scale(p));
    const std::size_t LD = pe.size();
    double err = 0.0, max_h = 0.0;
    for (std::size_t at = 0; at < h.size(); ++at) {
        const double added = h.values[at] - static_cast<double>(static_cast<T>(s * static_cast<Compute<T>>(x.values[at])));
        err = worse(err, std::abs(added - pe.values[at % LD]));
        max_h = worse(max_h, std::abs(h.values[at]));
    }
    return {err, max_h};
}

template <class T>
std::optional<Check> check_embed(const PeParams& p, const Run& run, const CheckEnv& env)
{
    if (!p.embed) return std::nullopt;
    const auto [err, max_h] = broadcast_error<T>(run.at("h"), run.at("x"), run.at("pe"), p);
    return at_most(tr(env, "every sequence of the batch gets the same PE added", "批次中的每条序列都加上同一份 PE"), "max |H[b] - s*X[b] - PE|", err, env.eps * (max_h + 1.0),
                   max_h + 1.0);
}

template <class T>
std::optional<Check> check_slicing_bug(const PeParams& p, const Run& run, const CheckEnv& env)
{
    if (!run.has("h_sliced_by_batch")) return std::nullopt;
    const double max_h = broadcast_error<T>(run.at("h"), run.at("x"), run.at("pe"), p).second;
    return at_most(tr(env,
                      "slicing the table on the batch axis (pe[:x.size(0)] with batch-first x) gives every "
                      "position of a sequence the same code",
                      "在批次轴上切片（对 batch-first 的 x 用 pe[:x.size(0)]）会让一条序列的所有位置得到相同的编码"),
                   tr(env, "max spread over positions of H_bug - s*X (rounding of s*X + PE only)", "H_bug - s*X 随位置变化的最大幅度（只有 s*X + PE 的舍入）"),
                   added_code_spread<T>(run.at("h_sliced_by_batch"), run.at("x"), p), 2.0 * env.eps * (max_h + 1.0), max_h + 1.0);
}

// "Attention 的两个补丁" §2.1: "10000 is the maximum wavelength, reached when 2i = d_model - 1".
// The longest wavelength belongs to the last pair, 2 pi base^((D-2)/D): never the base itself.
std::optional<Check> check_max_wavelength(const PeParams& p, const Run& run, const CheckEnv& env)
{
    const auto& freq = run.at("freq").values;
    const double longest = 2.0 * M_PI / *std::min_element(freq.begin(), freq.end()), ratio = longest / p.base;
    // The paper's layout: the slowest pair turns at w = base^(-(D-2)/D), so the longest
    // wavelength is 2 pi base^((D-2)/D): the claim leaves out 2 pi and the exponent (D-2)/D.
    const PeFreqRule rule = rule_of(p);
    const std::string what = rule.min_timescale != 1.0 ? tr(env, "longest = 2 pi / min w_i = {:.6g}: m scales every frequency", "最长波长 = 2 pi / min w_i = {:.6g}：m 缩放了每个频率", longest)
                             : rule.frequencies == PeFrequencies::paper
                                 ? tr(env, "longest = 2 pi base^((D-2)/D) = {:.6g}: the claim leaves out 2 pi and the exponent (D-2)/D",
                                      "最长波长 = 2 pi base^((D-2)/D) = {:.6g}：该说法漏了 2 pi 和指数 (D-2)/D", longest)
                                 : tr(env, "longest = 2 pi base = {:.6g}: the claim leaves out 2 pi", "最长波长 = 2 pi base = {:.6g}：该说法漏了 2 pi", longest);
    return quoting(article_claim(tr(env, "the base {} is the longest wavelength (§2.1: reached when 2i = D - 1)",
                            "底数 {} 就是最长波长（§2.1：在 2i = D - 1 时取到）", p.base),
                         fmt::format("{} ({})", tr(env, "longest wavelength / base, or base / longest if larger", "最长波长 / 底数（若底数更大则取其倒数）"), what),
                         std::max(ratio, 1.0 / ratio), 1.01),
                   "分母 10000 是\"最大波长\"",
                   tr(env, "the longest wavelength among the dimensions equals the base, 10000",
                      "各维度中最长的波长就等于底数 10000"));
}

// "Attention 的两个补丁" FAQ Q6: the base "decides the period of the highest-frequency
// dimension". The highest-frequency pair has w_0 = base^0 = 1, period 2 pi, for every base;
// the base sets the lowest frequency. Measured over several bases, in long double.
std::optional<Check> check_base_highest_period(const PeParams& p, const Run&, const CheckEnv& env)
{
    if (p.dim < 4) return std::nullopt;  // one pair: highest and lowest are the same
    std::vector<double> bases{100.0, 10000.0, 500000.0};
    if (std::find(bases.begin(), bases.end(), p.base) == bases.end()) bases.push_back(p.base);
    double hi_min = INFINITY, hi_max = 0.0, lo_min = INFINITY, lo_max = 0.0;
    for (double b : bases) {
        const auto w = pe_frequencies_reference(p.dim, b, rule_of(p));
        const auto [slowest, fastest] = std::minmax_element(w.begin(), w.end());
        const double highest = static_cast<double>(2.0L * kPi / *fastest), lowest = static_cast<double>(2.0L * kPi / *slowest);
        hi_min = std::min(hi_min, highest), hi_max = std::max(hi_max, highest);
        lo_min = std::min(lo_min, lowest), lo_max = std::max(lo_max, lowest);
    }
    return quoting(article_claim(tr(env, "the base sets the period of the highest-frequency dimension (FAQ Q6)", "底数决定了最高频维度的周期（FAQ Q6）"),
                         tr(env, "relative spread of the highest-frequency period over bases {} (it is {:.4g} for each; the lowest-frequency "
                                 "period runs {:.4g}..{:.4g}: the base sets that one)",
                            "最高频周期在底数 {} 上的相对变化（每个底数都是 {:.4g}；最低频周期从 {:.4g} 到 {:.4g}：底数决定的是它）",
                            fmt::join(bases, ", "), hi_min, lo_min, lo_max),
                         hi_max / hi_min - 1.0, 1e-9, Compare::gt),
                   "决定了最高频维度的\"周期\"长度",
                   tr(env, "changing the base changes the period of the fastest-turning dimension pair",
                      "改变底数，就会改变转得最快的那对维度的周期"));
}

// angle_error is computed on demand; without it, the check measures the table's angles itself.
template <class T>
std::optional<Check> check_angle_growth(const PeParams& p, const Run& run, const CheckEnv& env)
{
    if (run.has("angle_error")) return angle_error_growth(run.at("angle_error"), env);
    const Vec<double> err = pe_angle_errors(p, frequencies_of<T>(p, p.freq_method));
    return angle_error_growth(to_tensor("angle_error", {"pos"}, err, Elem::float64), env);
}

// numpy/PyTorch broadcasting: aligned from the last axis, each pair equal or one of them 1.
// The shape of a + b under NumPy's (and PyTorch's) broadcasting, or nullopt when they do not
// broadcast.
std::optional<std::vector<std::size_t>> broadcast_shape(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b)
{
    std::vector<std::size_t> out(std::max(a.size(), b.size()));
    for (std::size_t k = 1; k <= out.size(); ++k) {
        const std::size_t x = k <= a.size() ? a[a.size() - k] : 1, y = k <= b.size() ? b[b.size() - k] : 1;
        if (x != y && x != 1 && y != 1) return std::nullopt;
        out[out.size() - k] = std::max(x, y);
    }
    return out;
}

// "Transformer（四）" §6.2: the notebook that forgot to slice adds the whole [1, max_len, D]
// table, x + self.pe. Unless L = max_len it goes wrong: a shape error, or, with L = 1, a
// silent broadcast to [B, max_len, D].
std::optional<Check> check_unsliced(const PeParams& p, const Run& run, const CheckEnv& env)
{
    if (!p.embed) return std::nullopt;
    const auto& x = run.at("x").shape;
    const std::vector<std::size_t> table = {1, static_cast<std::size_t>(p.max_len), static_cast<std::size_t>(p.dim)};
    const auto sum = broadcast_shape(x, table);
    const bool wrong_shape = sum && *sum != x;
    const std::string what = !sum ? tr(env, "a shape error", "形状不匹配")
                             : wrong_shape ? tr(env, "a silent broadcast to [{}]", "悄悄广播成 [{}]", fmt::join(*sum, ", "))
                                           : tr(env, "the right sum", "结果正确");
    return demonstration(tr(env, "x + self.pe without the slice (x [{}, {}, {}], pe [1, {}, {}]) goes wrong unless L = max_len: here {}",
                            "不切片直接 x + self.pe（x [{}, {}, {}]，pe [1, {}, {}]）除非 L = max_len 否则出错：这里是{}", x[0], x[1],
                            x[2], p.max_len, p.dim, what),
                         tr(env, "wrong: a shape error (1), a wrong shape (2), or right (0)", "出错：形状不匹配 (1)、形状错误 (2)、正确 (0)"),
                         !sum ? 1.0 : wrong_shape ? 2.0 : 0.0, 0.0, Compare::gt);
}

}  // namespace

template <class T>
std::vector<CheckDef<PeParams>> pe_checks()
{
    return {{"row0_exact", {"pe"}, check_row0},
            {"values_bounded", {"pe"}, check_bounded},
            {"odd_dim_zero_column", {"pe"}, check_odd_column},
            {"rows_distinct", {"pe"}, check_rows_distinct},
            {"freq_falling", {"freq"}, check_freq_falling},
            {"relative_shift_linear", {"pe"}, check_shift},
            {"dot_depends_on_offset", {"pe"}, check_dot_offset},
            {"slice_matches_direct", {}, check_slice<T>},
            {"freq_exp_log_accuracy", {}, check_exp_log<T>},
            {"freq_pow_accuracy", {}, check_pow<T>},
            {"log_space_more_accurate", {}, check_log_space<T>},
            {"layouts_not_a_permutation", {"pe"}, check_layouts<T>},
            {"embed_broadcast", {"h", "x", "pe"}, check_embed<T>},
            {"slicing_bug_loses_position", {"h_sliced_by_batch", "x"}, check_slicing_bug<T>},
            {"unsliced_table_shape_error", {"x"}, check_unsliced},
            {"max_wavelength_is_base", {"freq"}, check_max_wavelength},
            {"base_sets_highest_frequency_period", {}, check_base_highest_period},
            {"angle_error_grows", {"angle_error"}, check_angle_growth<T>}};
}

namespace {

// --- notes ---

template <class T>
std::optional<std::string> note_freq_methods(const PeParams& p, const Run&, const CheckEnv& env)
{
    const double err_exp = freq_error<T>(p, FreqMethod::exp_log), err_pow = freq_error<T>(p, FreqMethod::pow);
    return tr(env, "frequency methods in {}: exp-log max rel error {:.3g}, pow {:.3g}: {}", "{} 下两种频率算法：exp-log 最大相对误差 {:.3g}，pow {:.3g}：{}",
              name_of(env.dtype), err_exp, err_pow,
              err_exp == err_pow  ? tr(env, "equally accurate here", "这里一样精确")
              : err_exp < err_pow ? tr(env, "exp-log is more accurate here", "这里 exp-log 更精确")
                                  : tr(env, "pow is more accurate here", "这里 pow 更精确"));
}

template <class T>
std::optional<std::string> note_slicing_bug(const PeParams& p, const Run& run, const CheckEnv& env)
{
    if (!run.has("h_sliced_by_batch")) return std::nullopt;
    return tr(env,
              "slicing bug: the added code varies over positions by up to {:.3g} when sliced on the "
              "sequence axis, by {:.3g} when sliced on the batch axis",
              "切片错误：在序列轴上切片时，加上的编码随位置最多变化 {:.3g}；在批次轴上切片时只变化 {:.3g}",
                       added_code_spread<T>(run.at("h"), run.at("x"), p),
                       added_code_spread<T>(run.at("h_sliced_by_batch"), run.at("x"), p));
}

// With one pair (D = 2) the layouts are the same table; with one position every row is
// [0.., 1..] in either layout, a reordering of the other. The claim is about the two
// conventions as their code builds them.
std::optional<std::string> note_layouts_skipped(const PeParams& p, const Run&, const CheckEnv& env)
{
    if (p.dim >= 4 && p.len >= 2 && conventional(p)) return std::nullopt;
    if (!conventional(p)) {
        return tr(env, "layouts_not_a_permutation is not checked: it compares the two conventions as their code builds them (interleaved with "
                       "the paper's frequencies, concat with tensor2tensor's, from position 0, m = 1, D even), and this run changes one",
                  "未检查 layouts_not_a_permutation：它比较的是两种约定在各自代码里的样子（交错配论文的频率，拼接配 tensor2tensor 的频率，"
                  "从位置 0 开始，m = 1，D 为偶数），而本次运行改了其中一项");
    }
    return tr(env, "layouts_not_a_permutation is not checked: with {} the two layouts are a reordering of each other",
              "未检查 layouts_not_a_permutation：{}时两种布局只差一个重新排列",
              p.dim < 4 ? tr(env, "one frequency pair (D = 2)", "只有一对频率（D = 2）") : tr(env, "one position (L = 1)", "只有一个位置（L = 1）"));
}

}  // namespace

template <class T>
std::vector<NoteFn<PeParams>> pe_notes()
{
    return {note_freq_methods<T>, note_slicing_bug<T>, note_layouts_skipped};
}

#define ATTNLAB_PE_CHECKS(T)                                  \
    template std::vector<CheckDef<PeParams>> pe_checks<T>(); \
    template std::vector<NoteFn<PeParams>> pe_notes<T>();
ATTNLAB_PE_CHECKS(float)
ATTNLAB_PE_CHECKS(double)
ATTNLAB_PE_CHECKS(f16)
ATTNLAB_PE_CHECKS(bf16)

}  // namespace attnlab::pe_detail

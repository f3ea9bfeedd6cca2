#include "attnlab/experiments/pe.hpp"

#include "attnlab/experiments/precision.hpp"
#include "attnlab/experiments/inputs.hpp"
#include "attnlab/core/error_model.hpp"
#include "attnlab/core/measure.hpp"
#include "attnlab/core/rng.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <cmath>

namespace attnlab {

void validate(const PeParams& p)
{
    if (p.len < 1) throw InputError(fmt::format("--len must be at least 1 (got {})", p.len));
    if (p.dim < 2) throw InputError(fmt::format("--dim must be at least 2 (got {})", p.dim));
    if (p.dim % 2 != 0) {
        throw InputError(fmt::format("--dim must be even (got {}): sin and cos fill pairs", p.dim));
    }
    // w_i = base^(-2i/D) falls only for a base above 1, and the base must survive float32.
    if (!(p.base > 1.0) || !(p.base <= static_cast<double>(std::numeric_limits<float>::max()))) {
        throw InputError(fmt::format("--base must lie in (1, 3.4e38], so that the frequencies fall (got {})", p.base));
    }
    if (p.max_len != 0 && p.len > p.max_len) {
        throw InputError(fmt::format(
            "input length exceeds the precomputed max-len (--len {} > --max-len {})", p.len,
            p.max_len));
    }
    if (p.shift < 1 || p.shift >= std::max(p.len, 2L)) {
        throw InputError(
            fmt::format("--shift must be between 1 and len-1 (got {} with --len {})", p.shift, p.len));
    }
    if (p.embed && p.batch < 1) {
        throw InputError(fmt::format("--batch must be at least 1 (got {})", p.batch));
    }
}

namespace {

// Angle precision: pos * w_i as sinusoidal_table computes it in T against the exact product.
template <class T>
Vec<double> pe_angle_errors(const PeParams& p, const Vec<T>& freq)
{
    return angle_errors_by_position<T>(p.len, std::vector<double>(freq.begin(), freq.end()), pe_frequencies_reference(p.dim, p.base, p.layout));
}

// --- compute: PE as the articles' module builds it, plus the embedding when asked ---

template <class T>
void compute_embedding(const PeParams& p, const Mat<T>& table, const Mat<T>& pe, const Plan& plan, Run& run)
{
    // X: [B, L, D] seeded normal (or --input x); H = s*X + PE with PE broadcast as [1, L, D].
    const auto B = static_cast<std::size_t>(p.batch), L = static_cast<std::size_t>(p.len),
               D = static_cast<std::size_t>(p.dim);
    const Ten3<T> x = input_or<T, 3>(plan, "x", [&] {
        Ten3<T> drawn = xt::zeros<T>({B, L, D});
        fill_normal(drawn.data(), drawn.size(), plan.seed, stream::x);
        return drawn;
    });
    // s X is one op, rounded in T (a 16-bit tensor times a Python float multiplies in float32).
    const Compute<T> s = p.scale_embed ? std::sqrt(static_cast<Compute<T>>(p.dim)) : Compute<T>(1);
    Ten3<T> sx = x;
    for (auto& v : sx) v = static_cast<T>(s * static_cast<Compute<T>>(v));
    Ten3<T> h = sx + xt::view(pe, xt::newaxis(), xt::all(), xt::all());
    run.add(to_tensor("x", {"batch", "pos", "dim"}, x, elem_of<T>()));
    run.add(to_tensor("h", {"batch", "pos", "dim"}, h, elem_of<T>()));
    if (p.len >= 2 && p.batch <= p.max_len) {
        // The slicing bug: a [max_len, 1, D] table sliced as pe[:x.size(0)] on batch-first
        // input takes B rows instead of L, so sequence b gets PE(b) at every position.
        Ten3<T> h_bug = sx;
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t i = 0; i < L; ++i)
                for (std::size_t j = 0; j < D; ++j) h_bug(b, i, j) += table(b, j);
        run.add(to_tensor("h_sliced_by_batch", {"batch", "pos", "dim"}, h_bug, elem_of<T>()));
    }
}

template <class T>
Run compute_pe(const PeParams& p, const Plan& plan)
{
    // base^(2i/D) in T (the pow method, and the checks that compare both methods) needs the
    // base itself in T: 500000 is inf in float16 (largest 65504), and every frequency with it.
    if (!std::isfinite(static_cast<double>(static_cast<T>(p.base)))) {
        throw InputError(fmt::format("--base {} does not fit {} (largest {}); choose a smaller base or another --dtype", p.base,
                                     name_of(plan.dtype), static_cast<double>(std::numeric_limits<T>::max())));
    }
    Run run;
    const Vec<T> freq = pe_frequencies<T>(p.dim, p.base, p.layout, p.freq_method);
    // As the articles' module: precompute max-len rows once, then slice pe[:L].
    const Mat<T> table = sinusoidal_table<T>(p.max_len, freq, p.layout);
    const Mat<T> pe = xt::view(table, xt::range(0, p.len), xt::all());
    run.add(to_tensor("pe", {"pos", "dim"}, pe, elem_of<T>()));
    run.add(to_tensor("freq", {"pair"}, freq, elem_of<T>()));
    if (plan.wants("angle_error")) run.add(to_tensor("angle_error", {"pos"}, pe_angle_errors(p, freq), Elem::float64));
    if (plan.wants("wavelength")) {
        run.add(to_tensor("wavelength", {"pair"}, T(2) * static_cast<T>(M_PI) / freq, elem_of<T>()));
    }
    if (p.embed) {
        compute_embedding(p, table, pe, plan, run);
    }
    return run;
}

// --- checks: each a claim and its measurement ---

std::string pair_scope(const PeParams& p)
{
    const std::size_t max_offset = pair_offset_budget(p.len, p.dim);
    return max_offset + 1 >= static_cast<std::size_t>(p.len) ? "over all pairs"
                                                             : fmt::format("over pairs up to {} apart", max_offset);
}

std::optional<Check> check_row0(const PeParams& p, const Run& run, const CheckEnv& env)
{
    return exact_zero(p.layout == PeLayout::interleaved
                          ? tr(env, "row 0 is exactly [0, 1, 0, 1, ...] (sin 0, cos 0)", "第 0 行恰好是 [0, 1, 0, 1, ...]（sin 0, cos 0）")
                          : tr(env, "row 0 is exactly [0, ..., 0, 1, ..., 1] (sin 0, cos 0)",
                               "第 0 行恰好是 [0, ..., 0, 1, ..., 1]（sin 0, cos 0）"),
                      "max |PE(0) - row0|", row0_error(run.at("pe"), p.layout));
}

std::optional<Check> check_bounded(const PeParams&, const Run& run, const CheckEnv& env)
{
    return within_bound(tr(env, "every value lies in [-1, 1]", "每个值都在 [-1, 1] 内"), "max |PE|", max_abs(run.at("pe")), 1.0);
}

std::optional<Check> check_rows_distinct(const PeParams& p, const Run& run, const CheckEnv& env)
{
    if (p.len < 2) return std::nullopt;
    return greater_than(tr(env, "every position's vector is distinct", "每个位置的向量互不相同"), fmt::format("min |PE(p) - PE(q)| {}", pair_scope(p)),
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
    const double u = unit_roundoff(env.dtype);
    const double tol = angle_rel_error(env.dtype, dsize(p.len - 1)) * dsize(2 * (p.len - 1) - p.shift) * max_abs(run.at("freq")) + 3.0 * u +
                       8.0 * unit_roundoff(DType::float64);
    return at_most(tr(env, "relative shift is linear: PE(p+{0}) = M({0})PE(p), M built from k alone",
                      "相对位移是线性的：PE(p+{0}) = M({0})PE(p)，M 只由 k 构造", p.shift),
                   "max |PE(p+k) - M(k)PE(p)|", shift_error(run.at("pe"), run.at("freq"), p.layout, p.shift), tol, 1.0);
}

std::optional<Check> check_dot_offset(const PeParams& p, const Run& run, const CheckEnv& env)
{
    if (p.len < 3) return std::nullopt;
    // Each pair i adds cos(k w_i + d_(p+k) - d_p) to the dot of rows p and p+k, off by at most
    // a (2p+k) w_i from the angles (as above) and 4u from the two stored elements of each row;
    // the float64 sum adds P u(float64) per term. A spread over p is the difference of two such
    // dots: 2 sum_i (a (2(L-1) - k) w_i + 4u), taken at k = 1, the largest. The dot's own size
    // is at most |PE|^2 = P = D/2.
    const Tensor& freq = run.at("freq");
    double sum_freq = 0.0;
    for (double w : freq.values) sum_freq += w;
    const double pairs = static_cast<double>(freq.size()), u = unit_roundoff(env.dtype);
    const double tol = 2.0 * (angle_rel_error(env.dtype, dsize(p.len - 1)) * dsize(2 * p.len - 3) * sum_freq + 4.0 * u * pairs) +
                       4.0 * pairs * pairs * unit_roundoff(DType::float64);
    return at_most(tr(env, "PE(p).PE(p+k) depends on k alone", "PE(p).PE(p+k) 只取决于 k"), fmt::format("max over k of spread over p, {}", pair_scope(p)),
                   max_dot_spread(run.at("pe"), pair_offset_budget(p.len, p.dim)), tol, pairs);
}

// A property of the module, not of a table: slicing the precomputed rows changes nothing.
template <class T>
std::optional<Check> check_slice(const PeParams& p, const Run&, const CheckEnv& env)
{
    const Vec<T> freq = pe_frequencies<T>(p.dim, p.base, p.layout, p.freq_method);
    const Mat<T> sliced = xt::view(sinusoidal_table<T>(p.max_len, freq, p.layout), xt::range(0, p.len), xt::all());
    const Mat<T> direct = sinusoidal_table<T>(p.len, freq, p.layout);
    return bit_identical(tr(env, "slicing {0} precomputed rows to {1} equals computing {1} directly",
                            "把预先计算的 {0} 行切片到 {1} 行，与直接计算 {1} 行逐位相同", p.max_len, p.len),
                         "max |table[:L] - PE_L|", max_abs_diff(sliced, direct));
}

// Both ways of computing w_i against a long-double reference.
template <class T>
double freq_error(const PeParams& p, FreqMethod method)
{
    return max_rel_error(pe_frequencies<T>(p.dim, p.base, p.layout, method), pe_frequencies_reference(p.dim, p.base, p.layout));
}

// Each method rounds an exponent of size up to ln(base); that error is multiplied into the
// result, hence the bound eps * (2 ln(base) + 4).
double freq_tol(const PeParams& p, const CheckEnv& env) { return env.eps * (2.0 * std::abs(std::log(p.base)) + 4.0); }

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
    return article_claim(tr(env, "computing w_i in log space (exp-log) is at least as accurate as base^(-2i/D) (pow)",
                            "在对数空间计算 w_i（exp-log）至少与 base^(-2i/D)（pow）一样精确"),
                         "rel error exp-log / rel error pow", ratio, 1.0);
}

// Only a permutation apart? The two layouts use different frequencies (exponent
// denominators D and P-1), so a checkpoint cannot be ported by reordering alone.
template <class T>
std::optional<Check> check_layouts(const PeParams& p, const Run& run, const CheckEnv& env)
{
    if (p.dim < 4 || p.len < 2) return std::nullopt;  // see note_layouts_skipped
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
                   "max spread over positions of H_bug - s*X (rounding of s*X + PE only)",
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
    const std::string what = p.layout == PeLayout::interleaved
                                 ? tr(env, "longest = 2 pi base^((D-2)/D) = {:.6g}: the claim leaves out 2 pi and the exponent (D-2)/D",
                                      "最长波长 = 2 pi base^((D-2)/D) = {:.6g}：该说法漏了 2 pi 和指数 (D-2)/D", longest)
                                 : tr(env, "longest = 2 pi base = {:.6g}: the claim leaves out 2 pi", "最长波长 = 2 pi base = {:.6g}：该说法漏了 2 pi", longest);
    return article_claim(tr(env, "the base {} is the longest wavelength (§2.1: reached when 2i = D - 1)",
                            "底数 {} 就是最长波长（§2.1：在 2i = D - 1 时取到）", p.base),
                         fmt::format("{} ({})", tr(env, "longest wavelength / base, or base / longest if larger", "最长波长 / 底数（若底数更大则取其倒数）"), what),
                         std::max(ratio, 1.0 / ratio), 1.01);
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
        const auto w = pe_frequencies_reference(p.dim, b, p.layout);
        const auto [slowest, fastest] = std::minmax_element(w.begin(), w.end());
        const double highest = static_cast<double>(2.0L * kPi / *fastest), lowest = static_cast<double>(2.0L * kPi / *slowest);
        hi_min = std::min(hi_min, highest), hi_max = std::max(hi_max, highest);
        lo_min = std::min(lo_min, lowest), lo_max = std::max(lo_max, lowest);
    }
    return article_claim(tr(env, "the base sets the period of the highest-frequency dimension (FAQ Q6)", "底数决定了最高频维度的周期（FAQ Q6）"),
                         tr(env, "relative spread of the highest-frequency period over bases {} (it is {:.4g} for each; the lowest-frequency "
                                 "period runs {:.4g}..{:.4g}: the base sets that one)",
                            "最高频周期在底数 {} 上的相对变化（每个底数都是 {:.4g}；最低频周期从 {:.4g} 到 {:.4g}：底数决定的是它）",
                            fmt::join(bases, ", "), hi_min, lo_min, lo_max),
                         hi_max / hi_min - 1.0, 1e-9, Compare::gt);
}

// angle_error is computed on demand; without it, the check measures the table's angles itself.
template <class T>
std::optional<Check> check_angle_growth(const PeParams& p, const Run& run, const CheckEnv& env)
{
    if (run.has("angle_error")) return angle_error_growth(run.at("angle_error"), env);
    const Vec<double> err = pe_angle_errors(p, pe_frequencies<T>(p.dim, p.base, p.layout, p.freq_method));
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

template <class T>
std::vector<CheckDef<PeParams>> pe_checks()
{
    return {{"row0_exact", {"pe"}, check_row0},
            {"values_bounded", {"pe"}, check_bounded},
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
// [0.., 1..] in either layout, a reordering of the other.
std::optional<std::string> note_layouts_skipped(const PeParams& p, const Run&, const CheckEnv& env)
{
    if (p.dim >= 4 && p.len >= 2) return std::nullopt;
    return tr(env, "layouts_not_a_permutation is not checked: with {} the two layouts are a reordering of each other",
              "未检查 layouts_not_a_permutation：{}时两种布局只差一个重新排列",
              p.dim < 4 ? tr(env, "one frequency pair (D = 2)", "只有一对频率（D = 2）") : tr(env, "one position (L = 1)", "只有一个位置（L = 1）"));
}

template <class T>
Typed<PeParams> pe_typed()
{
    return {compute_pe<T>, pe_checks<T>(), {note_freq_methods<T>, note_slicing_bug<T>, note_layouts_skipped}};
}

std::vector<TensorDecl<PeParams>> pe_tensors()
{
    auto embed = [](const PeParams& p) { return p.embed; };
    auto bsd = [](const PeParams& p) { return std::vector<double>{dsize(p.batch), dsize(p.len), dsize(p.dim)}; };
    auto pairs = [](const PeParams& p) { return std::vector<double>{dsize(p.dim / 2)}; };
    return {
        {"pe", {"pos", "dim"}, Need::always, [](const PeParams& p) { return std::vector<double>{dsize(p.len), dsize(p.dim)}; }, {}, {}},
        {"freq", {"pair"}, Need::always, pairs, {}, {}},
        {"wavelength", {"pair"}, Need::on_demand, pairs, {}, {}},
        {"x", {"batch", "pos", "dim"}, Need::always, bsd, embed, {}},
        {"h", {"batch", "pos", "dim"}, Need::always, bsd, embed, {}},
        {"h_sliced_by_batch", {"batch", "pos", "dim"}, Need::always, bsd,
         [](const PeParams& p) { return p.embed && p.len >= 2 && p.batch <= p.max_len; }, {}},
        {"angle_error", {"pos"}, Need::on_demand, [](const PeParams& p) { return std::vector<double>{dsize(p.len)}; }, {}, {}},
    };
}

// --- the catalogue of usual mistakes ---

// A sinusoidal table as a learner might build it, in float64: w_i = base^(-factor i / D),
// rows pos + first, [sin | cos] halves or interleaved pairs, sin and cos possibly swapped.
// A table built wrong one way: the exponent's factor, the first position, or the layout.
struct PeVariant {
    enum class Layout { as_asked, halves, sin_cos_swapped, transposed };
    double factor = 2.0;
    long first = 0;
    Layout layout = Layout::as_asked;
};

Tensor pe_variant(const PeParams& p, PeVariant v)
{
    using L = PeVariant::Layout;
    const long P = p.dim / 2;
    Mat<double> pe = xt::zeros<double>({static_cast<std::size_t>(p.len), static_cast<std::size_t>(p.dim)});
    const double denom = p.layout == PeLayout::concat && v.layout != L::halves ? dsize(std::max(P - 1, 1L)) * v.factor : dsize(p.dim);
    for (long pos = 0; pos < p.len; ++pos)
        for (long i = 0; i < P; ++i) {
            const double angle = dsize(pos + v.first) * std::pow(p.base, -v.factor * dsize(i) / denom);
            const bool halves = v.layout == L::halves || p.layout == PeLayout::concat, swapped = v.layout == L::sin_cos_swapped;
            const auto s = static_cast<std::size_t>(halves ? i : 2 * i), c = static_cast<std::size_t>(halves ? P + i : 2 * i + 1);
            pe(pos, swapped ? c : s) = std::sin(angle);
            pe(pos, swapped ? s : c) = std::cos(angle);
        }
    if (v.layout == L::transposed) return to_tensor("pe", {"dim", "pos"}, xt::transpose(pe), Elem::float64);
    return to_tensor("pe", {"pos", "dim"}, pe, Elem::float64);
}

Tensor renamed(Tensor t, const std::string& name)
{
    t.name = name;
    return t;
}

// h = s x + PE, from the run's own x and table, in float64.
Tensor embedded_with(const PeParams& p, const Run& run, double s)
{
    Tensor h = renamed(run.at("x"), "h");
    const Tensor& pe = run.at("pe");
    const std::size_t LD = static_cast<std::size_t>(p.len * p.dim);
    for (std::size_t n = 0; n < h.values.size(); ++n) h.values[n] = s * h.values[n] + pe.values[n % LD];
    h.elem = Elem::float64;
    return h;
}

std::vector<Mistake<PeParams>> pe_mistakes()
{
    auto variant = [](PeVariant v) { return [v](const PeParams& p, const Run&) { return pe_variant(p, v); }; };
    return {{"sin_cos_swapped", "pe", "sin and cos are swapped: cos sits where sin belongs", "sin 与 cos 放反了：cos 放在了 sin 的位置",
             variant({2.0, 0, PeVariant::Layout::sin_cos_swapped})},
            {"missing_factor_2", "pe", "the exponent lacks its factor 2: w_i = base^(-i/D) instead of base^(-2i/D)",
             "指数少了因子 2：写成了 w_i = base^(-i/D)，应为 base^(-2i/D)", variant({1.0, 0, PeVariant::Layout::as_asked})},
            {"positions_from_1", "pe", "positions are counted from 1: row 0 holds PE(1)", "位置从 1 开始计：第 0 行是 PE(1)",
             variant({2.0, 1, PeVariant::Layout::as_asked})},
            {"concat_halves", "pe", "sin block then cos block ([sin | cos]) with the paper's w_i, not interleaved pairs",
             "先 sin 块再 cos 块（[sin | cos]），用论文的 w_i，而不是交错成对", variant({2.0, 0, PeVariant::Layout::halves})},
            {"transposed", "pe", "saved as [dim, pos] instead of [pos, dim]", "保存成了 [dim, pos]，应为 [pos, dim]",
             variant({2.0, 0, PeVariant::Layout::transposed})},
            {"sliced_by_batch", "h", "the table is sliced by the batch size, pe[:x.size(0)], so sequence b gets PE(b) at every position",
             "表按批大小切片了（pe[:x.size(0)]），于是序列 b 的每个位置都加上了 PE(b)",
             [](const PeParams&, const Run& run) { return run.has("h_sliced_by_batch") ? renamed(run.at("h_sliced_by_batch"), "h") : Tensor{}; }},
            {"pe_not_added", "h", "the encoding is not added: x is returned unchanged", "没有加上位置编码：原样返回了 x",
             [](const PeParams&, const Run& run) { return renamed(run.at("x"), "h"); }},
            {"embedding_scaled", "h", "x is scaled by sqrt(D) before PE is added, which this module does not do",
             "加 PE 之前把 x 乘了 sqrt(D)，而这个模块不这样做",
             [](const PeParams& p, const Run& run) { return p.scale_embed ? Tensor{} : embedded_with(p, run, std::sqrt(dsize(p.dim))); }}};
}

std::vector<OptionRow<PeParams>> pe_options()
{
    using P = PeParams;
    return {option<P>("--len", "Positions L", &P::len, whole_range(1, 1L << 24)),
            option<P>("--dim", "Encoding dimension D (even)", &P::dim, whole_range(2, 1L << 24)),
            option<P>("--base", "Base of the frequencies w_i = base^(-2i/D)", &P::base, positive()),
            option<P>("--layout", "interleaved: sin/cos alternate (the paper); concat: [sin | cos] halves, "
                                  "w_i = base^(-i/(D/2-1)) (tensor2tensor, fairseq)", &P::layout),
            option<P>("--max-len", "Precompute this many rows and slice the first L, as the articles' module (0: L)", &P::max_len,
                      whole_range(0, 1L << 24)),
            option<P>("--freq-method", "exp-log: exp(2i * -ln(base)/D); pow: 1/base^(2i/D)", &P::freq_method),
            option<P>("--embed", "Also build a random embedding X [batch, pos, dim] and H = X + PE", &P::embed),
            option<P>("--batch", "Batch size B of X, with --embed", &P::batch, whole_range(1, 1L << 20)),
            option<P>("--scale-embed", "H = sqrt(D)*X + PE, as the original Transformer", &P::scale_embed),
            option<P>("--shift", "Offset k of the relative-shift check", &P::shift, whole_range(1, 1L << 24))};
}

Experiment<PeParams> make_pe_experiment()
{
    Experiment<PeParams> e;
    e.command = "pe";
    e.summary = "Sinusoidal positional encoding: the table, its frequencies, and why relative shifts are linear";
    e.example = "attnlab pe --len 50 --dim 16 --format csv > pe.csv";
    e.main_tensor = "pe";
    e.options = pe_options();
    e.tensors = pe_tensors();
    e.resolve = [](const PeParams& given) {
        PeParams p = given;
        if (p.max_len == 0) p.max_len = p.len;
        return p;
    };
    e.validate = [](const PeParams& p) { validate(p); };
    // The precomputed table, the directly computed one and the other layout's, in T.
    e.scratch_bytes = [](const PeParams& p, double elem) { return (2.0 * dsize(p.max_len) + 3.0 * dsize(p.len)) * dsize(p.dim) * elem; };
    // Tables (sin and cos at about 20 each), the two budgeted all-pairs checks, the embedding.
    e.work = [](const PeParams& p, const Plan&) {
        const double LD = dsize(p.len) * dsize(p.dim), pairs = std::min(1073741824.0, dsize(p.len) * LD / 2.0);
        return 40.0 * (dsize(p.max_len) * dsize(p.dim) + 3.0 * LD) + 2.0 * pairs + 40.0 * dsize(p.batch) * LD;
    };
    e.work_what = [](const PeParams& p) { return fmt::format("pe [{}, {}] and its pair checks", p.len, p.dim); };
    e.inputs = {"x"};
    e.mistakes = pe_mistakes();
    // A correct table computed another way (pow instead of exp-log, float32 angles) differs
    // by the rounding of the angle pos * w_i, which grows with the position.
    e.against_atol = [](const PeParams& p, const std::string& tensor, double eps, const Tensor& expected) {
        return tensor == "pe" ? 4.0 * eps * (4.0 * dsize(p.len) + 8.0) : 64.0 * eps * (1.0 + max_abs(expected));
    };
    e.f32 = pe_typed<float>();
    e.f64 = pe_typed<double>();
    e.f16 = pe_typed<f16>();
    e.bf16 = pe_typed<bf16>();
    return e;
}

}  // namespace

const Experiment<PeParams>& pe_experiment()
{
    static const Experiment<PeParams> e = make_pe_experiment();
    return e;
}

Report run_pe(const PeParams& p, const RunContext& ctx) { return run_experiment(pe_experiment(), p, ctx); }

std::vector<TensorInfo> pe_tensor_infos() { return tensor_infos(pe_experiment()); }

std::vector<std::string> pe_command(const PeParams& p) { return command_of(pe_experiment(), p); }

}  // namespace attnlab

#include "attnlab/experiments/alibi.hpp"

#include "attnlab/experiments/inputs.hpp"
#include "attnlab/core/attention.hpp"
#include "attnlab/core/error_model.hpp"
#include "attnlab/core/measure.hpp"
#include "attnlab/core/rng.hpp"
#include "attnlab/core/softmax.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

namespace attnlab {

double max_abs_diagonal(const Tensor& bias)
{
    const std::size_t L = bias.dim(1), S = bias.dim(2);
    double worst = 0.0;
    for (std::size_t h = 0; h < bias.dim(0); ++h)
        for (std::size_t i = 0; i < std::min(L, S); ++i) worst = worse(worst, std::abs(bias.values[(h * L + i) * S + i]));
    return worst;
}

double max_finite(const Tensor& bias)
{
    double worst = -std::numeric_limits<double>::infinity();
    for (double v : bias.values) {
        if (std::isnan(v)) return v;
        if (std::isfinite(v)) worst = std::max(worst, v);
    }
    return worst;
}

long decay_violations(const Tensor& w, AlibiVariant v, double smallest_normal, const std::vector<double>& step_gaps, double resolution)
{
    long bad = 0;
    const long L = static_cast<long>(w.dim(1));
    for (std::size_t h = 0; h < w.dim(0); ++h) {
        if (h < step_gaps.size() && !(step_gaps[h] > resolution)) continue;
        const std::vector<double> wh = w.values.slice(h * static_cast<std::size_t>(L * L), (h + 1) * static_cast<std::size_t>(L * L));
        for (long i = 0; i < L; ++i)
            for (int side : {-1, +1}) {  // walk away from the diagonal on each side the variant looks at
                if (side == +1 && v == AlibiVariant::causal) continue;
                for (long j = i; j + side >= 0 && j + side < L; j += side) {
                    const double nearer = wh[i * L + j], farther = wh[i * L + j + side];
                    if (std::isnan(nearer) || (nearer >= smallest_normal && !(farther < nearer))) ++bad;
                }
            }
    }
    return bad;
}

namespace {

template <class T>
Ten3<T> softmax_of(Ten3<T> scores)
{
    softmax_rows(scores.data(), scores.shape(0) * scores.shape(1), scores.shape(2), SoftmaxKind::plain);
    return scores;
}

// Mean weight at each query-key distance (i - j, or |i - j| when symmetric), per head.
template <class T>
Mat<T> distance_profile(const Ten3<T>& weights, AlibiVariant variant)
{
    const std::size_t H = weights.shape(0), L = weights.shape(1);
    Mat<T> profile = xt::zeros<T>({H, L});
    for (std::size_t h = 0; h < H; ++h)
        for (std::size_t dist = 0; dist < L; ++dist) {
            double sum = 0.0;
            long count = 0;
            for (std::size_t i = 0; i < L; ++i)
                for (std::size_t j = 0; j < L; ++j) {
                    const long delta = static_cast<long>(i) - static_cast<long>(j);
                    if ((variant == AlibiVariant::causal ? delta : std::abs(delta)) != static_cast<long>(dist)) continue;
                    sum += static_cast<double>(weights(h, i, j));
                    ++count;
                }
            profile(h, dist) = static_cast<T>(count > 0 ? sum / static_cast<double>(count) : 0.0);
        }
    return profile;
}

// Demonstration inputs: q, k [head, pos, dim] seeded normal; raw = q k^T / sqrt(d).
template <class T>
Ten3<T> raw_scores(const AlibiParams& p, const Plan& plan, Run& run)
{
    const auto H = static_cast<std::size_t>(p.heads), L = static_cast<std::size_t>(p.len), d = static_cast<std::size_t>(p.dim);
    auto draw = [&](std::uint64_t stream) {
        Ten3<T> t = xt::zeros<T>({H, L, d});
        fill_normal(t.data(), t.size(), plan.seed, stream);
        return t;
    };
    const Ten3<T> q = input_or<T, 3>(plan, "q", [&] { return draw(stream::q); });
    const Ten3<T> k = input_or<T, 3>(plan, "k", [&] { return draw(stream::k); });
    run.add(to_tensor("q", {"head", "pos", "dim"}, q, elem_of<T>()));
    run.add(to_tensor("k", {"head", "pos", "dim"}, k, elem_of<T>()));
    return scaled_scores(q, k, 1.0 / std::sqrt(dsize(p.dim)));
}

template <class T>
Run compute_alibi(const AlibiParams& p, const Plan& plan)
{
    Run run;
    const auto elem = elem_of<T>();
    const std::vector<double> slopes = alibi_slopes(p.heads, p.slopes);
    Vec<T> slopes_t = xt::zeros<T>({slopes.size()});
    for (std::size_t h = 0; h < slopes.size(); ++h) slopes_t(h) = static_cast<T>(slopes[h]);
    run.add(to_tensor("slopes", {"head"}, slopes_t, elem));
    const Ten3<T> bias = alibi_bias<T>(slopes, p.len, p.len, p.variant);
    run.add(to_tensor("bias", {"head", "query", "key"}, bias, elem));
    const Ten3<T> scores = raw_scores<T>(p, plan, run) + bias;
    const Ten3<T> weights = softmax_of(scores);
    run.add(to_tensor("scores", {"head", "query", "key"}, scores, elem));
    run.add(to_tensor("weights", {"head", "query", "key"}, weights, elem));
    if (plan.wants("distance_profile")) {
        run.add(to_tensor("distance_profile", {"head", "distance"}, distance_profile(weights, p.variant), elem));
    }
    return run;
}

// --- checks ---

std::optional<Check> check_geometric(const AlibiParams& p, const Run& run, const CheckEnv& env)
{
    if (!alibi_slopes_geometric(p.heads, p.slopes)) return std::nullopt;
    const std::vector<double> simple = alibi_slopes(p.heads, SlopeRule::paper_text);
    const Tensor& slopes = run.at("slopes");
    double err = 0.0;
    for (std::size_t h = 0; h < slopes.size(); ++h) err = worse(err, std::abs(slopes.values[h] - simple[h]) / simple[h]);
    // Each slope is 2^x computed in float64 (a few u(float64) of relative error), then rounded
    // once to the dtype the tensor is stored in (u(storage)); a slope from another rule is off
    // by a factor of at least 2^(-8/H) / 2^(-8/(H+1)), far above this.
    const double u_store = unit_roundoff(precision_of(slopes.elem).value_or(DType::float64));
    return at_most(tr(env, "the slopes are the geometric sequence 2^(-8/{0}), 2^(-16/{0}), ..., 2^(-8)",
                      "斜率是等比数列 2^(-8/{0}), 2^(-16/{0}), ..., 2^(-8)", p.heads),
                   "max rel |m_h - 2^(-8(h+1)/H)|", err, u_store + 4.0 * unit_roundoff(DType::float64), 1.0);
}

std::optional<Check> check_unit_interval(const AlibiParams&, const Run& run, const CheckEnv& env)
{
    long outside = 0;
    for (double m : run.at("slopes").values) outside += (m > 0.0 && m < 1.0) ? 0 : 1;
    return exact_zero(tr(env, "every slope lies in (0, 1)", "每个斜率都在 (0, 1) 内"), tr(env, "slopes outside", "范围外的斜率个数"), static_cast<double>(outside));
}

std::optional<Check> check_distinct(const AlibiParams&, const Run& run, const CheckEnv& env)
{
    std::vector<double> sorted = run.at("slopes").values.to_vector();
    if (sorted.size() < 2) return std::nullopt;
    std::sort(sorted.begin(), sorted.end());
    double gap = std::numeric_limits<double>::infinity();
    for (std::size_t h = 1; h < sorted.size(); ++h) gap = std::min(gap, sorted[h] - sorted[h - 1]);
    return greater_than(tr(env, "the slopes are distinct", "斜率互不相同"), tr(env, "smallest gap between two slopes", "两个斜率之间的最小间隔"), gap, 0.0);
}

double simple_vs_reference_code(long heads)
{
    const std::vector<double> simple = alibi_slopes(heads, SlopeRule::paper_text), code = alibi_slopes(heads, SlopeRule::reference_code);
    double diff = 0.0;
    for (std::size_t h = 0; h < simple.size(); ++h) diff = worse(diff, std::abs(simple[h] - code[h]));
    return diff;
}

}  // namespace

double max_rel_gap(const std::vector<double>& a, const std::vector<double>& b)
{
    if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
    double gap = 0.0;
    for (std::size_t h = 0; h < a.size(); ++h) gap = worse(gap, std::abs(a[h] - b[h]) / std::abs(b[h]));
    return gap;
}

namespace {

// The paper's text (§3) states the slopes as a geometric sequence: start 2^(-8/H), ratio the
// same. The articles' 2^(-8(h+1)/H) is that sequence, for every H; computed as a running
// product the h-th term carries h + 1 roundings of float64 (and exp2's own, under one ulp).
std::optional<Check> check_formula_paper_text(const AlibiParams& p, const Run&, const CheckEnv& env)
{
    const std::vector<double> simple = alibi_slopes(p.heads, SlopeRule::paper_text);
    return quoting(article_claim_numeric(tr(env, "the articles' m_h = 2^(-8(h+1)/H) is the paper's text for H = {}: the geometric sequence that "
                                         "starts at 2^(-8/H) with that same ratio",
                                    "文章的 m_h = 2^(-8(h+1)/H) 就是论文正文对 H = {} 的规则：首项与公比都为 2^(-8/H) 的等比数列", p.heads),
                                 "max rel |m_formula - m_text|", max_rel_gap(simple, paper_text_slopes(p.heads)),
                                 dsize(p.heads + 2) * unit_roundoff(DType::float64), 1.0),
                   "论文公式：m_i = 2^(-8 * (i + 1) / num_heads)",
                   tr(env, "the formula is the slope rule the ALiBi paper states",
                      "这个公式就是 ALiBi 论文给出的斜率规则"));
}

// The reference code (get_slopes, and BLOOM) differs from the text when H is not a power of
// two. The articles never say their formula gives the code's slopes (§4.2 gives the paper's
// formula and adds "实际工程中分奇偶头处理", and its H = 4 example matches the code), so this is
// the program's own demonstration of where text and code part, not a verdict on the articles.
std::optional<Check> check_formula_reference_code(const AlibiParams& p, const Run&, const CheckEnv& env)
{
    return demonstration(tr(env, "the paper's text, m_h = 2^(-8(h+1)/H), and its reference code (get_slopes, BLOOM) give different slopes "
                                 "for H = {} (they agree when H is a power of two)",
                            "论文正文的 m_h = 2^(-8(h+1)/H) 与其参考代码（get_slopes、BLOOM）对 H = {} 给出不同的斜率（H 为 2 的幂时两者一致）", p.heads),
                         "max |m_formula - m_code|", simple_vs_reference_code(p.heads), 0.0, Compare::gt);
}

// "Attention 的两个补丁" §4.2, in the comment of get_alibi_slopes: splitting the heads into
// odd and even "keeps the slopes monotone". The paper's rule interleaves the slopes of 2c
// after the first c, so for a head count that is not a power of two they rise again
// (H = 6: 0.25, 0.0625, 0.0156, 0.0039, 0.5, 0.125).
std::optional<Check> check_monotone(const AlibiParams& p, const Run&, const CheckEnv& env)
{
    const std::vector<double> paper = alibi_slopes(p.heads, SlopeRule::reference_code);
    long rises = 0;
    for (std::size_t h = 0; h + 1 < paper.size(); ++h) rises += paper[h + 1] > paper[h] ? 1 : 0;
    return quoting(article_claim(tr(env, "the reference code's odd/even head rule keeps the slopes monotone for H = {}",
                            "参考代码按奇偶头处理的规则使 H = {} 时斜率单调", p.heads),
                         tr(env, "heads h with m_(h+1) > m_h", "满足 m_(h+1) > m_h 的头数"), static_cast<double>(rises), 0.0),
                   "实际工程中分奇偶头处理（保证 slope 单调）",
                   tr(env, "the reference code treats odd and even heads apart so that the slopes fall from head to head",
                      "参考代码把奇数头和偶数头分开处理，使斜率逐头递减"));
}

std::optional<Check> check_zero_diagonal(const AlibiParams&, const Run& run, const CheckEnv& env)
{
    return exact_zero(tr(env, "the bias is zero on the diagonal", "偏置在对角线上为 0"), "max |bias[h, i, i]|", max_abs_diagonal(run.at("bias")));
}

std::optional<Check> check_never_positive(const AlibiParams&, const Run& run, const CheckEnv& env)
{
    return within_bound(tr(env, "the bias is never positive", "偏置从不为正"), tr(env, "max bias", "偏置的最大值"), max_finite(run.at("bias")), 0.0);
}

std::optional<Check> check_toeplitz(const AlibiParams& p, const Run& run, const CheckEnv& env)
{
    return at_most(tr(env, "the bias depends on i - j alone", "偏置只取决于 i - j"), tr(env, "max spread along a diagonal", "沿对角线的最大变化幅度"), max_diagonal_spread(run.at("bias")),
                   env.eps * dsize(p.len), alibi_slopes(p.heads, p.slopes).front() * dsize(p.len));
}

// BLOOM's shortcut: +m*j (key only) with the causal mask vs -m*(i-j) with the causal mask.
template <class T>
std::optional<Check> check_bloom(const AlibiParams& p, const Run& run, const CheckEnv& env)
{
    const std::vector<double> slopes = alibi_slopes(p.heads, p.slopes);
    const Ten3<T> raw = scaled_scores(from_tensor<T, 3>(run.at("q")), from_tensor<T, 3>(run.at("k")), 1.0 / std::sqrt(dsize(p.dim)));
    const Ten3<T> paper_causal = softmax_of(Ten3<T>(raw + alibi_bias<T>(slopes, p.len, p.len, AlibiVariant::causal)));
    const Ten3<T> bloom = softmax_of(Ten3<T>(raw + alibi_bias_key_only<T>(slopes, p.len)));
    // The two score rows differ by the constant m*i; rounding that shift costs up to about
    // eps * m * L in each score, which the softmax passes on to the weights.
    return at_most(tr(env, "BLOOM's key-only bias m*j gives the same causal softmax rows as -m*(i - j)", "BLOOM 只依赖键位置的偏置 m*j 与 -m*(i - j) 给出相同的因果 softmax 行"), "max |w_bloom - w_paper|",
                   max_abs_diff(bloom, paper_causal), 4.0 * env.eps * (dsize(p.len) * slopes.front() + 4.0), 1.0);
}

std::optional<Check> check_rows_sum(const AlibiParams& p, const Run& run, const CheckEnv& env)
{
    // L exps and sums and the division, then (16 bits) each weight rounded once when stored:
    // those roundings add up to at most u(T) sum_j w = u(T).
    return at_most(tr(env, "attention weights sum to 1 per row", "注意力权重每行之和为 1"), "max |sum_j w - 1|", max_row_sum_error(run.at("weights"), nullptr),
                   accumulate_then_store(env.dtype, dsize(p.len) + 4.0, 1.0), 1.0);
}

std::optional<Check> check_future_zero(const AlibiParams& p, const Run& run, const CheckEnv& env)
{
    if (p.variant != AlibiVariant::causal) return std::nullopt;
    return exact_zero(tr(env, "every future weight is exactly 0", "每个未来位置的权重恰好为 0"), tr(env, "max |w| above the diagonal", "对角线上方的 max |w|"),
                      max_masked_weight(run.at("weights"), [](std::size_t, std::size_t i, std::size_t j) { return j > i; }));
}

// Distance decay with equal raw scores (q.k = 0): the bias alone decides.
template <class T>
Tensor flat_weights(const Run& run)
{
    return to_tensor("flat", {"head", "query", "key"}, softmax_of(from_tensor<T, 3>(run.at("bias"))), elem_of<T>());
}

// Error model: each weight exp(-m d) / sum is within about 8u(T) relative of its exact value
// (the bias's rounding times d, the exp, the sum, the division), so two neighbours whose exact
// ratio gap 1 - exp(-m) is at most 8u(T) may round to one value or swap: in bfloat16 (8u =
// 3 %) that is every slope below 0.03. Those heads are not held to "strictly".
constexpr double kWeightRoundings = 8.0;

std::vector<double> step_gaps(const Run& run)
{
    std::vector<double> gaps;
    for (double m : run.at("slopes").values) gaps.push_back(-std::expm1(-m));
    return gaps;
}

template <class T>
std::optional<Check> check_decay(const AlibiParams& p, const Run& run, const CheckEnv& env)
{
    const double resolution = kWeightRoundings * unit_roundoff(precision_of(elem_of<T>()).value_or(DType::float64));
    return exact_zero(tr(env, "with equal raw scores every head's weights fall strictly with distance (while they are normal numbers; heads whose step 1 - exp(-m) is within {:.2g} of rounding excepted)",
                         "原始得分相同时，每个头的权重随距离严格递减（只要仍是正规数；步长 1 - exp(-m) 小于舍入 {:.2g} 的头除外）", resolution),
                      tr(env, "(head, query, distance) where they do not", "不递减的 (头, 查询, 距离) 个数"),
                      static_cast<double>(decay_violations(flat_weights<T>(run), p.variant, std::numeric_limits<T>::min(), step_gaps(run), resolution)));
}

// Steeper slope, more weight on the nearest key: compare heads pairwise on the last row.
template <class T>
std::optional<Check> check_steeper(const AlibiParams& p, const Run& run, const CheckEnv& env)
{
    const Tensor flat = flat_weights<T>(run);
    const std::vector<double> slopes = run.at("slopes").values.to_vector();
    const auto L = static_cast<std::size_t>(p.len), last = L - 1;
    auto nearest = [&](std::size_t h) { return flat.values[(h * L + last) * L + last]; };
    // The exact nearest weight of the last row, 1 / sum_j exp(-m |last - j|), in float64: two
    // heads whose exact weights are within kWeightRoundings u(T) may round to one value.
    auto exact_nearest = [&](std::size_t h) {
        double sum = 0.0;
        for (std::size_t j = 0; j < L; ++j)
            if (p.variant == AlibiVariant::symmetric || j <= last) sum += std::exp(-slopes[h] * static_cast<double>(last - j));
        return 1.0 / sum;
    };
    const double u = unit_roundoff(precision_of(elem_of<T>()).value_or(DType::float64));
    auto resolvable = [&](std::size_t a, std::size_t b) { return exact_nearest(a) - exact_nearest(b) > kWeightRoundings * u * exact_nearest(a); };
    long inversions = 0;
    for (std::size_t a = 0; a < slopes.size(); ++a)
        for (std::size_t b = 0; b < slopes.size(); ++b)
            if (slopes[a] > slopes[b] && L >= 2 && !(nearest(a) > nearest(b)) && resolvable(a, b)) ++inversions;
    return exact_zero(tr(env, "a steeper slope puts more weight on the nearest key than a shallower one", "斜率越陡，放在最近键上的权重越多"), tr(env, "head pairs where it does not", "不满足的头对个数"),
                      static_cast<double>(inversions));
}

template <class T>
std::vector<CheckDef<AlibiParams>> alibi_checks()
{
    return {{"slopes_geometric", {"slopes"}, check_geometric},
            {"slopes_in_unit_interval", {"slopes"}, check_unit_interval},
            {"slopes_distinct", {"slopes"}, check_distinct},
            {"simple_formula_matches_paper_text", {}, check_formula_paper_text},
            {"paper_text_and_reference_code_differ", {}, check_formula_reference_code},
            {"paper_slopes_monotone", {}, check_monotone},
            {"bias_zero_diagonal", {"bias"}, check_zero_diagonal},
            {"bias_never_positive", {"bias"}, check_never_positive},
            {"bias_toeplitz", {"bias"}, check_toeplitz},
            {"bloom_shortcut_equivalent", {}, check_bloom<T>},
            {"rows_sum_to_one", {"weights"}, check_rows_sum},
            {"future_weights_zero", {"weights"}, check_future_zero},
            {"weights_fall_with_distance", {"bias"}, check_decay<T>},
            {"steeper_looks_nearer", {"bias", "slopes"}, check_steeper<T>}};
}

std::optional<std::string> note_slopes(const AlibiParams& p, const Run&, const CheckEnv& env)
{
    if (simple_vs_reference_code(p.heads) == 0.0) {
        return tr(env, "H = {}: the reference code's rule and the paper's text agree on every head", "H = {}：参考代码的规则与论文正文在每个头上都一致", p.heads);
    }
    const std::vector<double> simple = alibi_slopes(p.heads, SlopeRule::paper_text), paper = alibi_slopes(p.heads, SlopeRule::reference_code);
    std::vector<std::string> where;
    std::size_t differing = 0;
    for (std::size_t h = 0; h < simple.size(); ++h)
        if (simple[h] != paper[h] && ++differing <= 6)
            where.push_back(fmt::format("head {}: reference-code {:.6g}, paper-text {:.6g}", h, paper[h], simple[h]));
    return tr(env, "H = {} is not a power of two: the reference code's rule and the paper's text differ ({}{}); this run uses {}",
              "H = {} 不是 2 的幂：参考代码的规则与论文正文不同（{}{}）；本次运行用 {}",
                       p.heads, fmt::join(where, "; "),
                       differing > where.size() ? fmt::format("; {} more heads", differing - where.size()) : "",
                       name_of(p.slopes));
}

template <class T>
Typed<AlibiParams> alibi_typed()
{
    return {compute_alibi<T>, alibi_checks<T>(), {note_slopes}};
}

// --- the catalogue of usual mistakes ---

Tensor slopes_tensor(std::vector<double> slopes) { return Tensor{"slopes", {"head"}, Elem::float64, {slopes.size()}, std::move(slopes)}; }

Tensor bias_with(const AlibiParams& p, const std::vector<double>& slopes, double sign)
{
    Ten3<double> bias = alibi_bias<double>(slopes, p.len, p.len, p.variant);
    for (double& v : bias)
        if (std::isfinite(v) && v != 0.0) v *= sign;
    return to_tensor("bias", {"head", "query", "key"}, bias, Elem::float64);
}

std::vector<double> reversed(std::vector<double> v)
{
    std::reverse(v.begin(), v.end());
    return v;
}

std::vector<Mistake<AlibiParams>> alibi_mistakes()
{
    const char* simple_en = "the paper text's slopes 2^(-8(h+1)/H), which the reference code uses only when H is a power of two";
    const char* simple_zh = "用了论文正文的斜率 2^(-8(h+1)/H)，参考代码只在 H 是 2 的幂时这样取";
    const char* reversed_en = "the slopes in reverse order: the first head gets the gentlest slope";
    const char* reversed_zh = "斜率顺序反了：第一个头得到最平缓的斜率";
    auto rule = [](const AlibiParams& p) { return alibi_slopes(p.heads, p.slopes); };
    return {{"simple_slopes", "slopes", simple_en, simple_zh, [](const AlibiParams& p, const Run&) { return slopes_tensor(alibi_slopes(p.heads, SlopeRule::paper_text)); }},
            {"slopes_reversed", "slopes", reversed_en, reversed_zh, [rule](const AlibiParams& p, const Run&) { return slopes_tensor(reversed(rule(p))); }},
            {"simple_slopes", "bias", simple_en, simple_zh, [](const AlibiParams& p, const Run&) { return bias_with(p, alibi_slopes(p.heads, SlopeRule::paper_text), 1.0); }},
            {"bias_positive", "bias", "the bias has the wrong sign: +m|i - j| rewards distance", "偏置符号反了：+m|i - j| 奖励了距离",
             [rule](const AlibiParams& p, const Run&) { return bias_with(p, rule(p), -1.0); }},
            {"slopes_reversed", "bias", reversed_en, reversed_zh, [rule](const AlibiParams& p, const Run&) { return bias_with(p, reversed(rule(p)), 1.0); }}};
}

std::vector<TensorDecl<AlibiParams>> alibi_tensors()
{
    auto hll = [](const AlibiParams& p) { return std::vector<double>{dsize(p.heads), dsize(p.len), dsize(p.len)}; };
    auto hld = [](const AlibiParams& p) { return std::vector<double>{dsize(p.heads), dsize(p.len), dsize(p.dim)}; };
    const std::vector<std::string> hqk = {"head", "query", "key"};
    return {{"slopes", {"head"}, Need::always, [](const AlibiParams& p) { return std::vector<double>{dsize(p.heads)}; }, {}, {}},
            {"bias", hqk, Need::always, hll, {}, {}},
            {"q", {"head", "pos", "dim"}, Need::always, hld, {}, {}},
            {"k", {"head", "pos", "dim"}, Need::always, hld, {}, {}},
            {"scores", hqk, Need::always, hll, {}, {}},
            {"weights", hqk, Need::always, hll, {}, {}},
            {"distance_profile", {"head", "distance"}, Need::on_demand,
             [](const AlibiParams& p) { return std::vector<double>{dsize(p.heads), dsize(p.len)}; }, {}, {}}};
}

std::vector<OptionRow<AlibiParams>> alibi_options()
{
    using P = AlibiParams;
    std::vector<OptionRow<P>> rows{option<P>("--heads", "Heads H (any H >= 1)", &P::heads, whole_range(1, 4096)),
            option<P>("--len", "Positions L", &P::len, whole_range(1, 1L << 20)),
            option<P>("--dim", "Per-head dimension d of the random q and k", &P::dim, whole_range(1, 1L << 16)),
            option<P>("--slopes", "reference-code: the paper's get_slopes and BLOOM (not a power of two: interleaved from 2H); "
                                  "paper-text: the paper's text and the articles, 2^(-8(h+1)/H)", &P::slopes),
            option<P>("--variant", "symmetric: -m|i-j| (the articles, encoder-style); causal: -m(i-j) with the causal mask (the paper)",
                      &P::variant)};
    row_of(rows, "--slopes").aliases = {{"paper", "reference-code"}, {"simple", "paper-text"}};
    return rows;
}

// Random valid parameters for the random tests.
AlibiParams sample_alibi(Rng& rng)
{
    AlibiParams p;
    p.heads = between(rng, 1, 33), p.len = between(rng, 2, 12), p.dim = between(rng, 2, 16), p.slopes = rng.below(2) ? SlopeRule::paper_text : SlopeRule::reference_code;
    p.variant = rng.below(2) ? AlibiVariant::causal : AlibiVariant::symmetric;
    return p;
}

Experiment<AlibiParams> make_alibi_experiment()
{
    Experiment<AlibiParams> e;
    e.command = "alibi";
    e.summary = "ALiBi: per-head slopes, the linear distance bias, and why BLOOM's key-only shortcut is equivalent";
    e.example = "attnlab alibi --heads 6 --len 16 --format csv --tensor distance_profile";
    e.options = alibi_options();
    e.main_tensor = "bias";
    e.tensors = alibi_tensors();
    e.validate = [](const AlibiParams& p) {
        if (p.heads < 1) throw InputError(fmt::format("--heads must be at least 1 (got {})", p.heads));
        if (p.len < 1) throw InputError(fmt::format("--len must be at least 1 (got {})", p.len));
        if (p.dim < 1) throw InputError(fmt::format("--dim must be at least 1 (got {})", p.dim));
    };
    // The checks' working copies of [H, L, L]: raw scores, two biases, two softmaxes, the flat weights.
    e.scratch_bytes = [](const AlibiParams& p, DType dtype) {
        const double elem = detail::elem_bytes(dtype);
        return (8.0 * dsize(p.len) + 2.0 * dsize(p.dim)) * dsize(p.heads) * dsize(p.len) * elem;
    };
    // q k^T twice (the run and BLOOM's check), five softmaxes, the normals of q and k.
    e.work = [](const AlibiParams& p, const Plan&) {
        const double H = dsize(p.heads), L = dsize(p.len), d = dsize(p.dim);
        return H * L * L * (2.0 * d + 5.0 * kExpWork) + 2.0 * H * L * d * 24.0;
    };
    e.work_what = [](const AlibiParams& p) { return fmt::format("scores [{}, {}, {}] over d = {}", p.heads, p.len, p.len, p.dim); };
    e.inputs = {"q", "k"};
    e.mistakes = alibi_mistakes();
    e.sample = sample_alibi;
    e.set_typed([](auto t) { return alibi_typed<typename decltype(t)::type>(); });
    return e;
}

}  // namespace

const Experiment<AlibiParams>& alibi_experiment()
{
    static const Experiment<AlibiParams> e = make_alibi_experiment();
    return e;
}

Report run_alibi(const AlibiParams& p, const RunContext& ctx) { return run_experiment(alibi_experiment(), p, ctx); }

std::vector<TensorInfo> alibi_tensor_infos() { return tensor_infos(alibi_experiment()); }

std::vector<std::string> alibi_command(const AlibiParams& p) { return command_of(alibi_experiment(), p); }

}  // namespace attnlab

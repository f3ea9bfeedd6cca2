#include "attnlab/experiments/shaw.hpp"

#include "attnlab/core/attention.hpp"
#include "attnlab/core/error_model.hpp"
#include "attnlab/core/half.hpp"
#include "attnlab/core/measure.hpp"
#include "attnlab/core/rng.hpp"
#include "attnlab/core/softmax.hpp"
#include "attnlab/core/xt.hpp"
#include "attnlab/experiments/inputs.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace attnlab {

namespace {

bool causal(const ShawParams& p) { return p.mask == MaskKind::causal; }
long head_dim(const ShawParams& p) { return p.dim / p.heads; }
// S keys, and the queries' first position O = S - L: the queries are the last L positions.
long keys(const ShawParams& p) { return p.kv_len.value_or(p.len); }
long first_query(const ShawParams& p) { return keys(p) - p.len; }

// The table row the query at position a and the key at position b read: clip(b - a, -K, K) + K
// (called with the positions swapped for the mistake i - j).
std::size_t rel_row(long a, long b, long clip) { return static_cast<std::size_t>(std::clamp(b - a, -clip, clip) + clip); }

// The attention of eqs. 3 and 4 in T: each dot accumulated in Compute<T> and stored once.
template <class T>
struct ShawResult {
    Ten4<T> scores, weights, out;
};

template <class T>
ShawResult<T> shaw_attention(const ShawParams& p, const Ten4<T>& q, const Ten4<T>& k, const Ten4<T>& v, const Mat<T>& rel_k, const Mat<T>& rel_v)
{
    const std::size_t B = q.shape(0), H = q.shape(1), L = q.shape(2), S = k.shape(2), d = q.shape(3);
    const long O = first_query(p);
    const Compute<T> scale = Compute<T>(1) / std::sqrt(static_cast<Compute<T>>(d));
    ShawResult<T> r{xt::zeros<T>({B, H, L, S}), {}, xt::zeros<T>({B, H, L, d})};
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t i = 0; i < L; ++i)
                for (std::size_t j = 0; j < S; ++j) {
                    const long at = O + static_cast<long>(i);
                    const std::size_t row = rel_row(at, static_cast<long>(j), p.clip);
                    Compute<T> acc = 0;
                    for (std::size_t c = 0; c < d; ++c)
                        acc += static_cast<Compute<T>>(q(b, h, i, c)) * (static_cast<Compute<T>>(k(b, h, j, c)) + static_cast<Compute<T>>(rel_k(row, c)));
                    r.scores(b, h, i, j) = causal(p) && static_cast<long>(j) > at ? static_cast<T>(-std::numeric_limits<double>::infinity()) : static_cast<T>(acc * scale);
                }
    r.weights = r.scores;
    softmax_rows(r.weights.data(), B * H * L, S, SoftmaxKind::safe);
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t i = 0; i < L; ++i)
                for (std::size_t c = 0; c < d; ++c) {
                    Compute<T> acc = 0;
                    for (std::size_t j = 0; j < S; ++j)
                        acc += static_cast<Compute<T>>(r.weights(b, h, i, j)) *
                               (static_cast<Compute<T>>(v(b, h, j, c)) + static_cast<Compute<T>>(rel_v(rel_row(O + static_cast<long>(i), static_cast<long>(j), p.clip), c)));
                    r.out(b, h, i, c) = static_cast<T>(acc);
                }
    return r;
}

template <class T>
Ten3<T> reversed_positions(const Ten3<T>& x)
{
    Ten3<T> out = x;
    const std::size_t L = x.shape(1);
    for (std::size_t b = 0; b < x.shape(0); ++b)
        for (std::size_t i = 0; i < L; ++i) xt::view(out, b, i, xt::all()) = xt::view(x, b, L - 1 - i, xt::all());
    return out;
}

// The same attention on the input reversed, for the claim that order now matters (queries
// and keys of one length only: a block of queries after a cache has no reversal of its own).
template <class T>
void add_reversed(const ShawParams& p, const Ten3<T>& x, const Mat<T>& w_q, const Mat<T>& w_k, const Mat<T>& w_v, const Mat<T>& rel_k, const Mat<T>& rel_v,
                  Run& run)
{
    const Ten3<T> xp = reversed_positions(x);
    const ShawResult<T> rp = shaw_attention(p, project_heads(xp, w_q, p.heads), project_heads(xp, w_k, p.heads), project_heads(xp, w_v, p.heads), rel_k, rel_v);
    const auto L = static_cast<std::size_t>(p.len);
    std::vector<double> perm(L);
    for (std::size_t i = 0; i < L; ++i) perm[i] = static_cast<double>(L - 1 - i);
    run.add(Tensor{"perm", {"pos"}, Elem::index, {L}, std::move(perm)});
    run.add(to_tensor("out_perm", {"batch", "head", "pos", "dim"}, rp.out, elem_of<T>()));
}

template <class T>
Run compute_shaw(const ShawParams& p, const Plan& plan)
{
    const auto B = static_cast<std::size_t>(p.batch), L = static_cast<std::size_t>(p.len), S = static_cast<std::size_t>(keys(p)),
               E = static_cast<std::size_t>(p.dim);
    const Ten3<T> x = input_or<T, 3>(plan, "x", [&] { return random_tensor3<T>(B, S, E, plan.seed, stream::x); });
    const Mat<T> w_q = input_or<T, 2>(plan, "w_q", [&] { return random_weight<T>(p.dim, p.dim, plan.seed, stream::w_q); });
    const Mat<T> w_k = input_or<T, 2>(plan, "w_k", [&] { return random_weight<T>(p.dim, p.dim, plan.seed, stream::w_k); });
    const Mat<T> w_v = input_or<T, 2>(plan, "w_v", [&] { return random_weight<T>(p.dim, p.dim, plan.seed, stream::w_v); });
    const auto rows = static_cast<std::size_t>(2 * p.clip + 1), d = static_cast<std::size_t>(head_dim(p));
    auto table = [&](std::uint64_t s) {
        Mat<T> t = xt::zeros<T>({rows, d});
        fill_normal(t.data(), t.size(), plan.seed, s);
        return t;
    };
    const Mat<T> rel_k = input_or<T, 2>(plan, "rel_k", [&] { return table(stream::rel_k); });
    const Mat<T> rel_v = input_or<T, 2>(plan, "rel_v", [&] { return table(stream::rel_v); });
    const Ten3<T> x_queries = xt::view(x, xt::all(), xt::range(S - L, S), xt::all());  // the last L positions
    const Ten4<T> q = project_heads(x_queries, w_q, p.heads), k = project_heads(x, w_k, p.heads), v = project_heads(x, w_v, p.heads);
    ShawResult<T> r = shaw_attention(p, q, k, v, rel_k, rel_v);
    std::vector<double> index(L * S);
    for (std::size_t i = 0; i < L; ++i)
        for (std::size_t j = 0; j < S; ++j) index[i * S + j] = static_cast<double>(rel_row(first_query(p) + static_cast<long>(i), static_cast<long>(j), p.clip));
    Run run;
    for (auto [name, t] : {std::pair{"x", &x}}) run.add(to_tensor(name, {"batch", "pos", "dim"}, *t, elem_of<T>()));
    for (auto [name, t] : {std::pair{"w_q", &w_q}, {"w_k", &w_k}, {"w_v", &w_v}}) run.add(to_tensor(name, {"in", "out"}, *t, elem_of<T>()));
    for (auto [name, t] : {std::pair{"q", &q}, {"k", &k}, {"v", &v}}) run.add(to_tensor(name, {"batch", "head", "pos", "dim"}, *t, elem_of<T>()));
    run.add(to_tensor("rel_k", {"rel", "dim"}, rel_k, elem_of<T>()));
    run.add(to_tensor("rel_v", {"rel", "dim"}, rel_v, elem_of<T>()));
    run.add(Tensor{"rel_index", {"query", "key"}, Elem::index, {L, S}, std::move(index)});
    run.add(to_tensor("scores", {"batch", "head", "query", "key"}, r.scores, elem_of<T>()));
    run.add(to_tensor("weights", {"batch", "head", "query", "key"}, r.weights, elem_of<T>()));
    run.add(to_tensor("out", {"batch", "head", "pos", "dim"}, r.out, elem_of<T>()));
    if (S == L) add_reversed(p, x, w_q, w_k, w_v, rel_k, rel_v, run);
    return run;
}

// --- the definition in float64, from the run's own q, k, v and tables: the checks' reference
// and the mistakes' builder ---

// A learner's version: the table read at i - j, or one of the two relative terms left out.
struct ShawVariant {
    bool flipped = false;
    bool with_rel_k = true;
    bool with_rel_v = true;
};

struct Dims {
    std::size_t B, H, L, S, d;
};
Dims dims_of(const Run& run)
{
    const Tensor& q = run.at("q");
    return {q.dim(0), q.dim(1), q.dim(2), run.at("k").dim(2), q.dim(3)};
}

// The row query i (at position O + i) and key j read, or the mirrored one.
std::size_t variant_row(const ShawParams& p, std::size_t i, std::size_t j, ShawVariant v)
{
    const long a = first_query(p) + static_cast<long>(i), b = static_cast<long>(j);
    return v.flipped ? rel_row(b, a, p.clip) : rel_row(a, b, p.clip);
}

// scores [B, H, L, L] (-inf where masked), and in `size` each score's sum |q_c| |k_c + r_c| / sqrt(d).
std::vector<double> reference_scores(const ShawParams& p, const Run& run, ShawVariant v, std::vector<double>* size = nullptr)
{
    const auto [B, H, L, S, d] = dims_of(run);
    const Tensor &q = run.at("q"), &k = run.at("k"), &rel_k = run.at("rel_k");
    std::vector<double> out(B * H * L * S);
    if (size) size->assign(out.size(), 0.0);
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    const auto O = static_cast<std::size_t>(first_query(p));
    for (std::size_t bh = 0; bh < B * H; ++bh)
        for (std::size_t i = 0; i < L; ++i)
            for (std::size_t j = 0; j < S; ++j) {
                const std::size_t n = (bh * L + i) * S + j, row = variant_row(p, i, j, v);
                double acc = 0.0, mag = 0.0;
                for (std::size_t c = 0; c < d; ++c) {
                    const double key = k.values[(bh * S + j) * d + c] + (v.with_rel_k ? rel_k.values[row * d + c] : 0.0);
                    acc += q.values[(bh * L + i) * d + c] * key;
                    mag += std::abs(q.values[(bh * L + i) * d + c] * key);
                }
                out[n] = causal(p) && j > O + i ? -std::numeric_limits<double>::infinity() : acc * scale;
                if (size) (*size)[n] = mag * scale;
            }
    return out;
}

std::vector<double> softmax_of(std::vector<double> scores, std::size_t S)
{
    softmax_rows(scores.data(), scores.size() / S, S, SoftmaxKind::safe);
    return scores;
}

// out [B, H, L, d] from the given weights, and in `size` each element's sum_j w_ij |v_jc + r_c|.
std::vector<double> reference_out(const ShawParams& p, const Run& run, const std::vector<double>& w, ShawVariant var, std::vector<double>* size = nullptr)
{
    const auto [B, H, L, S, d] = dims_of(run);
    const Tensor &v = run.at("v"), &rel_v = run.at("rel_v");
    std::vector<double> out(B * H * L * d, 0.0);
    if (size) size->assign(out.size(), 0.0);
    for (std::size_t bh = 0; bh < B * H; ++bh)
        for (std::size_t i = 0; i < L; ++i)
            for (std::size_t j = 0; j < S; ++j) {
                const double wij = w[(bh * L + i) * S + j];
                const std::size_t row = variant_row(p, i, j, var);
                for (std::size_t c = 0; c < d; ++c) {
                    const double value = v.values[(bh * S + j) * d + c] + (var.with_rel_v ? rel_v.values[row * d + c] : 0.0);
                    out[(bh * L + i) * d + c] += wij * value;
                    if (size) (*size)[(bh * L + i) * d + c] += std::abs(wij * value);
                }
            }
    return out;
}

double max_diff(const Tensor& t, const std::vector<double>& expected)
{
    double worst = 0.0;
    for (std::size_t n = 0; n < expected.size(); ++n) worst = worse(worst, diff_nan_rule(t.values[n], expected[n]));
    return worst;
}

double max_of(const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); }

// --- checks ---

std::optional<Check> check_index_toeplitz(const ShawParams&, const Run& run, const CheckEnv& env)
{
    return exact_zero(tr(env, "the relative term depends on j - i alone: the row each pair reads is constant along every diagonal",
                         "相对项只取决于 j - i：每对 (i, j) 读的行沿每条对角线不变"),
                      tr(env, "max spread along a diagonal of rel_index", "rel_index 对角线上的最大极差"), max_diagonal_spread(run.at("rel_index")));
}

// How many pairs of rel_index read another row than `expected_row(a, j)`, over the pairs
// `applies` takes; a is query i's position, O + i.
template <class Row, class Applies>
double pairs_off(const ShawParams& p, const Tensor& index, Row expected_row, Applies applies)
{
    const long L = static_cast<long>(index.dim(0)), S = static_cast<long>(index.dim(1)), O = first_query(p);
    double count = 0.0;
    for (long i = 0; i < L; ++i)
        for (long j = 0; j < S; ++j)
            count += applies(O + i, j) && index.values[static_cast<std::size_t>(i * S + j)] != static_cast<double>(expected_row(O + i, j));
    return count;
}

std::optional<Check> check_index_clipped(const ShawParams& p, const Run& run, const CheckEnv& env)
{
    const std::string query = first_query(p) == 0 ? "i" : fmt::format("({} + i)", first_query(p));
    return exact_zero(tr(env, "pair (i, j) reads row clip(j - {1}, -{0}, {0}) + {0} of the tables (key minus query)",
                         "(i, j) 读表的第 clip(j - {1}, -{0}, {0}) + {0} 行（键减查询）", p.clip, query),
                      tr(env, "pairs reading another row", "读错行的对数"),
                      pairs_off(p, run.at("rel_index"), [&](long a, long j) { return rel_row(a, j, p.clip); }, [](long, long) { return true; }));
}

std::optional<Check> check_beyond_clip(const ShawParams& p, const Run& run, const CheckEnv& env)
{
    if (keys(p) - 1 <= p.clip) return std::nullopt;
    auto end_row = [&](long a, long j) { return j > a ? 2 * p.clip : 0L; };
    auto beyond = [&](long a, long j) { return std::labs(j - a) >= p.clip; };
    return exact_zero(tr(env, "every distance beyond {0} shares one vector per side: rows 0 and {1}", "超过 {0} 的距离每侧共用一个向量：第 0 行与第 {1} 行",
                         p.clip, 2 * p.clip),
                      tr(env, "pairs at distance >= K reading another row", "距离 >= K 却读了别的行的对数"), pairs_off(p, run.at("rel_index"), end_row, beyond));
}

// Error model: each score sums d products q_c (k_c + r_c), the sum k_c + r_c rounded too, and
// is scaled and stored once: d + 3 operations relative to sum |q_c| |k_c + r_c| / sqrt(d).
std::optional<Check> check_scores(const ShawParams& p, const Run& run, const CheckEnv& env)
{
    std::vector<double> size;
    const std::vector<double> expected = reference_scores(p, run, {}, &size);
    const double scale = max_of(size), d = static_cast<double>(dims_of(run).d);
    return at_most(tr(env, "scores = q_i . (k_j + rel_k[rel_index[i, j]]) / sqrt(d) (eq. 4){}", "scores = q_i . (k_j + rel_k[rel_index[i, j]]) / sqrt(d)（式 4）{}",
                      causal(p) ? tr(env, ", -inf above the diagonal", "，对角线以上为 -inf") : ""),
                   tr(env, "max |scores - definition in float64|", "max |scores - float64 定义值|"), max_diff(run.at("scores"), expected),
                   accumulate_then_store(env.dtype, d + 3.0, 1.0) * scale, scale);
}

std::optional<Check> check_rows(const ShawParams& p, const Run& run, const CheckEnv& env)
{
    const Tensor& w = run.at("weights");
    const auto S = static_cast<std::size_t>(keys(p));
    double worst = 0.0;
    for (std::size_t r = 0; r < w.size() / S; ++r) {
        double sum = 0.0;
        for (std::size_t j = 0; j < S; ++j) sum += w.values[r * S + j];
        worst = worse(worst, std::abs(sum - 1.0));
    }
    return at_most(tr(env, "every weights row sums to 1", "每一行权重之和为 1"), "max |sum_j w - 1|", worst,
                   accumulate_then_store(env.dtype, dsize(keys(p)) + 4.0, 1.0), 1.0);
}

std::optional<Check> check_masked(const ShawParams& p, const Run& run, const CheckEnv& env)
{
    if (!causal(p)) return std::nullopt;
    const Tensor& w = run.at("weights");
    const auto L = static_cast<std::size_t>(p.len), S = static_cast<std::size_t>(keys(p)), O = static_cast<std::size_t>(first_query(p));
    double worst = 0.0;
    for (std::size_t n = 0; n < w.size(); ++n)
        if ((n % S) > O + (n / S) % L) worst = worse(worst, std::abs(w.values[n]));
    return exact_zero(tr(env, "every masked weight is exactly 0", "每个被屏蔽的权重都恰好为 0"), "max |w| at masked keys", worst);
}

// out in float64 from the run's own weights, with its largest sum_j w_ij |v_jc + r_c|.
struct OutReference {
    std::vector<double> out;
    double scale = 0.0;
};
OutReference out_reference(const ShawParams& p, const Run& run)
{
    std::vector<double> size;
    OutReference r;
    r.out = reference_out(p, run, run.at("weights").values.to_vector(), {}, &size);
    r.scale = max_of(size);
    return r;
}

// Error model: each element sums S products w_ij (v_jc + r_c), the sum rounded too, and is
// stored once: S + 2 operations relative to sum_j w_ij |v_jc + r_c|.
double out_tol(const ShawParams& p, const CheckEnv& env, double scale) { return accumulate_then_store(env.dtype, dsize(keys(p)) + 2.0, 1.0) * scale; }

std::optional<Check> check_out(const ShawParams& p, const Run& run, const CheckEnv& env)
{
    const OutReference ref = out_reference(p, run);
    return at_most(tr(env, "out_i = sum_j w_ij (v_j + rel_v[rel_index[i, j]]) (eq. 3)", "out_i = sum_j w_ij (v_j + rel_v[rel_index[i, j]])（式 3）"),
                   tr(env, "max |out - definition in float64|", "max |out - float64 定义值|"), max_diff(run.at("out"), ref.out),
                   out_tol(p, env, ref.scale), ref.scale);
}

// Reversing the input does more than reverse the output: the relative terms see the order.
// Not guaranteed for every table (zero tables leave plain attention): a demonstration.
std::optional<Check> check_breaks(const ShawParams& p, const Run& run, const CheckEnv& env)
{
    if (p.len < 2 || keys(p) != p.len) return std::nullopt;
    const Tensor &out = run.at("out"), &out_perm = run.at("out_perm"), &perm = run.at("perm");
    const auto [B, H, L, S, d] = dims_of(run);
    double worst = 0.0;
    for (std::size_t bh = 0; bh < B * H; ++bh)
        for (std::size_t i = 0; i < L; ++i)
            for (std::size_t c = 0; c < d; ++c)
                worst = worse(worst, std::abs(out_perm.values[(bh * L + i) * d + c] -
                                              out.values[(bh * L + static_cast<std::size_t>(perm.values[i])) * d + c]));
    return demonstration(tr(env, "with relative position representations, Attn(PX) != P Attn(X): order now matters (more than 100x rounding)",
                            "加入相对位置表示后 Attn(PX) != P Attn(X)：顺序有了意义（超过舍入误差的 100 倍）"),
                         tr(env, "max |Attn(PX) - P Attn(X)|, P reversing the order", "max |Attn(PX) - P Attn(X)|，P 为倒序"), worst,
                         100.0 * 2.0 * out_tol(p, env, out_reference(p, run).scale), Compare::gt);
}

template <class T>
Typed<ShawParams> shaw_typed()
{
    return {compute_shaw<T>,
            {{"rel_index_depends_on_offset_only", {"rel_index"}, check_index_toeplitz},
             {"rel_index_is_clipped_offset", {"rel_index"}, check_index_clipped},
             {"beyond_clip_share_a_row", {"rel_index"}, check_beyond_clip},
             {"scores_match_definition", {"scores"}, check_scores},
             {"rows_sum_to_one", {"weights"}, check_rows},
             {"masked_weights_exactly_zero", {"weights"}, check_masked},
             {"out_matches_definition", {"out"}, check_out},
             {"equivariance_breaks", {"out", "out_perm"}, check_breaks}},
            {}};
}

// --- the catalogue of usual mistakes ---

Tensor shaped_like(const Run& run, const std::string& name, std::vector<double> values)
{
    const Tensor& t = run.at(name);
    return Tensor{name, t.axes, Elem::float64, t.shape, std::move(values)};
}

Tensor scores_of(const ShawParams& p, const Run& run, ShawVariant v) { return shaped_like(run, "scores", reference_scores(p, run, v)); }

Tensor out_of(const ShawParams& p, const Run& run, ShawVariant v)
{
    const std::vector<double> w = v.flipped ? softmax_of(reference_scores(p, run, v), static_cast<std::size_t>(keys(p))) : run.at("weights").values.to_vector();
    return shaped_like(run, "out", reference_out(p, run, w, v));
}

std::vector<Mistake<ShawParams>> shaw_mistakes()
{
    const char* flipped_en = "the table is read at i - j instead of j - i: every relative vector comes from the mirrored distance";
    const char* flipped_zh = "按 i - j 而不是 j - i 读表：每个相对向量都取自镜像的距离";
    const ShawVariant flipped{true, true, true};
    return {{"rel_index_i_minus_j", "rel_index", flipped_en, flipped_zh,
             [](const ShawParams& p, const Run& run) {
                 const long S = keys(p);
                 std::vector<double> index(static_cast<std::size_t>(p.len * S));
                 for (long i = 0; i < p.len; ++i)
                     for (long j = 0; j < S; ++j) index[static_cast<std::size_t>(i * S + j)] = static_cast<double>(rel_row(j, first_query(p) + i, p.clip));
                 return shaped_like(run, "rel_index", std::move(index));
             }},
            {"rel_index_i_minus_j", "scores", flipped_en, flipped_zh, [=](const ShawParams& p, const Run& run) { return scores_of(p, run, flipped); }},
            {"rel_index_i_minus_j", "out", flipped_en, flipped_zh, [=](const ShawParams& p, const Run& run) { return out_of(p, run, flipped); }},
            {"rel_k_missing", "scores", "the scores leave out rel_k: plain q_i . k_j / sqrt(d)", "得分漏了 rel_k：只有 q_i . k_j / sqrt(d)",
             [](const ShawParams& p, const Run& run) { return scores_of(p, run, {false, false, true}); }},
            {"rel_v_missing", "out", "the output leaves out rel_v: plain sum_j w_ij v_j", "输出漏了 rel_v：只有 sum_j w_ij v_j",
             [](const ShawParams& p, const Run& run) { return out_of(p, run, {false, true, false}); }}};
}

std::vector<OptionRow<ShawParams>> shaw_options()
{
    using P = ShawParams;
    std::vector<OptionRow<P>> rows{option<P>("--len", "Positions L", &P::len, whole_range(1, 4096)),
                                   option<P>("--dim", "Model dimension E, a multiple of H (head dimension d = E/H)", &P::dim, whole_range(1, 4096)),
                                   option<P>("--heads", "Heads H (the tables are shared by the heads, as in the paper)", &P::heads, whole_range(1, 256)),
                                   option<P>("--batch", "Batch size B", &P::batch, whole_range(1, 64)),
                                   option<P>("--clip", "K: distances beyond K share the tables' end rows (2K + 1 rows)", &P::clip, whole_range(0, 4096)),
                                   option<P>("--mask", "none (an encoder, as the paper's, the default) or causal", &P::mask),
                                   option<P>("--kv-len", "Keys S >= L: the L queries are the last L of S positions, after a cache (tensor2tensor's "
                                                         "length_q < length_k; default L)",
                                             &P::kv_len, whole_range(1, 4096))};
    row_of(rows, "--mask").only = {"none", "causal"};
    return rows;
}

std::vector<TensorDecl<ShawParams>> shaw_tensors()
{
    using P = ShawParams;
    auto bld = [](const P& p) { return std::vector<double>{dsize(p.batch), dsize(keys(p)), dsize(p.dim)}; };
    auto ee = [](const P& p) { return std::vector<double>{dsize(p.dim), dsize(p.dim)}; };
    auto heads = [](const P& p) { return std::vector<double>{dsize(p.batch), dsize(p.heads), dsize(p.len), dsize(head_dim(p))}; };
    auto kv = [](const P& p) { return std::vector<double>{dsize(p.batch), dsize(p.heads), dsize(keys(p)), dsize(head_dim(p))}; };
    auto pairs = [](const P& p) { return std::vector<double>{dsize(p.batch), dsize(p.heads), dsize(p.len), dsize(keys(p))}; };
    auto square = [](const P& p) { return keys(p) == p.len; };
    auto table = [](const P& p) { return std::vector<double>{dsize(2 * p.clip + 1), dsize(head_dim(p))}; };
    return {{"x", {"batch", "pos", "dim"}, Need::always, bld, {}, {}},
            {"w_q", {"in", "out"}, Need::always, ee, {}, {}},
            {"w_k", {"in", "out"}, Need::always, ee, {}, {}},
            {"w_v", {"in", "out"}, Need::always, ee, {}, {}},
            {"q", {"batch", "head", "pos", "dim"}, Need::always, heads, {}, {}},
            {"k", {"batch", "head", "pos", "dim"}, Need::always, kv, {}, {}},
            {"v", {"batch", "head", "pos", "dim"}, Need::always, kv, {}, {}},
            {"rel_k", {"rel", "dim"}, Need::always, table, {}, {}},
            {"rel_v", {"rel", "dim"}, Need::always, table, {}, {}},
            {"rel_index", {"query", "key"}, Need::always, [](const P& p) { return std::vector<double>{dsize(p.len), dsize(keys(p))}; }, {}, {}},
            {"scores", {"batch", "head", "query", "key"}, Need::always, pairs, {}, {}},
            {"weights", {"batch", "head", "query", "key"}, Need::always, pairs, {}, {}},
            {"out", {"batch", "head", "pos", "dim"}, Need::always, heads, {}, {}},
            {"perm", {"pos"}, Need::always, [](const P& p) { return std::vector<double>{dsize(p.len)}; }, square, {}},
            {"out_perm", {"batch", "head", "pos", "dim"}, Need::always, heads, square, {}}};
}

// Random valid parameters for the random tests.
ShawParams sample_shaw(Rng& rng)
{
    ShawParams p;
    p.len = between(rng, 2, 10), p.heads = between(rng, 1, 3), p.dim = p.heads * 2 * between(rng, 1, 3), p.clip = between(rng, 0, 4);
    p.mask = rng.below(2) ? MaskKind::causal : MaskKind::none;
    p.batch = between(rng, 1, 2), p.clip = between(rng, 0, 6);
    if (rng.below(3) == 0) p.kv_len = p.len + between(rng, 0, 5);
    return p;
}

Experiment<ShawParams> make_shaw_experiment()
{
    Experiment<ShawParams> e;
    e.command = "shaw";
    e.summary = "Relative position representations (Shaw et al. 2018): clipped distances index two tables added to the keys and the values";
    e.example = "attnlab shaw --len 6 --clip 2 --show rel_index";
    e.options = shaw_options();
    e.main_tensor = "out";
    e.tensors = shaw_tensors();
    e.validate = [](const ShawParams& p) {
        if (p.dim % p.heads != 0) throw InputError(fmt::format("--dim {} is not a multiple of --heads {}", p.dim, p.heads));
        if (keys(p) < p.len) throw InputError(fmt::format("--kv-len {} is below --len {}: the queries are the last L of the S positions", keys(p), p.len));
    };
    e.derived_params = [](const ShawParams& p) { return ParamList{{"head_dim", head_dim(p)}}; };
    // Two passes (the input and its reversal): projections 3 B L E^2 and the pairs 2 B H L^2 d
    // each, the softmax's exps, and the checks' float64 passes (about three more pair passes).
    e.work = [](const ShawParams& p, const Plan&) {
        const double pairs = dsize(p.batch) * dsize(p.heads) * dsize(p.len) * dsize(keys(p));
        return 2.0 * (3.0 * dsize(p.batch) * dsize(keys(p)) * dsize(p.dim) * dsize(p.dim) + 2.0 * pairs * dsize(head_dim(p)) + pairs * kExpWork) +
               6.0 * pairs * dsize(head_dim(p));
    };
    e.work_what = [](const ShawParams& p) { return fmt::format("scores [{}, {}, {}, {}]", p.batch, p.heads, p.len, keys(p)); };
    e.inputs = {"x", "w_q", "w_k", "w_v", "rel_k", "rel_v"};
    e.mistakes = shaw_mistakes();
    e.sample = sample_shaw;
    e.set_typed([](auto t) { return shaw_typed<typename decltype(t)::type>(); });
    return e;
}

}  // namespace

const Experiment<ShawParams>& shaw_experiment()
{
    static const Experiment<ShawParams> e = make_shaw_experiment();
    return e;
}

Report run_shaw(const ShawParams& p, const RunContext& ctx) { return run_experiment(shaw_experiment(), p, ctx); }

std::vector<std::string> shaw_command(const ShawParams& p) { return command_of(shaw_experiment(), p); }

}  // namespace attnlab

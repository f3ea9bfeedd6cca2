#include "attnlab/experiments/nope.hpp"

#include "attnlab/core/error_model.hpp"
#include "attnlab/core/half.hpp"
#include "attnlab/core/measure.hpp"
#include "attnlab/core/softmax.hpp"
#include "attnlab/core/xt.hpp"
#include "attnlab/experiments/permute.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace attnlab {

namespace {

bool causal(const NopeParams& p) { return p.mask == MaskKind::causal; }

// Keys row i sees: i + 1 under the causal mask, all L without it.
double visible(const NopeParams& p, std::size_t i) { return causal(p) ? static_cast<double>(i + 1) : static_cast<double>(p.len); }

// out_i = sum_j w_ij v_j in T.
template <class T>
Vec<T> attend_values(const Mat<T>& w, const Vec<T>& v)
{
    Vec<T> out = xt::zeros<T>({w.shape(0)});
    for (std::size_t i = 0; i < w.shape(0); ++i)
        for (std::size_t j = 0; j < w.shape(1); ++j) out(i) += w(i, j) * v(j);
    return out;
}

// q = 0, so every score is 0; the causal mask adds -inf above the diagonal. v is 1 on the first
// token; the input order is reversed (perm) for the bag-of-words claim.
template <class T>
Run compute_nope(const NopeParams& p, const Plan&)
{
    const auto L = static_cast<std::size_t>(p.len);
    Mat<T> w = xt::zeros<T>({L, L});
    if (causal(p))
        for (std::size_t i = 0; i < L; ++i)
            for (std::size_t j = i + 1; j < L; ++j) w(i, j) = static_cast<T>(-std::numeric_limits<double>::infinity());
    softmax_rows(w.data(), L, L, SoftmaxKind::plain);
    Vec<T> v = xt::zeros<T>({L}), v_perm = xt::zeros<T>({L});
    v(0) = T(1);
    std::vector<double> perm(L);
    for (std::size_t i = 0; i < L; ++i) perm[i] = static_cast<double>(L - 1 - i), v_perm(i) = v(L - 1 - i);
    Run run;
    run.add(to_tensor("weights", {"query", "key"}, w, elem_of<T>()));
    run.add(to_tensor("v", {"pos"}, v, elem_of<T>()));
    run.add(to_tensor("out", {"pos"}, attend_values(w, v), elem_of<T>()));
    run.add(Tensor{"perm", {"pos"}, Elem::index, {L}, std::move(perm)});
    run.add(to_tensor("out_perm", {"pos"}, attend_values(w, v_perm), elem_of<T>()));
    return run;
}

// Error model: a weight is exp(0) / (sum of n ones), exact in T up to the division and (16
// bits) its store: one rounding, relative to w <= 1, which accumulate_then_store bounds with
// L + 4 operations as the mask's row sums do. out_i = sum_j w_ij v_j adds products by 0 and 1,
// exact: out carries the weights' error.
double nope_tol(const NopeParams& p, const CheckEnv& env) { return accumulate_then_store(env.dtype, dsize(p.len) + 4.0, 1.0); }

std::optional<Check> check_weights(const NopeParams& p, const Run& run, const CheckEnv& env)
{
    const Tensor& w = run.at("weights");
    const std::size_t L = w.dim(0);
    double worst = 0.0;
    for (std::size_t i = 0; i < L; ++i)
        for (std::size_t j = 0; j < L; ++j) {
            const double expected = !causal(p) || j <= i ? 1.0 / visible(p, i) : 0.0;
            worst = worse(worst, std::abs(w.values[i * L + j] - expected));
        }
    return at_most(causal(p) ? tr(env, "equal scores under the causal mask: row i is uniform over its i + 1 keys, 1/(i+1) each",
                                  "得分全相等、加因果掩码时，第 i 行在它看得到的 i + 1 个键上均匀分布，每个 1/(i+1)")
                             : tr(env, "equal scores without a mask: every row is uniform, 1/L each", "得分全相等、不加掩码时，每行都均匀分布，每个 1/L"),
                   tr(env, "max |w_ij - expected|", "max |w_ij - 期望值|"), worst, nope_tol(p, env), 1.0);
}

std::optional<Check> check_out(const NopeParams& p, const Run& run, const CheckEnv& env)
{
    const Tensor& out = run.at("out");
    double worst = 0.0;
    for (std::size_t i = 0; i < out.size(); ++i) worst = worse(worst, std::abs(out.values[i] - 1.0 / visible(p, i)));
    return at_most(causal(p) ? tr(env, "v = 1 on the first token gives out_i = 1/(i+1): each output tells its position, with no position encoding",
                                  "v 在第一个 token 上为 1 时 out_i = 1/(i+1)：没有位置编码，每个输出也能说出自己的位置")
                             : tr(env, "v = 1 on the first token gives out_i = 1/L at every position: without a mask the output carries no position",
                                  "v 在第一个 token 上为 1 时每个位置 out_i = 1/L：不加掩码时输出不带位置信息"),
                   causal(p) ? "max |out_i - 1/(i+1)|" : "max |out_i - 1/L|", worst, nope_tol(p, env), 1.0);
}

// How far apart the output's neighbouring rows are: 1/(i+1) - 1/(i+2) falls as 1/L^2, so a
// long enough sequence rounds neighbours together in a 16-bit dtype. Not guaranteed for every
// L: a demonstration.
std::optional<Check> check_readable(const NopeParams& p, const Run& run, const CheckEnv& env)
{
    if (!causal(p) || p.len < 2) return std::nullopt;
    const Tensor& out = run.at("out");
    long ties = 0;
    for (std::size_t i = 0; i + 1 < out.size(); ++i) ties += !(out.values[i] > out.values[i + 1]);
    return demonstration(tr(env, "the output alone tells every position apart: out falls strictly along the sequence",
                            "只看输出就能分辨每个位置：out 沿序列严格递减"),
                         tr(env, "neighbouring positions i, i+1 with out_i <= out_(i+1), in {}", "相邻位置 i、i+1 中 out_i <= out_(i+1) 的个数（{}）",
                            name_of(env.dtype)),
                         static_cast<double>(ties), 0.0, Compare::le);
}

Check bag_of_words(const NopeParams& p, const Run& run, const CheckEnv& env)
{
    const Tensor &out = run.at("out"), &out_perm = run.at("out_perm"), &perm = run.at("perm");
    double worst = 0.0;
    for (std::size_t i = 0; i < out.size(); ++i)
        worst = worse(worst, std::abs(out_perm.values[i] - out.values[static_cast<std::size_t>(perm.values[i])]));
    return bag_of_words_claim(env, p.mask, tr(env, "max |out(Pv) - P out(v)|, P reversing the order", "max |out(Pv) - P out(v)|，P 为倒序"), worst, 2.0 * nope_tol(p, env), 1.0);
}

std::optional<Check> check_bag_bidirectional(const NopeParams& p, const Run& run, const CheckEnv& env)
{
    if (causal(p)) return std::nullopt;
    return bag_of_words(p, run, env);
}

std::optional<Check> check_bag_causal(const NopeParams& p, const Run& run, const CheckEnv& env)
{
    if (!causal(p)) return std::nullopt;
    return bag_of_words(p, run, env);
}

template <class T>
Typed<NopeParams> nope_typed()
{
    return {compute_nope<T>,
            {{"weights_uniform_over_visible", {"weights"}, check_weights},
             {"out_closed_form", {"out"}, check_out},
             {"position_readable_from_output", {"out"}, check_readable},
             {"no_pe_is_bag_of_words_bidirectional", {"out", "out_perm", "perm"}, check_bag_bidirectional},
             {"no_pe_is_bag_of_words_causal", {"out", "out_perm", "perm"}, check_bag_causal}},
            {}};
}

// --- the catalogue of usual mistakes ---

// How many keys, from the first, row i of L sees: every one (the mask left out), or those
// before it (the diagonal masked too).
std::size_t all_keys(std::size_t, std::size_t L) { return L; }
std::size_t keys_before(std::size_t i, std::size_t) { return i; }

// The weights a learner gets with row i uniform over keys(i, L) keys (NaN where it sees none).
Tensor weights_seeing(const NopeParams& p, std::size_t (*keys)(std::size_t i, std::size_t L))
{
    const auto L = static_cast<std::size_t>(p.len);
    std::vector<double> w(L * L, 0.0);
    for (std::size_t i = 0; i < L; ++i) {
        const std::size_t n = keys(i, L);
        for (std::size_t j = 0; j < L; ++j) w[i * L + j] = n == 0 ? std::nan("") : (j < n ? 1.0 / static_cast<double>(n) : 0.0);
    }
    return Tensor{"weights", {"query", "key"}, Elem::float64, {L, L}, std::move(w)};
}

// The output of v = e_0 under those weights: the first column.
Tensor first_column(Tensor w)
{
    const std::size_t L = w.dim(0);
    std::vector<double> out(L);
    for (std::size_t i = 0; i < L; ++i) out[i] = w.values[i * L];
    return Tensor{"out", {"pos"}, Elem::float64, {L}, std::move(out)};
}

std::vector<Mistake<NopeParams>> nope_mistakes()
{
    const char* ignored_en = "the causal mask left out: every row averages all L tokens, out = 1/L everywhere";
    const char* ignored_zh = "漏了因果掩码：每行平均全部 L 个 token，out 处处为 1/L";
    const char* diagonal_en = "the diagonal masked too (triu with diagonal 0): a token cannot see itself, row 0 sees nothing (NaN) and out_i = 1/i";
    const char* diagonal_zh = "对角线也被屏蔽（triu 的 diagonal 取 0）：token 看不到自己，第 0 行什么都看不到（NaN），out_i = 1/i";
    return {{"mask_ignored", "weights", ignored_en, ignored_zh, [](const NopeParams& p, const Run&) { return weights_seeing(p, all_keys); }},
            {"mask_ignored", "out", ignored_en, ignored_zh, [](const NopeParams& p, const Run&) { return first_column(weights_seeing(p, all_keys)); }},
            {"diagonal_masked", "weights", diagonal_en, diagonal_zh, [](const NopeParams& p, const Run&) { return weights_seeing(p, keys_before); }},
            {"diagonal_masked", "out", diagonal_en, diagonal_zh,
             [](const NopeParams& p, const Run&) { return first_column(weights_seeing(p, keys_before)); }}};
}

std::vector<OptionRow<NopeParams>> nope_options()
{
    using P = NopeParams;
    std::vector<OptionRow<P>> rows{option<P>("--len", "Positions L", &P::len, whole_range(1, 1L << 15)),
                                   option<P>("--mask", "causal (a decoder, the default) or none (an encoder)", &P::mask)};
    row_of(rows, "--mask").only = {"none", "causal"};
    return rows;
}

// Random valid parameters for the random tests.
NopeParams sample_nope(Rng& rng)
{
    NopeParams p;
    p.len = between(rng, 2, 40), p.mask = rng.below(2) ? MaskKind::causal : MaskKind::none;
    return p;
}

Experiment<NopeParams> make_nope_experiment()
{
    Experiment<NopeParams> e;
    e.command = "nope";
    e.summary = "No position encoding: a causal mask alone lets the output tell positions apart (out_i = 1/(i+1)); without it order is invisible";
    e.example = "attnlab nope --len 8 --dtype bfloat16";
    e.options = nope_options();
    e.main_tensor = "out";
    auto ll = [](const NopeParams& p) { return std::vector<double>{dsize(p.len), dsize(p.len)}; };
    auto l = [](const NopeParams& p) { return std::vector<double>{dsize(p.len)}; };
    e.tensors = {{"weights", {"query", "key"}, Need::always, ll, {}, {}},
                 {"v", {"pos"}, Need::always, l, {}, {}},
                 {"out", {"pos"}, Need::always, l, {}, {}},
                 {"perm", {"pos"}, Need::always, l, {}, {}},
                 {"out_perm", {"pos"}, Need::always, l, {}, {}}};
    e.validate = [](const NopeParams& p) {
        if (p.len < 1) throw InputError(fmt::format("--len must be at least 1 (got {})", p.len));
    };
    // One softmax over [L, L], two weighted sums, and the checks' pass over the weights.
    e.work = [](const NopeParams& p, const Plan&) { return dsize(p.len) * dsize(p.len) * (kExpWork + 4.0); };
    e.work_what = [](const NopeParams& p) { return fmt::format("weights [{}, {}]", p.len, p.len); };
    e.mistakes = nope_mistakes();
    e.sample = sample_nope;
    e.set_typed([](auto t) { return nope_typed<typename decltype(t)::type>(); });
    return e;
}

}  // namespace

const Experiment<NopeParams>& nope_experiment()
{
    static const Experiment<NopeParams> e = make_nope_experiment();
    return e;
}

Report run_nope(const NopeParams& p, const RunContext& ctx) { return run_experiment(nope_experiment(), p, ctx); }

std::vector<std::string> nope_command(const NopeParams& p) { return command_of(nope_experiment(), p); }

}  // namespace attnlab

#include "attnlab/experiments/learned.hpp"

#include "attnlab/core/error_model.hpp"
#include "attnlab/core/half.hpp"
#include "attnlab/core/measure.hpp"
#include "attnlab/core/position/sinusoidal.hpp"
#include "attnlab/core/rng.hpp"
#include "attnlab/core/xt.hpp"
#include "attnlab/experiments/inputs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace attnlab {

namespace {

constexpr double kSinusoidalBase = 10000.0;  // the table beside it: the paper's, interleaved

// The positions x_pe holds: all L while the table has a row for each, the first M otherwise.
long rows_held(const LearnedParams& p) { return std::min(p.len, p.max_len); }

// pos_emb [M, D] and x [B, L, D] are seeded normals (or --input); x_pe = x + pos_emb[:L],
// one addition rounded in T, for the positions the table covers. Beside it, the sinusoidal
// table of the same size, for the dot-product comparison.
template <class T>
Run compute_learned(const LearnedParams& p, const Plan& plan)
{
    const auto B = static_cast<std::size_t>(p.batch), L = static_cast<std::size_t>(p.len), D = static_cast<std::size_t>(p.dim),
               M = static_cast<std::size_t>(p.max_len), held = static_cast<std::size_t>(rows_held(p));
    const Mat<T> pos_emb = input_or<T, 2>(plan, "pos_emb", [&] {
        Mat<T> drawn = xt::zeros<T>({M, D});
        fill_normal(drawn.data(), drawn.size(), plan.seed, stream::pos_emb);
        return drawn;
    });
    const Ten3<T> x = input_or<T, 3>(plan, "x", [&] {
        Ten3<T> drawn = xt::zeros<T>({B, L, D});
        fill_normal(drawn.data(), drawn.size(), plan.seed, stream::x);
        return drawn;
    });
    Ten3<T> x_pe = xt::zeros<T>({B, held, D});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t i = 0; i < held; ++i)
            for (std::size_t d = 0; d < D; ++d) x_pe(b, i, d) = x(b, i, d) + pos_emb(i, d);
    const Vec<T> freq = pe_frequencies<T>(p.dim, kSinusoidalBase, PeLayout::interleaved, FreqMethod::exp_log);
    Run run;
    run.add(to_tensor("x", {"batch", "pos", "dim"}, x, elem_of<T>()));
    run.add(to_tensor("pos_emb", {"pos", "dim"}, pos_emb, elem_of<T>()));
    run.add(to_tensor("x_pe", {"batch", "pos", "dim"}, x_pe, elem_of<T>()));
    run.add(to_tensor("pe", {"pos", "dim"}, sinusoidal_table<T>(p.max_len, freq, PeLayout::interleaved), elem_of<T>()));
    run.keep(to_tensor("freq", {"pair"}, freq, Elem::float64));
    return run;
}

// --- checks ---

std::optional<Check> check_sum(const LearnedParams&, const Run& run, const CheckEnv& env)
{
    const Tensor &x_pe = run.at("x_pe"), &x = run.at("x"), &pos_emb = run.at("pos_emb");
    const std::size_t B = x_pe.dim(0), held = x_pe.dim(1), D = x_pe.dim(2), L = x.dim(1);
    double worst = 0.0;
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t i = 0; i < held; ++i)
            for (std::size_t d = 0; d < D; ++d)
                worst = worse(worst, std::abs(x_pe.values[(b * held + i) * D + d] - (x.values[(b * L + i) * D + d] + pos_emb.values[i * D + d])));
    // Error model: one addition of two numbers already in T, rounded once when stored.
    const double scale = max_abs(x) + max_abs(pos_emb);
    return at_most(tr(env, "x_pe = x + pos_emb[:L]: row p of the table is added at position p", "x_pe = x + pos_emb[:L]：表的第 p 行加在位置 p 上"),
                   "max |x_pe - (x + pos_emb)|", worst, accumulate_then_store(env.dtype, 1.0, 1.0) * scale, scale);
}

// Structural for the table's size, so shown rather than checked: it holds for every L > M.
std::optional<Check> check_past_max_len(const LearnedParams& p, const Run& run, const CheckEnv& env)
{
    if (p.len <= p.max_len) return std::nullopt;
    const auto rows = static_cast<double>(run.at("pos_emb").dim(0));
    return demonstration(tr(env, "a learned table cannot extrapolate past max_len: position {0} has no row (nn.Embedding({0}, D) raises IndexError)",
                            "可学习位置表无法外推到 max_len 之外：位置 {0} 没有对应的行（nn.Embedding({0}, D) 会抛出 IndexError）", p.max_len),
                         tr(env, "positions of the input without a row, L - M", "输入中没有对应行的位置数 L - M"), static_cast<double>(p.len) - rows, 0.0,
                         Compare::gt);
}

// max over k of the spread over p of row(p).row(p+k) in table `name`, and the most rounding
// gives a sinusoidal table of M rows (dot_spread_bound, from the frequencies the compute kept).
double dot_spread(const LearnedParams& p, const Run& run, const char* name) { return max_dot_spread(run.at(name), pair_offset_budget(p.max_len, p.dim)); }
double rounding_spread(const LearnedParams& p, const Run& run, const CheckEnv& env) { return dot_spread_bound(env.dtype, p.max_len, resolved_as<Tensor>(run)); }

// A seeded (or trained) table has no structure that would make its dots depend on k alone:
// its spread exceeds what rounding gives a sinusoidal table of the same size. Not guaranteed
// for every table (a learner may pass a sinusoidal one): a demonstration.
std::optional<Check> check_learned_dots(const LearnedParams& p, const Run& run, const CheckEnv& env)
{
    if (p.max_len < 3) return std::nullopt;
    return demonstration(tr(env, "pos_emb(p).pos_emb(p+k) depends on p, not on k alone: no rotation M(k) relates the rows, as it does PE's",
                            "pos_emb(p).pos_emb(p+k) 取决于 p，而不只取决于 k：不像 PE，没有旋转 M(k) 把各行联系起来"),
                         tr(env, "max over k of the spread over p", "对每个 k 求 p 上的极差，取最大"),
                         dot_spread(p, run, "pos_emb"), rounding_spread(p, run, env), Compare::gt);
}

// The best linear map with row p + 1 = M row p for every p, by least squares: the columns of
// rows 1..M-1, less their projection on the span of the columns of rows 0..M-2, relative to
// their size. With at most D + 1 rows such a map fits any table whose rows are independent
// exactly, so the claim holds for tables longer than they are wide (GPT-2: 1024 rows of 768)
// and not for BERT's (512 rows of 768).
double linear_map_residual(const Tensor& table)
{
    const std::size_t n = table.dim(0) - 1, D = table.dim(1);
    std::vector<std::vector<double>> from(D, std::vector<double>(n)), to(D, std::vector<double>(n));
    for (std::size_t p = 0; p < n; ++p)
        for (std::size_t d = 0; d < D; ++d) from[d][p] = table.values[p * D + d], to[d][p] = table.values[(p + 1) * D + d];
    const auto basis = orthonormal_span(from);
    double left = 0.0, total = 0.0;
    for (auto& y : to) {
        for (double v : y) total += v * v;
        for (const auto& u : basis) {
            double c = 0.0;
            for (std::size_t p = 0; p < n; ++p) c += u[p] * y[p];
            for (std::size_t p = 0; p < n; ++p) y[p] -= c * u[p];
        }
        for (double v : y) left += v * v;
    }
    return std::sqrt(left / total);
}

// Gram-Schmidt over D columns of M - 1 rows, twice, and the projection: within the check budget.
bool linear_fit_fits_budget(const LearnedParams& p) { return 3.0 * dsize(p.dim) * dsize(p.dim) * dsize(p.max_len) <= kCheckBudget; }

// Demonstration threshold: an exact fit leaves float64 rounding, about (M + D) u(float64) of the
// table's size times its condition; a table with more rows than dimensions leaves about
// sqrt((M - 1 - D) / (M - 1)) of it. 1e-6 lies far between the two for the sizes shown.
constexpr double kFitThreshold = 1e-6;

std::optional<Check> check_linear_map(const LearnedParams& p, const Run& run, const CheckEnv& env)
{
    if (p.max_len < 2 || !linear_fit_fits_budget(p)) return std::nullopt;
    return demonstration(tr(env, "no linear M(1) takes every row of the table to the next ({} rows of {}: {})",
                            "没有线性的 M(1) 能把表的每一行变成下一行（{} 行、{} 维：{}）", p.max_len, p.dim,
                            p.max_len - 1 > p.dim ? tr(env, "more than D + 1 rows", "多于 D + 1 行")
                                                  : tr(env, "at most D + 1 rows, so a map fits any table exactly", "至多 D + 1 行，任何表都有精确的线性映射")),
                         tr(env, "relative residual of the best fit row p + 1 = M row p", "最佳拟合 row(p+1) = M row(p) 的相对残差"),
                         linear_map_residual(run.at("pos_emb")), kFitThreshold, Compare::gt);
}

std::optional<Check> check_sinusoidal_dots(const LearnedParams& p, const Run& run, const CheckEnv& env)
{
    if (p.max_len < 3) return std::nullopt;
    return at_most(tr(env, "beside it, the sinusoidal table of the same size: PE(p).PE(p+k) depends on k alone",
                      "作为对照，同样大小的正弦表：PE(p).PE(p+k) 只取决于 k"),
                   tr(env, "max over k of the spread over p", "对每个 k 求 p 上的极差，取最大"),
                   dot_spread(p, run, "pe"), rounding_spread(p, run, env), static_cast<double>(p.dim / 2));
}

std::optional<std::string> note_rows_held(const LearnedParams& p, const Run&, const CheckEnv& env)
{
    if (p.len <= p.max_len) return std::nullopt;
    return tr(env, "x_pe holds the first {0} of the {1} positions: the table has {0} rows, and PyTorch stops at position {0} with "
                   "'IndexError: index out of range in self'",
              "x_pe 只含 {1} 个位置中的前 {0} 个：表只有 {0} 行，PyTorch 在位置 {0} 处报错 'IndexError: index out of range in self'",
              p.max_len, p.len);
}

template <class T>
Typed<LearnedParams> learned_typed()
{
    return {compute_learned<T>,
            {{"x_pe_is_x_plus_table", {"x_pe"}, check_sum},
             {"learned_table_stops_at_max_len", {"pos_emb"}, check_past_max_len},
             {"learned_dots_depend_on_position", {"pos_emb"}, check_learned_dots},
             {"learned_has_no_linear_shift", {"pos_emb"}, check_linear_map},
             {"sinusoidal_dots_depend_on_offset_only", {"pe"}, check_sinusoidal_dots}},
            {note_rows_held}};
}

// --- the catalogue of usual mistakes ---

// x[:, :held] + pos_emb[first : first + held], in float64 (no table: x alone).
Tensor x_plus_rows(const LearnedParams& p, const Run& run, std::optional<std::size_t> first)
{
    const Tensor &x = run.at("x"), &pos_emb = run.at("pos_emb");
    const auto B = x.dim(0), L = x.dim(1), D = x.dim(2), held = static_cast<std::size_t>(rows_held(p));
    if (first && *first + held > pos_emb.dim(0)) return Tensor{};  // the table has no row there
    std::vector<double> out(B * held * D);
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t i = 0; i < held; ++i)
            for (std::size_t d = 0; d < D; ++d)
                out[(b * held + i) * D + d] = x.values[(b * L + i) * D + d] + (first ? pos_emb.values[(*first + i) * D + d] : 0.0);
    return Tensor{"x_pe", {"batch", "pos", "dim"}, Elem::float64, {B, held, D}, std::move(out)};
}

std::vector<Mistake<LearnedParams>> learned_mistakes()
{
    return {{"positions_from_1", "x_pe", "positions are counted from 1: position p reads row p + 1 of the table",
             "位置从 1 开始计：位置 p 取了表的第 p + 1 行", [](const LearnedParams& p, const Run& run) { return x_plus_rows(p, run, 1); }},
            {"table_not_added", "x_pe", "the table is not added: x is returned unchanged", "没有加上位置表：原样返回了 x",
             [](const LearnedParams& p, const Run& run) { return x_plus_rows(p, run, std::nullopt); }}};
}

std::vector<OptionRow<LearnedParams>> learned_options()
{
    using P = LearnedParams;
    return {option<P>("--len", "Positions L of the input", &P::len, whole_range(1, 1L << 20)),
            option<P>("--dim", "Model dimension D (even: the sinusoidal table beside it pairs sin and cos)", &P::dim, whole_range(2, 1L << 16)),
            option<P>("--max-len", "Rows M of the table, nn.Embedding(M, D); positions from M on have none", &P::max_len,
                      whole_range(1, 1L << 20)),
            option<P>("--batch", "Batch size B of x", &P::batch, whole_range(1, 1L << 16))};
}

std::vector<TensorDecl<LearnedParams>> learned_tensors()
{
    using P = LearnedParams;
    auto table = [](const P& p) { return std::vector<double>{dsize(p.max_len), dsize(p.dim)}; };
    return {{"x", {"batch", "pos", "dim"}, Need::always, [](const P& p) { return std::vector<double>{dsize(p.batch), dsize(p.len), dsize(p.dim)}; }, {}, {}},
            {"pos_emb", {"pos", "dim"}, Need::always, table, {}, {}},
            {"x_pe", {"batch", "pos", "dim"}, Need::always,
             [](const P& p) { return std::vector<double>{dsize(p.batch), dsize(rows_held(p)), dsize(p.dim)}; }, {}, {}},
            {"pe", {"pos", "dim"}, Need::always, table, {}, {}}};
}

// Random valid parameters for the random tests: lengths past the table too.
LearnedParams sample_learned(Rng& rng)
{
    LearnedParams p;
    p.len = between(rng, 1, 24), p.max_len = between(rng, 1, 24), p.dim = 2 * between(rng, 1, 6), p.batch = between(rng, 1, 2);
    return p;
}

Experiment<LearnedParams> make_learned_experiment()
{
    Experiment<LearnedParams> e;
    e.command = "learned";
    e.summary = "Learned absolute positions (BERT, GPT-2): a table of max_len rows added to x; no row past max_len, and its dot products depend on the position";
    e.example = "attnlab learned --len 20 --max-len 16";
    e.options = learned_options();
    e.main_tensor = "x_pe";
    e.tensors = learned_tensors();
    e.validate = [](const LearnedParams& p) {
        if (p.dim % 2 != 0) throw InputError(fmt::format("--dim must be even (got {}): the sinusoidal table beside it pairs sin and cos", p.dim));
    };
    // The draws and the sum, the sinusoidal table (sin and cos at about 20 each), and the two
    // budgeted dot-spread passes.
    e.work = [](const LearnedParams& p, const Plan&) {
        const double MD = dsize(p.max_len) * dsize(p.dim), pairs = std::min(1073741824.0, dsize(p.max_len) * MD / 2.0);
        return 40.0 * MD + 2.0 * dsize(p.batch) * dsize(p.len) * dsize(p.dim) + 4.0 * pairs;
    };
    e.work_what = [](const LearnedParams& p) { return fmt::format("pos_emb [{}, {}] and its dot products", p.max_len, p.dim); };
    e.inputs = {"x", "pos_emb"};
    e.mistakes = learned_mistakes();
    e.sample = sample_learned;
    e.set_typed([](auto t) { return learned_typed<typename decltype(t)::type>(); });
    return e;
}

}  // namespace

const Experiment<LearnedParams>& learned_experiment()
{
    static const Experiment<LearnedParams> e = make_learned_experiment();
    return e;
}

Report run_learned(const LearnedParams& p, const RunContext& ctx) { return run_experiment(learned_experiment(), p, ctx); }

std::vector<std::string> learned_command(const LearnedParams& p) { return command_of(learned_experiment(), p); }

}  // namespace attnlab

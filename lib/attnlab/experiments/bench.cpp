// attnlab bench: the attention kernel timed on random q, k, v after it is held to the
// plain-loop reference, beside this machine's own matrix-product rate measured in the same run.
#include "attnlab/experiments/bench.hpp"

#include "attnlab/core/attention.hpp"
#include "attnlab/core/blas.hpp"
#include "attnlab/core/isa.hpp"
#include "attnlab/core/measure.hpp"
#include "attnlab/core/parallel.hpp"
#include "attnlab/core/rng.hpp"
#include "attnlab/experiments/experiment.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace attnlab {

namespace {

long kv_heads(const BenchParams& p) { return p.kv_heads.value_or(p.heads); }
long kv_len(const BenchParams& p) { return p.kv_len.value_or(p.len); }

void validate(const BenchParams& p)
{
    if (kv_heads(p) < 1 || p.heads % kv_heads(p) != 0)
        throw InputError(fmt::format("--heads {} is not a multiple of --kv-heads {}", p.heads, kv_heads(p)));
    if (p.mask != MaskKind::none && p.mask != MaskKind::causal) throw InputError("bench times --mask none or causal");
}

// Useful multiply-adds: q.k and w.v for every key a row may see (the causal half only).
double useful_madds(const BenchParams& p)
{
    const double L = dsize(p.len), S = dsize(kv_len(p));
    double seen = L * S;
    if (p.mask == MaskKind::causal) {  // upper-left: row i sees min(i + 1, S) keys
        const double full = std::min(L, S);
        seen = full * (full + 1.0) / 2.0 + std::max(0.0, L - S) * S;
    }
    return 2.0 * seen * dsize(p.head_dim) * dsize(p.batch) * dsize(p.heads);
}

template <class T>
struct BenchData {
    Ten4<T> q, k, v;
    MaskSpec mask;
};

template <class T>
BenchData<T> bench_data(const BenchParams& p, std::uint64_t seed)
{
    const auto B = static_cast<std::size_t>(p.batch), d = static_cast<std::size_t>(p.head_dim);
    BenchData<T> data;
    data.q = xt::zeros<T>({B, static_cast<std::size_t>(p.heads), static_cast<std::size_t>(p.len), d});
    data.k = xt::zeros<T>({B, static_cast<std::size_t>(kv_heads(p)), static_cast<std::size_t>(kv_len(p)), d});
    data.v = data.k;
    fill_normal(data.q.data(), data.q.size(), seed, stream::q);
    fill_normal(data.k.data(), data.k.size(), seed, stream::k);
    fill_normal(data.v.data(), data.v.size(), seed, stream::v);
    data.mask.kind = p.mask;
    data.mask.queries = p.len;
    data.mask.keys = kv_len(p);
    return data;
}

double seconds_since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// This machine's matrix-product rate on `threads` threads, each multiplying its own n x n
// matrices (single-threaded BLAS, as the kernel calls it), one round at a time: the bench
// times a round between every two kernel runs, so that both see the same load.
template <class T>
class GemmRate {
public:
    explicit GemmRate(unsigned threads) : threads_(threads), a_(threads, std::vector<T>(kN * kN, T(0.5))), c_(threads, std::vector<T>(kN * kN)) {}
    // One round, in GFLOP/s.
    double measure()
    {
        const auto t0 = std::chrono::steady_clock::now();
        parallel_for(threads_, threads_, [&](std::size_t t) { blas::gemm_nn(kN, kN, kN, T(1), a_[t].data(), kN, a_[t].data(), kN, T(0), c_[t].data(), kN); });
        return static_cast<double>(threads_) * 2.0 * static_cast<double>(kN * kN * kN) / seconds_since(t0) / 1e9;
    }

private:
    static constexpr std::size_t kN = 1024;
    unsigned threads_;
    std::vector<std::vector<T>> a_, c_;
};

// The median, least and greatest of a few figures.
struct Spread {
    double median = 0.0, lo = 0.0, hi = 0.0;
};

Spread spread_of(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return {n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0, v.front(), v.back()};
}

void set_spread(ParamList& list, const std::string& name, const Spread& s)
{
    set_param(list, name, s.median);
    set_param(list, name + "_min", s.lo);
    set_param(list, name + "_max", s.hi);
}

long peak_bytes()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss * 1024L;
}

template <class T>
AttentionInputs<T> inputs_of(const BenchData<T>& data, const BenchParams& p)
{
    AttentionInputs<T> in;
    in.q = &data.q, in.k = &data.k, in.v = &data.v, in.mask = &data.mask;
    in.scale = 1.0 / std::sqrt(dsize(p.head_dim));
    in.threads = p.threads;
    return in;
}

double reference_row_work(const BenchParams& p) { return dsize(p.batch) * dsize(p.heads) * dsize(kv_len(p)) * dsize(p.head_dim) * 2.0; }

// The kernel is held to the plain-loop reference on the sampled rows before it is timed; a
// kernel that fails is not timed. Then the timed full runs, and the same rows again on one
// thread, which must be bit-identical to the full run's.
template <class T>
Run compute_bench(const BenchParams& p, const Plan& plan)
{
    const BenchData<T> data = bench_data<T>(p, plan.seed);
    const AttentionInputs<T> in = inputs_of(data, p);
    const auto rows = sampled_rows(p.len, reference_row_work(p));
    double err = 0.0, max_v = 0.0;
    for (const auto& rr : rows) err = worse(err, max_abs_diff(attention(in, Matrices::drop, rr).out, attention_reference(in, rr).out));
    for (T x : data.v) max_v = std::max(max_v, std::abs(static_cast<double>(x)));
    const double tol = eps_of(plan.dtype) * (dsize(kv_len(p)) + dsize(p.head_dim)) * (max_v + 1.0);
    Run run;
    run.measured["max_abs_err"] = err;
    run.measured["tol"] = tol;
    run.measured["out_scale"] = max_v + 1.0;  // an output row is an average of value rows
    set_param(run.measurements, "threads", static_cast<long>(thread_count(p.threads)));
    set_param(run.measurements, "isa", name_of(active_isa()));
    set_param(run.measurements, "blas", "OpenBLAS, " + blas::kernel_name() + " kernels");
    if (!(err <= tol)) return run;  // not timed: the kernel is wrong
    AttentionOutput<T> full;
    GemmRate<T> gemm(thread_count(p.threads));
    gemm.measure();  // BLAS loaded and warm before the first pair
    std::vector<double> seconds, rates, fractions;
    for (long r = 0; r < p.repeat; ++r) {  // interleaved pairs: a kernel run, then a GEMM round
        const auto t0 = std::chrono::steady_clock::now();
        attention(in, Matrices::drop, {}, full);  // the output of the first repeat is reused
        seconds.push_back(seconds_since(t0));
        rates.push_back(gemm.measure());
        fractions.push_back(2.0 * useful_madds(p) / seconds.back() / 1e9 / rates.back());
    }
    AttentionInputs<T> one = in;
    one.threads = 1;
    double thread_diff = 0.0;
    for (const auto& rr : rows) thread_diff = worse(thread_diff, max_abs_diff_rows(attention(one, Matrices::drop, rr).out, full.out.data(), static_cast<std::size_t>(p.len), rr));
    run.measured["thread_diff"] = thread_diff;
    const Spread time = spread_of(seconds), fraction = spread_of(fractions);
    const std::string gemm_name = plan.dtype == DType::float32 ? "sgemm" : "dgemm";
    run.measured["fraction"] = fraction.median;
    set_spread(run.measurements, "seconds", time);
    set_param(run.measurements, "gflops", 2.0 * useful_madds(p) / time.median / 1e9);
    set_spread(run.measurements, gemm_name + "_gflops", spread_of(rates));
    set_spread(run.measurements, "fraction_of_" + gemm_name, fraction);
    set_param(run.measurements, "max_abs_err_vs_reference", err);
    set_param(run.measurements, "peak_bytes", peak_bytes());
    return run;
}

std::optional<Check> check_reference(const BenchParams& p, const Run& run, const CheckEnv& env)
{
    return at_most(tr(env, "the kernel matches the plain-loop reference", "内核与逐循环的参考实现一致"),
                   fmt::format("max |out - out_ref|, {}", rows_description(sampled_rows(p.len, reference_row_work(p)), p.len, env.lang)),
                   run.measured.at("max_abs_err"), run.measured.at("tol"), run.measured.at("out_scale"));
}

std::optional<Check> check_threads(const BenchParams& p, const Run& run, const CheckEnv& env)
{
    if (!run.measured.count("thread_diff")) return std::nullopt;
    return bit_identical(tr(env, "the rows computed again on one thread are bit-identical to the full run's",
                            "在单线程上重算的行与完整运行的结果逐位相同"),
                         fmt::format("max |out - out_1 thread|, {}", rows_description(sampled_rows(p.len, reference_row_work(p)), p.len, env.lang)),
                         run.measured.at("thread_diff"));
}

std::optional<Check> check_fraction(const BenchParams&, const Run& run, const CheckEnv& env)
{
    if (!run.measured.count("fraction")) return std::nullopt;
    return demonstration(tr(env, "the kernel reaches 60% of this machine's matrix-product rate, measured in the same run",
                            "内核达到本机在同一次运行中测得的矩阵乘速率的 60%"),
                         tr(env, "useful GFLOP/s / GEMM GFLOP/s", "有效 GFLOP/s / GEMM GFLOP/s"), run.measured.at("fraction"), 0.6, Compare::ge);
}

// The params report the sizes the run used (H_kv = H and S = L by default).
std::vector<OptionRow<BenchParams>> bench_options()
{
    using P = BenchParams;
    std::vector<OptionRow<P>> rows{option<P>("--batch", "Batch B", &P::batch, whole_range(1, 1L << 16)),
                                   option<P>("--heads", "Query heads H", &P::heads, whole_range(1, 4096)),
                                   option<P>("--kv-heads", "Key/value heads (grouped-query attention; default H)", &P::kv_heads, whole_range(1, 4096)),
                                   option<P>("--len", "Queries L", &P::len, whole_range(1, 1L << 20)),
                                   option<P>("--kv-len", "Keys S (default L)", &P::kv_len, whole_range(1, 1L << 20)),
                                   option<P>("--head-dim", "Per-head dimension d", &P::head_dim, whole_range(1, 1L << 14)),
                                   option<P>("--mask", "none, or causal (upper-left)", &P::mask),
                                   option<P>("--repeat", "Timed pairs of a kernel run and a GEMM round; the median and range are reported", &P::repeat, whole_range(1, 1000)),
                                   option<P>("--threads", "Threads of the kernel (0: every core)", &P::threads, whole_range(0, 1024))};
    row_of(rows, "--kv-heads").reported = [](const P& p) { return ParamValue(kv_heads(p)); };
    row_of(rows, "--kv-len").reported = [](const P& p) { return ParamValue(kv_len(p)); };
    row_of(rows, "--mask").only = {"none", "causal"};
    return rows;
}

Experiment<BenchParams> make_bench_experiment()
{
    Experiment<BenchParams> e;
    e.command = "bench";
    e.validate = validate;
    e.summary = "Time the attention kernel (checked against the plain-loop reference first) beside this machine's GEMM rate";
    e.example = "attnlab bench --len 4096 --heads 8 --head-dim 64 --mask causal --format json";
    e.measurements_help = "Measurements: --repeat interleaved pairs of a kernel run and a GEMM round on the same threads;\n"
                          "seconds, sgemm_gflops (dgemm for float64) and the kernel's fraction_of_sgemm per pair, each as\n"
                          "its median with _min and _max; gflops (useful work, the causal half only, at the median time),\n"
                          "max_abs_err_vs_reference (sampled rows), peak_bytes (the process's peak resident memory);\n"
                          "isa, the kernel's instruction set (the CPU's best, or ATTNLAB_ISA=scalar|sse4|avx2|avx512), and\n"
                          "blas, the OpenBLAS kernels of the GEMM rate (those of ATTNLAB_ISA's target when it is set).";
    e.options = bench_options();
    e.derived_params = [](const BenchParams& p) { return ParamList{{"useful_gflop", 2.0 * useful_madds(p) / 1e9}}; };
    // q, k, v and out; the reference's rows; the GEMM rate's matrices; the kernel's own memory.
    e.scratch_bytes = [](const BenchParams& p, DType dtype) {
        const double elem = detail::elem_bytes(dtype);
        const double qo = 2.0 * dsize(p.batch) * dsize(p.heads) * dsize(p.len) * dsize(p.head_dim);
        const double kv = 2.0 * dsize(p.batch) * dsize(kv_heads(p)) * dsize(kv_len(p)) * dsize(p.head_dim);
        const double threads = static_cast<double>(thread_count(p.threads));
        return (2.0 * qo + kv + 2.0 * dsize(p.batch) * dsize(p.heads) * 96.0 * dsize(kv_len(p)) + threads * 2.0 * 1024.0 * 1024.0) * elem +
               kernel_scratch_bytes(static_cast<std::size_t>(kv_len(p)), static_cast<std::size_t>(p.head_dim), p.threads);
    };
    e.work = [](const BenchParams& p, const Plan&) {
        const double gemm_round = static_cast<double>(thread_count(p.threads)) * 1073741824.0;  // 1024^3 multiply-adds a thread
        return (dsize(p.repeat) + 2.0) * useful_madds(p) / kKernelSpeedup + 3.0 * kCheckBudget + (dsize(p.repeat) + 1.0) * gemm_round / kKernelSpeedup;
    };
    e.work_what = [](const BenchParams& p) {
        return fmt::format("{} timed runs of attention over [{}, {}, {}, {}] with d = {}", p.repeat, p.batch, p.heads, p.len, kv_len(p), p.head_dim);
    };
    e.f32 = {compute_bench<float>, {{"kernel_matches_reference", {}, check_reference}, {"threads_bit_identical", {}, check_threads},
                                    {"kernel_vs_gemm", {}, check_fraction}}, {}};
    e.f64 = {compute_bench<double>, e.f32.checks, {}};
    return e;
}

}  // namespace

const Experiment<BenchParams>& bench_experiment()
{
    static const Experiment<BenchParams> e = make_bench_experiment();
    return e;
}

Report run_bench(const BenchParams& p, const RunContext& ctx) { return run_experiment(bench_experiment(), p, ctx); }


}  // namespace attnlab

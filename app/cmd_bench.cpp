// attnlab bench: the attention kernel timed against this machine's own matrix-product rate.
#include "commands.hpp"
#include "common.hpp"

#include "attnlab/experiments/bench_params.hpp"

namespace attnlab::app {

namespace {
struct BenchOpts {
    CommonOpts common;
    BenchParams bench;
};
}  // namespace

void setup_bench(CLI::App& app)
{
    auto opts = std::make_shared<BenchOpts>();
    auto* sub = app.add_subcommand(
        "bench", "Time the attention kernel (checked against the plain-loop reference first) beside this machine's GEMM rate");
    auto& p = opts->bench;
    sub->add_option("--batch", p.batch, "Batch B")->check(whole_in(1L, 1L << 16));
    sub->add_option("--heads", p.heads, "Query heads H")->check(whole_in(1L, 4096L));
    add_optional(*sub, "--kv-heads", p.kv_heads, "Key/value heads (grouped-query attention; default H)")->check(whole_in(1L, 4096L));
    sub->add_option("--len", p.len, "Queries L")->check(whole_in(1L, 1L << 20));
    add_optional(*sub, "--kv-len", p.kv_len, "Keys S (default L)")->check(whole_in(1L, 1L << 20));
    sub->add_option("--head-dim", p.head_dim, "Per-head dimension d")->check(whole_in(1L, 1L << 14));
    add_enum_subset_option(*sub, "--mask", p.mask, {MaskKind::none, MaskKind::causal}, "none, or causal (upper-left)");
    sub->add_option("--repeat", p.repeat, "Timed runs; the best is reported")->check(whole_in(1L, 1000L));
    sub->add_option("--threads", p.threads, "Threads of the kernel (0: every core)")->check(whole_in(0L, 1024L));
    add_run_options(*sub, opts->common);
    add_enum_subset_option(*sub, "--format", opts->common.format, {Format::text, Format::json}, "Output format");
    sub->footer("Measurements: seconds (best of --repeat), gflops (useful work: the causal half only), sgemm_gflops\n"
                "(dgemm for float64) on the same threads in the same run, the kernel's fraction of it,\n"
                "max_abs_err_vs_reference (sampled rows), peak_bytes (the process's peak resident memory).\n"
                "Example: attnlab bench --len 4096 --heads 8 --head-dim 64 --mask causal --format json");
    sub->callback([opts] {
        exit_status() = execute(opts->common, [&](const RunContext& ctx) { return run_bench(opts->bench, ctx); });
    });
}

}  // namespace attnlab::app

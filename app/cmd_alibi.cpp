// attnlab alibi: attention with linear biases (Press, Smith, Lewis, ICLR 2022).
#include "commands.hpp"
#include "common.hpp"

#include "attnlab/experiments/alibi_params.hpp"

namespace attnlab::app {

namespace {
struct AlibiOpts {
    CommonOpts common;
    AlibiParams alibi;
};
}  // namespace

void setup_alibi(CLI::App& app)
{
    auto opts = std::make_shared<AlibiOpts>();
    auto* sub = app.add_subcommand(
        "alibi", "ALiBi: per-head slopes, the linear distance bias, and why BLOOM's key-only shortcut is equivalent");
    auto& p = opts->alibi;
    sub->add_option("--heads", p.heads, "Heads H (any H >= 1)")->check(whole_in(1L, 4096L));
    sub->add_option("--len", p.len, "Positions L")->check(whole_in(1L, 1L << 20));
    sub->add_option("--dim", p.dim, "Per-head dimension d of the random q and k")->check(whole_in(1L, 1L << 16));
    add_enum_option(*sub, "--slopes", p.slopes,
                    "paper: the reference get_slopes (not a power of two: interleaved from 2H); "
                    "simple: the articles' 2^(-8(h+1)/H)");
    add_enum_option(*sub, "--variant", p.variant,
                    "symmetric: -m|i-j| (the articles, encoder-style); causal: -m(i-j) with the causal mask (the paper)");
    add_common_options(*sub, opts->common);
    sub->footer(tensors_help(alibi_tensor_infos()) + "\nExample: attnlab alibi --heads 6 --len 16 --format csv --tensor distance_profile");
    sub->callback([opts] {
        exit_status() = execute(opts->common, [&](const RunContext& ctx) { return run_alibi(opts->alibi, ctx); });
    });
}

}  // namespace attnlab::app

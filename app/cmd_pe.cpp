// attnlab pe: sinusoidal positional encoding (Attention Is All You Need, §3.5).
#include "commands.hpp"
#include "common.hpp"

#include "attnlab/experiments/pe_params.hpp"

namespace attnlab::app {

namespace {
struct PeOpts {
    CommonOpts common;
    PeParams pe;
};
}  // namespace

void setup_pe(CLI::App& app)
{
    auto opts = std::make_shared<PeOpts>();
    auto* sub = app.add_subcommand(
        "pe", "Sinusoidal positional encoding: the table, its frequencies, and why relative shifts are linear");
    auto& p = opts->pe;
    sub->add_option("--len", p.len, "Positions L")->check(whole_in(1L, 1L << 24));
    sub->add_option("--dim", p.dim, "Encoding dimension D (even)")->check(whole_in(2L, 1L << 24));
    sub->add_option("--base", p.base, "Base of the frequencies w_i = base^(-2i/D)")
        ->check(finite_positive);
    add_enum_option(*sub, "--layout", p.layout,
                    "interleaved: sin/cos alternate (the paper); concat: [sin | cos] halves, "
                    "w_i = base^(-i/(D/2-1)) (tensor2tensor, fairseq)");
    sub->add_option("--max-len", p.max_len,
                    "Precompute this many rows and slice the first L, as the articles' module (0: L)")
        ->check(whole_in(0L, 1L << 24));
    add_enum_option(*sub, "--freq-method", p.freq_method,
                    "exp-log: exp(2i * -ln(base)/D); pow: 1/base^(2i/D)");
    sub->add_flag("--embed", p.embed, "Also build a random embedding X [batch, pos, dim] and H = X + PE");
    sub->add_option("--batch", p.batch, "Batch size B of X, with --embed")->check(whole_in(1L, 1L << 20));
    sub->add_flag("--scale-embed", p.scale_embed, "H = sqrt(D)*X + PE, as the original Transformer");
    sub->add_option("--shift", p.shift, "Offset k of the relative-shift check")->check(whole_in(1L, 1L << 24));
    add_common_options(*sub, opts->common);
    sub->footer(tensors_help(pe_tensor_infos()) + "\nExample: attnlab pe --len 50 --dim 16 --format csv > pe.csv");
    sub->callback([opts] {
        exit_status() = execute(opts->common, [&](const RunContext& ctx) { return run_pe(opts->pe, ctx); });
    });
}

}  // namespace attnlab::app

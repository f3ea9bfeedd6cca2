// attnlab permute-test: self-attention alone cannot tell word order apart.
#include "commands.hpp"
#include "common.hpp"

#include "attnlab/experiments/permute_params.hpp"

namespace attnlab::app {

namespace {
struct PermuteOpts {
    CommonOpts common;
    PermuteParams permute;
};
}  // namespace

void setup_permute(CLI::App& app)
{
    auto opts = std::make_shared<PermuteOpts>();
    auto* sub = app.add_subcommand(
        "permute-test", "Order blindness: without positions, permuting the input only permutes the output");
    auto& p = opts->permute;
    auto* len = sub->add_option("--len", p.len, "Positions L")->check(whole_in(1L, 4096L));
    auto* dim = sub->add_option("--dim", p.dim, "Model dimension E")->check(whole_in(1L, 4096L));
    sub->add_option("--heads", p.heads, "Heads H (E must be a multiple)")->check(whole_in(1L, 64L));
    auto* example = sub->add_flag("--example", p.example, "The articles' example: n = 4, d = 8, permutation 2,1,0,3 (fixes --len and --dim)");
    auto* perm = sub->add_option("--perm", p.perm,
                                 "The permutation, e.g. 2,1,0,3 (row i of PX is row perm[i] of X; it sets --len); default random")
                     ->delimiter(',')
                     ->check(non_empty)
                     ->check(whole_number);
    sub->add_option("--trials", p.trials, "Random permutations to try; the worst is reported")->check(whole_in(1L, 10000L));
    sub->add_flag("--no-proj", p.no_proj, "No W_q, W_k, W_v: Softmax(X X^T) X, the articles' projection-free form");
    add_enum_option(*sub, "--pe", p.pe, "Position information: with any, the order matters");
    add_enum_subset_option(*sub, "--mask", p.mask, {MaskKind::none, MaskKind::causal},
                           "none or causal (a causal mask also breaks equivariance)");
    add_common_options(*sub, opts->common);
    sub->footer(tensors_help(permute_tensor_infos()) + "\nExample: attnlab permute-test --example --no-proj");
    example->excludes(len)->excludes(dim);
    sub->callback([opts, len, perm] {
        // A permutation names its length: --perm 2,1,0,3 alone means four positions.
        if (perm->count() > 0 && len->count() == 0) opts->permute.len = static_cast<long>(opts->permute.perm.size());
        exit_status() = execute(opts->common, [&](const RunContext& ctx) { return run_permute(opts->permute, ctx); });
    });
}

}  // namespace attnlab::app

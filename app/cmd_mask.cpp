// attnlab mask: causal and padding masks, the two boolean conventions, and what goes wrong.
#include "commands.hpp"
#include "common.hpp"

#include "attnlab/experiments/mask_params.hpp"

namespace attnlab::app {

namespace {
struct MaskOpts {
    CommonOpts common;
    MaskParams mask;
};
}  // namespace

void setup_mask(CLI::App& app)
{
    auto opts = std::make_shared<MaskOpts>();
    auto* sub = app.add_subcommand(
        "mask", "Causal, padding and sliding-window masks: exact zeros, the two boolean conventions, fully masked rows");
    auto& p = opts->mask;
    add_enum_option(*sub, "--kind", p.kind,
                    "causal: the decoder's triangle; padding: hide keys past each length; both: "
                    "the two combined; window: causal within the last W keys");
    add_optional(*sub, "--len", p.len, "Query positions L (default 5, or the longest of --lengths)")
        ->check(whole_in(1L, 1L << 20));
    add_optional(*sub, "--kv-len", p.kv_len, "Key positions S when they differ from L (cache, cross-attention)")
        ->check(whole_in(1L, 1L << 20));
    add_optional_enum(*sub, "--align", p.align,
                      "Where the triangle sits when L != S: upper-left (is_causal) or lower-right "
                      "(decoding after cached keys); default upper-left");
    add_optional(*sub, "--diagonal", p.diagonal,
                 "torch.triu's diagonal: keys j - i >= k are hidden (default 1; 0 also hides the diagonal)")
        ->check(whole_in(-(1L << 20), 1L << 20));
    add_optional(*sub, "--window", p.window, "Window W for --kind window: query i sees keys i-W+1..i");
    add_optional(*sub, "--batch", p.batch, "Sequences in the batch for causal and window (default 1)")
        ->check(whole_in(1L, kMaxBatch));
    sub->add_option("--lengths", p.lengths, "Padding: one length per sequence, e.g. 3,5,2")
        ->delimiter(',')
        ->check(non_empty)->check(whole_number);
    sub->add_option("--fill", p.fill, "Value at hidden positions: -inf, -1e9 or another number <= 0");
    sub->add_option("--dk", p.dk, "d_k of the random q and k; scores are q k^T / sqrt(d_k)")
        ->check(whole_in(1L, 1L << 16));
    sub->add_flag("--multiply", p.multiply, "Also show the wrong way: scores * (0/1 mask), and the mass it leaks");
    add_enum_option(*sub, "--softmax", p.softmax,
                    "plain: a fully masked row becomes NaN (PyTorch's softmax); safe: zeros "
                    "(scaled_dot_product_attention since PyTorch 2.5)");
    add_common_options(*sub, opts->common);
    sub->footer(tensors_help(mask_tensor_infos()) + "\nExample: attnlab mask --kind both --lengths 3,5,2 --show mask,weights");
    sub->callback([opts] {
        exit_status() = execute(opts->common, [&](const RunContext& ctx) { return run_mask(opts->mask, ctx); });
    });
}

}  // namespace attnlab::app

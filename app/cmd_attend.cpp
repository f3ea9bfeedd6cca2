// attnlab attend: the whole attention block, embeddings to output.
#include "commands.hpp"
#include "common.hpp"

#include "attnlab/experiments/attend_params.hpp"

namespace attnlab::app {

namespace {
struct AttendOpts {
    CommonOpts common;
    AttendParams attend;
};
}  // namespace

void setup_attend(CLI::App& app)
{
    auto opts = std::make_shared<AttendOpts>();
    auto* sub = app.add_subcommand(
        "attend", "The attention block: X -> Q, K, V -> scores -> weights -> out, with PE, RoPE or ALiBi and masks");
    auto& p = opts->attend;
    add_optional(*sub, "--batch", p.batch, "Batch size B (default 1, or the number of --lengths)")
        ->check(whole_in(1L, kMaxBatch));
    sub->add_option("--len", p.len, "Query positions L")->check(whole_in(1L, 1L << 20));
    sub->add_option("--heads", p.heads, "Heads H")->check(whole_in(1L, 1024L));
    sub->add_option("--dim", p.dim, "Model dimension E, a multiple of H (head dimension d = E/H)")
        ->check(whole_in(1L, 1L << 16));
    add_optional(*sub, "--kv-len", p.kv_len, "Key/value positions S from a second sequence (cross-attention)")
        ->check(whole_in(1L, 1L << 20));
    add_optional(*sub, "--kv-heads", p.kv_heads, "Key/value heads, dividing H (grouped-query; 1 is multi-query)")
        ->check(whole_in(1L, 1024L));
    add_optional(*sub, "--scale", p.scale, "Score scale (default 1/sqrt(d))")->check(finite_positive);
    add_enum_option(*sub, "--pe", p.pe,
                    "sinusoidal: added to X before the projections; rope: rotates q and k after them; "
                    "alibi: a bias on the scores");
    add_enum_option(*sub, "--rope-style", p.rope_style, "RoPE pairing: interleaved (2i, 2i+1) or half (i, i+d/2)");
    add_enum_option(*sub, "--mask", p.mask, "none|causal|padding|both|window, as in `attnlab mask`");
    sub->add_option("--lengths", p.lengths, "Padding: one length per sequence, e.g. 3,5,2")->delimiter(',')->check(non_empty)->check(whole_number);
    add_optional(*sub, "--window", p.window, "Window W for --mask window");
    auto* positions = sub->add_option("--positions", p.positions,
                                      "Each token's position for --pe rope, alibi or sinusoidal (self-attention; any integers, "
                                      "repeats and gaps included; default 0..L-1); sets --len when that is not given")
                          ->delimiter(',')
                          ->check(whole_in(-(1L << 24), 1L << 24));
    add_enum_option(*sub, "--align", p.align, "Causal triangle when L != S: upper-left (is_causal) or lower-right");
    add_enum_option(*sub, "--softmax", p.softmax, "plain (NaN on fully masked rows) or safe (zeros)");
    sub->add_option("--threads", p.threads, "Threads of the kernel and the projections (0: every core; the results are the same bits)")
        ->check(whole_in(0L, 1024L));
    add_common_options(*sub, opts->common);
    sub->footer(tensors_help(attend_tensor_infos()) + "\nExample: attnlab attend --len 5 --heads 2 --dim 8 --mask causal --pe rope --show weights,out_merged");
    sub->callback([opts, sub, positions] {
        if (positions->count() > 0 && sub->count("--len") == 0) opts->attend.len = static_cast<long>(opts->attend.positions.size());
        exit_status() = execute(opts->common, [&](const RunContext& ctx) { return run_attend(opts->attend, ctx); });
    });
}

}  // namespace attnlab::app

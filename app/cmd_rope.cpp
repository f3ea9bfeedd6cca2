// attnlab rope: rotary position embedding (RoFormer, Su et al. 2021).
#include "commands.hpp"
#include "common.hpp"

#include "attnlab/experiments/rope_params.hpp"

namespace attnlab::app {

namespace {
struct RopeOpts {
    CommonOpts common;
    RopeParams rope;
};
}  // namespace

void setup_rope(CLI::App& app)
{
    auto opts = std::make_shared<RopeOpts>();
    auto* sub = app.add_subcommand(
        "rope", "Rotary position embedding: both pairings, scaling methods, and q_m.k_n depending on m - n alone");
    auto& p = opts->rope;
    auto& s = p.scaling;
    sub->add_option("--len", p.len, "Positions L")->check(whole_in(1L, 1L << 22));
    sub->add_option("--dim", p.dim, "Per-head dimension d (even)")->check(whole_in(2L, 1L << 16));
    sub->add_option("--heads", p.heads, "Heads H")->check(whole_in(1L, 1024L));
    sub->add_option("--batch", p.batch, "Batch size B")->check(whole_in(1L, 1024L));
    sub->add_option("--base", p.base, "Base of theta_i = base^(-2i/r)")->check(finite_positive);
    add_enum_option(*sub, "--style", p.style,
                    "interleaved: pairs (2i, 2i+1) (RoFormer, GPT-J, the articles); half: (i, i+r/2) "
                    "(rotate_half: GPT-NeoX, Llama, Hugging Face)");
    add_optional(*sub, "--rotary-dim", p.rotary_dim, "Rotate only the first r dimensions (even; default d)")
        ->check(whole_in(2L, 1L << 16));
    add_enum_option(*sub, "--scaling", s.method, "Context extension: none|linear|ntk|dynamic|yarn|llama3");
    add_optional(*sub, "--factor", s.factor, "Scaling factor s (>= 1), for every method but none")->check(finite_positive);
    add_optional(*sub, "--original-len", s.original_len, "Context L0 the model was trained on (dynamic, yarn, llama3)");
    sub->add_option("--beta-fast", s.beta_fast, "yarn: pairs turning more often than this over L0 keep theta")
        ->check(finite_positive);
    sub->add_option("--beta-slow", s.beta_slow, "yarn: pairs turning less often than this are interpolated")
        ->check(finite_positive);
    add_optional(*sub, "--attention-factor", s.attention_factor, "yarn: override 0.1 ln(s) + 1")->check(finite_positive);
    sub->add_option("--low-freq-factor", s.low_freq_factor, "llama3: wavelengths above L0/this are divided by s")
        ->check(finite_positive);
    sub->add_option("--high-freq-factor", s.high_freq_factor, "llama3: wavelengths below L0/this keep theta")
        ->check(finite_positive);
    auto* positions = sub->add_option("--positions", p.positions,
                                      "Each token's position, comma-separated (any integers, repeats and gaps included; "
                                      "default 0..L-1); sets --len when that is not given")
                          ->delimiter(',')
                          ->check(whole_in(-(1L << 24), 1L << 24));
    auto* example = sub->add_flag("--example", p.example,
                                  "The articles' example: d = 4, 5 positions, every query (1, 0, 1, 0)");
    add_common_options(*sub, opts->common);
    sub->footer(tensors_help(rope_tensor_infos()) + "\nExample: attnlab rope --len 64 --dim 16 --format csv --tensor dots");
    for (const char* fixed : {"--len", "--dim", "--heads", "--batch", "--rotary-dim"}) example->excludes(fixed);
    example->excludes(positions);
    sub->callback([opts, sub] {
        if (!opts->rope.positions.empty() && sub->count("--len") == 0) opts->rope.len = static_cast<long>(opts->rope.positions.size());
        exit_status() = execute(opts->common, [&](const RunContext& ctx) { return run_rope(opts->rope, ctx); });
    });
}

}  // namespace attnlab::app

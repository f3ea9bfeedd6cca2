// Every check fails where it must: each case runs an experiment, breaks one thing in one of
// its tensors, and asserts exactly which checks now fail. Properties are coupled (a broken
// row 0 of a PE table is also a broken shift), so a case names every check its doctoring
// breaks, and a check that stops noticing, or starts failing elsewhere, fails the case.
#include "attnlab/experiments/alibi.hpp"
#include "attnlab/experiments/attend.hpp"
#include "attnlab/experiments/grad.hpp"
#include "attnlab/experiments/mask.hpp"
#include "attnlab/experiments/pe.hpp"
#include "attnlab/experiments/permute.hpp"
#include "attnlab/experiments/rope.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>

using namespace attnlab;

namespace {

// The checks (invariants and article claims) that fail after the doctoring and did not before.
template <class P>
std::vector<std::string> newly_failing(const Experiment<P>& e, const P& p, const std::function<void(Run&)>& doctor,
                                       DType dtype = DType::float64)
{
    RunContext ctx;
    ctx.dtype = dtype;
    Run run = compute_all(e, p, ctx);
    const auto before = failed_checks(check_run(e, p, run, ctx));
    doctor(run);
    std::vector<std::string> out;
    for (const auto& name : failed_checks(check_run(e, p, run, ctx)))
        if (std::find(before.begin(), before.end(), name) == before.end()) out.push_back(name);
    return out;
}

// Element of a run's tensor by flat index.
double& at(Run& run, const std::string& name, std::size_t flat) { return tensor_of(run, name).values.wide().at(flat); }

using Names = std::vector<std::string>;

}  // namespace

TEST_CASE("pe: each doctored table fails the checks that read what was broken")
{
    PeParams p;
    p.len = 16;
    p.dim = 8;
    p.embed = true;
    p.batch = 2;
    const auto& e = pe_experiment();
    // embed_broadcast reads pe too (H - sX - PE), so every doctored table also breaks it.
    // cos 0 must be 1
    CHECK(newly_failing(e, p, [](Run& r) { at(r, "pe", 1) = 0.5; }) ==
          Names{"row0_exact", "relative_shift_linear", "dot_depends_on_offset", "embed_broadcast"});
    // a table scaled by mistake: still linear in the shift, but out of [-1, 1]
    CHECK(newly_failing(e, p, [](Run& r) { for (double& v : tensor_of(r, "pe").values.wide()) v *= 1.5; }) ==
          Names{"row0_exact", "values_bounded", "embed_broadcast"});
    // two equal rows
    CHECK(newly_failing(e, p, [](Run& r) {
              auto& v = tensor_of(r, "pe").values.wide();
              std::copy(v.begin() + 6 * 8, v.begin() + 7 * 8, v.begin() + 7 * 8);
          }) == Names{"rows_distinct", "relative_shift_linear", "dot_depends_on_offset", "embed_broadcast"});
    // frequencies out of order: the shift predicted from them no longer matches the table
    CHECK(newly_failing(e, p, [](Run& r) { std::swap(at(r, "freq", 1), at(r, "freq", 2)); }) ==
          Names{"freq_falling", "relative_shift_linear"});
    // the other layout's table, reordered: a valid sinusoidal table with other frequencies
    CHECK(newly_failing(e, p, [&](Run& r) {
              replace_tensor(r, to_tensor("pe", {"pos", "dim"},
                                          other_layout_reordered<double>(16, 8, 10000.0, PeLayout::interleaved, FreqMethod::exp_log),
                                          Elem::float64));
          }) == Names{"relative_shift_linear", "layouts_not_a_permutation", "embed_broadcast"});
    CHECK(newly_failing(e, p, [](Run& r) { at(r, "h", 8 * 3 + 2) += 0.1; }) == Names{"embed_broadcast"});
    // the correct H in place of the buggy one: positions differ again
    CHECK(newly_failing(e, p, [](Run& r) {
              Tensor h = tensor_of(r, "h");
              h.name = "h_sliced_by_batch";
              replace_tensor(r, h);
          }) == Names{"slicing_bug_loses_position"});
}

TEST_CASE("mask: each doctored mask or weights tensor fails the checks that read it")
{
    const auto& e = mask_experiment();
    MaskParams causal;
    // a hidden entry filled with -1e9 instead of -inf: the same visibility, another tensor
    CHECK(newly_failing(e, causal, [](Run& r) { at(r, "mask", 0 * 5 + 3) = -1e9; }) == Names{"causal_equals_tril"});
    // a future key made visible
    CHECK(newly_failing(e, causal, [](Run& r) { at(r, "mask", 1 * 5 + 2) = 0.0; }) ==
          Names{"causal_equals_tril", "visible_keys_per_row"});
    // a row that sums to 1.1
    CHECK(newly_failing(e, causal, [](Run& r) { at(r, "weights", 2 * 5 + 0) += 0.1; }) == Names{"rows_sum_to_one"});
    // a masked weight of 1e-9, taken from a visible one so the row still sums to 1
    CHECK(newly_failing(e, causal, [](Run& r) {
              at(r, "weights", 1 * 5 + 3) = 1e-9;
              at(r, "weights", 1 * 5 + 0) -= 1e-9;
          }) == Names{"masked_weights_exactly_zero"});
    CHECK(newly_failing(e, causal, [](Run& r) { at(r, "weights", 0) = 0.5; }) == Names{"rows_sum_to_one", "row0_one_hot"});
    CHECK(newly_failing(e, causal, [](Run& r) { at(r, "weights", 2 * 5 + 1) = std::nan(""); }) ==
          Names{"rows_sum_to_one", "no_nan_weights"});
    MaskParams window;
    window.kind = MaskKind::window;
    window.window = 2;
    CHECK(newly_failing(e, window, [](Run& r) { at(r, "mask", 4 * 5 + 0) = 0.0; }) == Names{"visible_keys_per_row"});
    MaskParams padding;
    padding.kind = MaskKind::padding;
    padding.lengths = {2, 4};
    padding.multiply = true;
    // the inverted convention: attn_mask_bool holding key_padding_mask's values
    CHECK(newly_failing(e, padding, [](Run& r) {
              Tensor t = tensor_of(r, "key_padding_mask");
              t.name = "attn_mask_bool";
              replace_tensor(r, t);
          }) == Names{"bool_conventions_complement"});
    // Hugging Face's combined boolean holding the padding alone (attn_mask_bool, broadcast over
    // the queries): the causal triangle is lost
    MaskParams both;
    both.kind = MaskKind::both;
    both.lengths = {4, 2};
    CHECK(newly_failing(e, both, [](Run& r) {
              Tensor t = tensor_of(r, "sdpa_mask_bool");
              const Tensor& amb = tensor_of(r, "attn_mask_bool");
              const std::size_t L = t.shape[2], S = t.shape[3];
              for (std::size_t b = 0; b < t.shape[0]; ++b)
                  for (std::size_t i = 0; i < L; ++i)
                      for (std::size_t j = 0; j < S; ++j) t.values[(b * L + i) * S + j] = amb.values[b * S + j];
              replace_tensor(r, t);
          }) == Names{"sdpa_mask_is_the_whole_mask"});
    // the article's claim is measured on the leak tensor: no leak, and it would hold
    RunContext ctx;
    Run run = compute_all(e, padding, ctx);
    CHECK(find_check(check_run(e, padding, run, ctx), "multiply_leak_very_small").passed() == false);
    for (double& v : tensor_of(run, "leak").values.wide()) v = 0.0;
    CHECK(find_check(check_run(e, padding, run, ctx), "multiply_leak_very_small").passed());
    // the renormalised product is the additive weights; one left unrenormalised (row 1 of
    // sequence 0 scaled by 0.9) differs from them, and only that invariant fails
    CHECK(newly_failing(e, padding, [](Run& r) { for (std::size_t j = 0; j < 4; ++j) at(r, "renormalised_weights", 4 + j) *= 0.9; }) ==
          Names{"renormalised_multiply_masks"});
    const auto& w = tensor_of(run, "weights").values;
    for (std::size_t j = 0; j < 4; ++j) at(run, "renormalised_weights", 4 + j) *= 0.9;
    CHECK(find_check(check_run(e, padding, run, ctx), "renormalised_multiply_masks").measured ==
          doctest::Approx(0.1 * std::max({w[4], w[5], w[6], w[7]})).epsilon(1e-6));
}

TEST_CASE("rope: each doctored rotation fails the checks that read it")
{
    RopeParams p;
    p.len = 12;
    p.dim = 8;
    p.rotary_dim = 4;
    const auto& e = rope_experiment();
    // position 0 rotated after all (its first pair swapped): the norm survives
    CHECK(newly_failing(e, p, [](Run& r) { std::swap(at(r, "q_rot", 0), at(r, "q_rot", 1)); }) ==
          Names{"pos0_unchanged", "complex_form", "inverse_restores"});
    // the rotated part of one vector stretched by 10%
    CHECK(newly_failing(e, p, [](Run& r) { for (int j = 0; j < 4; ++j) at(r, "q_rot", 3 * 8 + j) *= 1.1; }) ==
          Names{"norm_preserved", "complex_form", "inverse_restores"});
    // a pass-through dimension changed
    CHECK(newly_failing(e, p, [](Run& r) { at(r, "q_rot", 2 * 8 + 6) = -at(r, "q_rot", 2 * 8 + 6); }) ==
          Names{"partial_passthrough", "inverse_restores"});
    // the other pairing: a rotation of the right size, about the wrong planes
    CHECK(newly_failing(e, p, [](Run& r) {
              const auto cache = rope_cache<double>(12, rope_frequencies<double>(4, 10000.0, RopeScalingParams{}, 12).theta);
              const Tensor q = tensor_of(r, "q");
              Tensor half = to_tensor("q_rot", q.axes, rope_apply(from_tensor<double, 4>(q), cache, 4, RopeStyle::half), Elem::float64);
              replace_tensor(r, half);
          }) == Names{"complex_form", "inverse_restores"});
}

TEST_CASE("alibi: each doctored slope or bias fails the checks that read it")
{
    AlibiParams p;
    const auto& e = alibi_experiment();
    CHECK(newly_failing(e, p, [](Run& r) { at(r, "slopes", 0) = 1.5; }) == Names{"slopes_geometric", "slopes_in_unit_interval"});
    CHECK(newly_failing(e, p, [](Run& r) { at(r, "slopes", 1) = at(r, "slopes", 0); }) == Names{"slopes_geometric", "slopes_distinct"});
    // a wrong diagonal: not zero, not Toeplitz, and the diagonal no longer the most attended
    CHECK(newly_failing(e, p, [](Run& r) { at(r, "bias", 3 * 8 + 3) = -0.6; }) ==
          Names{"bias_zero_diagonal", "bias_toeplitz", "weights_fall_with_distance"});
    // +m|i - j|: the sign slip
    CHECK(newly_failing(e, p, [](Run& r) { for (double& v : tensor_of(r, "bias").values.wide()) v = -v; }) ==
          Names{"bias_never_positive", "weights_fall_with_distance", "steeper_looks_nearer"});
    CHECK(newly_failing(e, p, [](Run& r) { at(r, "bias", 1 * 64 + 5 * 8 + 2) -= 0.01; }) == Names{"bias_toeplitz"});
    CHECK(newly_failing(e, p, [](Run& r) { at(r, "weights", 8 + 1) += 0.1; }) == Names{"rows_sum_to_one"});
    AlibiParams causal;
    causal.variant = AlibiVariant::causal;
    CHECK(newly_failing(e, causal, [](Run& r) {
              at(r, "weights", 1 * 8 + 3) = 1e-9;
              at(r, "weights", 1 * 8 + 1) -= 1e-9;
          }) == Names{"future_weights_zero"});
}

TEST_CASE("attend: each doctored weights or output tensor fails the checks that read it")
{
    AttendParams p;
    p.mask = MaskKind::causal;
    const auto& e = attend_experiment();
    // weights [1, 2, 6, 6]
    CHECK(newly_failing(e, p, [](Run& r) { at(r, "weights", 2 * 6 + 1) += 0.1; }) == Names{"rows_sum_to_one"});
    CHECK(newly_failing(e, p, [](Run& r) {
              at(r, "weights", 1 * 6 + 3) = 1e-9;
              at(r, "weights", 1 * 6 + 0) -= 1e-9;
          }) == Names{"masked_weights_exactly_zero"});
    CHECK(newly_failing(e, p, [](Run& r) { at(r, "weights", 3 * 6 + 1) = std::nan(""); }) ==
          Names{"rows_sum_to_one", "no_nan_weights"});
    // out [1, 2, 6, 4]: a late row against the reference; an early one is also a causality break
    CHECK(newly_failing(e, p, [](Run& r) { at(r, "out", 4 * 4 + 1) += 0.1; }) == Names{"main_matches_reference"});
    CHECK(newly_failing(e, p, [](Run& r) { at(r, "out", 1 * 4 + 1) += 0.1; }) ==
          Names{"main_matches_reference", "causal_rows_unchanged", "out_rows_are_averages"});
    // row 0 sees key 0 alone: moving it leaves the range of one value and is not v[0]
    CHECK(newly_failing(e, p, [](Run& r) { at(r, "out", 0 * 4 + 2) += 0.1; }) ==
          Names{"main_matches_reference", "causal_rows_unchanged", "out_rows_are_averages", "out_first_row_is_v0"});
    AttendParams padding;
    padding.mask = MaskKind::padding;
    padding.lengths = {3, 6};
    CHECK(newly_failing(e, padding, [](Run& r) { at(r, "out", 2 * 4 + 0) += 0.1; }) ==
          Names{"main_matches_reference", "padding_ignored"});
    // §5.3's "no teacher forcing without a mask" is refuted by the unmasked pass giving every
    // row; an out whose row 2 is NaN (a pass that could not give it) would bear the claim out
    RunContext ctx;
    const AttendParams unmasked;
    Run run = compute_all(e, unmasked, ctx);
    auto claim = [&] { return find_check(check_run(e, unmasked, run, ctx), "teacher_forcing_needs_mask"); };
    CHECK(claim().measured == 6.0);
    CHECK_FALSE(claim().passed());
    at(run, "out", 2 * 4 + 3) = std::nan("");
    CHECK(claim().measured == 5.0);
    CHECK(claim().passed());
    CHECK(claim().role == Role::article);
}

TEST_CASE("permute-test: doctored outputs and weights fail the checks that read them")
{
    PermuteParams p;
    const auto& e = permute_experiment();
    CHECK(newly_failing(e, p, [](Run& r) { at(r, "out_perm", 3) += 0.1; }) == Names{"equivariant", "no_pe_is_bag_of_words_bidirectional"});
    CHECK(newly_failing(e, p, [](Run& r) { at(r, "weights_perm", 1) += 0.1; }) == Names{"weights_permute"});
    // out_perm replaced by P out: exactly what order blindness would give
    const auto order_blind = [](Run& r) {
        const Tensor& out = tensor_of(r, "out");
        const auto perm = tensor_of(r, "perm").values;
        Tensor& op = tensor_of(r, "out_perm");
        const std::size_t E = out.shape[1];
        for (std::size_t i = 0; i < perm.size(); ++i)
            for (std::size_t c = 0; c < E; ++c) op.values[i * E + c] = out.values[static_cast<std::size_t>(perm[i]) * E + c];
    };
    PermuteParams pe;
    pe.pe = PeKind::sinusoidal;
    CHECK(newly_failing(e, pe, order_blind) == Names{"equivariance_breaks"});
    // under a causal mask the bag-of-words claim is refuted, and holds on an order-blind output
    PermuteParams causal;
    causal.mask = MaskKind::causal;
    RunContext ctx;
    ctx.dtype = DType::float64;
    Run run = compute_all(e, causal, ctx);
    const auto bag = [&] {
        for (const Check& c : check_run(e, causal, run, ctx))
            if (c.name == "no_pe_is_bag_of_words_causal") return c.passed();
        FAIL("no_pe_is_bag_of_words_causal was not run");
        return false;
    };
    CHECK_FALSE(bag());
    order_blind(run);
    CHECK(bag());
}

TEST_CASE("grad: each doctored gradient or weights tensor fails the checks that read it")
{
    AttendParams p;
    p.mask = MaskKind::causal, p.pe = PeKind::rope;
    const auto& e = grad_experiment();
    // d_x [1, 6, 8], d_w_v [8, 8]: off by a little, caught by the finite differences alone
    CHECK(newly_failing(e, p, [](Run& r) { at(r, "d_x", 9) += 1e-3; }) == Names{"d_x_matches_finite_differences"});
    CHECK(newly_failing(e, p, [](Run& r) { for (double& v : tensor_of(r, "d_w_v").values.wide()) v *= 1.001; }) ==
          Names{"d_w_v_matches_finite_differences"});
    // d_scores [1, 2, 6, 6] without the row term: d_weights * P
    CHECK(newly_failing(e, p, [](Run& r) {
              const auto& w = tensor_of(r, "weights").values;
              const auto& dw = tensor_of(r, "d_weights").values;
              auto& ds = tensor_of(r, "d_scores").values.wide();
              for (std::size_t n = 0; n < ds.size(); ++n) ds[n] = w[n] * dw[n];
          }) == Names{"d_scores_matches_finite_differences", "d_scores_rows_sum_to_zero"});
    // a gradient at a masked key (row 2, key 4), taken from a visible one of the same row
    CHECK(newly_failing(e, p, [](Run& r) {
              at(r, "d_scores", 2 * 6 + 4) = 1e-3;
              at(r, "d_scores", 2 * 6 + 1) -= 1e-3;
          }) == Names{"d_scores_matches_finite_differences", "masked_keys_get_zero_gradient"});
    // weights that leak to a later key (row 1, key 4): its d_k and d_v are no longer 0
    CHECK(newly_failing(e, p, [](Run& r) { at(r, "weights", 1 * 6 + 4) = 0.01; }) == Names{"no_gradient_from_later_queries"});
    // d_q [1, 2, 6, 4] turned forwards by RoPE instead of back: d_q_rot rotated twice
    CHECK(newly_failing(e, p, [](Run& r) {
              auto& d_q = tensor_of(r, "d_q").values.wide();
              const auto& d_q_rot = tensor_of(r, "d_q_rot").values;
              for (std::size_t n = 0; n < d_q.size(); ++n) d_q[n] = d_q_rot[n];
          }) == Names{"d_q_matches_finite_differences", "rope_backward_is_inverse_rotation"});
}

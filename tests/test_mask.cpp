#include "attnlab/core/measure.hpp"
#include "attnlab/experiments/mask.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

using namespace attnlab;

namespace {


MaskSpec causal(long L, long S = 0)
{
    MaskSpec m;
    m.kind = MaskKind::causal;
    m.queries = L;
    m.keys = S == 0 ? L : S;
    return m;
}

// The additive mask as a Tensor: [L, S], or [B, 1, L, S] when padding makes it per sequence.
Tensor mask_of(const MaskSpec& m)
{
    if (!m.has_padding()) return tt(additive_mask<double>(m));
    Ten4<double> out = xt::zeros<double>({static_cast<std::size_t>(m.batch()), std::size_t{1},
                                          static_cast<std::size_t>(m.queries), static_cast<std::size_t>(m.keys)});
    for (long b = 0; b < m.batch(); ++b) xt::view(out, b, 0, xt::all(), xt::all()) = additive_mask<double>(m, b);
    return tt(out);
}

}  // namespace

TEST_CASE("causal mask equals torch.triu(full(-inf), diagonal=1) for L=3")
{
    const auto mask = additive_mask<double>(causal(3));
    const double expected[3][3] = {{0, -kInf, -kInf}, {0, 0, -kInf}, {0, 0, 0}};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) CHECK(mask(i, j) == expected[i][j]);
}

TEST_CASE("the tril reference agrees with triu at every diagonal, and a mask of another diagonal is caught")
{
    auto m = causal(4);
    for (long diagonal : {-1L, 0L, 1L, 2L, 5L}) {
        CAPTURE(diagonal);
        m.diagonal = diagonal;
        CHECK(additive_mask<float>(m) == causal_reference_tril<float>(4, 4, Align::upper_left, diagonal, -INFINITY));
        CHECK(rows_with_wrong_visibility(mask_of(m), m) == 0);
    }
    // row i sees keys 0 .. i + diagonal - 1: with diagonal 0 row 0 sees none, with 2 one key more
    m.diagonal = 0;
    CHECK(m.expected_visible(0, 0) == 0);
    CHECK(m.expected_visible(0, 3) == 3);
    m.diagonal = 2;
    CHECK(m.expected_visible(0, 0) == 2);
    CHECK(m.expected_visible(0, 3) == 4);
    // the off-by-one held against the usual diagonal: every row sees one key too few
    auto usual = causal(4), shifted = causal(4);
    shifted.diagonal = 0;
    CHECK(additive_mask<float>(shifted) != causal_reference_tril<float>(4, 4, Align::upper_left, 1, -INFINITY));
    CHECK(rows_with_wrong_visibility(mask_of(shifted), usual) == 4);
    shifted.diagonal = 2;  // one future key leaks: every row but the last
    CHECK(rows_with_wrong_visibility(mask_of(shifted), usual) == 3);
}

TEST_CASE("rectangular masks: upper-left (is_causal) and lower-right (decoding with a cache)")
{
    auto m = causal(2, 5);
    // upper-left: query 0 sees key 0, query 1 sees keys 0..1
    CHECK(m.expected_visible(0, 0) == 1);
    CHECK(m.expected_visible(0, 1) == 2);
    auto ul = additive_mask<double>(m);
    CHECK(ul(0, 1) == -kInf);
    m.align = Align::lower_right;
    // lower-right: the 2 new queries come after 3 cached keys: query 0 sees 0..3, query 1 all 5
    CHECK(m.expected_visible(0, 0) == 4);
    CHECK(m.expected_visible(0, 1) == 5);
    auto lr = additive_mask<double>(m);
    CHECK(lr(0, 3) == 0);
    CHECK(lr(0, 4) == -kInf);
    CHECK(lr(1, 4) == 0);
    CHECK(additive_mask<double>(m) == causal_reference_tril<double>(2, 5, Align::lower_right, 1, -kInf));
    CHECK(rows_with_wrong_visibility(mask_of(m), m) == 0);
}

TEST_CASE("window mask: query i sees keys i-W+1..i")
{
    MaskSpec m;
    m.kind = MaskKind::window;
    m.queries = m.keys = 6;
    m.window = 3;
    const auto mask = additive_mask<double>(m);
    // row 4 sees keys 2, 3, 4
    CHECK(mask(4, 1) == -kInf);
    CHECK(mask(4, 2) == 0);
    CHECK(mask(4, 4) == 0);
    CHECK(mask(4, 5) == -kInf);
    CHECK(m.expected_visible(0, 0) == 1);
    CHECK(m.expected_visible(0, 5) == 3);
    CHECK(rows_with_wrong_visibility(mask_of(m), m) == 0);
}

TEST_CASE("padding: key_padding_mask (true = ignore) and attn_mask (true = may attend)")
{
    MaskSpec m;
    m.kind = MaskKind::padding;
    m.queries = m.keys = 4;
    m.lengths = {2, 4};
    const auto kpm = key_padding_mask(m);
    const auto amb = attn_mask_bool(m);
    CHECK(kpm(0, 1) == false);
    CHECK(kpm(0, 2) == true);
    CHECK(kpm(1, 3) == false);
    for (std::size_t i = 0; i < kpm.size(); ++i) CHECK(kpm.data()[i] != amb.data()[i]);
    CHECK(rows_with_wrong_visibility(mask_of(m), m) == 0);
}

TEST_CASE("an inverted boolean mask is caught: attn_mask passed where key_padding_mask belongs")
{
    MaskSpec m;
    m.kind = MaskKind::padding;
    m.queries = m.keys = 4;
    m.lengths = {2, 3};
    Ten3<double> scores = xt::zeros<double>({std::size_t{2}, std::size_t{4}, std::size_t{4}});
    for (std::size_t i = 0; i < scores.size(); ++i) scores.data()[i] = 0.1 * static_cast<double>(i % 5);
    const auto right = masked_softmax_additive(scores, m, SoftmaxKind::plain);
    CHECK(max_abs_diff(masked_softmax_key_padding(scores, key_padding_mask(m), SoftmaxKind::plain), right) == 0.0);
    CHECK(max_abs_diff(masked_softmax_attn_bool(scores, attn_mask_bool(m), SoftmaxKind::plain), right) == 0.0);
    // The usual mistake: true = "may attend" handed to an argument where true = "ignore".
    const auto wrong = masked_softmax_key_padding(scores, attn_mask_bool(m), SoftmaxKind::plain);
    CHECK(max_abs_diff(wrong, right) > 0.1);
    CHECK(max_masked_weight(tt(wrong), m) > 0.1);
}

TEST_CASE("softmax of a fully masked row: plain gives NaN, safe gives zeros, -1e9 gives uniform")
{
    float row[3] = {-INFINITY, -INFINITY, -INFINITY};
    softmax_inplace(row, 3, SoftmaxKind::plain);
    CHECK(std::isnan(row[0]));
    float row2[3] = {-INFINITY, -INFINITY, -INFINITY};
    softmax_inplace(row2, 3, SoftmaxKind::safe);
    CHECK(row2[0] == 0.0f);
    CHECK(row2[2] == 0.0f);
    // float32: 0.7 - 1e9 rounds to -1e9 like the others (one ulp there is 64): uniform.
    float row3[3] = {0.7f - 1e9f, -0.2f - 1e9f, -1e9f};
    softmax_inplace(row3, 3, SoftmaxKind::plain);
    CHECK(row3[0] == doctest::Approx(1.0 / 3));
    CHECK(row3[1] == row3[0]);
}

TEST_CASE("softmax against hand-computed values")
{
    double row[3] = {0.0, std::log(2.0), std::log(5.0)};  // exp: 1, 2, 5 -> /8
    softmax_inplace(row, 3, SoftmaxKind::plain);
    CHECK(row[0] == doctest::Approx(0.125));
    CHECK(row[1] == doctest::Approx(0.25));
    CHECK(row[2] == doctest::Approx(0.625));
}

TEST_CASE("the measurements catch broken weights")
{
    auto m = causal(3);
    Ten3<double> w = xt::zeros<double>({std::size_t{1}, std::size_t{3}, std::size_t{3}});
    w(0, 0, 0) = 1;
    w(0, 1, 0) = 0.5;
    w(0, 1, 1) = 0.5;
    w(0, 2, 0) = w(0, 2, 1) = w(0, 2, 2) = 1.0 / 3;
    CHECK(max_masked_weight(tt(w), m) == 0.0);
    CHECK(max_row_sum_error(tt(w), m) < 1e-15);
    auto leaked = w;
    leaked(0, 0, 2) = 1e-12;  // small is not zero
    CHECK(max_masked_weight(tt(leaked), m) == 1e-12);
    leaked(0, 1, 1) = 0.6;
    CHECK(max_row_sum_error(tt(leaked), m) == doctest::Approx(0.1));
    leaked(0, 2, 2) = NAN;
    CHECK(count_nan(tt(leaked)) == 1);
    CHECK(std::isnan(max_row_sum_error(tt(leaked), m)));  // a NaN row never passes
    leaked(0, 0, 1) = NAN;
    CHECK(std::isnan(max_masked_weight(tt(leaked), m)));
    CHECK(max_abs_diff(leaked, leaked) == 0.0);
    CHECK(max_abs_diff(leaked, w) == kInf);
}

TEST_CASE("run_mask: default causal passes every check")
{
    const Report r = run_mask(MaskParams{}, RunContext{});
    check_invariants_hold(r, {"causal_equals_tril", "visible_keys_per_row", "rows_sum_to_one", "masked_weights_exactly_zero",
                              "row0_one_hot", "no_nan_weights", "hidden_scores_ignored", "transformer_src_mask_default"});
    CHECK(r.passed());
    CHECK(r.find("mask")->shape[0] == 5);
}

TEST_CASE("run_mask: the checks follow --diagonal: row 0 is fully masked at 0, which only the plain softmax's NaN fails")
{
    MaskParams p;
    p.diagonal = 0;
    const Report r = run_mask(p, RunContext{});
    CHECK(find_check(r, "visible_keys_per_row").passed());
    CHECK(find_check(r, "visible_keys_per_row").claim == "row i sees exactly i keys");
    CHECK(find_check(r, "causal_equals_tril").passed());
    CHECK(find_check(r, "no_nan_weights").measured == 5);  // row 0: plain softmax of all -inf
    CHECK(r.find_check("row0_one_hot") == nullptr);  // row 0 sees no key: not its claim
    p.softmax = SoftmaxKind::safe;
    CHECK(run_mask(p, RunContext{}).passed());
    for (long diagonal : {-1L, 2L, 3L}) {
        CAPTURE(diagonal);
        p.diagonal = diagonal;
        p.len = 11;
        CHECK(run_mask(p, RunContext{}).passed());
    }
}

TEST_CASE("run_mask: a finite fill that is not small enough leaks: masked weights are not zero")
{
    MaskParams p;
    p.fill = "-2";
    const Report r = run_mask(p, RunContext{});
    CHECK_FALSE(find_check(r, "masked_weights_exactly_zero").passed());
    CHECK_FALSE(find_check(r, "hidden_scores_ignored").passed());
    p.fill = "-1e9";
    const Report ok = run_mask(p, RunContext{});
    CHECK(find_check(ok, "masked_weights_exactly_zero").passed());
    CHECK(find_check(ok, "hidden_scores_ignored").passed());
}

TEST_CASE("run_mask: padding conventions agree, and multiplicative masking leaks far more than 1%")
{
    MaskParams p;
    p.kind = MaskKind::padding;
    p.lengths = {3, 5, 2};
    p.multiply = true;
    const Report r = run_mask(p, RunContext{});
    CHECK(r.passed());
    CHECK(find_check(r, "bool_conventions_complement").passed());
    CHECK(find_check(r, "bool_conventions_same_weights").measured == 0.0);
    const Check leak = find_check(r, "multiply_leak_very_small");
    CHECK(leak.role == Role::article);
    CHECK(leak.measured > 0.1);
    CHECK_FALSE(leak.passed());
    CHECK(r.find("mask")->rank() == 4);
    CHECK(r.find("leak")->shape[1] == 5);
}

TEST_CASE("run_mask: §7's 'a mask cannot be multiplied straight into attn' holds in every dtype, and the product renormalised is the additive mask's weights")
{
    for (DType dtype : {DType::float64, DType::float32, DType::float16, DType::bfloat16})
        for (MaskKind kind : {MaskKind::causal, MaskKind::both, MaskKind::window}) {
            CAPTURE(name_of(dtype));
            MaskParams p;
            p.kind = kind;
            p.len = 40;
            if (kind == MaskKind::window) p.window = 3;
            if (kind == MaskKind::both) p.lengths = {40, 0, 17};  // a fully masked row, skipped
            p.multiply = true;
            RunContext ctx;
            ctx.dtype = dtype;
            const Report r = run_mask(p, ctx);
            const Check c = find_check(r, "multiply_cannot_mask");
            CHECK(c.role == Role::article);
            CHECK(c.cmp == Compare::gt);
            CHECK(c.passed());  // a plain product loses mass: the tip holds as written
            CHECK(c.verdict() == Verdict::holds);
            CHECK(c.measured > 0.5);  // row 1 of a causal mask keeps about half its mass, or less
            CHECK(c.quote == "不能直接乘 attn；相加才能让 Softmax 严格屏蔽");
            const Check same = find_check(r, "renormalised_multiply_masks");
            CHECK(same.role == Role::invariant);
            CHECK(same.passed());
            CHECK(same.tolerance < 0.125);  // a tolerance that could not tell a leak of 1/8 is no verdict
            // planted: row 0 of sequence 0 (one visible key, weight 1) left unrenormalised, with
            // only half its mass kept: the invariant fails
            Run run = compute_all(mask_experiment(), p, ctx);
            for (std::size_t j = 0; j < 40; ++j) tensor_of(run, "renormalised_weights").values.wide()[j] *= 0.5;
            const std::vector<Check> planted = check_run(mask_experiment(), p, run, ctx);
            CHECK(find_check(planted, "renormalised_multiply_masks").measured == doctest::Approx(0.5));
            CHECK_FALSE(find_check(planted, "renormalised_multiply_masks").passed());
            // planted: scores already -inf on every masked key, so a plain product loses nothing
            // and the tip would be wrong
            const MaskSpec spec = mask_spec(p);
            Tensor& scores = tensor_of(run, "scores");
            const std::size_t L = scores.dim(1), S = scores.dim(2);
            for (std::size_t b = 0; b < scores.dim(0); ++b)
                for (std::size_t i = 0; i < L; ++i)
                    for (std::size_t j = 0; j < S; ++j)
                        if (spec.masked(static_cast<long>(b), static_cast<long>(i), static_cast<long>(j))) scores.values.wide()[(b * L + i) * S + j] = -INFINITY;
            const Check none_lost = find_check(check_run(mask_experiment(), p, run, ctx), "multiply_cannot_mask");
            CHECK(none_lost.measured == 0.0);
            CHECK(none_lost.verdict() == Verdict::wrong);
        }
    CHECK(run_mask(MaskParams{}, RunContext{}).find_check("multiply_cannot_mask") == nullptr);  // only with --multiply
}

TEST_CASE("run_mask: the -1e9 fill is -inf in float16 (§5.3's claim fails), a fill of -1e4 is not")
{
    MaskParams p;
    p.fill = "-1e9";
    const Check big = find_check(run_mask(p, RunContext{}), "minus_1e9_avoids_fp16_overflow");
    CHECK(big.role == Role::article);
    CHECK(std::isinf(big.measured));
    CHECK_FALSE(big.passed());
    CHECK(big.metric.find("bfloat16 keeps -998244352") != std::string::npos);
    p.fill = "-1e4";
    const Check small = find_check(run_mask(p, RunContext{}), "minus_1e9_avoids_fp16_overflow");
    CHECK(small.measured == 10000.0);
    CHECK(small.passed());
    p.fill = "-inf";
    CHECK(run_mask(p, RunContext{}).find_check("minus_1e9_avoids_fp16_overflow") == nullptr);
}

TEST_CASE("run_mask: §5.3's 'exp(-inf) overflows in fp16' is refuted: it is 0, and the NaN is (-inf) - (-inf)")
{
    MaskParams p;
    p.kind = MaskKind::both;
    p.lengths = {3, 0};
    const Check c = find_check(run_mask(p, RunContext{}), "nan_from_exp_overflow");
    CHECK(c.role == Role::article);
    CHECK(c.measured == 0.0);  // exp(-inf) in float16
    CHECK_FALSE(c.passed());
    CHECK(c.metric.find("(-inf) - (-inf) = nan") != std::string::npos);
    p.fill = "-1e9";  // a finite fill: the claim is not about it
    CHECK(run_mask(p, RunContext{}).find_check("nan_from_exp_overflow") == nullptr);
    CHECK(run_mask(MaskParams{}, RunContext{}).find_check("nan_from_exp_overflow") == nullptr);  // no row is fully masked
}

TEST_CASE("run_mask: input errors")
{
    RunContext ctx;
    MaskParams p;
    p.lengths = {3};
    CHECK_THROWS_WITH_AS(run_mask(p, ctx), doctest::Contains("makes no sense with --kind causal"), InputError);
    p.kind = MaskKind::padding;
    p.lengths = {};
    CHECK_THROWS_WITH_AS(run_mask(p, ctx), doctest::Contains("needs --lengths"), InputError);
    p.lengths = {3, 9};
    p.len = 5;
    CHECK_THROWS_WITH_AS(run_mask(p, ctx), doctest::Contains("--lengths has 9"), InputError);
    p.lengths = {3, -1};
    CHECK_THROWS_WITH_AS(run_mask(p, ctx), doctest::Contains("must not be negative"), InputError);
    MaskParams w;
    w.kind = MaskKind::window;
    CHECK_THROWS_WITH_AS(run_mask(w, ctx), doctest::Contains("needs --window"), InputError);
    w.window = 0;
    CHECK_THROWS_WITH_AS(run_mask(w, ctx), doctest::Contains("--window must be at least 1"), InputError);
    CHECK_THROWS_AS(parse_fill("nan"), InputError);
    CHECK_THROWS_AS(parse_fill("inf"), InputError);
    CHECK_THROWS_AS(parse_fill("abc"), InputError);
    CHECK(parse_fill("-inf") == -kInf);
    CHECK(parse_fill("-1e9") == -1e9);
}

TEST_CASE("run_mask: §5.3's 'True = masked' holds only when there is nothing to mask")
{
    MaskParams p;
    p.kind = MaskKind::padding;
    p.lengths = {2, 4};
    const Check wrong = find_check(run_mask(p, RunContext{}), "sdpa_bool_true_masks");
    CHECK_FALSE(wrong.passed());
    CHECK(wrong.measured == doctest::Approx(1.0));  // all the weight on the padding
    p.lengths = {4, 4};  // no padding anywhere: no padded key to put weight on
    CHECK(find_check(run_mask(p, RunContext{}), "sdpa_bool_true_masks").passed());
}

TEST_CASE("run_mask: the API list's 'nn.Transformer's src_mask is the causal mask' is refuted by PyTorch's own module (embedded fixture)")
{
    // Figures worked out from data/fixtures/nn_transformer_src_mask.npy with numpy:
    // max |memory(src') - memory(src)| over rows 0..3 is 0.5406176399983829 with the default
    // masks, and 0 with src_mask = generate_square_subsequent_mask(5) passed.
    const Check c = find_check(run_mask(MaskParams{}, RunContext{}), "transformer_src_mask_default");
    CHECK(c.role == Role::article);
    CHECK(c.measured == doctest::Approx(0.5406176399983829).epsilon(1e-15));
    CHECK(c.tolerance == 0.0);
    CHECK_FALSE(c.passed());
    CHECK(c.metric.find("with src_mask = the causal mask passed: 0)") != std::string::npos);
    MaskParams padding;
    padding.kind = MaskKind::padding;
    padding.lengths = {2, 3};
    CHECK(run_mask(padding, RunContext{}).find_check("transformer_src_mask_default") == nullptr);
}

TEST_CASE("run_mask: --kind both also gives sdpa_mask_bool, Hugging Face's combined boolean: padding and the triangle, true = may attend")
{
    MaskParams p;
    p.kind = MaskKind::both;
    p.lengths = {3, 2};
    const Report r = run_mask(p, RunContext{});
    CHECK(find_check(r, "sdpa_mask_is_the_whole_mask").passed());
    const Tensor* sdpa = r.find("sdpa_mask_bool");
    REQUIRE(sdpa != nullptr);
    CHECK(sdpa->shape == std::vector<std::size_t>{2, 1, 3, 3});
    CHECK(sdpa->axes == std::vector<std::string>{"batch", "head", "query", "key"});
    // worked out by hand: sequence 0 (length 3) is the causal triangle; sequence 1 (length 2)
    // also hides key 2 from every query
    const std::vector<double> expected{1, 0, 0, 1, 1, 0, 1, 1, 1,   //
                                       1, 0, 0, 1, 1, 0, 1, 1, 0};
    CHECK(std::vector<double>(sdpa->values.begin(), sdpa->values.end()) == expected);
    // padding alone has no triangle to combine: attn_mask_bool is the whole mask there
    p.kind = MaskKind::padding;
    CHECK(run_mask(p, RunContext{}).find("sdpa_mask_bool") == nullptr);
}

TEST_CASE("run_mask: --window-convention hf2024 shows W + 1 keys (Hugging Face's 2024 _make_causal_mask), keys shows W")
{
    MaskParams p;
    p.kind = MaskKind::window;
    p.window = 2;
    p.len = 5;
    p.window_convention = WindowConvention::hf2024;
    const Report r = run_mask(p, RunContext{});
    CHECK(r.passed());
    // by hand: query i sees keys i-2..i (0 keeps, -inf hides)
    const double X = -std::numeric_limits<double>::infinity();
    const std::vector<double> hf2024{0, X, X, X, X,  //
                                     0, 0, X, X, X,  //
                                     0, 0, 0, X, X,  //
                                     X, 0, 0, 0, X,  //
                                     X, X, 0, 0, 0};
    CHECK(std::vector<double>(r.find("mask")->values.begin(), r.find("mask")->values.end()) == hf2024);
    CHECK(find_check(r, "visible_keys_per_row").claim.find("min(i+1, 3)") != std::string::npos);
    CHECK(has_note(r, {"W + 1 = 3 keys, i-2..i"}));
    // the same W under the keys rule: i-1..i, and that mask held against the hf2024 run fails
    p.window_convention = WindowConvention::keys;
    const Report keys = run_mask(p, RunContext{});
    const Tensor* m2 = keys.find("mask");
    CHECK(m2->values[3 * 5 + 1] == X);
    CHECK(m2->values[3 * 5 + 2] == 0.0);
    // held to the hf2024 rule, the keys mask shows every row from 2 on one key too few
    MaskSpec hf;
    hf.kind = MaskKind::window;
    hf.queries = hf.keys = 5;
    hf.window = window_keys(2, WindowConvention::hf2024);
    CHECK(hf.window == 3);
    CHECK(rows_with_wrong_visibility(*m2, hf) == 3);
}

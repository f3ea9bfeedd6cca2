#include "attnlab/experiments/nope.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace attnlab;

namespace {

Report nope(long len, MaskKind mask, DType dtype = DType::float32)
{
    NopeParams p;
    p.len = len;
    p.mask = mask;
    RunContext ctx;
    ctx.dtype = dtype;
    return run_nope(p, ctx);
}

}  // namespace

TEST_CASE("run_nope: out_i = 1/(i+1) under the causal mask and 1/L without it, in every dtype")
{
    for (DType dtype : {DType::float64, DType::float32, DType::float16, DType::bfloat16}) {
        CAPTURE(name_of(dtype));
        const Report causal = nope(7, MaskKind::causal, dtype);
        check_invariants_hold(causal, {"weights_uniform_over_visible", "out_closed_form", "position_readable_from_output",
                                       "no_pe_is_bag_of_words_causal"});
        const Tensor& out = *causal.find("out");
        for (std::size_t i = 0; i < 7; ++i) CHECK(out.values[i] == doctest::Approx(1.0 / double(i + 1)).epsilon(0.004));
        const Tensor& w = *causal.find("weights");
        CHECK(w.values[0 * 7 + 1] == 0.0);  // masked weights are exactly 0
        CHECK(w.values[6 * 7 + 6] == doctest::Approx(1.0 / 7.0).epsilon(0.004));
        const Report none = nope(7, MaskKind::none, dtype);
        check_invariants_hold(none, {"weights_uniform_over_visible", "out_closed_form", "no_pe_is_bag_of_words_bidirectional"});
        for (double v : none.find("out")->values) CHECK(v == doctest::Approx(1.0 / 7.0).epsilon(0.004));
    }
}

TEST_CASE("run_nope: 'no PE means a bag of words' holds without a mask and is refuted under the causal mask, one claim shared with permute-test")
{
    const Check causal = find_check(nope(6, MaskKind::causal, DType::float64), "no_pe_is_bag_of_words_causal");
    CHECK(causal.role == Role::article);
    // reversing v = e_0 gives out(Pv) = (0, ..., 0, 1/6) against P out(v) = (1/6, 1/5, ..., 1/2, 1):
    // the largest gap is the last, |1/6 - 1| = 5/6
    CHECK(causal.measured == doctest::Approx(5.0 / 6.0).epsilon(1e-15));
    CHECK_FALSE(causal.passed());
    const Check none = find_check(nope(6, MaskKind::none, DType::float64), "no_pe_is_bag_of_words_bidirectional");
    CHECK(none.measured < 1e-15);
    CHECK(none.passed());
    CHECK(none.claim.find("bag of words (§1, FAQ Q5)") != std::string::npos);
}

TEST_CASE("run_nope: a 16-bit output stops telling neighbouring positions apart (PyTorch: 74 ties at L = 400 in bfloat16, 0 in float16)")
{
    // Counted with PyTorch 1.13: softmax of a causal [400, 400] zero matrix, .bfloat16(), the
    // positions i with w[i, 0] <= w[i + 1, 0].
    const Check bf = find_check(nope(400, MaskKind::causal, DType::bfloat16), "position_readable_from_output");
    CHECK(bf.role == Role::demonstration);
    CHECK(bf.measured == 74.0);
    CHECK_FALSE(bf.passed());
    CHECK(find_check(nope(400, MaskKind::causal, DType::float16), "position_readable_from_output").measured == 0.0);
    CHECK(nope(400, MaskKind::causal, DType::bfloat16).passed());  // a demonstration never decides
}

TEST_CASE("nope: each doctored tensor fails the checks that read it, and the mistakes are the ones named")
{
    const auto& e = nope_experiment();
    NopeParams p;
    RunContext ctx;
    ctx.dtype = DType::float64;
    Run run = compute_all(e, p, ctx);
    auto failed = [&] { return failed_checks(check_run(e, p, run, ctx)); };
    const auto before = failed();  // the article's claim, refuted
    CHECK(before == std::vector<std::string>{"no_pe_is_bag_of_words_causal"});
    Tensor out = tensor_of(run, "out");
    tensor_of(run, "out").values.wide()[3] = 0.3;  // 1/4 expected
    CHECK(failed() == std::vector<std::string>{"out_closed_form", "no_pe_is_bag_of_words_causal"});
    tensor_of(run, "out").values.wide()[3] = tensor_of(run, "out").values[4];  // a tie: the demonstration turns
    const auto tie = check_run(e, p, run, ctx);
    CHECK(find_check(tie, "position_readable_from_output").measured == 1.0);
    replace_tensor(run, out);
    tensor_of(run, "weights").values.wide()[1] = 0.25;  // a future key seen
    CHECK(failed() == std::vector<std::string>{"weights_uniform_over_visible", "no_pe_is_bag_of_words_causal"});
    // the mistakes as the catalogue builds them
    for (const auto& m : e.mistakes) {
        const Tensor t = m.build(p, run);
        if (m.tensor != "out") continue;
        CAPTURE(m.id);
        if (m.id == "mask_ignored") CHECK(t.values == std::vector<double>(6, 1.0 / 6.0));
        if (m.id == "diagonal_masked") {
            CHECK(std::isnan(t.values[0]));
            CHECK(t.values[1] == 1.0);
            CHECK(t.values[5] == 0.2);
        }
    }
}

TEST_CASE("nope: a planted error of 0.02 in one output fails out_closed_form in every dtype")
{
    const auto& e = nope_experiment();
    for (DType dtype : {DType::float64, DType::float32, DType::float16, DType::bfloat16}) {
        CAPTURE(name_of(dtype));
        NopeParams p;
        RunContext ctx;
        ctx.dtype = dtype;
        Run run = compute_all(e, p, ctx);
        tensor_of(run, "out").values.wide()[3] += 0.02;  // 1/4 expected
        const Check c = find_check(check_run(e, p, run, ctx), "out_closed_form");
        CHECK(c.tolerance < 0.02);
        CHECK_FALSE(c.passed());
    }
}

TEST_CASE("run_nope: input errors and the command that reproduces a run")
{
    NopeParams p;
    p.len = 0;
    CHECK_THROWS_AS(run_nope(p, RunContext{}), InputError);
    p.len = 9;
    p.mask = MaskKind::none;
    CHECK(nope_command(p) == std::vector<std::string>{"nope", "--len", "9", "--mask", "none"});
}

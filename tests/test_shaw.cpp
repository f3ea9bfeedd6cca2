#include "attnlab/core/measure.hpp"
#include "attnlab/experiments/shaw.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>
#include <xtensor/xnpy.hpp>

#include <cmath>

using namespace attnlab;

namespace {

Tensor fixture(const std::string& name)
{
    const xt::xarray<double> a = xt::load_npy<double>(std::string(ATTNLAB_DATA_DIR) + "/fixtures/shaw_" + name + ".npy");
    return tt(a);
}

// data/make_fixtures.py shaw_fixtures: B 1, L 5, E 8, H 2, K 2, and its inputs.
std::pair<ShawParams, RunContext> fixture_run(MaskKind mask, DType dtype)
{
    ShawParams p;
    p.len = 5, p.dim = 8, p.heads = 2, p.clip = 2, p.mask = mask;
    RunContext ctx;
    ctx.dtype = dtype;
    for (const char* name : {"x", "w_q", "w_k", "w_v", "rel_k", "rel_v"}) ctx.inputs[name] = fixture(name);
    return {p, ctx};
}

}  // namespace

TEST_CASE("run_shaw: scores and out match PyTorch written from the paper's equations, with and without the causal mask")
{
    for (MaskKind mask : {MaskKind::none, MaskKind::causal}) {
        const std::string tag = mask == MaskKind::none ? "none" : "causal";
        CAPTURE(tag);
        for (DType dtype : {DType::float64, DType::float32}) {
            CAPTURE(name_of(dtype));
            const auto [p, ctx] = fixture_run(mask, dtype);
            const Report r = run_shaw(p, ctx);
            CHECK(r.passed());
            const double tol = dtype == DType::float64 ? 1e-14 : 2e-6;
            const Tensor scores = fixture("scores_" + tag), out = fixture("out_" + tag);
            CHECK(max_abs_diff(*r.find("scores"), scores) <= tol);
            CHECK(max_abs_diff(*r.find("out"), out) <= tol);
        }
    }
}

TEST_CASE("run_shaw: rel_index is clip(j - i, -K, K) + K, worked by hand, and every check holds in every dtype")
{
    for (DType dtype : {DType::float64, DType::float32, DType::float16, DType::bfloat16}) {
        CAPTURE(name_of(dtype));
        ShawParams p;
        p.mask = MaskKind::causal;
        RunContext ctx;
        ctx.dtype = dtype;
        const Report r = run_shaw(p, ctx);
        check_invariants_hold(r, {"rel_index_depends_on_offset_only", "rel_index_is_clipped_offset", "beyond_clip_share_a_row",
                                  "scores_match_definition", "rows_sum_to_one", "masked_weights_exactly_zero", "out_matches_definition",
                                  "equivariance_breaks"});
        const Tensor& index = *r.find("rel_index");
        // row 3 of L = 6, K = 2: j - i = -3 .. 2 clipped to -2 .. 2, plus 2
        std::vector<double> row3;
        for (std::size_t j = 0; j < 6; ++j) row3.push_back(index.values[3 * 6 + j]);
        CHECK(row3 == std::vector<double>{0, 0, 1, 2, 3, 4});
        CHECK(find_check(r, "equivariance_breaks").passed());
    }
}

TEST_CASE("shaw: each doctored tensor and each usual mistake fails the checks that read it")
{
    const auto& e = shaw_experiment();
    ShawParams p;
    RunContext ctx;
    Run run = compute_all(e, p, ctx);
    auto failed = [&] { return failed_checks(check_run(e, p, run, ctx)); };
    CHECK(failed().empty());
    const Run clean = run;
    tensor_of(run, "scores").values.wide()[7] += 0.01;
    CHECK(failed() == std::vector<std::string>{"scores_match_definition"});
    run = clean;
    tensor_of(run, "out").values.wide()[3] += 0.01;
    CHECK(failed() == std::vector<std::string>{"out_matches_definition"});
    std::map<std::string, std::vector<std::string>> expected{
        {"rel_index", {"rel_index_is_clipped_offset", "beyond_clip_share_a_row"}},  // i - j is still Toeplitz
        {"scores", {"scores_match_definition"}},
        {"out", {"out_matches_definition"}}};
    for (const auto& m : e.mistakes) {
        CAPTURE(m.id);
        CAPTURE(m.tensor);
        run = clean;
        Tensor wrong = m.build(p, run);
        CHECK(max_abs_diff(wrong, clean.at(m.tensor)) > 0.05);
        wrong.elem = clean.at(m.tensor).elem;
        replace_tensor(run, wrong);
        // Reading the table at i - j on X is reading it at j - i on the reversed input, reversed
        // back: the flipped output is exactly P Attn(PX), so the demonstration turns too.
        auto names = expected[m.tensor];
        if (m.id == "rel_index_i_minus_j" && m.tensor == "out") names.push_back("equivariance_breaks");
        CHECK(failed() == names);
    }
    // zero tables: plain attention again, and the demonstration is not shown
    RunContext zero = ctx;
    zero.inputs["rel_k"] = Tensor{"rel_k", {"rel", "dim"}, Elem::float64, {5, 4}, std::vector<double>(20, 0.0)};
    zero.inputs["rel_v"] = Tensor{"rel_v", {"rel", "dim"}, Elem::float64, {5, 4}, std::vector<double>(20, 0.0)};
    CHECK_FALSE(find_check(run_shaw(p, zero), "equivariance_breaks").passed());
}

TEST_CASE("run_shaw: input errors and the command that reproduces a run")
{
    ShawParams p;
    p.dim = 9;
    CHECK_THROWS_AS(run_shaw(p, RunContext{}), InputError);
    p.dim = 8;
    p.clip = 4;
    p.mask = MaskKind::causal;
    CHECK(shaw_command(p) == std::vector<std::string>{"shaw", "--clip", "4", "--mask", "causal"});
}

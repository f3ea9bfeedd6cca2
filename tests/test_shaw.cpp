#include "attnlab/core/measure.hpp"
#include "attnlab/experiments/shaw.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>
#include <xtensor/xnpy.hpp>

#include <algorithm>
#include <cmath>

using namespace attnlab;

namespace {

Tensor shaw_fixture(const std::string& name)
{
    const xt::xarray<double> a = xt::load_npy<double>(fixture_path("shaw_" + name));
    return tt(a);
}

// data/make_fixtures.py shaw_fixtures: B 1, L 5, E 8, H 2, K 2, and its inputs.
std::pair<ShawParams, RunContext> fixture_run(MaskKind mask, DType dtype)
{
    ShawParams p;
    p.len = 5, p.dim = 8, p.heads = 2, p.clip = 2, p.mask = mask;
    RunContext ctx;
    ctx.dtype = dtype;
    for (const char* name : {"x", "w_q", "w_k", "w_v", "rel_k", "rel_v"}) ctx.inputs[name] = shaw_fixture(name);
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
            const Tensor scores = shaw_fixture("scores_" + tag), out = shaw_fixture("out_" + tag);
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

TEST_CASE("run_shaw --kv-len: L queries after a cache read clip(j - (S - L + i)) and give the last L rows of the full pass")
{
    ShawParams block;
    block.len = 2, block.kv_len = 4, block.clip = 1;
    RunContext ctx;
    ctx.dtype = DType::float64;
    const Report r = run_shaw(block, ctx);
    // queries at positions 2 and 3: distances -2, -1, 0, 1 and -3, -2, -1, 0, clipped to 1, plus 1
    CHECK(r.find("rel_index")->values.to_vector() == std::vector<double>{0, 0, 1, 2, 0, 0, 0, 1});
    CHECK(r.find("rel_index")->shape == std::vector<std::size_t>{2, 4});
    CHECK(r.find("out_perm") == nullptr);  // a block after a cache has no reversal of its own
    CHECK(r.passed());
    for (MaskKind mask : {MaskKind::none, MaskKind::causal}) {
        CAPTURE(static_cast<int>(mask));
        block.mask = mask;
        ShawParams full;
        full.len = 4, full.clip = 1, full.mask = mask;
        const Report b = run_shaw(block, ctx), f = run_shaw(full, ctx);
        CHECK(b.passed());
        // [1, 2, 2, 4] against rows 2..3 of [1, 2, 4, 4]; out [1, 2, 2, 4] against rows 2..3 of [1, 2, 4, 4]
        const auto bs = b.find("scores")->values.to_vector(), fs = f.find("scores")->values.to_vector();
        const auto bo = b.find("out")->values.to_vector(), fo = f.find("out")->values.to_vector();
        for (std::size_t h = 0; h < 2; ++h)
            for (std::size_t i = 0; i < 2; ++i)
                for (std::size_t c = 0; c < 4; ++c) {
                    const double got = bs[(h * 2 + i) * 4 + c], want = fs[(h * 4 + 2 + i) * 4 + c];  // -inf where masked, in both
                    CHECK((std::isinf(want) ? got == want : got == doctest::Approx(want).epsilon(1e-13)));
                    CHECK(bo[(h * 2 + i) * 4 + c] == doctest::Approx(fo[(h * 4 + 2 + i) * 4 + c]).epsilon(1e-13));
                }
    }
    // The mistake read at i - j fails the index checks on the rectangle too (it is still
    // constant along diagonals: the mirror of a distance is a distance).
    const auto& e = shaw_experiment();
    block.mask = MaskKind::none;
    Run run = compute_all(e, block, RunContext{});
    const auto m = std::find_if(e.mistakes.begin(), e.mistakes.end(), [](const auto& x) { return x.id == "rel_index_i_minus_j" && x.tensor == "rel_index"; });
    REQUIRE(m != e.mistakes.end());
    replace_tensor(run, m->build(block, run));
    CHECK(failed_checks(check_run(e, block, run, RunContext{})) == std::vector<std::string>{"rel_index_is_clipped_offset", "beyond_clip_share_a_row"});
    block.kv_len = 1;
    CHECK_THROWS_WITH_AS(run_shaw(block, ctx), "--kv-len 1 is below --len 2: the queries are the last L of the S positions", InputError);
}

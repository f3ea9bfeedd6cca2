#include "attnlab/experiments/learned.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace attnlab;

namespace {

// len 3, max_len 4, dim 2: x = [[10, 20], [30, 40], [50, 60]] and the given table.
RunContext given(std::vector<double> table, DType dtype = DType::float64)
{
    RunContext ctx;
    ctx.dtype = dtype;
    ctx.inputs["x"] = Tensor{"x", {"batch", "pos", "dim"}, Elem::float64, {1, 3, 2}, {10, 20, 30, 40, 50, 60}};
    ctx.inputs["pos_emb"] = Tensor{"pos_emb", {"pos", "dim"}, Elem::float64, {4, 2}, std::move(table)};
    return ctx;
}

LearnedParams small()
{
    LearnedParams p;
    p.len = 3;
    p.max_len = 4;
    p.dim = 2;
    return p;
}

}  // namespace

TEST_CASE("run_learned: x_pe = x + pos_emb[:L], worked by hand, and the dots of a table that depend on the position are shown")
{
    // rows 0..3 of the table: [1, 0], [0, 2], [3, 0], [0, 0]
    const Report r = run_learned(small(), given({1, 0, 0, 2, 3, 0, 0, 0}));
    check_invariants_hold(r, {"x_pe_is_x_plus_table", "learned_dots_depend_on_position", "learned_has_no_linear_shift",
                              "sinusoidal_dots_depend_on_offset_only"});
    CHECK(r.find("x_pe")->values == std::vector<double>{11, 20, 30, 42, 53, 60});
    CHECK(r.find("x_pe")->shape == std::vector<std::size_t>{1, 3, 2});
    // k = 1: dots 0, 0, 0; k = 2: row0.row2 = 3, row1.row3 = 0; k = 3: one pair. Spread 3.
    const Check dots = find_check(r, "learned_dots_depend_on_position");
    CHECK(dots.role == Role::demonstration);
    CHECK(dots.measured == 3.0);
    CHECK(dots.passed());
    // The best linear map from rows 0..2 to rows 1..3: columns (1, 0, 3), (0, 2, 0) span the
    // target (0, 3, 0) and leave (1.8, 0, -0.6) of (2, 0, 0); sqrt(3.6 / 13) of the whole.
    const Check fit = find_check(r, "learned_has_no_linear_shift");
    CHECK(fit.measured == doctest::Approx(std::sqrt(3.6 / 13.0)).epsilon(1e-14));
    CHECK(fit.claim.find("4 rows of 2: more than D + 1 rows") != std::string::npos);
    CHECK(fit.passed());
}

TEST_CASE("run_learned: a table whose dots depend on k alone (a rotation, as sinusoidal PE) is not shown as learned-like")
{
    // [1, 0], [0, 1], [-1, 0], [0, -1]: row p . row p+1 = 0 and row p . row p+2 = -1 for every p
    const Check dots = find_check(run_learned(small(), given({1, 0, 0, 1, -1, 0, 0, -1})), "learned_dots_depend_on_position");
    CHECK(dots.measured == 0.0);
    CHECK_FALSE(dots.passed());
}

TEST_CASE("run_learned: a table of at most D + 1 rows always has a linear map from each row to the next, so 'no M(k)' is not shown there")
{
    LearnedParams p;
    p.max_len = 9;  // 8 steps in 8 dimensions
    const Check fit = find_check(run_learned(p, RunContext{}), "learned_has_no_linear_shift");
    CHECK(fit.measured < 1e-12);
    CHECK_FALSE(fit.passed());
    p.max_len = 10;
    CHECK(find_check(run_learned(p, RunContext{}), "learned_has_no_linear_shift").measured > 0.1);
}

TEST_CASE("run_learned: past max_len the table has no row: x_pe holds the first M positions, a demonstration and a note say so")
{
    for (DType dtype : {DType::float64, DType::float32, DType::float16, DType::bfloat16}) {
        CAPTURE(name_of(dtype));
        LearnedParams p;
        p.len = 20;
        p.max_len = 16;
        p.batch = 2;
        RunContext ctx;
        ctx.dtype = dtype;
        const Report r = run_learned(p, ctx);
        CHECK(r.passed());
        CHECK(r.find("x_pe")->shape == std::vector<std::size_t>{2, 16, 8});
        const Check past = find_check(r, "learned_table_stops_at_max_len");
        CHECK(past.role == Role::demonstration);
        CHECK(past.measured == 4.0);
        CHECK(past.passed());
        CHECK(past.claim.find("position 16 has no row") != std::string::npos);
        REQUIRE(r.notes.size() == 1);
        CHECK(r.notes[0].find("the first 16 of the 20 positions") != std::string::npos);
        CHECK(r.notes[0].find("IndexError: index out of range in self") != std::string::npos);  // PyTorch 1.13's words
    }
}

TEST_CASE("learned: each doctored tensor fails the check that reads it, in every dtype, and the mistakes are built as named")
{
    const auto& e = learned_experiment();
    for (DType dtype : {DType::float64, DType::float32, DType::float16, DType::bfloat16}) {
        CAPTURE(name_of(dtype));
        LearnedParams p;
        p.max_len = 32;
        RunContext ctx;
        ctx.dtype = dtype;
        Run run = compute_all(e, p, ctx);
        auto failed = [&] { return failed_checks(check_run(e, p, run, ctx)); };
        CHECK(failed().empty());
        tensor_of(run, "x_pe").values.wide()[5] += 0.1;
        CHECK(failed() == std::vector<std::string>{"x_pe_is_x_plus_table"});
        tensor_of(run, "x_pe").values.wide()[5] -= 0.1;
        if (dtype == DType::bfloat16) continue;  // the sinusoidal comparison is untestable there
        tensor_of(run, "pe").values.wide()[8 * 3 + 1] += 0.1;
        CHECK(failed() == std::vector<std::string>{"sinusoidal_dots_depend_on_offset_only"});
    }
    const LearnedParams p = small();
    const RunContext ctx = given({1, 0, 0, 2, 3, 0, 0, 0});
    const Run run = compute_all(e, p, ctx);
    for (const auto& m : e.mistakes) {
        CAPTURE(m.id);
        const Tensor t = m.build(p, run);
        if (m.id == "positions_from_1") CHECK(t.values == std::vector<double>{10, 22, 33, 40, 50, 60});
        if (m.id == "table_not_added") CHECK(t.values == std::vector<double>{10, 20, 30, 40, 50, 60});
    }
    LearnedParams full = small();
    full.len = 4;  // every row used: position L would need row 4, which does not exist
    RunContext four;
    CHECK(e.mistakes[0].build(full, compute_all(e, full, four)).values.empty());
}

TEST_CASE("run_learned: input errors and the command that reproduces a run")
{
    LearnedParams p;
    p.dim = 7;
    CHECK_THROWS_AS(run_learned(p, RunContext{}), InputError);
    p.dim = 8;
    p.len = 20;
    p.max_len = 16;
    CHECK(learned_command(p) == std::vector<std::string>{"learned", "--len", "20"});
}

#include "attnlab/render.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

using namespace attnlab;

namespace {

Report small_report()
{
    RunContext ctx;
    Recorder rec("demo", "m", ctx);
    Mat<double> m = {{0.5, -std::numeric_limits<double>::infinity()},
                     {std::numeric_limits<double>::quiet_NaN(), 2.0}};
    rec.tensor("m", {"query", "key"}, m, Elem::float64);
    Vec<float> f = {0.1f, 1.0f};
    rec.tensor("f", {"pair"}, f, Elem::float32);
    Vec<int> b = {1, 0};
    rec.tensor("b", {"key"}, b, Elem::boolean);
    rec.check({"ok", "a claim", "max |x|", 1e-7, 1e-5});
    rec.check({"bad", "another", "max |y|", 0.5, 1e-5});
    rec.check({"art", "an article says", "leak", 0.3, 0.01, Compare::le, Role::article});
    return rec.finish();
}

}  // namespace

TEST_CASE("checks: verdicts, NaN never passes, --tol replaces only numeric upper bounds")
{
    CHECK(Check{"a", "", "", 1.0, 1.0, Compare::le}.passed());
    CHECK_FALSE(Check{"a", "", "", 1.0, 1.0, Compare::lt}.passed());
    CHECK(Check{"a", "", "", 2.0, 1.0, Compare::gt}.passed());
    CHECK_FALSE(Check{"a", "", "", std::nan(""), 1.0, Compare::le}.passed());
    CHECK_FALSE(Check{"a", "", "", std::nan(""), 1.0, Compare::gt}.passed());

    RunContext ctx;
    ctx.tol = 0.25;
    Recorder rec("demo", "m", ctx);
    rec.check({"n", "", "", 0.1, 1e-9});
    rec.check({"f", "", "", 0.1, 1.0, Compare::le, Role::invariant, TolKind::fixed});
    rec.check({"g", "", "", 0.1, 0.0, Compare::gt});
    const Report r = rec.finish();
    CHECK(r.checks[0].tolerance == 0.25);
    CHECK(r.checks[1].tolerance == 1.0);
    CHECK(r.checks[2].tolerance == 0.0);
}

TEST_CASE("a report passes when its invariants pass and article claims do not decide it")
{
    Report r = small_report();
    CHECK_FALSE(r.passed());  // "bad" fails
    r.checks.erase(r.checks.begin() + 1);
    CHECK(r.passed());        // "art" is wrong but is an article's claim
}

TEST_CASE("check lines carry the measured figure, the comparison and the tolerance")
{
    const Report r = small_report();
    CHECK(check_line(r.checks[0], false) == "PASS  a claim: max |x| = 1e-07 <= 1e-05");
    CHECK(check_line(r.checks[1], false) == "FAIL  another: max |y| = 0.5 <= 1e-05");
    CHECK(check_line(r.checks[2], false) ==
          "WRONG an article says (article's claim): leak = 0.3 <= 0.01");
}

TEST_CASE("CSV is tidy long form with non-finite spellings and a wide form for rank 2")
{
    const Report r = small_report();
    RenderOptions o;
    o.format = Format::csv;
    CHECK(render(r, o) == "query,key,value\n0,0,0.5\n0,1,-inf\n1,0,nan\n1,1,2\n");
    o.wide = true;
    CHECK(render(r, o) == "query,k0,k1\n0,0.5,-inf\n1,nan,2\n");
    o.wide = false;
    o.tensor = "f";
    CHECK(render(r, o) == "pair,value\n0,0.1\n1,1\n");
    o.tensor = "b";
    CHECK(render(r, o) == "key,value\n0,1\n1,0\n");
    o.tensor = "nope";
    CHECK_THROWS_AS(render(r, o), InputError);
    o.tensor = "f";
    o.wide = true;
    CHECK_THROWS_AS(render(r, o), InputError);
}

TEST_CASE("JSON has the contract's keys, shortest float32 values and non-finite strings")
{
    const auto j = to_json(small_report(), true);
    CHECK(j["command"] == "demo");
    CHECK(j["tensors"][0]["name"] == "m");
    CHECK(j["tensors"][0]["shape"] == nlohmann::json::array({2, 2}));
    CHECK(j["tensors"][0]["axes"] == nlohmann::json::array({"query", "key"}));
    CHECK(j["tensors"][0]["data"][0][1] == "-inf");
    CHECK(j["tensors"][0]["data"][1][0] == "nan");
    CHECK(j["tensors"][1]["data"].dump() == "[0.1,1.0]");
    CHECK(j["tensors"][2]["data"].dump() == "[true,false]");
    CHECK(j["checks"][1]["passed"] == false);
    CHECK(j["checks"][2]["role"] == "article");
    CHECK(j["passed"] == false);
}

TEST_CASE("text output names shape and axes, and summarises large tensors")
{
    RunContext ctx;
    Recorder rec("demo", "big", ctx);
    Mat<double> big = xt::zeros<double>({std::size_t{40}, std::size_t{40}});
    big(39, 39) = 1.5;
    rec.tensor("big", {"row", "col"}, big, Elem::float64);
    const Report r = rec.finish();
    RenderOptions o;
    const std::string text = render(r, o);
    CHECK(text.find("big  shape [40, 40]  (row, col)  float64\n") == 0);
    CHECK(text.find("...") != std::string::npos);
    CHECK(text.find("1.5000") != std::string::npos);
    o.full = true;
    const std::string full = render(r, o);
    CHECK(full.find("...") == std::string::npos);
}

TEST_CASE("text output of rank 3 heads each matrix with its leading index")
{
    RunContext ctx;
    Recorder rec("demo", "t", ctx);
    Ten3<double> t = xt::zeros<double>({std::size_t{2}, std::size_t{1}, std::size_t{2}});
    t(1, 0, 1) = 3;
    rec.tensor("t", {"batch", "query", "key"}, t, Elem::float64);
    const std::string text = render(rec.finish(), RenderOptions{});
    CHECK(text == "t  shape [2, 1, 2]  (batch, query, key)  float64\n"
                  "  [batch=0]\n   0 0\n  [batch=1]\n   0 3\n\n");
}

TEST_CASE("memory guard refuses before allocating, naming the size")
{
    RunContext ctx;
    ctx.max_memory_bytes = 1024;
    CHECK_NOTHROW(require_memory(1000, ctx, "x"));
    CHECK_THROWS_WITH_AS(require_memory(4096, ctx, "x [32, 32]"),
                         doctest::Contains("needs about 4.0 KiB (x [32, 32])"), InputError);
}

TEST_CASE("--show names a tensor the command does not make: usage error listing what it makes")
{
    RunContext ctx;
    ctx.show = {"nope"};
    Recorder rec("demo", "m", ctx);
    CHECK_FALSE(rec.wants("m"));
    CHECK_THROWS_WITH_AS(rec.finish(), "unknown tensor 'nope' for demo; it produces: m", InputError);
}

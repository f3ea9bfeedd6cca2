#include "cli_support.hpp"

#include <doctest/doctest.h>

TEST_CASE("rope: default run passes, and dots in wide CSV has one row per query")
{
    CHECK(run_cli({"rope", "--quiet"}).status == 0);
    const auto r = run_cli({"rope", "--len", "4", "--format", "csv", "--tensor", "dots", "--wide"});
    CHECK(r.status == 0);
    CHECK(r.out.rfind("query,k0,k1,k2,k3\n", 0) == 0);
    CHECK(count_lines(r.out) == 5);
}

TEST_CASE("rope: every scaling method in JSON shows theta beside theta_unscaled")
{
    for (auto args : std::vector<std::vector<std::string>>{
             {"--scaling", "linear", "--factor", "2"},
             {"--scaling", "ntk", "--factor", "2"},
             {"--scaling", "dynamic", "--factor", "2", "--original-len", "4"},
             {"--scaling", "yarn", "--factor", "2", "--original-len", "4"},
             {"--scaling", "llama3", "--factor", "8", "--original-len", "4"}}) {
        std::vector<std::string> cmd = {"rope", "--dim", "16", "--show", "theta,theta_unscaled"};
        cmd.insert(cmd.end(), args.begin(), args.end());
        const auto j = run_json(cmd);
        CAPTURE(args[1]);
        CHECK(j["passed"] == true);
        CHECK(j["tensors"].size() == 2);
        CHECK(j["params"]["scaling"] == args[1]);
    }
    const auto y = run_json({"rope", "--scaling", "yarn", "--factor", "4", "--original-len", "16", "--quiet"});
    CHECK(y["params"]["attention_factor"] == doctest::Approx(1.1386294));
}

TEST_CASE("rope: --example prints the articles' rows")
{
    const auto r = run_cli({"rope", "--example", "--show", "q_rot"});
    CHECK(r.status == 0);
    CHECK(r.out.find("    0.5403  0.8415  0.9999  0.0100\n") != std::string::npos);
}

TEST_CASE("rope: errors")
{
    expect_usage_error({"rope", "--dim", "7"}, "--dim must be even");
    expect_usage_error({"rope", "--base", "0"}, "--base");
    expect_usage_error({"rope", "--len", "0"}, "--len");
    expect_usage_error({"rope", "--style", "neox"}, "--style");
    expect_usage_error({"rope", "--scaling", "linear"}, "needs --factor");
    expect_usage_error({"rope", "--scaling", "linear", "--factor", "0.5"}, "--factor must be at least 1");
    expect_usage_error({"rope", "--scaling", "llama3", "--factor", "8"}, "needs --original-len");
    expect_usage_error({"rope", "--factor", "2"}, "apply to a --scaling method");
    expect_usage_error({"rope", "--example", "--len", "9"}, "--example excludes --len");
    expect_usage_error({"rope", "--rotary-dim", "12"}, "--rotary-dim");
    expect_usage_error({"rope", "--len", "100000"}, "--show can leave out cache, dots, decay");
}

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
    // rerotate, the RoPE cache moved: the same refusals
    expect_usage_error({"rerotate", "--dim", "5"}, "--dim must be even: RoPE rotates pairs (got 5)");
    expect_usage_error({"rerotate", "--base", "1"}, "--base must be above 1 (got 1)");
    expect_usage_error({"rerotate", "--shift", "x"}, "--shift");
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

TEST_CASE("rope: the scaling options of one method are refused with another, and longrope's lists are held to one positive number per pair")
{
    expect_usage_error({"rope", "--dynamic-length", "len"}, "--dynamic-length applies to --scaling dynamic");
    expect_usage_error({"rope", "--no-yarn-truncate"}, "--no-yarn-truncate, --mscale and --mscale-all-dim apply to --scaling yarn");
    expect_usage_error({"rope", "--scaling", "yarn", "--factor", "4", "--original-len", "64", "--mscale", "1"},
                       "--mscale and --mscale-all-dim go together");
    expect_usage_error({"rope", "--short-factor", "1,2,3,4"}, "--scaling longrope takes --short-factor and --long-factor, and only it does");
    const std::vector<std::string> longrope = {"rope", "--dim", "8", "--scaling", "longrope", "--factor", "4", "--original-len", "4"};
    auto with = [&](std::vector<std::string> more) {
        auto a = longrope;
        a.insert(a.end(), more.begin(), more.end());
        return a;
    };
    expect_usage_error(longrope, "--scaling longrope takes --short-factor and --long-factor");
    expect_usage_error(with({"--short-factor", "1,2", "--long-factor", "1,2,3,4"}), "--short-factor gives 2 factors; longrope takes one per rotated pair, 4");
    expect_usage_error(with({"--short-factor", "1,x,3,4", "--long-factor", "1,2,3,4"}), "--short-factor: 'x' is not a positive number");
    expect_usage_error(with({"--short-factor", "1,2,3,4", "--long-factor", "1,2,0,4"}), "--long-factor: '0' is not a positive number");
    CHECK(run_cli(with({"--short-factor", "1,2,3,4", "--long-factor", "1,2,3,4", "--quiet"})).status == 0);
}

TEST_CASE("rope: linear+ntk divides theta by s on the base raised by alpha, as llama.cpp's freq-base with freq-scale 1/s")
{
    // d = 4, s = 4, alpha = 9: base 10000 * 9^(4/2) = 810000; theta = (1/4, 810000^-0.5 / 4 = 1/3600)
    const auto j = run_json({"rope", "--dim", "4", "--scaling", "linear+ntk", "--factor", "4", "--ntk-alpha", "9",
                             "--dtype", "float64", "--show", "theta"});
    CHECK(j["passed"] == true);
    CHECK(j["params"]["scaling"] == "linear+ntk");
    const auto theta = j["tensors"][0]["data"];
    REQUIRE(theta.size() == 2);
    CHECK(theta[0].get<double>() == doctest::Approx(0.25));
    CHECK(theta[1].get<double>() == doctest::Approx(1.0 / 3600.0));
    expect_usage_error({"rope", "--scaling", "linear", "--factor", "4", "--ntk-alpha", "9"}, "--scaling linear+ntk takes --ntk-alpha, and only it does");
    expect_usage_error({"rope", "--scaling", "linear+ntk", "--factor", "4"}, "--scaling linear+ntk takes --ntk-alpha");
    expect_usage_error({"rope", "--dim", "2", "--scaling", "linear+ntk", "--factor", "4", "--ntk-alpha", "2"}, "rotary dimension of at least 4");
    expect_usage_error({"rope", "--scaling", "linear+ntk", "--factor", "4", "--ntk-alpha", "0.5"}, "--ntk-alpha must be at least 1 (got 0.5)");
}

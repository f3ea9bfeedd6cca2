#include "cli_support.hpp"

#include <doctest/doctest.h>

TEST_CASE("alibi: default run passes, slopes for 4 heads")
{
    const auto r = run_cli({"alibi", "--format", "csv", "--tensor", "slopes"});
    CHECK(r.status == 0);
    CHECK(r.out == "head,value\n0,0.25\n1,0.0625\n2,0.015625\n3,0.00390625\n");
}

TEST_CASE("alibi: H = 6 says where the simple formula and the paper differ, without failing")
{
    const auto r = run_cli({"alibi", "--heads", "6"});
    CHECK(r.status == 0);
    CHECK(r.out.find("WRONG the articles' m_h = 2^(-8(h+1)/H) gives the paper's slopes for H = 6") != std::string::npos);
    CHECK(r.out.find("head 0: paper 0.25, simple 0.39685") != std::string::npos);
    const auto j = run_json({"alibi", "--heads", "6", "--slopes", "simple"});
    CHECK(j["params"]["slopes"] == "simple");
    CHECK(j["tensors"][0]["data"][0] == doctest::Approx(0.39685026));
}

TEST_CASE("alibi: causal variant, distance profile as CSV")
{
    const auto j = run_json({"alibi", "--variant", "causal", "--len", "4"});
    CHECK(j["passed"] == true);
    CHECK(j["tensors"][1]["name"] == "bias");
    CHECK(j["tensors"][1]["data"][0][0][1] == "-inf");
    CHECK(j["tensors"][1]["data"][0][3][0] == -0.75);
    const auto r = run_cli({"alibi", "--len", "4", "--format", "csv", "--tensor", "distance_profile"});
    CHECK(r.out.rfind("head,distance,value\n", 0) == 0);
    CHECK(count_lines(r.out) == 1 + 4 * 4);
}

TEST_CASE("alibi: errors")
{
    expect_usage_error({"alibi", "--heads", "0"}, "--heads");
    expect_usage_error({"alibi", "--len", "0"}, "--len");
    expect_usage_error({"alibi", "--dim", "0"}, "--dim");
    expect_usage_error({"alibi", "--variant", "both"}, "--variant");
    expect_usage_error({"alibi", "--slopes", "bloom"}, "--slopes");
}

#include "cli_support.hpp"

#include <doctest/doctest.h>

TEST_CASE("alibi: default run passes, slopes for 4 heads")
{
    const auto r = run_cli({"alibi", "--format", "csv", "--tensor", "slopes"});
    CHECK(r.status == 0);
    CHECK(r.out == "head,value\n0,0.25\n1,0.0625\n2,0.015625\n3,0.00390625\n");
}

TEST_CASE("alibi: H = 6 holds the articles' formula to the paper's text, and shows where the reference code parts from it, without failing")
{
    const auto r = run_cli({"alibi", "--heads", "6"});
    CHECK(r.status == 0);
    CHECK(r.out.find("HOLDS the articles' m_h = 2^(-8(h+1)/H) is the paper's text for H = 6") != std::string::npos);
    CHECK(r.out.find("      the article: “论文公式：m_i = 2^(-8 * (i + 1) / num_heads)”; meant: the formula is the slope rule the ALiBi paper states\n") !=
          std::string::npos);
    // the code's slopes are the program's demonstration, not a verdict on the articles
    CHECK(r.out.find("SHOWN the paper's text, m_h = 2^(-8(h+1)/H), and its reference code (get_slopes, BLOOM) give different slopes for H = 6 "
                     "(they agree when H is a power of two) (demonstration): max |m_formula - m_code| = 0.49 (needs > 0)") != std::string::npos);
    CHECK(r.out.find("head 0: reference-code 0.25, paper-text 0.39685") != std::string::npos);
    const auto j = run_json({"alibi", "--heads", "6", "--slopes", "paper-text"});
    CHECK(j["params"]["slopes"] == "paper-text");
    CHECK(j["tensors"][0]["data"][0] == doctest::Approx(0.39685026));
    // at a power of two the two rules agree
    CHECK(run_cli({"alibi", "--heads", "8"}).out.find("NOT SHOWN the paper's text, m_h = 2^(-8(h+1)/H), and its reference code") != std::string::npos);
}

TEST_CASE("alibi: the old spellings paper and simple still work and say what they mean")
{
    const auto simple = run_json({"alibi", "--heads", "6", "--slopes", "simple"});
    CHECK(simple["params"]["slopes"] == "paper-text");
    CHECK(simple["notes"][0] == "--slopes simple is the old spelling of --slopes paper-text");
    CHECK(simple["tensors"][0]["data"][0] == doctest::Approx(0.39685026));
    const auto paper = run_json({"alibi", "--heads", "6", "--slopes", "paper", "--lang", "zh"});
    CHECK(paper["params"]["slopes"] == "reference-code");
    CHECK(paper["notes"][0] == "--slopes paper 是 --slopes reference-code 的旧写法");
    CHECK(run_json({"alibi", "--heads", "6"})["notes"][0].get<std::string>().rfind("H = 6 is not a power of two", 0) == 0);
    const auto bad = run_cli({"alibi", "--slopes", "bogus"});
    CHECK(bad.status == 2);
    CHECK(bad.err == "attnlab: error: --slopes: bogus not in {reference-code,paper-text}; see --help\n");
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

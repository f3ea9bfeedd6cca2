#include "cli_support.hpp"

#include <doctest/doctest.h>

#include <filesystem>

TEST_CASE("grad: the checks in JSON, d_x as CSV, and a zero d_out gives zero gradients")
{
    const auto j = run_json({"grad", "--mask", "causal", "--pe", "alibi", "--len", "4"});
    CHECK(j["command"] == "grad");
    CHECK(j["passed"] == true);
    CHECK(j["params"]["head_dim"] == 4);
    std::vector<std::string> names;
    for (const auto& c : j["checks"]) names.push_back(c["name"]);
    CHECK(names == std::vector<std::string>{"d_weights_matches_finite_differences", "d_scores_matches_finite_differences", "d_q_matches_finite_differences",
                                            "d_k_matches_finite_differences", "d_v_matches_finite_differences", "d_x_matches_finite_differences",
                                            "d_w_q_matches_finite_differences", "d_w_k_matches_finite_differences", "d_w_v_matches_finite_differences",
                                            "d_scores_rows_sum_to_zero", "masked_keys_get_zero_gradient", "no_gradient_from_later_queries"});
    for (const auto& c : j["checks"]) CHECK(c["measured"].get<double>() <= c["tolerance"].get<double>());
    const std::string dir = scratch("grad-zero");
    std::filesystem::create_directories(dir);
    write_npy(dir + "/d_out.npy", {1, 3, 8}, std::vector<double>(24, 0.0));
    const auto csv = run_cli({"grad", "--len", "3", "--input", "d_out=" + dir + "/d_out.npy", "--tensor", "d_x", "--format", "csv"});
    CHECK(csv.status == 0);
    CHECK(count_lines(csv.out) == 1 + 3 * 8);
    CHECK(csv.out.find("batch,pos,dim,value\n0,0,0,0\n") == 0);
    std::filesystem::remove_all(dir);
}

TEST_CASE("grad: --against judges d_scores by default, a right answer passes, and d_weights in its place exits 1 with one stderr line")
{
    const std::string dir = scratch("grad-against");
    std::filesystem::create_directories(dir);
    REQUIRE(run_cli({"grad", "--mask", "causal", "--dtype", "float64", "--save", dir + "/right"}).status == 0);
    CHECK(run_cli({"grad", "--mask", "causal", "--against", dir + "/right/d_scores.npy"}).status == 0);
    CHECK(run_cli({"grad", "--mask", "causal", "--against", dir + "/right/d_x.npy", "--against-tensor", "d_x"}).status == 0);
    // d_weights as d_scores: a backward that stops before the softmax
    const auto wrong = run_cli({"grad", "--mask", "causal", "--against", dir + "/right/d_weights.npy"});
    CHECK(wrong.status == 1);
    CHECK(wrong.out.find("FAIL  d_scores = dloss/dscores (loss = sum(d_out * out_merged)), by central differences in float64") != std::string::npos);
    CHECK(wrong.err == "attnlab: failed checks: against (" + dir + "/right/d_weights.npy, tensor d_scores)\n");
    std::filesystem::remove_all(dir);
}

TEST_CASE("grad: configurations without a gradient and bad inputs are usage errors")
{
    expect_usage_error({"grad", "--mask", "padding", "--lengths", "0,3"}, "query 0 of sequence 0 sees no key: under --softmax plain its weights are NaN");
    CHECK(run_cli({"grad", "--mask", "padding", "--lengths", "0,3", "--softmax", "safe", "--quiet"}).status == 0);
    expect_usage_error({"grad", "--input", "d_out=/nonexistent.npy"}, "/nonexistent.npy: cannot be read");
    expect_usage_error({"grad", "--dim", "9"}, "--dim 9 is not divisible by --heads 2");
}

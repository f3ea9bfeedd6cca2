#include "cli_support.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

TEST_CASE("shaw: rel_index as CSV, the checks in JSON, and Chinese")
{
    const auto csv = run_cli({"shaw", "--len", "3", "--clip", "1", "--tensor", "rel_index", "--format", "csv"});
    CHECK(csv.status == 0);
    CHECK(csv.out == "query,key,value\n0,0,1\n0,1,2\n0,2,2\n1,0,0\n1,1,1\n1,2,2\n2,0,0\n2,1,0\n2,2,1\n");
    const auto j = run_json({"shaw", "--mask", "causal", "--clip", "3"});
    CHECK(j["command"] == "shaw");
    CHECK(j["params"]["clip"] == 3);
    CHECK(j["params"]["head_dim"] == 4);
    CHECK(j["passed"] == true);
    std::vector<std::string> names;
    for (const auto& c : j["checks"]) names.push_back(c["name"]);
    CHECK(names == std::vector<std::string>{"rel_index_depends_on_offset_only", "rel_index_is_clipped_offset", "beyond_clip_share_a_row",
                                            "scores_match_definition", "rows_sum_to_one", "masked_weights_exactly_zero", "out_matches_definition",
                                            "equivariance_breaks"});
    CHECK(j["checks"][7]["role"] == "demonstration");
    const auto zh = run_cli({"shaw", "--lang", "zh", "--quiet"});
    CHECK(zh.out.find("相对项只取决于 j - i") != std::string::npos);
}

TEST_CASE("shaw: --against names the mistakes on scores and out, a saved right answer passes, and usage errors exit 2")
{
    const std::string dir = scratch("shaw-against");
    std::filesystem::create_directories(dir);
    REQUIRE(run_cli({"shaw", "--dtype", "float64", "--save", dir + "/right"}).status == 0);
    CHECK(run_cli({"shaw", "--against", dir + "/right/out.npy"}).status == 0);
    CHECK(run_cli({"shaw", "--against", dir + "/right/scores.npy", "--against-tensor", "scores"}).status == 0);
    // the same run with rel_v all zero: the output a learner gets who leaves rel_v out
    std::ofstream zeros(dir + "/zeros.csv");
    for (int r = 0; r < 5; ++r) zeros << "0,0,0,0\n";
    zeros.close();
    REQUIRE(run_cli({"shaw", "--dtype", "float64", "--input", "rel_v=" + dir + "/zeros.csv", "--save", dir + "/no_rel_v"}).status == 0);
    const auto wrong = run_cli({"shaw", "--against", dir + "/no_rel_v/out.npy"});
    CHECK(wrong.status == 1);
    CHECK(wrong.out.find("matches rel_v_missing") != std::string::npos);
    CHECK(wrong.err == "attnlab: failed checks: against (" + dir + "/no_rel_v/out.npy, tensor out)\n");
    std::filesystem::remove_all(dir);
    expect_usage_error({"shaw", "--dim", "9", "--heads", "2"}, "--dim 9 is not a multiple of --heads 2");
    expect_usage_error({"shaw", "--mask", "padding"}, "--mask: padding not in {none,causal}");
    expect_usage_error({"shaw", "--input", "rel_k=/nonexistent.npy"}, "/nonexistent.npy: cannot be read");
    expect_usage_error({"shaw", "--len", "5", "--kv-len", "3"}, "--kv-len 3 is below --len 5: the queries are the last L of the S positions");
}

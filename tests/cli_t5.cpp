#include "cli_support.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

TEST_CASE("t5: the bucket map as CSV, the checks in JSON, and an odd N's note")
{
    const auto csv = run_cli({"t5", "--len", "3", "--buckets", "8", "--max-distance", "16", "--format", "csv"});
    CHECK(csv.status == 0);
    CHECK(csv.out == "query,key,value\n0,0,0\n0,1,5\n0,2,6\n1,0,1\n1,1,0\n1,2,5\n2,0,2\n2,1,1\n2,2,0\n");
    const auto j = run_json({"t5", "--len", "200", "--direction", "causal"});
    CHECK(j["command"] == "t5");
    CHECK(j["params"]["max_distance"] == 128);
    CHECK(j["params"]["direction"] == "causal");
    CHECK(j["passed"] == true);
    std::vector<std::string> names;
    for (const auto& c : j["checks"]) names.push_back(c["name"]);
    CHECK(names == std::vector<std::string>{"bucket_depends_on_offset_only", "exact_buckets_near", "log_buckets_far", "beyond_max_distance_last_bucket",
                                            "buckets_monotone_in_distance", "sign_told_apart_bidirectional_only", "far_distances_share_a_bucket",
                                            "bias_reads_bucket_table"});
    const auto odd = run_cli({"t5", "--buckets", "7", "--max-distance", "20", "--show", "bucket_bias"});
    CHECK(odd.status == 0);
    CHECK(odd.out.find("bucket_bias  shape [7, 4]  (bucket, head)") != std::string::npos);
    CHECK(odd.out.find("bucket 6 is never used") != std::string::npos);
    const auto zh = run_cli({"t5", "--lang", "zh", "--quiet"});
    CHECK(zh.out.find("双向的桶能区分正负") != std::string::npos);
}

TEST_CASE("t5: --query-offset O gives a block of queries after O cached tokens the last L rows of the full map")
{
    // N = 8 bidirectional, D = 16: 4 buckets a side, 2 exact; query i at position 2 + i, keys
    // 0..3. Row 0: d = -2, -1, 0, 1 -> 2, 1, 0, 4 + 1; row 1: d = -3 -> 2 + floor(2 log 1.5 / log 8)
    // = 2, then 2, 1, 0.
    const auto block = run_cli({"t5", "--len", "2", "--query-offset", "2", "--buckets", "8", "--max-distance", "16", "--format", "csv"});
    CHECK(block.status == 0);
    CHECK(block.out == "query,key,value\n0,0,2\n0,1,1\n0,2,0\n0,3,5\n1,0,2\n1,1,2\n1,2,1\n1,3,0\n");
    const auto full = run_cli({"t5", "--len", "4", "--buckets", "8", "--max-distance", "16", "--format", "csv"});
    CHECK(full.out.find("2,0,2\n2,1,1\n2,2,0\n2,3,5\n3,0,2\n3,1,2\n3,2,1\n3,3,0\n") != std::string::npos);
    // causal, one query after 3 cached tokens: distances 3, 2, 1, 0, each its own bucket
    const auto step = run_json({"t5", "--len", "1", "--query-offset", "3", "--buckets", "8", "--max-distance", "16", "--direction", "causal",
                                "--show", "relative_position,bucket,bias"});
    CHECK(step["passed"] == true);
    CHECK(step["tensors"][0]["data"] == nlohmann::json::parse("[[-3, -2, -1, 0]]"));
    CHECK(step["tensors"][1]["data"] == nlohmann::json::parse("[[3, 2, 1, 0]]"));
    CHECK(step["tensors"][2]["shape"] == nlohmann::json::parse("[4, 1, 4]"));
    // a map of the square shape where a block is asked for is no answer: the checks read it as a block
    const std::string dir = scratch("t5-block");
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/square.csv") << "0,5\n1,0\n";
    CHECK(run_cli({"t5", "--len", "2", "--query-offset", "2", "--buckets", "8", "--max-distance", "16", "--against", dir + "/square.csv"}).status == 1);
}

TEST_CASE("t5: --against names both usual mistakes, and the exact range is refused with both numbers")
{
    const std::string dir = scratch("t5-against");
    std::filesystem::create_directories(dir);
    // 4 positions, 8 buckets, D = 16: |j - i| on one side (sign ignored): 0 1 2 2 / 1 0 1 2 / ...
    std::ofstream(dir + "/sign.csv") << "0,1,2,2\n1,0,1,2\n2,1,0,1\n2,2,1,0\n";
    const auto sign = run_cli({"t5", "--len", "4", "--buckets", "8", "--max-distance", "16", "--against", dir + "/sign.csv"});
    CHECK(sign.status == 1);
    CHECK(sign.out.find("matches sign_ignored") != std::string::npos);
    CHECK(sign.err == "attnlab: failed checks: against (" + dir + "/sign.csv, tensor bucket)\n");
    std::ofstream(dir + "/right.csv") << "0,5,6,6\n1,0,5,6\n2,1,0,5\n2,2,1,0\n";
    CHECK(run_cli({"t5", "--len", "4", "--buckets", "8", "--max-distance", "16", "--against", dir + "/right.csv"}).status == 0);
    std::filesystem::remove_all(dir);
    expect_usage_error({"t5", "--max-distance", "8"}, "--max-distance 8 must exceed the exact range, 8 distances (32 buckets, bidirectional)");
    expect_usage_error({"t5", "--buckets", "2"}, "--buckets 2 leaves no exact bucket: a bidirectional run needs at least 4");
    expect_usage_error({"t5", "--direction", "left"}, "--direction");
}

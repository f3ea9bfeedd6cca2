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

#include "cli_support.hpp"

#include <doctest/doctest.h>

#include <filesystem>

TEST_CASE("decode: positions as CSV, the checks in JSON, and Chinese")
{
    const auto csv = run_cli({"decode", "--prefill", "2", "--steps", "2", "--window", "2", "--tensor", "positions", "--format", "csv"});
    CHECK(csv.status == 0);
    CHECK(csv.out == "batch,step,slot,value\n0,0,0,1\n0,0,1,2\n0,1,0,2\n0,1,1,3\n");
    const auto j = run_json({"decode", "--window", "3", "--sinks", "1", "--pe", "alibi"});
    CHECK(j["command"] == "decode");
    CHECK(j["params"]["sinks"] == 1);
    CHECK(j["params"]["kv_heads"] == 2);
    CHECK(j["passed"] == true);
    std::vector<std::string> names;
    for (const auto& c : j["checks"]) names.push_back(c["name"]);
    CHECK(names == std::vector<std::string>{"positions_follow_cache_rule", "sinks_read_cache_positions"});
    const auto zh = run_cli({"decode", "--lang", "zh", "--quiet"});
    CHECK(zh.out.find("经过 KV 缓存的 3 步") != std::string::npos);
}

TEST_CASE("decode: --against passes a saved right answer and fails another seed's, and usage errors exit 2 with one line")
{
    const std::string dir = scratch("decode-against");
    REQUIRE(run_cli({"decode", "--dtype", "float64", "--save", dir}).status == 0);
    CHECK(run_cli({"decode", "--against", dir + "/out_steps.npy"}).status == 0);
    const auto other = run_cli({"decode", "--seed", "1", "--against", dir + "/out_steps.npy"});
    CHECK(other.status == 1);
    CHECK(other.err == "attnlab: failed checks: against (" + dir + "/out_steps.npy, tensor out_steps)\n");
    CHECK(other.out.find("FAIL  each of the 3 steps through the KV cache") != std::string::npos);
    std::filesystem::remove_all(dir);
    expect_usage_error({"decode", "--sinks", "2"}, "--sinks needs --window");
    expect_usage_error({"decode", "--sinks", "1", "--window", "2", "--pe", "sinusoidal"}, "cannot be re-read at its cache index");
    expect_usage_error({"decode", "--kv-heads", "3"}, "--kv-heads 3 must divide --heads 2");
    expect_usage_error({"decode", "--steps", "0"}, "--steps");
    expect_usage_error({"decode", "--left-pad", "2,5"}, "--left-pad: each length must lie in 1..4 (--prefill), got 5");
    expect_usage_error({"decode", "--left-pad", "2,3", "--window", "2"}, "--window");
}

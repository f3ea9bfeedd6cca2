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
    expect_usage_error({"decode", "--sink-logits", "1,2,3"}, "--sink-logits gives 3 logits for --heads 2: one per head, or one for every head");
    expect_usage_error({"decode", "--sink-logits", "0.5,x"}, "--sink-logits: 'x' is not a number within +-10000");
    expect_usage_error({"decode", "--sink-logits", "1e5"}, "--sink-logits: '1e5' is not a number within +-10000");
}

TEST_CASE("decode: under RoPE in float64, a left pad's shifted positions round their angles differently, and that is no false alarm")
{
    // three configurations the no-false-alarm test drew (seeds 2, 13 and 17 of 500 runs): the
    // shifted steps differed by 8.9e-16 where the tolerance, without the angles' rounding, was 4.3e-16
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"decode", "--prefill", "5", "--steps", "7", "--pe", "rope", "--rope-style", "interleaved", "--heads", "1", "--kv-heads", "1",
                                   "--dim", "4", "--left-pad", "1", "--dtype", "float64", "--seed", "117", "--quiet"},
          std::vector<std::string>{"decode", "--prefill", "10", "--steps", "8", "--pe", "rope", "--rope-style", "interleaved", "--heads", "3", "--kv-heads", "1",
                                   "--dim", "12", "--left-pad", "8,7", "--dtype", "float64", "--seed", "695", "--quiet"}}) {
        CAPTURE(args[4]);
        const auto r = run_cli(args);
        CHECK(r.status == 0);
        CHECK(r.err.empty());
        CHECK(r.out.find("PASS  under rope, counting positions from the first pad gives the same steps") != std::string::npos);
    }
    // sinks read at their cache indices, against the full pass at the original positions: the same rounding
    const auto sinks = run_cli({"decode", "--prefill", "7", "--steps", "4", "--pe", "rope", "--rope-style", "half", "--heads", "3", "--kv-heads", "1", "--dim",
                                "24", "--batch", "1", "--window", "8", "--sinks", "1", "--dtype", "float64", "--seed", "669", "--quiet"});
    CHECK(sinks.status == 0);
    CHECK(sinks.out.find("PASS  with S = 1 sinks and a window of W = 8") != std::string::npos);
}

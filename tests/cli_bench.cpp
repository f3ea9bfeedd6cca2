// attnlab bench through the CLI: a tiny run (the smoke test), its JSON measurements, and the
// requests it refuses.
#include "cli_support.hpp"

#include <doctest/doctest.h>

TEST_CASE("bench: a tiny run exits 0, text and JSON")
{
    const auto text = run_cli({"bench", "--len", "96", "--heads", "2", "--head-dim", "8", "--repeat", "2"});
    CHECK(text.status == 0);
    CHECK(text.err.empty());
    CHECK(text.out.find("\nseconds ") != std::string::npos);
    CHECK(text.out.find("PASS  the kernel matches the plain-loop reference: max |out - out_ref|, over all rows = ") != std::string::npos);
    CHECK(text.out.find("PASS  the rows computed again on one thread are bit-identical to the full run's") != std::string::npos);
    const auto j = run_json({"bench", "--len", "96", "--kv-len", "130", "--heads", "4", "--kv-heads", "1", "--head-dim", "8", "--repeat", "1",
                             "--mask", "none", "--threads", "2", "--dtype", "float64"});
    CHECK(j["command"] == "bench");
    CHECK(j["params"]["kv_heads"] == 1);
    CHECK(j["params"]["useful_gflop"].get<double>() == doctest::Approx(2.0 * 96 * 130 * 8 * 4 * 2 / 1e9));
    const auto& m = j["measurements"];
    CHECK(m["threads"] == 2);
    CHECK(m["seconds"].get<double>() > 0.0);
    CHECK(m["dgemm_gflops"].get<double>() > 0.0);
    // one figure per interleaved pair: each the median of the pairs, inside their range
    for (const char* name : {"seconds", "dgemm_gflops", "fraction_of_dgemm"}) {
        CAPTURE(name);
        CHECK(m[std::string(name) + "_min"].get<double>() <= m[name].get<double>());
        CHECK(m[name].get<double>() <= m[std::string(name) + "_max"].get<double>());
    }
    CHECK(m["gflops"].get<double>() == doctest::Approx(j["params"]["useful_gflop"].get<double>() / m["seconds"].get<double>()));
    const auto three = run_json({"bench", "--len", "96", "--heads", "2", "--head-dim", "8", "--repeat", "3", "--dtype", "float64"});
    const auto& m3 = three["measurements"];
    CHECK(m3["seconds_min"].get<double>() <= m3["seconds"].get<double>());
    CHECK(m3["fraction_of_dgemm_min"].get<double>() <= m3["fraction_of_dgemm"].get<double>());
    CHECK(m3["fraction_of_dgemm"].get<double>() <= m3["fraction_of_dgemm_max"].get<double>());
    CHECK(m["max_abs_err_vs_reference"].get<double>() < 1e-12);
    CHECK(m["peak_bytes"].get<double>() > 1e6);
    CHECK(j["passed"] == true);
}

TEST_CASE("bench: what it refuses")
{
    expect_usage_error({"bench", "--dtype", "float16"}, "--dtype");
    expect_usage_error({"bench", "--mask", "padding"}, "--mask");
    expect_usage_error({"bench", "--heads", "6", "--kv-heads", "4"}, "--heads 6 is not a multiple of --kv-heads 4");
    expect_usage_error({"bench", "--format", "csv"}, "--format");
    expect_usage_error({"bench", "--len", "1000000", "--heads", "64"}, "needs about 137.8 GiB (its working memory), above the memory budget");
    expect_usage_error({"bench", "--len", "100000", "--head-dim", "8"}, "above the work budget of 200 G");
}

TEST_CASE("attend --threads: the same bits on one thread and on three")
{
    const std::vector<std::string> args = {"attend", "--len", "300", "--heads", "4", "--dim", "32", "--mask", "causal", "--tensor", "out_merged"};
    auto one = args, three = args;
    one.insert(one.end(), {"--threads", "1"});
    three.insert(three.end(), {"--threads", "3"});
    const auto a = run_json(one), b = run_json(three);
    REQUIRE(a["tensors"].size() == 1);
    CHECK(a["tensors"][0]["data"] == b["tensors"][0]["data"]);
    CHECK(a["passed"] == true);
}

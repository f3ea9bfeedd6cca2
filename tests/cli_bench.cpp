// attnlab bench through the CLI: a tiny run (the smoke test), its JSON measurements, and the
// requests it refuses.
#include "cli_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

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

namespace {

// The JSON of ARGS --threads 1, then of ARGS --threads 3, each run with env; both must pass.
std::pair<nlohmann::json, nlohmann::json> on_one_and_three_threads(const std::vector<std::string>& args, const std::vector<std::string>& env = {})
{
    std::pair<nlohmann::json, nlohmann::json> out;
    for (const auto& [threads, doc] : {std::pair<const char*, nlohmann::json*>{"1", &out.first}, {"3", &out.second}}) {
        auto line = args;
        line.insert(line.end(), {"--threads", threads});
        *doc = run_json(line, env);
        CHECK((*doc)["passed"] == true);
    }
    return out;
}

}  // namespace

TEST_CASE("attend --threads: the same bits on one thread and on three")
{
    const auto [a, b] = on_one_and_three_threads({"attend", "--len", "300", "--heads", "4", "--dim", "32", "--mask", "causal", "--tensor", "out_merged"});
    REQUIRE(a["tensors"].size() == 1);
    CHECK(a["tensors"][0]["data"] == b["tensors"][0]["data"]);
    CHECK(a["passed"] == true);
}

namespace {

// The targets this CPU has, as the program names them when ATTNLAB_ISA names none.
std::vector<std::string> cpu_targets()
{
    const CliResult r = run_cli({"bench", "--len", "16"}, {"ATTNLAB_ISA=none"});
    const std::string lead = "(this CPU has ";
    const auto at = r.err.find(lead), end = r.err.find(')', at);
    if (at == std::string::npos || end == std::string::npos) return {};
    std::vector<std::string> out;
    std::string list = r.err.substr(at + lead.size(), end - at - lead.size()) + ", ";
    for (std::size_t from = 0, comma; (comma = list.find(", ", from)) != std::string::npos; from = comma + 2)
        out.push_back(list.substr(from, comma - from));
    return out;
}

}  // namespace

TEST_CASE("ATTNLAB_ISA: a name that is no target, or one the CPU lacks, is refused before anything runs")
{
    const CliResult r = run_cli({"bench", "--len", "16"}, {"ATTNLAB_ISA=avx3"});
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(count_lines(r.err) == 1);
    CHECK(r.err.rfind("attnlab: error: ATTNLAB_ISA: 'avx3' is no target; targets: scalar, sse4, avx2, avx512 (this CPU has ", 0) == 0);
    // Every command, not only bench; --help still answers.
    CHECK(run_cli({"pe", "--len", "4", "--dim", "4"}, {"ATTNLAB_ISA="}).status == 2);
    CHECK(run_cli({"bench", "--help"}, {"ATTNLAB_ISA=avx3"}).status == 0);
    const std::vector<std::string> has = cpu_targets();
    REQUIRE(!has.empty());
    CHECK(has.back() == "scalar");
    for (const std::string name : {"sse4", "avx2", "avx512"})
        if (std::find(has.begin(), has.end(), name) == has.end()) {
            const CliResult lacked = run_cli({"pe", "--len", "4", "--dim", "4"}, {"ATTNLAB_ISA=" + name});
            CHECK(lacked.status == 2);
            CHECK(lacked.err.find("ATTNLAB_ISA: this CPU cannot run " + name + "; it has ") != std::string::npos);
        }
}

TEST_CASE("ATTNLAB_ISA: bench runs and names each target the CPU has, and each holds the kernel to the reference, bit-identical across threads")
{
    std::map<std::string, nlohmann::json> outs;
    for (const std::string& isa : cpu_targets()) {
        CAPTURE(isa);
        const std::vector<std::string> env = {"ATTNLAB_ISA=" + isa};
        // d = 64 and float32: the kernel's own products; 300 rows: two query blocks and a tail.
        const CliResult b = run_cli({"bench", "--len", "300", "--heads", "2", "--head-dim", "64", "--mask", "causal", "--threads", "2",
                                     "--repeat", "1", "--format", "json"},
                                    env);
        REQUIRE(b.status == 0);
        const auto j = nlohmann::json::parse(b.out);
        CHECK(j["measurements"]["isa"] == isa);
        CHECK(j["checks"].size() >= 2);
        CHECK(j["passed"] == true);
        // The projections are OpenBLAS's, whose SkylakeX and Haswell kernels give other bits:
        // its SSE3 kernels, which every x86-64 CPU runs, for every target's run, so that what is
        // compared is the attention kernel's own arithmetic.
        const std::vector<std::string> one_blas = {"ATTNLAB_ISA=" + isa, "OPENBLAS_CORETYPE=Prescott"};
        const auto [ja, jc] =
            on_one_and_three_threads({"attend", "--len", "300", "--heads", "2", "--dim", "128", "--mask", "causal", "--tensor", "out_merged"}, one_blas);
        CHECK(ja["tensors"][0]["data"] == jc["tensors"][0]["data"]);
        outs[isa] = ja["tensors"][0]["data"];
    }
    // The targets with FMA give each other's bits, and those without each other's.
    for (const auto& [a, b] : {std::pair<std::string, std::string>{"avx2", "avx512"}, {"scalar", "sse4"}})
        if (outs.count(a) && outs.count(b)) CHECK(outs[a] == outs[b]);
}

#include "cli_support.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <functional>

TEST_CASE("attend: tensors in pipeline order, out_merged is the main tensor")
{
    const auto j = run_json({"attend", "--pe", "sinusoidal", "--mask", "causal"});
    CHECK(j["passed"] == true);
    std::vector<std::string> names;
    for (const auto& t : j["tensors"]) names.push_back(t["name"]);
    CHECK(names == std::vector<std::string>{"x", "x_pe", "w_q", "w_k", "w_v", "q", "k", "v", "mask", "scores", "weights", "out", "out_merged"});
    CHECK(j["main_tensor"] == "out_merged");
    CHECK(j["params"]["weight_layout"].get<std::string>().rfind("[in, out]", 0) == 0);
}

TEST_CASE("attend: --show keeps only what is asked, and CSV prints the main tensor")
{
    const auto j = run_json({"attend", "--show", "out_merged"});
    CHECK(j["tensors"].size() == 1);
    const auto r = run_cli({"attend", "--format", "csv"});
    CHECK(r.out.rfind("batch,pos,dim,value\n", 0) == 0);
    CHECK(count_lines(r.out) == 1 + 6 * 8);
}

TEST_CASE("attend: cross-attention and grouped-query attention")
{
    const auto j = run_json({"attend", "--kv-len", "9", "--heads", "4", "--kv-heads", "2", "--show", "k,weights"});
    CHECK(j["passed"] == true);
    CHECK(j["tensors"][0]["shape"] == nlohmann::json::array({1, 2, 9, 2}));
    CHECK(j["tensors"][1]["shape"] == nlohmann::json::array({1, 4, 6, 9}));
}

TEST_CASE("attend: errors")
{
    expect_usage_error({"attend", "--dim", "10", "--heads", "4"}, "not divisible by --heads");
    expect_usage_error({"attend", "--heads", "4", "--kv-heads", "3"}, "must divide --heads");
    expect_usage_error({"attend", "--heads", "4", "--dim", "12", "--pe", "rope"}, "even head dimension");
    expect_usage_error({"attend", "--mask", "padding", "--lengths", "3,9"}, "--lengths must lie in");
    expect_usage_error({"attend", "--mask", "padding"}, "needs --lengths");
    expect_usage_error({"attend", "--lengths", "3"}, "makes no sense");
    expect_usage_error({"attend", "--len", "0"}, "--len");
    expect_usage_error({"attend", "--pe", "learned"}, "--pe");
    expect_usage_error({"attend", "--scale", "inf"}, "--scale");
    expect_usage_error({"attend", "--scale", "0"}, "--scale");
    expect_usage_error({"attend", "--len", "100000", "--dim", "512", "--heads", "8"}, "memory budget");
}

TEST_CASE("permute-test: the articles' example passes, and says the invariance wording is imprecise: literally false, equivariance meant")
{
    const auto r = run_cli({"permute-test", "--example", "--no-proj", "--quiet"});
    CHECK(r.status == 0);
    CHECK(r.out.find("PASS  without position information, Attn(PX) = P Attn(X)") != std::string::npos);
    CHECK(r.out.find("IMPRECISE permuting the input leaves the output strictly unchanged (article's claim): max |Attn(PX) - Attn(X)| = 2.58 (needs <= 1.26e-06)\n") !=
          std::string::npos);
    const auto full = run_cli({"permute-test", "--example", "--no-proj"});
    CHECK(full.out.find("      the article: “交换输入 token 的顺序，输出严格不变”; meant: without positions the output rows follow the input rows") != std::string::npos);
    CHECK(full.out.find("(max |Attn(PX) - P Attn(X)| = 1.19e-07, needs <= 1.26e-06: the meaning holds)") != std::string::npos);
    // with a position scheme the meaning fails too: WRONG
    const auto pe = run_json({"permute-test", "--example", "--no-proj", "--pe", "sinusoidal"});
    for (const auto& c : pe["checks"])
        if (c["name"] == "output_unchanged") {
            CHECK(c["verdict"] == "wrong");
            CHECK(c["intended"]["measured"].get<double>() > c["intended"]["tolerance"].get<double>());
        }
    const auto j = run_json({"permute-test", "--example", "--show", "perm"});
    CHECK(j["tensors"][0]["data"] == nlohmann::json::parse("[2,1,0,3]"));
}

TEST_CASE("permute-test: position information breaks equivariance, and the identity cannot show it")
{
    for (const char* pe : {"sinusoidal", "rope", "alibi"}) CHECK(run_cli({"permute-test", "--pe", pe, "--trials", "3"}).status == 0);
    CHECK(run_cli({"permute-test", "--mask", "causal"}).status == 0);
    expect_usage_error({"permute-test", "--pe", "rope", "--perm", "0,1,2,3,4,5"}, "--perm is the identity");
    expect_usage_error({"permute-test", "--len", "1", "--pe", "rope"}, "at least 2 positions");
    // a demonstration that misses its rule of thumb is reported, and the run still exits 0:
    // with two positions, swapping them leaves ALiBi's bias -m|i - j| as it is
    const auto r = run_cli({"permute-test", "--no-proj", "--pe", "alibi", "--len", "2", "--heads", "1", "--dim", "1", "--quiet"});
    CHECK(r.status == 0);
    CHECK(r.out.find("NOT SHOWN with alibi position information") != std::string::npos);
    CHECK(r.err.empty());
}

TEST_CASE("permute-test: errors")
{
    expect_usage_error({"permute-test", "--perm", "0,0,1,2,3,4"}, "repeats 0");
    expect_usage_error({"permute-test", "--perm", "0,1,2", "--len", "6"}, "3 entries");
    expect_usage_error({"permute-test", "--perm", "0,1,2,3,4,9"}, "outside 0..5");
    expect_usage_error({"permute-test", "--example", "--len", "5"}, "--example excludes --len");
    expect_usage_error({"permute-test", "--dim", "6", "--heads", "4"}, "not divisible");
    expect_usage_error({"permute-test", "--mask", "padding"}, "padding not in {none,causal}");
    expect_usage_error({"permute-test", "--trials", "0"}, "--trials");
    expect_usage_error({"attend", "--scale", "1e308"}, "--scale must lie in (0, 1e4]");
    expect_usage_error({"pe", "--seed", "18446744073709551616"}, "from 0 to 18446744073709551615");
    expect_usage_error({"pe", "--seed", "-1"}, "--seed");
    CHECK(run_cli({"pe", "--seed", "18446744073709551615", "--quiet"}).status == 0);
    for (const char* base : {"1", "0.5", "1e-310", "1e39"}) {
        CAPTURE(base);
        expect_usage_error({"pe", "--base", base}, "--base");
        expect_usage_error({"rope", "--base", base}, "--base");
    }
}

TEST_CASE("attend: lower-right with more queries than keys: a fully masked row is NaN under plain, 0 under safe, in weights and out alike")
{
    for (const char* softmax : {"plain", "safe"}) {
        CAPTURE(softmax);
        const auto j = run_json({"attend", "--heads", "1", "--dim", "2", "--len", "3", "--kv-len", "2", "--align", "lower-right",
                                 "--mask", "causal", "--dtype", "float64", "--softmax", softmax, "--show", "weights,out"});
        const auto& weights = j["tensors"][0]["data"][0][0][0];
        const auto& out = j["tensors"][1]["data"][0][0][0];
        const bool plain = std::string(softmax) == "plain";
        for (const auto& v : {weights[0], weights[1], out[0], out[1]}) CHECK(v == (plain ? nlohmann::json("nan") : nlohmann::json(0.0)));
        for (const auto& c : j["checks"])
            if (c["name"] == "main_matches_reference") CHECK(c["passed"] == true);
    }
}

namespace {

// The flat data of one tensor of a float64 JSON run.
std::vector<double> flat(const nlohmann::json& run, const std::string& name)
{
    std::vector<double> out;
    std::function<void(const nlohmann::json&)> walk = [&](const nlohmann::json& j) {
        if (j.is_array())
            for (const auto& e : j) walk(e);
        else out.push_back(j.get<double>());
    };
    for (const auto& t : run["tensors"])
        if (t["name"] == name) walk(t["data"]);
    return out;
}

double max_diff(const std::vector<double>& a, const std::vector<double>& b)
{
    REQUIRE(a.size() == b.size());
    double worst = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
    return worst;
}

}  // namespace

TEST_CASE("attend --positions: each scheme places the tokens where it is told")
{
    const std::vector<std::string> base = {"attend", "--len", "5", "--heads", "2", "--dim", "8", "--dtype", "float64"};
    auto with = [&](const std::string& pe, const std::string& positions) {
        auto a = base;
        a.insert(a.end(), {"--pe", pe, "--show", pe == "alibi" ? "scores,bias" : pe == "sinusoidal" ? "scores,x_pe,x" : "scores"});
        if (!positions.empty()) a.insert(a.end(), {"--positions", positions});
        return run_json(a);
    };
    // 0..L-1 is the default, bit for bit.
    for (const char* pe : {"rope", "alibi", "sinusoidal"}) {
        CAPTURE(pe);
        CHECK(flat(with(pe, "0,1,2,3,4"), "scores") == flat(with(pe, ""), "scores"));
    }
    // RoPE and ALiBi see differences of positions only: a shift of every position changes nothing.
    CHECK(max_diff(flat(with("rope", "7,8,9,10,11"), "scores"), flat(with("rope", ""), "scores")) < 1e-12);
    CHECK(flat(with("alibi", "100,101,102,103,104"), "bias") == flat(with("alibi", ""), "bias"));
    // ALiBi's bias is -m |p_i - p_j|: with H = 2 the slopes are 2^-4 and 2^-8 (m_h = 2^(-8h/H), h = 1, 2).
    const auto bias = flat(with("alibi", "3,3,10,-2,7"), "bias");
    CHECK(bias[0 * 5 + 2] == -7.0 / 16);         // head 0, query 0 (at 3), key 2 (at 10)
    CHECK(bias[0 * 5 + 1] == 0.0);               // two tokens at the same position
    CHECK(bias[25 + 3 * 5 + 4] == -9.0 / 256);   // head 1, query 3 (at -2), key 4 (at 7)
    // Sinusoidal: row t gains PE(positions[t]), the row of pe's table there.
    const auto placed = with("sinusoidal", "3,3,10,0,7");
    const auto x = flat(placed, "x"), x_pe = flat(placed, "x_pe");
    const auto table = flat(run_json({"pe", "--len", "11", "--dim", "8", "--dtype", "float64", "--show", "pe"}), "pe");
    const int at[] = {3, 3, 10, 0, 7};
    double worst = 0.0;
    for (int t = 0; t < 5; ++t)
        for (int c = 0; c < 8; ++c) worst = std::max(worst, std::abs(x_pe[t * 8 + c] - x[t * 8 + c] - table[at[t] * 8 + c]));
    CHECK(worst < 1e-15);
}

TEST_CASE("attend --positions: a block that ignores its position ids is told apart, and --input positions is the same list")
{
    const std::string dir = scratch("cli-attend-positions");
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    REQUIRE(run_cli({"attend", "--pe", "rope", "--len", "5", "--quiet", "--save", dir + "/plain"}).status == 0);
    const auto ignored = run_cli({"attend", "--pe", "rope", "--positions", "0,2,4,6,8", "--quiet", "--against", dir + "/plain/out.npy", "--against-tensor", "out"});
    CHECK(ignored.status == 1);
    CHECK(ignored.out.find("DIFFERS") != std::string::npos);
    REQUIRE(run_cli({"attend", "--pe", "alibi", "--positions", "3,3,10,-2,7", "--quiet", "--save", dir + "/placed"}).status == 0);
    const auto from_file = run_cli({"attend", "--pe", "alibi", "--len", "5", "--input", "positions=" + dir + "/placed/positions.npy", "--quiet",
                                    "--against", dir + "/placed/out.npy", "--against-tensor", "out"});
    CHECK(from_file.status == 0);
    CHECK(from_file.out.find("MATCH") != std::string::npos);
    // bfloat16 cannot place tokens at 271 and 497 (its angles there are off by radians): the
    // comparison with float64 would have no bound below the values' own range, so it is not shown.
    const auto far = run_cli({"attend", "--len", "2", "--dim", "8", "--heads", "1", "--pe", "sinusoidal", "--positions=271,497", "--dtype", "bfloat16",
                              "--seed", "755", "--batch", "2", "--quiet"});
    CHECK(far.status == 0);
    CHECK(far.out.find("float64") == std::string::npos);
    expect_usage_error({"attend", "--positions", "0,1,2"}, "--positions places the tokens for a position scheme; give --pe rope, alibi or sinusoidal");
    expect_usage_error({"attend", "--pe", "rope", "--positions", "0,1,2", "--kv-len", "4"}, "it does not combine with --kv-len");
    expect_usage_error({"attend", "--pe", "rope", "--len", "4", "--positions", "0,1,2"}, "--positions gives 3 positions for --len 4: one per token");
    expect_usage_error({"attend", "--pe", "rope", "--len", "5", "--positions", "0,1,2,3,4", "--input", "positions=" + dir + "/placed/positions.npy"},
                       "--positions and --input positions both place the tokens; give one");
    write_npy(dir + "/matrix.npy", {1, 5}, {0, 1, 2, 3, 4});
    expect_usage_error({"attend", "--pe", "rope", "--len", "5", "--input", "positions=" + dir + "/matrix.npy"},
                       "--input positions: a list of positions [pos], not a tensor of rank 2");
    write_npy(dir + "/none.npy", {0}, {});
    expect_usage_error({"attend", "--pe", "rope", "--len", "5", "--input", "positions=" + dir + "/none.npy"}, "--input positions: the file holds no position");
    write_npy(dir + "/half.npy", {5}, {0, 1, 2.5, 3, 4});
    expect_usage_error({"attend", "--pe", "rope", "--len", "5", "--input", "positions=" + dir + "/half.npy"},
                       "--input positions: 2.5 is not a whole number within +-2^24");
    expect_usage_error({"attend", "--pe", "rope", "--len", "5", "--positions", "0,1,2,3,16777217"},
                       "--positions: must lie in -16777216..16777216 (got 16777217)");
    std::filesystem::remove_all(dir);
}

#include "cli_support.hpp"

#include <doctest/doctest.h>

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

TEST_CASE("permute-test: the articles' example passes, and says the invariance wording is wrong")
{
    const auto r = run_cli({"permute-test", "--example", "--no-proj", "--quiet"});
    CHECK(r.status == 0);
    CHECK(r.out.find("PASS  without position information, Attn(PX) = P Attn(X)") != std::string::npos);
    CHECK(r.out.find("WRONG permuting the input leaves the output strictly unchanged") != std::string::npos);
    const auto j = run_json({"permute-test", "--example", "--show", "perm"});
    CHECK(j["tensors"][0]["data"] == nlohmann::json::parse("[2,1,0,3]"));
}

TEST_CASE("permute-test: position information breaks equivariance, and the identity cannot show it")
{
    for (const char* pe : {"sinusoidal", "rope", "alibi"}) CHECK(run_cli({"permute-test", "--pe", pe, "--trials", "3"}).status == 0);
    CHECK(run_cli({"permute-test", "--mask", "causal"}).status == 0);
    expect_usage_error({"permute-test", "--pe", "rope", "--perm", "0,1,2,3,4,5"}, "--perm is the identity");
    expect_usage_error({"permute-test", "--len", "1", "--pe", "rope"}, "at least 2 positions");
    // a demonstration that misses its rule of thumb is reported, and the run still exits 0
    const auto r = run_cli({"permute-test", "--no-proj", "--pe", "alibi", "--quiet"});
    CHECK(r.status == 0);
    CHECK(r.out.find("NOT SHOWN with alibi position information") != std::string::npos);
    CHECK(r.err.empty());
}

TEST_CASE("permute-test: errors")
{
    expect_usage_error({"permute-test", "--perm", "0,0,1,2,3,4"}, "repeats 0");
    expect_usage_error({"permute-test", "--perm", "0,1,2", "--len", "6"}, "3 entries");
    expect_usage_error({"permute-test", "--perm", "0,1,2,3,4,9"}, "outside 0..5");
    expect_usage_error({"permute-test", "--example", "--len", "5"}, "--len excludes --example");
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

#include "cli_support.hpp"

#include <doctest/doctest.h>

#include <filesystem>

#include <algorithm>

TEST_CASE("mask: the default 5x5 causal mask passes, in every format")
{
    auto r = run_cli({"mask"});
    CHECK(r.status == 0);
    CHECK(r.out.rfind("mask  shape [5, 5]  (query, key)  float32\n", 0) == 0);
    r = run_cli({"mask", "--format", "csv", "--wide"});
    CHECK(r.out.rfind("query,k0,k1,k2,k3,k4\n0,0,-inf,-inf,-inf,-inf\n1,0,0,-inf,-inf,-inf\n", 0) == 0);
    const auto j = run_json({"mask", "--kind", "both", "--lengths", "3,5,2"});
    CHECK(j["passed"] == true);
    CHECK(j["tensors"][0]["shape"] == nlohmann::json::array({3, 1, 5, 5}));
    CHECK(j["tensors"][0]["data"][0][0][0][3] == "-inf");
    CHECK(j["params"]["lengths"] == nlohmann::json::array({3, 5, 2}));
}

TEST_CASE("mask: --diagonal 0 hides row 0's only key: exit 1 for the plain softmax's NaN alone, 0 with --softmax safe")
{
    const auto r = run_cli({"mask", "--diagonal", "0"});
    CHECK(r.status == 1);
    // row 0's weights are NaN: neither a number nor 0 at its masked keys
    CHECK(r.err == "attnlab: failed checks: masked_weights_exactly_zero, no_nan_weights\n");
    CHECK(r.out.find("PASS  row i sees exactly i keys: rows with another count = 0 (needs <= 0)") != std::string::npos);
    CHECK(r.out.find("fully masked rows: (batch 0, query 0)") != std::string::npos);
    CHECK(r.out.find("safe softmax [0, 0, 0, 0, 0]") != std::string::npos);
    for (const char* diagonal : {"--diagonal=0", "--diagonal=2", "--diagonal=-1"}) {
        CAPTURE(diagonal);
        const auto safe = run_cli({"mask", "--kind", "causal", "--len", "11", diagonal, "--softmax", "safe", "--quiet"});
        CHECK(safe.status == 0);
        CHECK(safe.err.empty());
    }
    // a learner's mask of the usual diagonal, held against a run of diagonal 0, is caught
    const std::string dir = scratch("mask-diagonal");
    std::filesystem::remove_all(dir);
    REQUIRE(run_cli({"mask", "--len", "4", "--save", dir, "--quiet"}).status == 0);
    const auto held = run_cli({"mask", "--len", "4", "--diagonal", "0", "--softmax", "safe", "--against", dir + "/mask.npy", "--quiet"});
    CHECK(held.status == 1);
    CHECK(held.out.find("FAIL  the causal mask triu(fill, diagonal=0) equals the lower-triangular construction where(tril(ones, diagonal=-1), 0, fill): "
                        "elements that differ = 4 (needs <= 0)") != std::string::npos);
    CHECK(held.out.find("FAIL  row i sees exactly i keys: rows with another count = 4 (needs <= 0)") != std::string::npos);
    // the same count in both languages: "4 of 16", "16 个元素中 4 个超出"
    CHECK(held.out.find("; 4 of 16 elements outside") != std::string::npos);
    const auto zh = run_cli({"mask", "--len", "4", "--diagonal", "0", "--softmax", "safe", "--against", dir + "/mask.npy", "--quiet", "--lang", "zh"});
    CHECK(zh.status == 1);
    CHECK(zh.out.find("；16 个元素中 4 个超出") != std::string::npos);
}

TEST_CASE("mask: boolean conventions as CSV 0/1 and JSON true/false")
{
    const auto r = run_cli({"mask", "--kind", "padding", "--lengths", "1,2", "--format", "csv",
                            "--tensor", "key_padding_mask"});
    CHECK(r.out == "batch,key,value\n0,0,0\n0,1,1\n1,0,0\n1,1,0\n");
    const auto j = run_json({"mask", "--kind", "padding", "--lengths", "1,2", "--show", "attn_mask_bool"});
    // the shape scaled_dot_product_attention broadcasts: [batch, 1, 1, key]
    CHECK(j["tensors"][0]["shape"] == nlohmann::json::parse("[2,1,1,2]"));
    CHECK(j["tensors"][0]["axes"] == nlohmann::json::parse(R"(["batch","head","query","key"])"));
    CHECK(j["tensors"][0]["data"] == nlohmann::json::parse("[[[[true,false]]],[[[true,true]]]]"));
}

TEST_CASE("mask: --multiply reports the leaked mass as an article claim without failing the run")
{
    const auto r = run_cli({"mask", "--multiply", "--quiet"});
    CHECK(r.status == 0);
    CHECK(r.out.find("WRONG multiplying by a 0/1 mask leaks") != std::string::npos);
}

TEST_CASE("mask: rectangular masks show both alignments and say which is_causal gives")
{
    const auto j = run_json({"mask", "--len", "2", "--kv-len", "4", "--align", "lower-right"});
    CHECK(j["passed"] == true);
    std::vector<std::string> names;
    for (const auto& t : j["tensors"]) names.push_back(t["name"]);
    CHECK(std::find(names.begin(), names.end(), "mask_upper_left") != names.end());
    CHECK(std::find(names.begin(), names.end(), "mask_lower_right") != names.end());
    CHECK(j["notes"][0].get<std::string>().find("is_causal=True gives upper-left") != std::string::npos);
}

TEST_CASE("mask: --fill accepts -inf, -1e9 and numbers given as separate arguments")
{
    CHECK(run_cli({"mask", "--fill", "-1e9", "--quiet"}).status == 0);
    CHECK(run_cli({"mask", "--fill", "-inf", "--quiet"}).status == 0);
    CHECK(run_cli({"mask", "--fill=-1e4", "--quiet"}).status == 0);
}

TEST_CASE("mask: errors")
{
    expect_usage_error({"mask", "--kind", "diagonal"}, "--kind");
    expect_usage_error({"mask", "--kind", "none"}, "builds no mask");
    expect_usage_error({"mask", "--lengths", "3,2"}, "makes no sense with --kind causal");
    expect_usage_error({"mask", "--kind", "padding"}, "needs --lengths");
    expect_usage_error({"mask", "--kind", "padding", "--lengths", "3,x"}, "--lengths");
    expect_usage_error({"mask", "--kind", "padding", "--lengths", ""}, "--lengths");
    expect_usage_error({"mask", "--kind", "padding", "--lengths", "3,-2"}, "must not be negative");
    expect_usage_error({"mask", "--kind", "padding", "--lengths", "3,8", "--len", "5"}, "--lengths has 8");
    expect_usage_error({"mask", "--kind", "window", "--window", "0"}, "--window must be at least 1");
    expect_usage_error({"mask", "--window", "3"}, "--window applies to --kind window");
    expect_usage_error({"mask", "--fill", "nan"}, "--fill must be");
    expect_usage_error({"mask", "--fill", "3"}, "--fill must be");
    expect_usage_error({"mask", "--len", "0"}, "--len");
    expect_usage_error({"mask", "--kind", "padding", "--lengths", "2", "--diagonal", "0"}, "--kind padding has none");
}

TEST_CASE("mask: --tol replaces rounding tolerances but never loosens a bit-for-bit identity")
{
    const auto j = run_json({"mask", "--tol", "0.5", "--quiet"});
    bool seen = false;
    for (const auto& c : j["checks"]) {
        if (c["name"] == "hidden_scores_ignored") {
            seen = true;
            CHECK(c["tolerance"] == 0.0);
        }
        if (c["name"] == "rows_sum_to_one") CHECK(c["tolerance"] == 0.5);
    }
    CHECK(seen);
}

// The mask bugs learners write, through the CLI, named in English and in Chinese.
TEST_CASE("mask: a learner's mask bugs are named: a flipped triangle, a row with no key under a plain softmax, weights zeroed after the softmax")
{
    const std::string dir = scratch("mask-slips");
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    // the flipped triangle, masked_fill(tril(ones) == 1, -inf), as exercise solve writes it
    REQUIRE(run_cli({"exercise", "new", "causal-mask", dir + "/causal"}).status == 0);
    REQUIRE(run_cli({"exercise", "solve", "causal-mask", dir + "/causal", "--mistake", "mask_flipped"}).status == 0);
    const std::string flipped = dir + "/causal/solution/answer.npy";
    const auto en = run_cli({"mask", "--len", "6", "--dtype", "float64", "--against", flipped, "--quiet"});
    CHECK(en.status == 1);
    CHECK(en.out.find("  matches mask_flipped: the triangle is flipped: the mask hides the past and the query itself") != std::string::npos);
    const auto zh = run_cli({"mask", "--len", "6", "--dtype", "float64", "--against", flipped, "--quiet", "--lang", "zh"});
    CHECK(zh.out.find("  符合 mask_flipped：三角形反了：掩码遮住了过去和查询自己") != std::string::npos);
    // a padding length 0 under a plain softmax: NaN rows, against a safe softmax's zeros
    REQUIRE(run_cli({"mask", "--kind", "padding", "--lengths", "3,0", "--save", dir + "/plain", "--quiet"}).status == 1);
    const std::vector<std::string> safe = {"mask", "--kind", "padding", "--lengths", "3,0", "--softmax", "safe", "--against-tensor", "weights",
                                           "--against", dir + "/plain/weights.npy", "--quiet"};
    const auto nan = run_cli(safe);
    CHECK(nan.out.find("  matches fully_masked_row_nan: a row with no visible key went through a plain softmax and became NaN") != std::string::npos);
    CHECK(nan.out.find("the NaN fill whole rows that are meant to see no key, where a plain softmax meets -inf - (-inf) (use a safe softmax") != std::string::npos);
    CHECK(nan.out.find("0 * inf") == std::string::npos);  // the other cause of NaN is not suggested
    auto safe_zh = safe;
    safe_zh.insert(safe_zh.end(), {"--lang", "zh"});
    const auto nan_zh = run_cli(safe_zh);
    CHECK(nan_zh.out.find("  符合 fully_masked_row_nan：一行没有任何可见的键，经过普通 softmax 变成了 NaN") != std::string::npos);
    CHECK(nan_zh.out.find("NaN 占满了整行") != std::string::npos);
    // the same NaN rows against a plain-softmax run: MATCH, and no property line fails under it
    const auto same = run_cli({"mask", "--kind", "padding", "--lengths", "3,0", "--against-tensor", "weights", "--against", dir + "/plain/weights.npy"});
    CHECK(same.out.find("\nMATCH ") != std::string::npos);
    const std::string learner = same.out.substr(same.out.find("properties of your tensor"));
    CHECK(learner.find("FAIL") == std::string::npos);
    CHECK(same.out.find("note: not listed: masked_weights_exactly_zero, no_nan_weights; your tensor matches the reference") != std::string::npos);
    // weights zeroed after the softmax, rows left as they are, in the masked-attention exercise
    REQUIRE(run_cli({"exercise", "new", "masked-attention", dir + "/attn"}).status == 0);
    REQUIRE(run_cli({"exercise", "solve", "masked-attention", dir + "/attn", "--mistake", "mask_after_softmax"}).status == 0);
    const std::string in = dir + "/attn/inputs/";
    const auto after = run_cli({"attend", "--batch", "1", "--len", "5", "--mask", "causal", "--dtype", "float64", "--seed", "0", "--input", "x=" + in + "x.npy",
                                "--input", "w_q=" + in + "w_q.npy", "--input", "w_k=" + in + "w_k.npy", "--input", "w_v=" + in + "w_v.npy", "--quiet",
                                "--against-tensor", "out_merged", "--against", dir + "/attn/solution/answer.npy"});
    CHECK(after.out.find("  matches mask_after_softmax: the masked weights were zeroed after the softmax and the rows not renormalised") != std::string::npos);
}

TEST_CASE("mask: a learner's tensor of another shape is told which tensors have its shape, and pointed at the shape, not at a worst element")
{
    const std::string dir = scratch("mask-shape");
    std::filesystem::remove_all(dir);
    REQUIRE(run_cli({"attend", "--len", "6", "--mask", "causal", "--save", dir, "--show", "weights", "--quiet"}).status == 0);
    // the weights, computed only on demand, are named by their declared shape
    const auto r = run_cli({"attend", "--len", "6", "--mask", "causal", "--against", dir + "/weights.npy", "--quiet"});
    CHECK(r.status == 1);
    CHECK(r.out.find("note: your shape is that of scores, weights: to compare with one of them, add --against-tensor NAME (e.g. --against-tensor weights)") !=
          std::string::npos);
    CHECK(r.out.find("no known mistake matches it; first make the shape [1, 6, 8] (the axes of out_merged: see --help)") != std::string::npos);
    CHECK(r.out.find("start from the worst element") == std::string::npos);
}

TEST_CASE("mask and attend: --window-convention names the window's rule, in the params, and needs a window")
{
    const auto j = run_json({"mask", "--kind", "window", "--window", "3", "--len", "6", "--window-convention", "hf2024"});
    CHECK(j["params"]["window"] == 3);  // W as given; the rule says what it shows
    CHECK(j["params"]["window_convention"] == "hf2024");
    CHECK(j["passed"] == true);
    const auto keys = run_json({"mask", "--kind", "window", "--window", "3", "--len", "6"});
    CHECK(keys["params"]["window_convention"] == "keys");
    const auto a = run_json({"attend", "--mask", "window", "--window", "2", "--len", "5", "--window-convention", "hf2024", "--show", "weights"});
    CHECK(a["passed"] == true);
    expect_usage_error({"mask", "--window-convention", "hf2024"}, "--window-convention applies to --kind window");
    expect_usage_error({"attend", "--mask", "causal", "--window-convention", "hf2024"}, "--window-convention applies to --mask window");
    expect_usage_error({"mask", "--kind", "window", "--window", "2", "--window-convention", "hf2025"}, "--window-convention");
}

TEST_CASE("mask: a finite fill with --multiply raises no false alarm: the renormalised product is held to the -inf mask's weights")
{
    // with --fill -1.79 the additive mask's own weights leak, so they are not the yardstick
    const auto r = run_json({"mask", "--kind", "causal", "--len", "11", "--fill", "-1.79", "--softmax", "plain", "--multiply", "--seed", "705523"});
    bool renormalised = false;
    for (const auto& c : r["checks"]) {
        if (c["name"] == "renormalised_multiply_masks") {
            renormalised = true;
            CHECK(c["passed"] == true);
            CHECK(c["role"] == "invariant");
        }
        // a fill that leaks shows the leak: a demonstration, never the exit status
        if (c["name"] == "masked_weights_exactly_zero" || c["name"] == "row0_one_hot" || c["name"] == "hidden_scores_ignored") {
            CHECK(c["role"] == "demonstration");
            CHECK(c["passed"] == false);
        }
    }
    CHECK(renormalised);
    CHECK(run_cli({"mask", "--kind", "causal", "--len", "11", "--fill", "-1.79", "--softmax", "plain", "--multiply", "--seed", "705523", "--quiet"}).status == 0);
    // -1e9 hides exactly (exp underflows to 0): the exact-zero checks stay invariants
    int exact = 0;
    const auto minus_1e9 = run_json({"mask", "--len", "6", "--fill", "-1e9"});
    for (const auto& c : minus_1e9["checks"])
        if (c["name"] == "masked_weights_exactly_zero") {
            CHECK(c["role"] == "invariant");
            ++exact;
        }
    CHECK(exact == 1);
}

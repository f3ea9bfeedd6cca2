#include "cli_support.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

TEST_CASE("nope: out = 1/(i+1) as CSV, the bag-of-words claim in JSON, exit 0")
{
    const auto csv = run_cli({"nope", "--len", "4", "--format", "csv", "--dtype", "float64"});
    CHECK(csv.status == 0);
    CHECK(csv.out == "pos,value\n0,1\n1,0.5\n2,0.3333333333333333\n3,0.25\n");
    const auto j = run_json({"nope", "--len", "4"});
    CHECK(j["command"] == "nope");
    CHECK(j["params"]["len"] == 4);
    CHECK(j["params"]["mask"] == "causal");
    std::vector<std::string> names;
    for (const auto& c : j["checks"]) names.push_back(c["name"]);
    CHECK(names == std::vector<std::string>{"weights_uniform_over_visible", "out_closed_form", "position_readable_from_output",
                                            "no_pe_is_bag_of_words_causal"});
    CHECK(j["checks"][3]["role"] == "article");
    CHECK(j["checks"][3]["passed"] == false);
    CHECK(j["checks"][3]["measured"] == doctest::Approx(0.75));
    const auto none = run_json({"nope", "--mask", "none"});
    CHECK(none["checks"][2]["name"] == "no_pe_is_bag_of_words_bidirectional");
    CHECK(none["checks"][2]["passed"] == true);
}

TEST_CASE("nope: a bfloat16 run shows positions rounded together and still exits 0, and speaks Chinese")
{
    const auto r = run_cli({"nope", "--len", "400", "--dtype", "bfloat16", "--quiet"});
    CHECK(r.status == 0);
    CHECK(r.out.find("NOT SHOWN the output alone tells every position apart") != std::string::npos);
    CHECK(r.out.find("in bfloat16 = 74 (needs <= 0)") != std::string::npos);
    const auto zh = run_cli({"nope", "--lang", "zh", "--quiet"});
    CHECK(zh.out.find("没有位置编码，每个输出也能说出自己的位置") != std::string::npos);
}

TEST_CASE("nope: --against names the two usual mistakes, and usage errors exit 2 with one line")
{
    const std::string dir = scratch("nope-against");
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/ignored.csv") << "0.25\n0.25\n0.25\n0.25\n";
    const auto ignored = run_cli({"nope", "--len", "4", "--against", dir + "/ignored.csv"});
    CHECK(ignored.status == 1);
    CHECK(ignored.out.find("matches mask_ignored") != std::string::npos);
    CHECK(ignored.err == "attnlab: failed checks: against (" + dir + "/ignored.csv, tensor out)\n");
    std::ofstream(dir + "/right.csv") << "1\n0.5\n0.33333334\n0.25\n";
    CHECK(run_cli({"nope", "--len", "4", "--against", dir + "/right.csv"}).status == 0);
    std::filesystem::remove_all(dir);
    expect_usage_error({"nope", "--mask", "padding"}, "--mask: padding not in {none,causal}");
    expect_usage_error({"nope", "--len", "0"}, "--len");
}

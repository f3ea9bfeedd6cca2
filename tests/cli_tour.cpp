#include "cli_support.hpp"

#include <doctest/doctest.h>

TEST_CASE("tour: exit 0, every section in order, and the claims table")
{
    const auto r = run_cli({"tour"}, {"LANG=C"});
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    std::size_t at = 0;
    for (const char* title : {"1. Order blindness", "2. Sinusoidal positional encoding", "3. Rotary position embedding",
                              "4. ALiBi", "5. Causal and padding masks", "6. Encoder and decoder attention", "Claims:"}) {
        CAPTURE(title);
        const auto pos = r.out.find(title, at);
        CHECK(pos != std::string::npos);
        at = pos == std::string::npos ? at : pos;
    }
    CHECK(r.out.find("the program's own invariants all hold") != std::string::npos);
}

TEST_CASE("tour: JSON has every section with tensors and checks, and every claim with its source")
{
    const auto j = run_json({"tour"});
    CHECK(j["command"] == "tour");
    CHECK(j["passed"] == true);
    std::vector<std::string> names;
    for (const auto& s : j["sections"]) {
        names.push_back(s["name"]);
        CHECK(!s["checks"].empty());
        CHECK(s["passed"] == true);
    }
    CHECK(names == std::vector<std::string>{"order", "pe", "rope", "alibi", "mask", "encoder_decoder"});
    CHECK(j["claims"].size() >= 20);
    int wrong = 0;
    for (const auto& c : j["claims"]) {
        CHECK(!c["source"].get<std::string>().empty());
        wrong += c["role"] == "article" && c["passed"] == false;
    }
    CHECK(wrong >= 3);  // the articles' claims the measurements refute
}

TEST_CASE("tour: --section runs one section")
{
    const auto j = run_json({"tour", "--section", "rope"});
    REQUIRE(j["sections"].size() == 1);
    CHECK(j["sections"][0]["name"] == "rope");
    CHECK(j["sections"][0]["tensors"][0]["name"] == "q_rot");
}

TEST_CASE("tour: Chinese narration with --lang zh, or from LANG")
{
    auto r = run_cli({"tour", "--section", "order", "--lang", "zh"});
    CHECK(r.status == 0);
    CHECK(r.out.find("顺序盲区") != std::string::npos);
    CHECK(r.out.find("论断汇总") != std::string::npos);
    r = run_cli({"tour", "--section", "order"}, {"LANG=zh_CN.UTF-8"});
    CHECK(r.out.find("顺序盲区") != std::string::npos);
    r = run_cli({"tour", "--section", "order", "--lang", "en"}, {"LANG=zh_CN.UTF-8"});
    CHECK(r.out.find("Order blindness") != std::string::npos);
    const auto j = run_json({"tour", "--section", "mask", "--lang", "zh"});
    CHECK(j["sections"][0]["checks"][0].contains("name"));  // keys stay English
}

TEST_CASE("tour: errors")
{
    expect_usage_error({"tour", "--section", "nope"}, "unknown --section 'nope'; sections: order, pe, rope");
    expect_usage_error({"tour", "--lang", "fr"}, "--lang");
    expect_usage_error({"tour", "--format", "csv"}, "--format");
}

#include "cli_support.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

TEST_CASE("learned: x_pe as CSV, the checks in JSON, and a run past max_len exits 0 with the demonstration and the note")
{
    const auto csv = run_cli({"learned", "--len", "2", "--dim", "2", "--max-len", "4", "--format", "csv", "--dtype", "float64"});
    CHECK(csv.status == 0);
    CHECK(csv.out.rfind("batch,pos,dim,value\n0,0,0,", 0) == 0);
    CHECK(std::count(csv.out.begin(), csv.out.end(), '\n') == 5);
    const auto j = run_json({"learned", "--len", "20", "--max-len", "16"});
    CHECK(j["command"] == "learned");
    CHECK(j["params"]["max_len"] == 16);
    CHECK(j["passed"] == true);
    std::vector<std::string> names;
    for (const auto& c : j["checks"]) names.push_back(c["name"]);
    CHECK(names == std::vector<std::string>{"x_pe_is_x_plus_table", "learned_table_stops_at_max_len", "learned_dots_depend_on_position",
                                            "learned_has_no_linear_shift", "sinusoidal_dots_depend_on_offset_only"});
    CHECK(j["checks"][1]["role"] == "demonstration");
    CHECK(j["checks"][1]["measured"] == 4);
    const auto text = run_cli({"learned", "--len", "20", "--max-len", "16", "--show", "x_pe"});
    CHECK(text.status == 0);
    CHECK(text.out.find("x_pe  shape [1, 16, 8]  (batch, pos, dim)") != std::string::npos);
    CHECK(text.out.find("x_pe holds the first 16 of the 20 positions") != std::string::npos);
    const auto zh = run_cli({"learned", "--lang", "zh", "--len", "20", "--quiet"});
    CHECK(zh.out.find("可学习位置表无法外推到 max_len 之外") != std::string::npos);
}

TEST_CASE("learned: --against names both usual mistakes, a right answer passes, and a given table is measured")
{
    const std::string dir = scratch("learned-against");
    std::filesystem::create_directories(dir);
    const std::vector<std::string> base{"learned", "--len", "3", "--dim", "2", "--max-len", "4", "--dtype", "float64"};
    auto with = [&](std::vector<std::string> extra) {
        auto args = base;
        args.insert(args.end(), extra.begin(), extra.end());
        return run_cli(args);
    };
    REQUIRE(with({"--save", dir + "/run"}).status == 0);
    // x alone: the table left out
    const auto x = with({"--against", dir + "/run/x.npy"});
    CHECK(x.status == 1);
    CHECK(x.out.find("matches table_not_added") != std::string::npos);
    CHECK(x.err == "attnlab: failed checks: against (" + dir + "/run/x.npy, tensor x_pe)\n");
    CHECK(with({"--against", dir + "/run/x_pe.npy"}).status == 0);
    // a rotation table (dots depend on k alone) given as pos_emb
    std::ofstream(dir + "/rot.csv") << "1,0\n0,1\n-1,0\n0,-1\n";
    const auto rot = with({"--input", "pos_emb=" + dir + "/rot.csv", "--quiet"});
    CHECK(rot.status == 0);
    CHECK(rot.out.find("NOT SHOWN pos_emb(p).pos_emb(p+k) depends on p") != std::string::npos);
    // alone, the table sets the sizes; with --max-len given, the refusal names the options that fit
    CHECK(run_cli({"learned", "--input", "pos_emb=" + dir + "/rot.csv"}).out.find("note: sizes from the --input files: --dim 2 --max-len 4\n") != std::string::npos);
    expect_usage_error({"learned", "--max-len", "16", "--input", "pos_emb=" + dir + "/rot.csv"},
                       "--input pos_emb: the file holds shape [4, 2], the options given imply [16, 8]; --dim 2 --max-len 4 would fit it");
    std::filesystem::remove_all(dir);
    expect_usage_error({"learned", "--dim", "7"}, "--dim must be even");
    expect_usage_error({"learned", "--max-len", "0"}, "--max-len");
    expect_usage_error({"learned", "--input", "pos_emb=/nonexistent.npy"}, "/nonexistent.npy: cannot be read");
}

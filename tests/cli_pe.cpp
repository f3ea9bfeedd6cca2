#include "cli_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>

TEST_CASE("pe: default run passes every check, prints the table with shape and axes")
{
    const auto r = run_cli({"pe", "--len", "8", "--dim", "8"});
    CHECK(r.status == 0);
    CHECK(r.out.rfind("pe  shape [8, 8]  (pos, dim)  float32\n", 0) == 0);
    CHECK(r.out.find("PASS  relative shift is linear") != std::string::npos);
    CHECK(r.out.find("FAIL") == std::string::npos);
}

TEST_CASE("pe: every option in every format")
{
    for (const char* fmt : {"text", "csv", "json"}) {
        for (const char* layout : {"interleaved", "concat"}) {
            for (const char* method : {"exp-log", "pow"}) {
                const auto r = run_cli({"pe", "--len", "12", "--dim", "10", "--layout", layout,
                                        "--freq-method", method, "--max-len", "20", "--embed",
                                        "--batch", "2", "--scale-embed", "--shift", "3",
                                        "--base", "500", "--format", fmt});
                CAPTURE(fmt);
                CAPTURE(layout);
                CAPTURE(method);
                CHECK(r.status == 0);
                CHECK(r.err.empty());
            }
        }
    }
}

TEST_CASE("pe: tensor2tensor's get_timing_signal_1d with min_timescale, start_index and an odd channel count")
{
    // D = 4, concat, base 8, m = 2: w = 2, 0.5; positions 1 and 2 (start_index 1):
    // rows [sin 2, sin 0.5, cos 2, cos 0.5] and [sin 4, sin 1, cos 4, cos 1]
    const auto j = run_json({"pe", "--len", "2", "--dim", "4", "--layout", "concat", "--base", "8", "--min-timescale", "2", "--start-index", "1",
                             "--dtype", "float64", "--show", "pe,freq"});
    CHECK(j["passed"] == true);
    const std::vector<std::vector<double>> expected = {{std::sin(2.0), std::sin(0.5), std::cos(2.0), std::cos(0.5)},
                                                       {std::sin(4.0), std::sin(1.0), std::cos(4.0), std::cos(1.0)}};
    for (std::size_t r = 0; r < 2; ++r)
        for (std::size_t c = 0; c < 4; ++c) CHECK(j["tensors"][0]["data"][r][c].get<double>() == doctest::Approx(expected[r][c]).epsilon(1e-14));
    CHECK(j["tensors"][1]["data"][1].get<double>() == doctest::Approx(0.5).epsilon(1e-15));
    std::vector<std::string> names;
    for (const auto& c : j["checks"]) names.push_back(c["name"]);
    CHECK(std::find(names.begin(), names.end(), "row0_exact") == names.end());  // row 0 is PE(1)
    // D = 5: two pairs (w = 1, 1e-4, t2t) and a zero last column, as fairseq pads it
    const auto odd = run_json({"pe", "--len", "2", "--dim", "5", "--layout", "concat", "--dtype", "float64", "--show", "pe"});
    CHECK(odd["passed"] == true);
    CHECK(odd["tensors"][0]["shape"] == nlohmann::json::array({2, 5}));
    CHECK(odd["tensors"][0]["data"][1][4] == 0.0);
    CHECK(odd["tensors"][0]["data"][1][1].get<double>() == doctest::Approx(std::sin(1e-4)).epsilon(1e-14));
    CHECK(odd["tensors"][0]["data"][1][3].get<double>() == doctest::Approx(std::cos(1e-4)).epsilon(1e-14));
    bool zero_column_checked = false;
    for (const auto& c : odd["checks"]) zero_column_checked = zero_column_checked || (c["name"] == "odd_dim_zero_column" && c["passed"] == true);
    CHECK(zero_column_checked);
    // concat with the paper's frequencies: w_1 = 10000^(-2/4) = 0.01, not t2t's 10000^(-1)
    const auto paper = run_json({"pe", "--dim", "4", "--layout", "concat", "--frequencies", "paper", "--dtype", "float64", "--show", "freq"});
    CHECK(paper["tensors"][0]["data"][1].get<double>() == doctest::Approx(0.01).epsilon(1e-14));
    expect_usage_error({"pe", "--dim", "5"}, "--dim must be even with --layout interleaved (got 5)");
    expect_usage_error({"pe", "--min-timescale", "20000"}, "--min-timescale must lie in (0, --base)");
    expect_usage_error({"pe", "--base", "50000", "--min-timescale", "0.5", "--dtype", "float16"},
                       "--base / --min-timescale = 100000 does not fit float16 (largest 65504)");
}

TEST_CASE("pe: an odd D's last column that is not zero fails odd_dim_zero_column on the learner's tensor")
{
    const std::string dir = scratch("pe-odd");
    std::filesystem::create_directories(dir);
    const auto j = run_json({"pe", "--len", "2", "--dim", "3", "--layout", "concat", "--dtype", "float64", "--show", "pe"});
    std::ofstream out(dir + "/pe.csv");
    out << std::setprecision(17);
    for (const auto& row : j["tensors"][0]["data"]) out << row[0].get<double>() << "," << row[1].get<double>() << ",0.5\n";
    out.close();
    const auto r = run_cli({"pe", "--len", "2", "--dim", "3", "--layout", "concat", "--dtype", "float64", "--against", dir + "/pe.csv", "--format", "json"});
    CHECK(r.status == 1);
    const auto doc = nlohmann::json::parse(r.out);
    CHECK(doc.dump().find("odd_dim_zero_column") != std::string::npos);
}

TEST_CASE("pe: --embed adds x and h [batch, pos, dim]")
{
    const auto j = run_json({"pe", "--embed", "--batch", "3", "--len", "4", "--dim", "6"});
    REQUIRE(j["tensors"].size() == 7);  // pe, freq, wavelength, x, h, h_sliced_by_batch, angle_error
    CHECK(j["tensors"][3]["name"] == "x");
    CHECK(j["tensors"][4]["name"] == "h");
    CHECK(j["tensors"][4]["shape"] == nlohmann::json::array({3, 4, 6}));
    CHECK(j["tensors"][4]["axes"] == nlohmann::json::array({"batch", "pos", "dim"}));
    CHECK(j["tensors"][5]["name"] == "h_sliced_by_batch");
}

TEST_CASE("pe: the slicing bug: sliced on the batch axis, every position of a sequence gets one code")
{
    const auto j = run_json({"pe", "--embed", "--batch", "2", "--len", "6", "--dim", "8", "--dtype", "float64"});
    const auto& h_bug = j["tensors"][5]["data"];
    const auto& x = j["tensors"][3]["data"];
    // sequence 1 gets PE(1) = (sin 1, cos 1, ...) at every position: h_bug - x is the same row
    for (int i = 0; i < 6; ++i) {
        CHECK(h_bug[1][i][0].get<double>() - x[1][i][0].get<double>() == doctest::Approx(0.8414709848));
        CHECK(h_bug[1][i][1].get<double>() - x[1][i][1].get<double>() == doctest::Approx(0.5403023059));
    }
    bool found = false;
    for (const auto& c : j["checks"]) found = found || (c["name"] == "slicing_bug_loses_position" && c["passed"] == true);
    CHECK(found);
    const auto r = run_cli({"pe", "--embed", "--batch", "2", "--quiet", "--tol", "0"});
    CHECK(r.out.find("FAIL  slicing the table on the batch axis") != std::string::npos);
}

TEST_CASE("pe: errors as the articles' module raises them")
{
    expect_usage_error({"pe", "--dim", "7"}, "--dim must be even");
    expect_usage_error({"pe", "--len", "10", "--max-len", "8"},
                       "input length exceeds the precomputed max-len");
    expect_usage_error({"pe", "--base", "-3"}, "--base");
    expect_usage_error({"pe", "--len", "4", "--shift", "4"}, "--shift must be between 1 and len-1");
}

TEST_CASE("pe --len 1: the layouts check does not apply to one position, and the note says so")
{
    const auto r = run_cli({"pe", "--len", "1", "--shift", "1"});
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK(r.out.find("layouts_not_a_permutation is not checked: with one position (L = 1)") != std::string::npos);
    const auto d2 = run_cli({"pe", "--dim", "2"});
    CHECK(d2.out.find("with one frequency pair (D = 2)") != std::string::npos);
}

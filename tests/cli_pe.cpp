#include "cli_support.hpp"

#include <doctest/doctest.h>

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

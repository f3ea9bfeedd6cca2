// --plot, --plot-style and --plot-file through the CLI: the picture after the output, no
// colour in a pipe, the requests refused before anything is written.
#include "cli_support.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>

#include <cstdio>
#include <string>

namespace {

bool exists(const std::string& path)
{
    struct stat st {};
    return stat(path.c_str(), &st) == 0;
}

}  // namespace

TEST_CASE("--plot draws the main tensor after the check lines, without colour in a pipe")
{
    const auto r = run_cli({"mask", "--len", "5", "--quiet", "--plot", "--plot-style", "ascii"});
    CHECK(r.status == 0);
    const std::string picture = "\nmask [5, 5] (query, key): heatmap, rows query, columns key\n"
                                "0 @----\n  @@---\n  @@@--\n  @@@@-\n4 @@@@@\n  0 2 4\n"
                                "scale: 0 @@@@@@@@@@@@@@@@ 0\nmarks: - -inf\n";
    CHECK(r.out.size() > picture.size());
    CHECK(r.out.substr(r.out.size() - picture.size()) == picture);
    CHECK(r.out.find('\x1b') == std::string::npos);
    // Unicode glyphs in a UTF-8 locale, ASCII otherwise.
    CHECK(run_cli({"mask", "--len", "5", "--quiet", "--plot"}, {"LANG=C.UTF-8", "LC_ALL="}).out.find("█----") != std::string::npos);
    CHECK(run_cli({"mask", "--len", "5", "--quiet", "--plot"}, {"LANG=C", "LC_ALL="}).out.find("@----") != std::string::npos);
    // --tensor picks the tensor; auto draws a rank-1 tensor as a curve.
    const auto slopes = run_cli({"alibi", "--tensor", "slopes", "--quiet", "--plot", "--plot-style", "ascii"});
    CHECK(slopes.status == 0);
    CHECK(slopes.out.find("slopes [4] (head): curves against head") != std::string::npos);
    const auto weights = run_cli({"attend", "--len", "300", "--quiet", "--tensor", "weights", "--plot", "heatmap", "--plot-style", "ascii"}, {"COLUMNS=60"});
    CHECK(weights.out.find("downsampled: each cell is the mean of 8 x 6 values (rows x columns)") != std::string::npos);
    CHECK(weights.out.find("head=1") != std::string::npos);
}

TEST_CASE("--plot-file writes PNG or SVG, and what it refuses is refused before anything is written")
{
    const std::string png = scratch("cli-plot.png");
    std::remove(png.c_str());
    const auto r = run_cli({"rope", "--tensor", "dots", "--format", "json", "--quiet", "--plot-file", png});
    CHECK(r.status == 0);
    CHECK(exists(png));
    expect_usage_error({"pe", "--plot", "--format", "json"}, "--plot draws in the text output; with --format json or csv, use --plot-file");
    expect_usage_error({"pe", "--plot-style", "ascii"}, "--plot-style chooses the glyphs of --plot; give --plot too");
    expect_usage_error({"pe", "--plot-file", "/tmp/attnlab-no-such-folder/pe.png"}, "the folder /tmp/attnlab-no-such-folder does not exist");
    CHECK_FALSE(exists("/tmp/attnlab-no-such-folder"));
    expect_usage_error({"pe", "--plot-file", "/tmp/pe.jpg"}, "must end in .png or .svg");
    expect_usage_error({"alibi", "--tensor", "bias", "--plot", "lines"}, "--plot lines draws a rank-1 or rank-2 tensor; bias has rank 3");
    expect_usage_error({"pe", "--plot", "bars"}, "--plot");
}

TEST_CASE("tour: no pictures in a pipe, and --no-plot is accepted")
{
    const auto r = run_cli({"tour", "--section", "mask", "--no-plot"});
    CHECK(r.status == 0);
    CHECK(r.out.find(": heatmap, rows") == std::string::npos);
    CHECK(run_cli({"tour", "--section", "mask"}).out == r.out);
}

TEST_CASE("cairo is loaded only by a run that writes a picture file")
{
    // the dynamic loader names every library it loads under LD_DEBUG=libs
    const auto plain = run_cli({"pe", "--quiet"}, {"LD_DEBUG=libs"});
    CHECK(plain.status == 0);
    CHECK(plain.err.find("libattnlab_picture") == std::string::npos);
    CHECK(plain.err.find("libcairo") == std::string::npos);
    const std::string png = scratch("cli-loaded.png");
    const auto drawn = run_cli({"pe", "--quiet", "--plot-file", png}, {"LD_DEBUG=libs"});
    CHECK(drawn.status == 0);
    CHECK(drawn.err.find("libattnlab_picture") != std::string::npos);
    CHECK(drawn.err.find("libcairo") != std::string::npos);
    CHECK(slurp(png).rfind("\x89PNG", 0) == 0);
    std::remove(png.c_str());
}

TEST_CASE("OpenBLAS is loaded only by a run that multiplies matrices")
{
    const auto plain = run_cli({"pe", "--quiet"}, {"LD_DEBUG=libs"});
    CHECK(plain.status == 0);
    CHECK(plain.err.find("libopenblas") == std::string::npos);
    const auto block = run_cli({"attend", "--len", "8", "--quiet"}, {"LD_DEBUG=libs"});
    CHECK(block.status == 0);
    CHECK(block.err.find("libopenblas") != std::string::npos);
}

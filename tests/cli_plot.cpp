// --plot, --plot-style and --plot-file through the CLI: the picture after the output, no
// colour in a pipe, the requests refused before anything is written.
#include "cli_support.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

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
                                "scale: @ 0 (every finite value)\nmarks: - -inf\n";
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

TEST_CASE("--compare, --tokens and --plot-scale: the picture a slide needs, and what they refuse")
{
    const std::string svg = scratch("cli-compare.svg"), png = scratch("cli-scale.png");
    const auto pair = run_cli({"permute-test", "--quiet", "--compare", "weights,weights_perm", "--plot-file", svg});
    CHECK(pair.status == 0);
    const std::string doc = slurp(svg);
    CHECK(doc.find(">Attention weights vs attention weights, input permuted</text>") != std::string::npos);
    std::size_t panels = 0;
    for (std::size_t at = doc.find("<g class=\"panel\""); at != std::string::npos; at = doc.find("<g class=\"panel\"", at + 1)) ++panels;
    CHECK(panels == 2);
    const auto tokens = run_cli({"attend", "--len", "3", "--heads", "1", "--dim", "4", "--mask", "causal", "--tensor", "weights", "--quiet", "--plot",
                                 "--plot-style", "ascii", "--tokens", "狗 咬 人", "--plot-file", png, "--plot-scale", "2"});
    CHECK(tokens.status == 0);
    CHECK(tokens.out.find("tokens: 0=狗  1=咬  2=人\n") != std::string::npos);
    const std::string bytes = slurp(png);
    REQUIRE(bytes.size() > 24);
    const auto be32 = [&](std::size_t at) { return (static_cast<unsigned char>(bytes[at]) << 24) | (static_cast<unsigned char>(bytes[at + 1]) << 16) |
                                                   (static_cast<unsigned char>(bytes[at + 2]) << 8) | static_cast<unsigned char>(bytes[at + 3]); };
    CHECK(be32(16) == 2560);  // the IHDR's width and height
    CHECK(be32(20) == 1440);
    const std::string upper = scratch("cli-scale-upper.PNG");  // the ending in any case, as --plot-file takes it
    CHECK(run_cli({"pe", "--quiet", "--plot-file", upper, "--plot-scale", "2"}).status == 0);
    CHECK(slurp(upper).rfind("\x89PNG", 0) == 0);
    std::remove(upper.c_str());
    std::remove(svg.c_str());
    std::remove(png.c_str());
    expect_usage_error({"attend", "--len", "4", "--tensor", "weights", "--plot", "--tokens", "a b c"}, "--tokens gives 3 tokens, but the picture has 4 positions");
    expect_usage_error({"attend", "--len", "4", "--tokens", "a b c d"}, "--tokens labels a picture; give --plot or --plot-file");
    expect_usage_error({"pe", "--plot-file", svg, "--plot-scale", "2"}, "--plot-scale sizes a PNG; give --plot-file PATH.png");
    expect_usage_error({"pe", "--plot-file", png, "--plot-scale", "9"}, "--plot-scale");
    expect_usage_error({"permute-test", "--compare", "weights", "--plot"}, "--compare takes two different tensor names A,B (got 'weights')");
    expect_usage_error({"permute-test", "--compare", "weights,weights"}, "--compare draws a picture; give --plot or --plot-file");
    expect_usage_error({"permute-test", "--compare", "weights,against", "--plot"}, "--compare against draws your --against tensor; give --against FILE");
    expect_usage_error({"permute-test", "--compare", "weights,out", "--plot"}, "--compare: weights [6, 6] and out [6, 8] differ in shape");
    expect_usage_error({"permute-test", "--compare", "weights,nothing", "--plot"}, "unknown tensor 'nothing' for permute-test");
    CHECK_FALSE(exists(svg));
}

TEST_CASE("--compare against draws your tensor beside the run's and their difference")
{
    const std::string dir = scratch("cli-compare-f16"), svg = scratch("cli-compare-yours.svg");
    const std::vector<std::string> run{"attend", "--len", "6", "--heads", "1", "--dim", "4", "--mask", "causal", "--quiet"};
    auto save = run;
    save.insert(save.end(), {"--dtype", "float64", "--save", dir});
    REQUIRE(run_cli(save).status == 0);
    auto cmp = run;
    cmp.insert(cmp.end(), {"--against", dir + "/weights.npy", "--against-tensor", "weights", "--compare", "weights,against", "--plot-file", svg});
    const auto r = run_cli(cmp);
    CHECK(r.status == 0);  // a float64 run's weights match the float32 run's
    const std::string doc = slurp(svg);
    CHECK(doc.find(">Attention weights vs your tensor (causal mask)</text>") != std::string::npos);
    CHECK(doc.find(">Your tensor, batch 0, head 0</text>") != std::string::npos);
    CHECK(doc.find(">difference: yours - weights</text>") != std::string::npos);
    CHECK(doc.find("(this panel&apos;s own)") == std::string::npos);
    CHECK(doc.find("this panel's own)</text>") != std::string::npos);
    std::filesystem::remove_all(dir);
    std::remove(svg.c_str());
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
    const std::string svg = scratch("cli-loaded.svg");
    const auto text = run_cli({"pe", "--quiet", "--plot-file", svg}, {"LD_DEBUG=libs"});  // SVG is written without cairo
    CHECK(text.status == 0);
    CHECK(text.err.find("libcairo") == std::string::npos);
    CHECK(slurp(svg).find("<text") != std::string::npos);
    std::remove(svg.c_str());
    const std::string png = scratch("cli-loaded.png");
    const auto drawn = run_cli({"pe", "--quiet", "--plot-file", png}, {"LD_DEBUG=libs"});
    CHECK(drawn.status == 0);
    CHECK(drawn.err.find("libattnlab_picture") != std::string::npos);
    CHECK(drawn.err.find("libcairo") != std::string::npos);
    CHECK(slurp(png).rfind("\x89PNG", 0) == 0);
    std::remove(png.c_str());
}

TEST_CASE("OpenBLAS is loaded only by a run with a product above 2^16 multiply-adds")
{
    const auto plain = run_cli({"pe", "--quiet"}, {"LD_DEBUG=libs"});
    CHECK(plain.status == 0);
    CHECK(plain.err.find("libopenblas") == std::string::npos);
    // [8, 8] x [8, 4] per head: plain loops
    const auto small = run_cli({"attend", "--len", "8", "--quiet"}, {"LD_DEBUG=libs"});
    CHECK(small.status == 0);
    CHECK(small.err.find("libopenblas") == std::string::npos);
    // [256, 64] x [64, 32] per head (two heads): 524288 multiply-adds
    const auto block = run_cli({"attend", "--len", "256", "--dim", "64", "--quiet"}, {"LD_DEBUG=libs"});
    CHECK(block.status == 0);
    CHECK(block.err.find("libopenblas") != std::string::npos);
}

TEST_CASE("check lines keep one line each in a pipe, whatever COLUMNS says")
{
    const auto r = run_cli({"attend", "--len", "8", "--quiet"}, {"COLUMNS=40"});
    CHECK(r.status == 0);
    std::size_t lines = 0, at = 0;
    for (std::size_t nl = r.out.find('\n'); nl != std::string::npos; at = nl + 1, nl = r.out.find('\n', at)) {
        const std::string line = r.out.substr(at, nl - at);
        CHECK((line.rfind("PASS  ", 0) == 0 || line.rfind("WRONG ", 0) == 0 || line.rfind("IMPRECISE ", 0) == 0));  // no continuation lines
        CHECK(line.size() > 40);
        ++lines;
    }
    CHECK(lines >= 5);
}

TEST_CASE("--report writes one HTML page per run, also when a check fails, and refuses a bad path first")
{
    const std::string page = scratch("cli-report.html");
    const auto ok = run_cli({"attend", "--len", "4", "--quiet", "--report", page});
    CHECK(ok.status == 0);
    const std::string html = slurp(page);
    CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
    CHECK(html.find("<code>attnlab attend --len 4 --quiet</code>") != std::string::npos);  // the command without --report
    // A learner's wrong answer: exit 1, and the page says so.
    const std::string wrong = scratch("cli-report-wrong.csv");
    {
        std::ofstream f(wrong);
        f << "1,2\n3,4\n";
    }
    const auto failed = run_cli({"mask", "--len", "2", "--report", page, "--against", wrong});
    CHECK(failed.status == 1);
    const std::string failed_page = slurp(page);
    CHECK(failed_page.find("<p class=\"summary fail\">DIFFERS") != std::string::npos);
    // the learner's tensor drawn beside the reference, with their difference, and where they differ
    CHECK(failed_page.find("<figure data-tensor=\"mask,yours\">") != std::string::npos);
    CHECK(failed_page.find("difference: yours - mask") != std::string::npos);
    CHECK(failed_page.find("<li class=\"located\">worst: [0, 1] expected -inf, got 2</li>") != std::string::npos);
    CHECK(failed_page.find("<li class=\"located\">they differ in every query; every key</li>") != std::string::npos);
    // --quiet prints no tensor, and the page still draws the compared pair
    REQUIRE(run_cli({"mask", "--len", "2", "--report", page, "--against", wrong, "--quiet"}).status == 1);
    CHECK(slurp(page).find("<figure data-tensor=\"mask,yours\">") != std::string::npos);
    std::remove(wrong.c_str());
    std::remove(page.c_str());
    expect_usage_error({"pe", "--report", "/tmp/report.txt"}, "--report /tmp/report.txt: the name must end in .html");
    expect_usage_error({"tour", "--report", "/tmp/attnlab-no-such-folder/t.html"}, "the folder /tmp/attnlab-no-such-folder does not exist");
    expect_usage_error({"pe", "--report", ""}, "--report");
}

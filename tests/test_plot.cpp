// Pictures: golden renderings of small tensors in ASCII and Unicode shades, the palettes and
// the colour escapes, downsampling, curves, and PNG and SVG files read back through cairo.
#include "attnlab/render/plot.hpp"

#include "attnlab/core/report.hpp"
#include "test_support.hpp"

#include <cairo.h>
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

using namespace attnlab;

namespace {

Tensor causal_mask5()
{
    Tensor t{"mask", {"query", "key"}, Elem::float32, {5, 5}, {}};
    for (int i = 0; i < 5; ++i)
        for (int j = 0; j < 5; ++j) t.values.push_back(j > i ? -INFINITY : 0.0);
    return t;
}

Tensor two_head_bias()
{
    Tensor t{"bias", {"head", "query", "key"}, Elem::float32, {2, 3, 3}, {}};
    for (int h = 0; h < 2; ++h)
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) t.values.push_back(-(h == 0 ? 0.5 : 0.25) * std::abs(i - j));
    return t;
}

const Tensor kConstant{"c", {"pos", "dim"}, Elem::float64, {2, 3}, {7, 7, 7, 7, 7, 7}};
const Tensor kOne{"x", {"pos", "dim"}, Elem::float64, {1, 1}, {0.5}};
const Tensor kNonFinite{"scores", {"query", "key"}, Elem::float64, {2, 3}, {1.0, -INFINITY, NAN, -2.0, INFINITY, 0.0}};

std::string drawn(const Tensor& t, PlotStyle style)
{
    PlotOptions o;
    o.style = style;
    o.width = 40;
    return plot_text(make_picture(t, PlotKind::heatmap, 32, 40), o);
}

}  // namespace

TEST_CASE("plot: golden ASCII renderings")
{
    CHECK(drawn(causal_mask5(), PlotStyle::ascii) ==
          "mask [5, 5] (query, key): heatmap, rows query, columns key\n"
          "0 @----\n  @@---\n  @@@--\n  @@@@-\n4 @@@@@\n  0 2 4\n"
          "scale: @ 0 (every finite value)\nmarks: - -inf\n");
    CHECK(drawn(two_head_bias(), PlotStyle::ascii) ==
          "bias [2, 3, 3] (head, query, key): heatmap, rows query, columns key\n"
          "head=0\n0 @o \n  o@o\n2  o@\n  0 2\n"
          "head=1\n0 @%o\n  %@%\n2 o%@\n  0 2\n"
          "scale: -1  ..::;;ooxx%%##@ 0\n");
    CHECK(drawn(kConstant, PlotStyle::ascii) == "c [2, 3] (pos, dim): heatmap, rows pos, columns dim\n0 @@@\n1 @@@\n  0 2\nscale: @ 7 (every finite value)\n");
    CHECK(drawn(kOne, PlotStyle::ascii) == "x [1, 1] (pos, dim): heatmap, rows pos, columns dim\n0 @\n  0\nscale: @ 0.5 (every finite value)\n");
    CHECK(drawn(kNonFinite, PlotStyle::ascii) ==
          "scores [2, 3] (query, key): heatmap, rows query, columns key\n0 %-?\n1  +o\n  0 2\n"
          "scale: -2   ..:::;;oooxx%% 1 (centred on 0)\nmarks: - -inf   + +inf   ? NaN\n");
}

TEST_CASE("plot: golden Unicode renderings")
{
    CHECK(drawn(causal_mask5(), PlotStyle::unicode) ==
          "mask [5, 5] (query, key): heatmap, rows query, columns key\n"
          "0 █----\n  ██---\n  ███--\n  ████-\n4 █████\n  0 2 4\n"
          "scale: █ 0 (every finite value)\nmarks: - -inf\n");
    CHECK(drawn(two_head_bias(), PlotStyle::unicode) ==
          "bias [2, 3, 3] (head, query, key): heatmap, rows query, columns key\n"
          "head=0\n0 █▒ \n  ▒█▒\n2  ▒█\n  0 2\n"
          "head=1\n0 █▓▒\n  ▓█▓\n2 ▒▓█\n  0 2\n"
          "scale: -1   ░░░░▒▒▒▒▓▓▓▓██ 0\n");
    CHECK(drawn(kNonFinite, PlotStyle::unicode) ==
          "scores [2, 3] (query, key): heatmap, rows query, columns key\n0 ▓-?\n1  +▒\n  0 2\n"
          "scale: -2    ░░░░░▒▒▒▒▒▓▓▓ 1 (centred on 0)\nmarks: - -inf   + +inf   ? NaN\n");
}

TEST_CASE("plot: colour only as asked, half blocks two rows a cell, palettes as documented")
{
    PlotOptions o;
    o.color = ColorMode::truecolor;
    const std::string colour = plot_text(make_picture(causal_mask5(), PlotKind::heatmap, 32, 80), o);
    CHECK(colour.find("\x1b[38;2;") != std::string::npos);
    CHECK(colour.find("▀") != std::string::npos);
    // five rows in half blocks: three text lines of cells
    CHECK(colour.find("0 \x1b") != std::string::npos);
    CHECK(colour.find("4 \x1b") != std::string::npos);
    o.color = ColorMode::c256;
    CHECK(plot_text(make_picture(causal_mask5(), PlotKind::heatmap, 32, 80), o).find("\x1b[38;5;") != std::string::npos);
    CHECK(drawn(causal_mask5(), PlotStyle::unicode).find('\x1b') == std::string::npos);
    const Rgb white = diverging_color(0.0), blue = diverging_color(-1.0), red = diverging_color(1.0);
    CHECK((white.r == 247 && white.g == 247 && white.b == 247));
    CHECK((blue.b > blue.r && red.r > red.b));
    const Picture pic = make_picture(kNonFinite, PlotKind::heatmap, 8, 8);
    CHECK(pic.diverging);
    CHECK((pic.neg_inf && pic.pos_inf && pic.nan));
    const Rgb nan = cell_color(pic, NAN), neg = cell_color(pic, -INFINITY), pos = cell_color(pic, INFINITY);
    CHECK((nan.g == 230 && nan.r == 0));
    CHECK((neg.r == 64 && neg.g == 64));
    CHECK((pos.r == 230 && pos.b == 230));
}

TEST_CASE("plot: downsampling says so, and block means keep the marks")
{
    Tensor big{"weights", {"query", "key"}, Elem::float64, {100, 300}, std::vector<double>(30000, 0.25)};
    big.values[0] = NAN;
    big.values[299] = -INFINITY;
    const Picture pic = make_picture(big, PlotKind::heatmap, 72, 40);
    CHECK(pic.col_step == 5);
    CHECK(pic.row_step == 3);
    CHECK(pic.panels[0].cols == 60);
    CHECK(pic.panels[0].rows == 34);
    CHECK(std::isnan(pic.panels[0].values[0]));
    CHECK(pic.panels[0].values[59] == -INFINITY);
    CHECK(pic.panels[0].values[1] == 0.25);
    PlotOptions o;
    CHECK(plot_text(pic, o).find("downsampled: each cell is the mean of 3 x 5 values (rows x columns)") != std::string::npos);
    Tensor heads{"w", {"batch", "head", "query", "key"}, Elem::float64, {1, 9, 2, 2}, std::vector<double>(36, 1.0)};
    const Picture panels = make_picture(heads, PlotKind::heatmap, 10, 10, 6);
    CHECK(panels.panels.size() == 6);
    CHECK(panels.panels_left_out == 3);
    CHECK(panels.panels[5].label == "batch=0, head=5");
    CHECK(plot_text(panels, o).find("(3 more panels left out)") != std::string::npos);
}

TEST_CASE("plot: curves in Braille, and what lines cannot draw")
{
    Tensor decay{"decay", {"distance"}, Elem::float64, {4}, {1.0, 0.5, 0.25, NAN}};
    const Picture pic = make_picture(decay, PlotKind::automatic, 10, 10);
    CHECK(pic.kind == PlotKind::lines);
    PlotOptions o;
    o.width = 40;
    const std::string text = plot_text(pic, o);
    CHECK(text.find("decay [4] (distance): curves against distance") == 0);
    CHECK(text.find("\xe2\xa0") != std::string::npos);  // a Braille cell (U+28xx)
    CHECK(text.find("(curves break at values that are not finite)") != std::string::npos);
    o.style = PlotStyle::ascii;
    CHECK(plot_text(pic, o).find('*') != std::string::npos);
    Tensor pe{"pe", {"pos", "dim"}, Elem::float64, {3, 6}, std::vector<double>(18, 0.0)};
    const Picture curves = make_picture(pe, PlotKind::automatic, 10, 10);
    REQUIRE(curves.series.size() == 4);  // the first four dimensions against position
    CHECK(curves.series[3].label == "dim 3");
    CHECK(make_picture(causal_mask5(), PlotKind::automatic, 10, 10).kind == PlotKind::heatmap);
    CHECK_THROWS_AS(make_picture(two_head_bias(), PlotKind::lines, 10, 10), InputError);
    CHECK_THROWS_AS(make_picture(Tensor{"e", {"pos"}, Elem::float64, {0}, {}}, PlotKind::heatmap, 10, 10), InputError);
}

TEST_CASE("plot: PNG and SVG files written whole, and paths refused before anything is drawn")
{
    const std::string png = scratch("test-plot.png"), svg = scratch("test-plot.svg");
    std::remove(png.c_str());
    std::remove(svg.c_str());
    const Picture pic = make_picture(causal_mask5(), PlotKind::heatmap, 160, 160);
    plot_file(pic, png, Lang::en);
    cairo_surface_t* s = cairo_image_surface_create_from_png(png.c_str());
    REQUIRE(cairo_surface_status(s) == CAIRO_STATUS_SUCCESS);
    CHECK(cairo_image_surface_get_width(s) == 1280);
    CHECK(cairo_image_surface_get_height(s) == 720);
    cairo_surface_destroy(s);
    plot_file(pic, svg, Lang::zh);
    std::ifstream f(svg);
    std::stringstream text;
    text << f.rdbuf();
    CHECK(text.str().find("<svg") != std::string::npos);
    CHECK(text.str().find("WenQuanYi Micro Hei, DejaVu Sans") != std::string::npos);
    CHECK_THROWS_WITH_AS(plot_file(pic, "/tmp/attnlab-no-such-dir/x.png", Lang::en), doctest::Contains("the folder /tmp/attnlab-no-such-dir does not exist"), InputError);
    CHECK_THROWS_WITH_AS(require_plot_path("/tmp/x.jpg"), doctest::Contains("must end in .png or .svg"), InputError);
    std::remove(png.c_str());
    std::remove(svg.c_str());
}

// Pictures for files and pages: headings, palettes and scales by what a tensor means, tokens,
// --compare, the laid-out figure (square cells, ticks, colour bar, legend), its SVG text and
// its PNG at scale 1 and 2, read back through cairo.
#include "attnlab/render/figure.hpp"
#include "attnlab/render/plot.hpp"

#include "attnlab/core/report.hpp"
#include "test_support.hpp"

#include <cairo.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <iterator>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

using namespace attnlab;

namespace {

Tensor causal_weights(std::size_t n)
{
    Tensor t{"weights", {"head", "query", "key"}, Elem::float64, {1, n, n}, {}};
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) t.values.push_back(j <= i ? 1.0 / static_cast<double>(i + 1) : 0.0);
    return t;
}

Tensor alibi_bias()  // slopes 1/2 and 1/256: on one scale the second head would look flat
{
    Tensor t{"bias", {"head", "query", "key"}, Elem::float64, {2, 4, 4}, {}};
    for (double m : {0.5, 1.0 / 256})
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) t.values.push_back(-m * std::abs(i - j));
    return t;
}

Tensor mask4()
{
    Tensor t{"mask", {"query", "key"}, Elem::float32, {4, 4}, {}};
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) t.values.push_back(j > i ? -INFINITY : 0.0);
    return t;
}

const MarkGroup* group(const Figure& f, const std::string& cls, std::size_t nth = 0)
{
    for (const auto& g : f.groups)
        if (g.cls == cls && nth-- == 0) return &g;
    return nullptr;
}

std::vector<std::string> texts(const MarkGroup& g)
{
    std::vector<std::string> out;
    for (const auto& m : g.marks)
        if (m.kind == Mark::Kind::text) out.push_back(m.text);
    return out;
}

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

std::size_t count(const std::string& s, const std::string& what)
{
    std::size_t n = 0;
    for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
}

}  // namespace

TEST_CASE("picture: heading in the user's language with the run's context, palette by meaning")
{
    const Picture en = make_labelled_picture(causal_weights(3), PlotKind::automatic, {Lang::en, "causal mask", {}});
    CHECK(en.heading == "Attention weights (causal mask)");
    CHECK(en.title == "weights [1, 3, 3] (head, query, key)");
    CHECK_FALSE(en.diverging);  // weights are one-sided
    const Picture zh = make_labelled_picture(causal_weights(3), PlotKind::automatic, {Lang::zh, "causal 掩码", {}});
    CHECK(zh.heading == "注意力权重（causal 掩码）");
    // ALiBi's bias is never positive, and still centred on 0: the colour says "no penalty" at 0.
    const Picture bias = make_labelled_picture(alibi_bias(), PlotKind::automatic, {});
    CHECK(bias.diverging);
    CHECK(bias.scale == ScaleMode::per_panel);
    REQUIRE(bias.panels.size() == 2);
    REQUIRE(bias.panels[1].own.has_value());
    CHECK(bias.panels[0].own->lo == doctest::Approx(-1.5));
    CHECK(bias.panels[1].own->lo == doctest::Approx(-3.0 / 256));
    CHECK(bias.panels[1].title == "head 1");
    // The shallow head's far corner is as deep a blue as the steep head's: its own scale.
    const Rgb steep = cell_color(*bias.panels[0].own, -1.5), shallow = cell_color(*bias.panels[1].own, -3.0 / 256);
    CHECK((steep.r == shallow.r && steep.g == shallow.g && steep.b == shallow.b));
    const Rgb zero = cell_color(*bias.panels[1].own, 0.0);
    CHECK((zero.r == 247 && zero.g == 247 && zero.b == 247));  // white at 0
    CHECK_FALSE(make_labelled_picture(mask4(), PlotKind::automatic, {}).diverging);
}

TEST_CASE("picture: the run's context names its mask and position scheme")
{
    CHECK(picture_context({{"mask", std::string("causal")}, {"pe", std::string("rope")}}, Lang::en) == "causal mask, position: rope");
    CHECK(picture_context({{"kind", std::string("both")}}, Lang::en) == "causal and padding mask");
    CHECK(picture_context({{"mask", std::string("none")}, {"pe", std::string("none")}}, Lang::en).empty());
    CHECK(picture_context({{"mask", std::string("causal")}}, Lang::zh) == "causal 掩码");
}

TEST_CASE("picture: tokens label the position axes, and a count that differs is refused")
{
    const Picture p = make_labelled_picture(causal_weights(3), PlotKind::heatmap, {Lang::en, "", {"狗", "咬", "人"}});
    CHECK(p.row_labels == std::vector<std::string>{"狗", "咬", "人"});
    CHECK(p.col_labels == p.row_labels);
    const Figure f = lay_out(p, Lang::en);
    const auto t = texts(*group(f, "panel"));
    CHECK(std::count(t.begin(), t.end(), "咬") == 2);  // down and across
    CHECK_THROWS_WITH_AS(make_labelled_picture(causal_weights(3), PlotKind::heatmap, {Lang::en, "", {"a", "b"}}),
                         "--tokens gives 2 tokens, but the picture has 3 positions", InputError);
    const Tensor w{"w_q", {"in", "out"}, Elem::float64, {2, 2}, {1, 2, 3, 4}};
    CHECK_THROWS_WITH_AS(make_labelled_picture(w, PlotKind::heatmap, {Lang::en, "", {"a", "b"}}), doctest::Contains("has none"), InputError);
}

TEST_CASE("picture: --compare puts two panels on one scale, and the difference on its own")
{
    Tensor a = causal_weights(3), b = causal_weights(3);
    b.name = "weights_perm";
    b.values.set(3, 0.25), b.values.set(4, 0.75);  // row 1: [0.25, 0.75, 0] for [0.5, 0.5, 0]
    const Picture pair = make_compare_picture(a, b, {}, false);
    REQUIRE(pair.panels.size() == 2);
    CHECK(pair.heading == "Attention weights vs attention weights, input permuted");
    CHECK(pair.panels[0].title == "Attention weights, head 0");
    CHECK(pair.panels[1].title == "Attention weights, input permuted, head 0");
    CHECK(pair.lo == 0.0);
    CHECK(pair.hi == 1.0);
    const Picture diff = make_compare_picture(a, b, {}, true);
    REQUIRE(diff.panels.size() == 3);
    REQUIRE(diff.panels[2].own.has_value());
    CHECK(diff.panels[2].own->diverging);
    CHECK(diff.panels[2].values[3] == doctest::Approx(-0.25));
    CHECK(diff.panels[2].values[4] == doctest::Approx(0.25));
    CHECK(diff.panels[2].values[0] == 0.0);
    Tensor masked = mask4(), masked2 = mask4();
    masked2.name = "mask_upper_left";
    const Picture same = make_compare_picture(masked, masked2, {}, true);
    CHECK(std::all_of(same.panels[2].values.begin(), same.panels[2].values.end(), [](double v) { return v == 0.0; }));  // -inf - -inf is no difference
    CHECK_THROWS_WITH_AS(make_compare_picture(a, mask4(), {}, false), doctest::Contains("differ in shape"), InputError);
}

TEST_CASE("figure: square cells, ticks at first, middle and last, one swatch for a constant scale")
{
    const Figure f = lay_out(make_labelled_picture(mask4(), PlotKind::heatmap, {}), Lang::en);
    const MarkGroup* panel = group(f, "panel");
    REQUIRE(panel != nullptr);
    const auto cell = std::find_if(panel->marks.begin(), panel->marks.end(), [](const Mark& m) { return m.kind == Mark::Kind::rect && !m.outline; });
    REQUIRE(cell != panel->marks.end());
    CHECK(cell->w == doctest::Approx(cell->h));
    const auto t = texts(*panel);
    CHECK(std::count(t.begin(), t.end(), "0") == 2);
    CHECK(std::count(t.begin(), t.end(), "2") == 2);
    CHECK(std::count(t.begin(), t.end(), "3") == 2);
    CHECK(has(t, "query"));
    CHECK(has(t, "key"));
    const auto bar = texts(*group(f, "colorbar"));
    CHECK(has(bar, "0 (every finite value)"));
    CHECK(has(bar, "-inf"));
    // A non-square matrix fills its space.
    const Tensor wide{"x", {"pos", "dim"}, Elem::float64, {2, 8}, {-1, 0, 1, 2, 3, 4, 5, 6, 1, 1, 1, 1, 1, 1, 1, 1}};
    const Figure g = lay_out(make_labelled_picture(wide, PlotKind::heatmap, {}), Lang::en);
    const auto c = std::find_if(group(g, "panel")->marks.begin(), group(g, "panel")->marks.end(), [](const Mark& m) { return m.kind == Mark::Kind::rect; });
    CHECK(c->w < c->h);
    const auto gbar = texts(*group(g, "colorbar"));
    CHECK(has(gbar, "6"));
    CHECK(has(gbar, "0"));  // a diverging scale's middle tick is 0
    CHECK(has(gbar, "-6"));
}

TEST_CASE("figure: a line chart has a y label, a legend and a round middle tick")
{
    Tensor pe{"pe", {"pos", "dim"}, Elem::float64, {5, 2}, {}};
    for (int p = 0; p < 5; ++p) pe.values.push_back(std::sin(p)), pe.values.push_back(std::cos(p) * 0.999);
    const Figure f = lay_out(make_labelled_picture(pe, PlotKind::automatic, {}), Lang::en);
    const auto axes = texts(*group(f, "axes"));
    CHECK(has(axes, "Sinusoidal positional encoding"));  // the y label
    CHECK(has(axes, "pos"));
    CHECK(has(axes, "0"));  // signed data: 0 in the middle, not (lo + hi) / 2
    CHECK(has(axes, "2"));  // the middle position
    const auto legend = texts(*group(f, "legend"));
    CHECK(legend == std::vector<std::string>{"dim 0", "dim 1"});
    CHECK(group(f, "curves")->marks.size() == 2);
}

TEST_CASE("figure: SVG keeps text as <text> and each panel as <g class=\"panel\">")
{
    Tensor b = causal_weights(3);
    b.name = "weights_perm";
    const Picture pic = make_compare_picture(causal_weights(3), b, {Lang::en, "a < b & c", {}}, false);
    const std::string svg = figure_svg(lay_out(pic, Lang::en));
    CHECK(svg.rfind("<?xml", 0) == 0);
    CHECK(count(svg, "<g class=\"panel\"") == 2);
    CHECK(svg.find("<text x=\"40\" y=\"44\" font-size=\"26\" text-anchor=\"start\" fill=\"#1a1a1a\">Attention weights vs attention weights, input "
                   "permuted (a &lt; b &amp; c)</text>") != std::string::npos);
    CHECK(svg.find(">Attention weights, input permuted, head 0</text>") != std::string::npos);
    CHECK(svg.find("<path") == std::string::npos);  // no glyph outlines
    const std::string inline_svg = figure_svg_inline(lay_out(pic, Lang::zh));
    CHECK(inline_svg.rfind("<svg", 0) == 0);
    CHECK(inline_svg.find("width=\"100%\"") != std::string::npos);
    CHECK(inline_svg.find("WenQuanYi Micro Hei, DejaVu Sans") != std::string::npos);
}

TEST_CASE("figure: the PNG draws the figure's cells where it put them, at scale 1 and 2")
{
    const Picture pic = make_labelled_picture(mask4(), PlotKind::heatmap, {});
    const Figure f = lay_out(pic, Lang::en);
    const MarkGroup* panel = group(f, "panel");
    std::vector<Mark> cells;
    std::copy_if(panel->marks.begin(), panel->marks.end(), std::back_inserter(cells), [](const Mark& m) { return m.kind == Mark::Kind::rect && !m.outline; });
    REQUIRE(cells.size() == 16);
    const Mark &upper_right = cells[3], &lower_left = cells[12];
    for (double scale : {1.0, 2.0}) {
        const std::string png = picture_file_bytes(pic, PictureFormat::png, Lang::en, scale);
        const std::string path = scratch("test-figure.png");
        std::ofstream(path, std::ios::binary) << png;
        cairo_surface_t* s = cairo_image_surface_create_from_png(path.c_str());
        REQUIRE(cairo_surface_status(s) == CAIRO_STATUS_SUCCESS);
        CHECK(cairo_image_surface_get_width(s) == static_cast<int>(1280 * scale));
        CHECK(cairo_image_surface_get_height(s) == static_cast<int>(720 * scale));
        const auto pixel = [&](const Mark& m) {
            const int x = static_cast<int>((m.x + m.w / 2) * scale), y = static_cast<int>((m.y + m.h / 2) * scale);
            const unsigned char* p = cairo_image_surface_get_data(s) + y * cairo_image_surface_get_stride(s) + 4 * x;
            return Rgb{p[2], p[1], p[0]};  // RGB24 in memory: B, G, R on little-endian
        };
        const Rgb inf = pixel(upper_right), zero = pixel(lower_left), top = sequential_color(1.0);
        CHECK((inf.r == 64 && inf.g == 64 && inf.b == 64));  // -inf: dark grey
        CHECK((zero.r == top.r && zero.g == top.g && zero.b == top.b));  // a constant finite value sits at the top of the scale
        cairo_surface_destroy(s);
        std::remove(path.c_str());
    }
}

TEST_CASE("figure: train's table is a curve per named scheme, with a bar from each seed range's lowest to its highest")
{
    const std::vector<std::string> schemes{"none", "sinusoidal", "learned", "rope", "t5", "alibi"};  // as train names the rows
    const std::vector<double> med{0.5, 0.4, 1, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1}, lo_v{0.4, 0.3, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05},
                              hi_v{0.6, 0.5, 1, 1, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2};
    const Tensor t{"extrapolation", {"scheme", "length"}, Elem::float64, {6, 2}, med, schemes};
    Picture pic = make_labelled_picture(t, PlotKind::automatic, {});
    REQUIRE(pic.kind == PlotKind::lines);
    REQUIRE(pic.series.size() == 6);
    CHECK(pic.series[0].label == "none");
    CHECK(pic.series[4].label == "t5");
    CHECK(pic.series[5].label == "alibi");
    CHECK(pic.lo == 0.1);
    const Figure before = lay_out(pic, Lang::en);
    add_ranges(pic, Tensor{"extrapolation_min", t.axes, Elem::float64, {6, 2}, lo_v}, Tensor{"extrapolation_max", t.axes, Elem::float64, {6, 2}, hi_v});
    CHECK(pic.series[1].lo == std::vector<double>{0.9, 0.8});
    CHECK(pic.series[1].hi == std::vector<double>{1, 1});
    CHECK(pic.lo == 0.05);  // the range widens to hold the bars
    const Figure after = lay_out(pic, Lang::en);
    auto lines = [](const Figure& f) { return std::count_if(group(f, "curves")->marks.begin(), group(f, "curves")->marks.end(), [](const Mark& m) { return m.kind == Mark::Kind::line; }); };
    CHECK(lines(before) == 0);
    CHECK(lines(after) == 6 * 2 * 3);  // every point: the bar and its two caps
    // a range of another shape is not drawn
    Picture other = make_labelled_picture(t, PlotKind::automatic, {});
    add_ranges(other, Tensor{"x_min", {"a"}, Elem::float64, {2}, {0, 0}}, Tensor{"x_max", {"a"}, Elem::float64, {2}, {1, 1}});
    CHECK(other.series[0].lo.empty());
    // rows without names are numbered along their axis
    const Tensor unnamed{"extrapolation", {"scheme", "length"}, Elem::float64, {6, 2}, med};
    CHECK(make_labelled_picture(unnamed, PlotKind::automatic, {}).series[4].label == "scheme 4");
}

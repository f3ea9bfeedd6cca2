// A picture laid out for a file or a page: a list of rectangles, lines, polylines and text in
// named groups, on a 1280 x 720 canvas. The SVG writer (figure_svg.cpp) turns it into an SVG
// document that keeps its text as <text> (a lecturer can edit it), and the picture module
// (picture_cairo.cpp) draws the same list into a PNG at any scale.
#pragma once

#include "attnlab/render/plot.hpp"

#include <string>
#include <utility>
#include <vector>

namespace attnlab {

enum class Anchor { start, middle, end };

struct Mark {
    enum class Kind { rect, line, polyline, text } kind = Kind::rect;
    double x = 0, y = 0, w = 0, h = 0;  // rect: corner and size; line: from (x, y) to (w, h); text: anchor point
    std::vector<std::pair<double, double>> points;  // polyline
    Rgb color{26, 26, 26};
    double width = 1.0;  // line and polyline: stroke width; rect with outline: its stroke width
    bool outline = false;  // rect: stroked, not filled
    std::string text;
    double size = 13.0;
    Anchor anchor = Anchor::start;
    bool bold = false;
    double rotate = 0.0;  // text: degrees, about its anchor point (-90: reads upwards)
};

// A named part of the figure: "title", "panel" (a panel's cells, ticks and title), "colorbar",
// "legend", "axes", "curves".
struct MarkGroup {
    std::string cls;
    std::vector<Mark> marks;
};

struct Figure {
    double width = 1280, height = 720;
    bool zh = false;  // text in Chinese: the Chinese font first
    std::string description;  // the picture's title line, for the SVG's <title>
    std::vector<MarkGroup> groups;
};

// The font families a figure names, in order: DejaVu Sans (WenQuanYi Micro Hei first for
// Chinese), then the generic family.
std::string figure_fonts(bool zh);

// The picture laid out: title and subtitle, panels with square cells where the matrix is
// square, ticks at the first, middle and last index (or the tokens), axis names, a colour bar
// (or one swatch where every finite value is equal) with the marks of -inf, +inf and NaN, and
// for curves a y label and a legend.
// The canvas is 1280 x 720 for a file; a page uses a smaller one, so that its text stays
// readable when the picture is scaled to a column.
Figure lay_out(const Picture& pic, Lang lang, double width = 1280, double height = 720);

// The figure as an SVG document; text stays <text>, and each panel is <g class="panel">.
std::string figure_svg(const Figure& fig);
// The figure as an <svg> element to place in an HTML page (no XML prologue; scales to width).
std::string figure_svg_inline(const Figure& fig);

}  // namespace attnlab

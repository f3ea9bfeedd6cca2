// Pictures of a tensor: heatmaps and curves, in the terminal (Unicode or ASCII, with or without
// colour) and as PNG or SVG files (plot_file.cpp, through cairo). One Picture is built from
// the tensor; the terminal and the files draw the same Picture.
#pragma once

#include "attnlab/core/enums.hpp"
#include "attnlab/core/tensor.hpp"

#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnlab {

// auto: lines for rank-1 tensors, distance_profile and pe (its first four dimensions against
// position, the articles' frequency figure); heatmap otherwise.
enum class PlotKind { automatic, heatmap, lines };
constexpr auto enum_names(PlotKind)
{
    return std::array{std::pair{PlotKind::automatic, std::string_view("auto")},
                      std::pair{PlotKind::heatmap, std::string_view("heatmap")},
                      std::pair{PlotKind::lines, std::string_view("lines")}};
}

enum class PlotStyle { unicode, ascii };
constexpr auto enum_names(PlotStyle)
{
    return std::array{std::pair{PlotStyle::unicode, std::string_view("unicode")}, std::pair{PlotStyle::ascii, std::string_view("ascii")}};
}

// none: shades only (a pipe, a pager, NO_COLOR, TERM=dumb); c256: xterm's 256 colours;
// truecolor: 24-bit (COLORTERM=truecolor or 24bit).
enum class ColorMode { none, c256, truecolor };

struct Rgb {
    unsigned char r, g, b;
};

// One 2-D slice of the tensor, already downsampled to what fits.
struct Panel {
    std::string label;  // "head=1" for a panel of a rank-3 or rank-4 tensor; empty otherwise
    std::size_t rows = 0, cols = 0;
    std::vector<double> values;  // row-major
};

struct Series {
    std::string label;
    std::vector<double> y;  // against x = 0, 1, ...
};

struct Picture {
    std::string title;   // "pe [16, 8] (pos, dim)"
    PlotKind kind = PlotKind::heatmap;
    std::string row_axis, col_axis;  // heatmap: the axis down and the axis across; lines: x axis
    std::size_t data_rows = 0, data_cols = 0;  // before downsampling
    std::size_t row_step = 1, col_step = 1;    // each cell is the mean of row_step x col_step values
    std::vector<Panel> panels;
    std::size_t panels_left_out = 0;
    std::vector<Series> series;
    bool diverging = false;  // signed data: a palette centred on 0
    double lo = 0.0, hi = 0.0;  // finite range (lines: of every series)
    bool neg_inf = false, pos_inf = false, nan = false;
};

// Fits the tensor into at most max_cols x max_rows cells per panel (block means; a block with
// NaN is NaN, with only one kind of infinity that infinity, with both NaN). Throws
// InputError for a picture the tensor cannot give (lines of a rank-3 tensor, an empty tensor).
Picture make_picture(const Tensor& t, PlotKind kind, std::size_t max_cols, std::size_t max_rows, std::size_t max_panels = 6);

struct PlotOptions {
    PlotStyle style = PlotStyle::unicode;
    ColorMode color = ColorMode::none;
    std::size_t width = 80;  // terminal columns
    Lang lang = Lang::en;
};

// The picture as terminal text, every line ending in '\n'.
std::string plot_text(const Picture& pic, const PlotOptions& opts);
// The tensor's picture fitted to the terminal opts describes (its width; two rows a cell with
// half blocks), as terminal text.
std::string plot_tensor_text(const Tensor& t, PlotKind kind, const PlotOptions& opts);

// The palettes: diverging (blue, white, red) for t in [-1, 1]; sequential (dark blue to
// yellow, viridis-like) for t in [0, 1]; the marked colours of -inf, +inf and NaN.
Rgb diverging_color(double t);
Rgb sequential_color(double t);
Rgb cell_color(const Picture& pic, double v);
// Where a finite value sits on the picture's scale: [-1, 1] diverging, [0, 1] sequential.
double scale_position(const Picture& pic, double v);
// The colour of curve i.
Rgb series_color(int i);

// The picture as the bytes of a PNG or SVG file (cairo), with the same title, axes and colour
// bar; text in --lang's language.
enum class PictureFormat { png, svg };
std::string picture_file_bytes(const Picture& pic, PictureFormat format, Lang lang);
// Writes the picture to PATH.png or PATH.svg, whole or not at all (OutputError when it cannot).
void plot_file(const Picture& pic, const std::string& path, Lang lang);
// Refuses (InputError) a --plot-file path that is not .png or .svg or whose folder does not
// exist or cannot be written, before anything runs.
void require_plot_path(const std::string& path);

}  // namespace attnlab

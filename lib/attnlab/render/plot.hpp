// Pictures of a tensor: heatmaps and curves, in the terminal (Unicode or ASCII, with or without
// colour) and as PNG or SVG files (plot_file.cpp, through cairo). One Picture is built from
// the tensor; the terminal and the files draw the same Picture.
#pragma once

#include "attnlab/core/enums.hpp"
#include "attnlab/core/params.hpp"
#include "attnlab/core/tensor.hpp"

#include <array>
#include <optional>
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

// A colour scale: the finite range it spans, and whether it is centred on 0.
struct Scale {
    double lo = 0.0, hi = 0.0;
    bool diverging = false;
};

// One 2-D slice of the tensor, already downsampled to what fits.
struct Panel {
    std::string label;  // "head=1" for a panel of a rank-3 or rank-4 tensor; empty otherwise
    std::size_t rows = 0, cols = 0;
    std::vector<double> values;  // row-major
    std::string title;  // in the picture's language: "head 1", or the tensor a --compare panel shows
    std::optional<Scale> own;  // a scale of its own (per-panel scale, a difference panel)
};

struct Series {
    std::string label;
    std::vector<double> y;  // against x = 0, 1, ...
    std::vector<double> lo, hi;  // a bar from lo to hi at each x (a range over seeds); empty: none
};

// How a tensor's colours are chosen: by what it means (weights and masks one-sided, scores,
// encodings and biases centred on 0), else by its data (both signs: centred on 0).
enum class Palette { by_data, sequential, diverging };
// One scale for every panel, or each panel its own (ALiBi's bias: its heads' slopes differ
// 128-fold, so on one scale the shallow heads look flat).
enum class ScaleMode { shared, per_panel };

struct Picture {
    std::string title;   // "pe [16, 8] (pos, dim)"
    std::string heading; // what is shown, in the picture's language: "Attention weights (causal mask)"
    std::string y_label; // lines: what the curves measure
    PlotKind kind = PlotKind::heatmap;
    std::string row_axis, col_axis;  // heatmap: the axis down and the axis across; lines: x axis
    std::size_t data_rows = 0, data_cols = 0;  // before downsampling
    std::size_t row_step = 1, col_step = 1;    // each cell is the mean of row_step x col_step values
    std::vector<Panel> panels;
    std::size_t panels_left_out = 0;
    std::vector<Series> series;
    bool diverging = false;  // signed data: a palette centred on 0
    double lo = 0.0, hi = 0.0;  // finite range (lines: of every series)
    ScaleMode scale = ScaleMode::shared;
    std::vector<std::string> row_labels, col_labels;  // --tokens: one label per row or column
    bool neg_inf = false, pos_inf = false, nan = false;
};

// Fits the tensor into at most max_cols x max_rows cells per panel (block means; a block with
// NaN is NaN, with only one kind of infinity that infinity, with both NaN). Throws
// InputError for a picture the tensor cannot give (lines of a rank-3 tensor, an empty tensor).
Picture make_picture(const Tensor& t, PlotKind kind, std::size_t max_cols, std::size_t max_rows, std::size_t max_panels = 6);

// What a picture says beyond the tensor: its language, the run's setting that changes what is
// shown ("causal mask"), and the learner's tokens for the position axes.
struct PictureLabels {
    Lang lang = Lang::en;
    std::string context;
    std::vector<std::string> tokens;
    std::size_t max_cols = 160, max_rows = 160;  // cells of a panel, at most (a file's; the terminal fits its width)
};
// The tensor's picture with its heading, palette, scale and axis labels for a file or a page.
// Tokens label an axis named pos, query or key; a count that differs from that axis's length
// is an InputError.
Picture make_labelled_picture(const Tensor& t, PlotKind kind, const PictureLabels& labels, std::size_t max_panels = 6);
// The run's settings that change what a picture shows, as its heading's context: the mask
// ("causal mask") and the position scheme ("position: rope"); empty when neither is set.
std::string picture_context(const ParamList& params, Lang lang);
// --compare A,B: two tensors side by side on one colour scale, each panel titled; with
// difference, a third panel holds b - a on a scale of its own. A rank-3 or rank-4 tensor gives
// its first panel. Panels of different shapes are an InputError.
Picture make_compare_picture(const Tensor& a, const Tensor& b, const PictureLabels& labels, bool difference);
// One tensor's picture, or a pair side by side (the tour's pictures).
Picture make_run_picture(const std::vector<Tensor>& drawn, const PictureLabels& labels);
// A lines picture of a rank-2 tensor gets, for each curve (a row), bars from lo's row to hi's
// (tensors of the same shape: extrapolation_min and extrapolation_max); its range widens to
// hold them. Any other picture is left as it is.
void add_ranges(Picture& pic, const Tensor& lo, const Tensor& hi);
// The words a picture of tensor NAME uses (its heading, a panel title), in LANG.
std::string tensor_heading(const std::string& name, Lang lang);
Palette tensor_palette(const std::string& name);
ScaleMode tensor_scale(const std::string& name);

struct PlotOptions {
    PlotStyle style = PlotStyle::unicode;
    ColorMode color = ColorMode::none;
    std::size_t width = 80;  // terminal columns
    Lang lang = Lang::en;
};

// The picture as terminal text, every line ending in '\n'.
std::string plot_text(const Picture& pic, const PlotOptions& opts);
// The cells across and down a panel that fit the terminal opts describes.
std::pair<std::size_t, std::size_t> terminal_cells(const PlotOptions& opts);

// The palettes: diverging (blue, white, red) for t in [-1, 1]; sequential (dark blue to
// yellow, viridis-like) for t in [0, 1]; the marked colours of -inf, +inf and NaN.
Rgb diverging_color(double t);
Rgb sequential_color(double t);
Rgb cell_color(const Picture& pic, double v);
Rgb cell_color(const Scale& s, double v);
// Where a finite value sits on a scale: [-1, 1] diverging, [0, 1] sequential.
double scale_position(const Scale& s, double v);
// The scale a panel is drawn on: its own, or the picture's.
Scale panel_scale(const Picture& pic, const Panel& p);
// The colour of curve i.
Rgb series_color(int i);

// The picture as the bytes of a PNG (cairo, scale times 1280 x 720 pixels) or SVG file
// (written directly, its text kept as <text>), laid out by figure.hpp; text in LANG.
enum class PictureFormat { png, svg };
std::string picture_file_bytes(const Picture& pic, PictureFormat format, Lang lang, double scale = 1.0);
// Writes the picture to PATH.png or PATH.svg, whole or not at all (OutputError when it cannot).
void plot_file(const Picture& pic, const std::string& path, Lang lang, double scale = 1.0);
// The format a --plot-file path asks for, by its ending in any case (.png, .PNG, .svg);
// InputError for any other.
PictureFormat picture_format(const std::string& path);
// Refuses (InputError) a --plot-file path that is not .png or .svg or whose folder does not
// exist or cannot be written, before anything runs.
void require_plot_path(const std::string& path);

}  // namespace attnlab

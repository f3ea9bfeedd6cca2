// The terminal's pictures: heatmaps in half blocks (two rows a character cell) or shades,
// curves in Braille dots (or '*' in ASCII), with titles, ticks, a colour bar and a legend.
#include "attnlab/render/plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace attnlab {

namespace {

constexpr std::size_t kHeatmapLines = 40;  // text lines of one heatmap panel, at most
constexpr std::size_t kCurveLines = 12;

bool half_blocks(const PlotOptions& o) { return o.color != ColorMode::none && o.style == PlotStyle::unicode; }

std::string escape(const PlotOptions& o, Rgb c, bool background)
{
    if (o.color == ColorMode::truecolor) return fmt::format("\x1b[{};2;{};{};{}m", background ? 48 : 38, c.r, c.g, c.b);
    const auto level = [](unsigned char x) { return static_cast<int>(std::lround(x / 255.0 * 5.0)); };
    return fmt::format("\x1b[{};5;{}m", background ? 48 : 38, 16 + 36 * level(c.r) + 6 * level(c.g) + level(c.b));
}

const char* reset() { return "\x1b[0m"; }

// The shade of a value without colour, and the marks of the values no shade stands for.
std::string glyph(const Scale& scale, double v, PlotStyle style)
{
    if (std::isnan(v)) return "?";
    if (std::isinf(v)) return v < 0 ? "-" : "+";
    static const std::vector<std::string> unicode = {" ", "░", "▒", "▓", "█"}, ascii = {" ", ".", ":", ";", "o", "x", "%", "#", "@"};
    const auto& ramp = style == PlotStyle::unicode ? unicode : ascii;
    const double p = scale.diverging ? (scale_position(scale, v) + 1.0) / 2.0 : scale_position(scale, v);
    return ramp[static_cast<std::size_t>(std::lround(std::clamp(p, 0.0, 1.0) * static_cast<double>(ramp.size() - 1)))];
}

std::string cell(const Scale& scale, const PlotOptions& o, double v)
{
    if (o.color == ColorMode::none) return glyph(scale, v, o.style);
    return escape(o, cell_color(scale, v), false) + (o.style == PlotStyle::unicode ? "█" : glyph(scale, v, o.style)) + reset();
}

std::string number(double v) { return fmt::format("{:.3g}", v); }

// Row ticks in the gutter: the first line, every fifth, the last.
std::string gutter(std::size_t line, std::size_t lines, std::size_t first_row, std::size_t width)
{
    const bool tick = line == 0 || line + 1 == lines || line % 5 == 0;
    return fmt::format("{:>{}} ", tick ? std::to_string(first_row) : std::string(), width);
}

// Column ticks under the grid: first, middle and last cell, as indices of the tensor.
std::string column_ticks(const Picture& pic, std::size_t cols, std::size_t indent)
{
    std::string line(indent + cols + 8, ' ');
    std::size_t free_from = 0;
    for (std::size_t c : {std::size_t{0}, cols / 2, cols - 1}) {
        const std::string label = std::to_string(c * pic.col_step);
        const std::size_t at = indent + c;
        if (at < free_from || (c > 0 && c + 1 == cols && at + label.size() > line.size())) continue;
        line.replace(at, label.size(), label);
        free_from = at + label.size() + 1;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line + "\n";
}

// One panel, on its scale: the picture's, or its own (its range then beside its label).
void heatmap_panel(const Picture& pic, const Panel& p, const PlotOptions& o, std::string& out)
{
    const std::size_t per_line = half_blocks(o) ? 2 : 1, lines = (p.rows + per_line - 1) / per_line;
    const std::size_t width = std::to_string((p.rows - 1) * pic.row_step).size();
    const Scale scale = panel_scale(pic, p);
    if (p.own) out += fmt::format(o.lang == Lang::zh ? "{}（色标 {} … {}）\n" : "{} (scale {} to {})\n", p.label, number(scale.lo), number(scale.hi));
    else if (!p.label.empty()) out += p.label + "\n";
    for (std::size_t line = 0; line < lines; ++line) {
        const std::size_t r = line * per_line;
        out += gutter(line, lines, r * pic.row_step, width);
        for (std::size_t c = 0; c < p.cols; ++c) {
            const double top = p.values[r * p.cols + c];
            if (per_line == 1) {
                out += cell(scale, o, top);
            } else if (r + 1 < p.rows) {
                out += escape(o, cell_color(scale, top), false) + escape(o, cell_color(scale, p.values[(r + 1) * p.cols + c]), true) + "▀" + reset();
            } else {
                out += escape(o, cell_color(scale, top), false) + "▀" + reset();
            }
        }
        out += "\n";
    }
    out += column_ticks(pic, p.cols, width + 1);
}

std::string colour_bar(const Picture& pic, const PlotOptions& o)
{
    const bool zh = o.lang == Lang::zh;
    const Scale scale{pic.lo, pic.hi, pic.diverging};
    std::string bar;
    for (int i = 0; i < 16; ++i) bar += cell(scale, o, pic.lo + (pic.hi - pic.lo) * i / 15.0);
    const bool per_panel = pic.scale == ScaleMode::per_panel;
    std::string out = !per_panel && pic.lo == pic.hi
                          ? fmt::format(zh ? "色标: {} {}（所有有限值）\n" : "scale: {} {} (every finite value)\n", cell(scale, o, pic.lo), number(pic.lo))
                          : fmt::format("{} {} {} {}{}{}\n", zh ? "色标:" : "scale:", per_panel ? (zh ? "最小" : "min") : number(pic.lo), bar,
                                  per_panel ? (zh ? "最大" : "max") : number(pic.hi),
                                  pic.diverging ? (zh ? "（以 0 为中心）" : " (centred on 0)") : "",
                                  per_panel ? (zh ? "；每个面板一个色标，范围见面板标题" : "; one scale per panel, its range beside the panel's label") : "");
    std::vector<std::string> marks;
    if (pic.neg_inf) marks.push_back(fmt::format("{} -inf", cell(scale, o, -INFINITY)));
    if (pic.pos_inf) marks.push_back(fmt::format("{} +inf", cell(scale, o, INFINITY)));
    if (pic.nan) marks.push_back(fmt::format("{} NaN", cell(scale, o, NAN)));
    if (!marks.empty()) out += fmt::format("{} {}\n", zh ? "标记:" : "marks:", fmt::join(marks, "   "));
    return out;
}

std::string heatmap_text(const Picture& pic, const PlotOptions& o)
{
    const bool zh = o.lang == Lang::zh;
    std::string out = fmt::format(zh ? "{}：热图，行 {}，列 {}\n" : "{}: heatmap, rows {}, columns {}\n", pic.title, pic.row_axis.empty() ? "-" : pic.row_axis, pic.col_axis);
    if (pic.row_step > 1 || pic.col_step > 1)
        out += fmt::format(zh ? "降采样：每格是 {} x {} 个值的平均（行 x 列）\n" : "downsampled: each cell is the mean of {} x {} values (rows x columns)\n", pic.row_step, pic.col_step);
    const auto& tokens = pic.col_labels.empty() ? pic.row_labels : pic.col_labels;
    for (std::size_t i = 0; i < tokens.size(); ++i) out += fmt::format("{}{}={}{}", i == 0 ? (zh ? "词元：" : "tokens: ") : "", i, tokens[i], i + 1 == tokens.size() ? "\n" : "  ");
    for (const auto& p : pic.panels) heatmap_panel(pic, p, o, out);
    if (pic.panels_left_out > 0) out += fmt::format(zh ? "（另有 {} 个面板未画出）\n" : "({} more panels left out)\n", pic.panels_left_out);
    return out + colour_bar(pic, o);
}

// --- curves ---

struct Canvas {
    std::size_t w, h;           // character cells
    std::size_t dots_x, dots_y; // dots across and down
    std::vector<unsigned> bits;
    std::vector<int> owner;     // the series that last drew in a cell
};

void dot(Canvas& cv, std::size_t x, std::size_t y, int series, bool braille)
{
    const std::size_t cx = braille ? x / 2 : x, cy = braille ? y / 4 : y, at = cy * cv.w + cx;
    static const unsigned braille_bit[4][2] = {{0x01, 0x08}, {0x02, 0x10}, {0x04, 0x20}, {0x40, 0x80}};
    cv.bits[at] |= braille ? braille_bit[y % 4][x % 2] : 1u;
    cv.owner[at] = series;
}

void draw_series(Canvas& cv, const Picture& pic, const Series& s, int index, bool braille)
{
    const std::size_t n = s.y.size();
    long px = -1, py = -1;
    for (std::size_t i = 0; i < n; ++i) {
        if (!std::isfinite(s.y[i])) {
            px = -1;
            continue;
        }
        const auto x = static_cast<long>(n > 1 ? std::lround(static_cast<double>(i) * static_cast<double>(cv.dots_x - 1) / static_cast<double>(n - 1)) : 0);
        const double t = pic.hi > pic.lo ? (pic.hi - s.y[i]) / (pic.hi - pic.lo) : 0.5;
        const auto y = static_cast<long>(std::lround(t * static_cast<double>(cv.dots_y - 1)));
        const long steps = px < 0 ? 0 : std::max(std::abs(x - px), std::abs(y - py));
        for (long k = 0; k <= steps; ++k) {  // a straight segment from the previous point
            const double f = steps == 0 ? 1.0 : static_cast<double>(k) / static_cast<double>(steps);
            dot(cv, static_cast<std::size_t>(std::lround(static_cast<double>(px < 0 ? x : px) + f * static_cast<double>(x - (px < 0 ? x : px)))),
                static_cast<std::size_t>(std::lround(static_cast<double>(py < 0 ? y : py) + f * static_cast<double>(y - (py < 0 ? y : py)))), index, braille);
        }
        px = x, py = y;
    }
}

std::string braille_char(unsigned bits)
{
    const unsigned cp = 0x2800 + bits;
    return {static_cast<char>(0xE0 | (cp >> 12)), static_cast<char>(0x80 | ((cp >> 6) & 0x3F)), static_cast<char>(0x80 | (cp & 0x3F))};
}

std::string curves_text(const Picture& pic, const PlotOptions& o)
{
    const bool zh = o.lang == Lang::zh, braille = o.style == PlotStyle::unicode;
    const std::size_t gutter_w = 10, w = std::max<std::size_t>(10, o.width - gutter_w - 1), h = braille ? kCurveLines : 16;
    Canvas cv{w, h, braille ? 2 * w : w, braille ? 4 * h : h, std::vector<unsigned>(w * h, 0), std::vector<int>(w * h, -1)};
    for (std::size_t s = 0; s < pic.series.size(); ++s) draw_series(cv, pic, pic.series[s], static_cast<int>(s), braille);
    std::string out = fmt::format(zh ? "{}：曲线，横轴 {}\n" : "{}: curves against {}\n", pic.title, pic.col_axis);
    for (std::size_t r = 0; r < h; ++r) {
        // The middle label rounded to the range's own precision (no 4.89e-06 for 0).
        const double mid = (pic.lo + pic.hi) / 2, unit = pic.hi > pic.lo ? std::pow(10.0, std::floor(std::log10(pic.hi - pic.lo)) - 2) : 1.0;
        const std::string label = r == 0 ? number(pic.hi) : r + 1 == h ? number(pic.lo) : r == h / 2 ? number(std::round(mid / unit) * unit + 0.0) : "";
        out += fmt::format("{:>{}} ", label, gutter_w);
        for (std::size_t c = 0; c < w; ++c) {
            const unsigned b = cv.bits[r * w + c];
            std::string g = b == 0 ? " " : braille ? braille_char(b) : "*";
            if (b != 0 && o.color != ColorMode::none) g = escape(o, series_color(cv.owner[r * w + c]), false) + g + reset();
            out += g;
        }
        out += "\n";
    }
    out += fmt::format("{:>{}} 0{:>{}}\n", "", gutter_w, std::to_string(pic.data_cols - 1), w - 1);
    std::vector<std::string> legend;
    for (std::size_t s = 0; s < pic.series.size(); ++s)
        legend.push_back(o.color == ColorMode::none ? pic.series[s].label : escape(o, series_color(static_cast<int>(s)), false) + "━━" + reset() + " " + pic.series[s].label);
    out += fmt::format("{} {}\n", zh ? "图例:" : "series:", fmt::join(legend, ", "));
    if (pic.panels_left_out > 0) out += fmt::format(zh ? "（另有 {} 条曲线未画出）\n" : "({} more curves left out)\n", pic.panels_left_out);
    if (pic.neg_inf || pic.pos_inf || pic.nan) out += zh ? "（非有限值处曲线断开）\n" : "(curves break at values that are not finite)\n";
    return out;
}

}  // namespace

std::pair<std::size_t, std::size_t> terminal_cells(const PlotOptions& opts)
{
    return {opts.width > 16 ? opts.width - 8 : 8, half_blocks(opts) ? 2 * kHeatmapLines : kHeatmapLines};
}

std::string plot_text(const Picture& pic, const PlotOptions& opts)
{
    return pic.kind == PlotKind::lines ? curves_text(pic, opts) : heatmap_text(pic, opts);
}

}  // namespace attnlab

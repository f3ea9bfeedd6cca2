// The layout of a picture for a file or a page (figure.hpp): where each cell, tick, label,
// colour bar and curve goes on the 1280 x 720 canvas.
#include "attnlab/render/figure.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace attnlab {

namespace {

constexpr Rgb kInk{26, 26, 26}, kGrey{96, 96, 96}, kRule{200, 200, 200};

struct Box {
    double x, y, w, h;
};

struct Builder {
    Figure fig;
    bool zh = false;

    MarkGroup& group(const std::string& cls)
    {
        fig.groups.push_back({cls, {}});
        return fig.groups.back();
    }
    static void rect(MarkGroup& g, Box b, Rgb c, bool outline = false)
    {
        Mark m;
        m.kind = Mark::Kind::rect, m.x = b.x, m.y = b.y, m.w = b.w, m.h = b.h, m.color = c, m.outline = outline;
        g.marks.push_back(std::move(m));
    }
    static void line(MarkGroup& g, double x1, double y1, double x2, double y2, Rgb c, double width = 1.0)
    {
        Mark m;
        m.kind = Mark::Kind::line, m.x = x1, m.y = y1, m.w = x2, m.h = y2, m.color = c, m.width = width;
        g.marks.push_back(std::move(m));
    }
    static void text(MarkGroup& g, std::string s, double x, double y, double size, Anchor a = Anchor::start, Rgb c = kInk, double rotate = 0.0)
    {
        Mark m;
        m.kind = Mark::Kind::text, m.text = std::move(s), m.x = x, m.y = y, m.size = size, m.anchor = a, m.color = c, m.rotate = rotate;
        g.marks.push_back(std::move(m));
    }
};

std::string number(double v) { return fmt::format("{:.3g}", v == 0.0 ? 0.0 : v); }

// The title (what is shown), then the subtitle: the tensor, its shape and axes, and how it was
// fitted to the page.
void titles(Builder& b, const Picture& pic)
{
    MarkGroup& g = b.group("title");
    Builder::text(g, pic.heading.empty() ? pic.title : pic.heading, 40, 44, 26);
    std::string sub = pic.title;
    if (pic.row_step > 1 || pic.col_step > 1)
        sub += fmt::format(b.zh ? "；降采样：每格是 {} x {} 个值的平均" : "; downsampled: each cell is the mean of {} x {} values", pic.row_step, pic.col_step);
    Builder::text(g, sub, 40, 70, 14, Anchor::start, kGrey);
}

// Tick positions along n cells: first, middle and last (each once).
std::vector<std::size_t> tick_cells(std::size_t n)
{
    std::vector<std::size_t> at{0};
    if (n > 2) at.push_back(n / 2);
    if (n > 1) at.push_back(n - 1);
    return at;
}

// The labels along one side of a panel: every token when given, else first, middle, last.
std::vector<std::pair<std::size_t, std::string>> ticks(std::size_t cells, std::size_t step, const std::vector<std::string>& tokens)
{
    std::vector<std::pair<std::size_t, std::string>> out;
    if (!tokens.empty()) {
        for (std::size_t i = 0; i < tokens.size(); ++i) out.emplace_back(i, tokens[i]);
        return out;
    }
    for (std::size_t c : tick_cells(cells)) out.emplace_back(c, std::to_string(c * step));
    return out;
}

void panel_ticks(MarkGroup& g, const Picture& pic, const Panel& p, Box box, double cw, double ch)
{
    const double col_size = pic.col_labels.empty() ? 12 : std::clamp(cw * 0.7, 8.0, 14.0);
    for (const auto& [c, label] : ticks(p.cols, pic.col_step, pic.col_labels))
        Builder::text(g, label, box.x + (static_cast<double>(c) + 0.5) * cw, box.y + box.h + 16, col_size, Anchor::middle);
    const double row_size = pic.row_labels.empty() ? 12 : std::clamp(ch * 0.7, 8.0, 14.0);
    for (const auto& [r, label] : ticks(p.rows, pic.row_step, pic.row_labels))
        Builder::text(g, label, box.x - 6, box.y + (static_cast<double>(r) + 0.5) * ch + 4, row_size, Anchor::end);
    Builder::text(g, pic.col_axis, box.x + box.w / 2, box.y + box.h + 34, 13, Anchor::middle, kGrey);
    if (!pic.row_axis.empty()) Builder::text(g, pic.row_axis, box.x - 38, box.y + box.h / 2, 13, Anchor::middle, kGrey, -90);
}

bool any_own_scale(const Picture& pic)
{
    return std::any_of(pic.panels.begin(), pic.panels.end(), [](const Panel& p) { return p.own.has_value(); });
}

std::string own_range(const Scale& s, bool zh)
{
    return fmt::format(zh ? "色标 {} … {}（此面板自己的）" : "scale {} to {} (this panel's own)", number(s.diverging ? -std::max(std::abs(s.lo), std::abs(s.hi)) : s.lo),
                       number(s.diverging ? std::max(std::abs(s.lo), std::abs(s.hi)) : s.hi));
}

// The font size, at most `size`, at which text fits `width` points (DejaVu Sans averages
// about 0.58 of the size a Latin character; a Chinese character takes the full size).
double fitted_size(const std::string& text, double width, double size)
{
    double ems = 0.0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x80) ems += 0.58;
        else if (c >= 0xE0) ems += 1.0;  // the lead byte of a three-byte character (CJK)
    }
    return ems * size <= width ? size : std::max(9.0, width / ems);
}

// One panel in the space it is given: square cells for a square matrix, its title above.
void heatmap_panel(Builder& b, const Picture& pic, const Panel& p, Box space)
{
    MarkGroup& g = b.group("panel");
    double cw = space.w / static_cast<double>(p.cols), ch = space.h / static_cast<double>(p.rows);
    if (pic.data_rows == pic.data_cols && p.rows == p.cols) cw = ch = std::min(cw, ch);
    const double w = cw * static_cast<double>(p.cols), h = ch * static_cast<double>(p.rows);
    const Box box{space.x + (space.w - w) / 2, space.y, w, h};  // a square panel centred in its space
    const std::string title = p.title.empty() ? p.label : p.title;
    if (!title.empty()) Builder::text(g, title, box.x, box.y - 8, fitted_size(title, box.w + 50, 15));
    if (p.own) Builder::text(g, own_range(*p.own, b.zh), box.x + box.w / 2, box.y + box.h + 52, 12, Anchor::middle, kGrey);
    const Scale scale = panel_scale(pic, p);
    for (std::size_t r = 0; r < p.rows; ++r)
        for (std::size_t c = 0; c < p.cols; ++c) {
            const Box cell{box.x + static_cast<double>(c) * cw, box.y + static_cast<double>(r) * ch, cw + 0.3, ch + 0.3};
            Builder::rect(g, cell, cell_color(scale, p.values[r * p.cols + c]));
        }
    Builder::rect(g, box, kRule, true);
    panel_ticks(g, pic, p, box, cw, ch);
}

void bar_marks(MarkGroup& g, const Picture& pic, Box bar, bool zh)
{
    double y = bar.y + bar.h + 34;
    auto mark = [&](bool present, double v, const char* name) {
        if (!present) return;
        Builder::rect(g, {bar.x, y - 12, bar.w, 14}, cell_color(pic, v));
        Builder::text(g, name, bar.x + bar.w + 8, y, 13);
        y += 22;
    };
    mark(pic.neg_inf, -INFINITY, "-inf");
    mark(pic.pos_inf, INFINITY, "+inf");
    mark(pic.nan, NAN, "NaN");
    const bool own = any_own_scale(pic);
    const char* what = pic.scale == ScaleMode::per_panel ? (zh ? "每个面板一个色标" : "one scale per panel")
                       : own                             ? (zh ? "共享色标（注明自有色标的面板除外）" : "shared scale (but where a panel has its own)")
                                                         : (zh ? "所有面板同一色标" : "one scale, all panels");
    Builder::text(g, what, bar.x - 20, bar.y - 30, 12, Anchor::start, kGrey);
    if (pic.diverging) Builder::text(g, zh ? "以 0 为中心" : "centred on 0", bar.x - 20, bar.y - 14, 12, Anchor::start, kGrey);
}

// The colour bar: the scale's range with ticks at its ends and at 0 or its middle; one
// swatch where every finite value is the same (a mask's 0); then the marks.
void colour_bar(Builder& b, const Picture& pic, Box bar)
{
    MarkGroup& g = b.group("colorbar");
    const Scale s{pic.lo, pic.hi, pic.diverging};
    const bool per_panel = pic.scale == ScaleMode::per_panel;
    const double m = std::max(std::abs(s.lo), std::abs(s.hi));
    const double top = per_panel && s.diverging ? 1.0 : s.diverging ? m : s.hi, bottom = per_panel && s.diverging ? -1.0 : s.diverging ? -m : s.lo;
    if (!per_panel && s.hi == s.lo) {
        Builder::rect(g, {bar.x, bar.y, bar.w, 28}, cell_color(s, s.lo));
        Builder::text(g, fmt::format(b.zh ? "{}（所有有限值）" : "{} (every finite value)", number(s.lo)), bar.x + bar.w + 8, bar.y + 19, 13);
        bar_marks(g, pic, {bar.x, bar.y - bar.h + 28, bar.w, bar.h}, b.zh);
        return;
    }
    const Scale drawn{bottom, top, s.diverging};
    for (int i = 0; i < 64; ++i) Builder::rect(g, {bar.x, bar.y + bar.h * i / 64.0, bar.w, bar.h / 64.0 + 0.5}, cell_color(drawn, top - (top - bottom) * i / 63.0));
    const bool zero = s.diverging && !per_panel;
    const std::vector<std::pair<double, std::string>> labels{
        {top, per_panel ? (b.zh ? "面板最大 |值|" : "+ panel's max |value|") : number(top)},
        {(top + bottom) / 2, per_panel ? "0" : number(zero ? 0.0 : (top + bottom) / 2)},
        {bottom, per_panel ? (b.zh ? "面板最小" : "- panel's max |value|") : number(bottom)}};
    for (const auto& [v, label] : labels) {
        const double y = bar.y + bar.h * (top - v) / (top - bottom);
        Builder::line(g, bar.x + bar.w, y, bar.x + bar.w + 5, y, kInk);
        Builder::text(g, label, bar.x + bar.w + 8, y + 4, 13);
    }
    bar_marks(g, pic, bar, b.zh);
}

void heatmap(Builder& b, const Picture& pic)
{
    const std::size_t n = pic.panels.size(), across = pic.panels.size() <= 3 ? n : static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(n))));
    const std::size_t down = (n + across - 1) / across;
    const Box area{90, 100, b.fig.width - 330, b.fig.height - 150};
    const double pw = area.w / static_cast<double>(across), ph = area.h / static_cast<double>(down);
    const bool own = any_own_scale(pic);
    const double below = own ? 78 : 60;  // ticks and the axis name, and a panel's own scale under them
    for (std::size_t k = 0; k < n; ++k) {
        const Box space{area.x + static_cast<double>(k % across) * pw + 10, area.y + static_cast<double>(k / across) * ph + 20, pw - 70, ph - below};
        heatmap_panel(b, pic, pic.panels[k], space);
    }
    if (pic.panels_left_out > 0) {
        Builder::text(b.group("note"), fmt::format(b.zh ? "另有 {} 个面板未画出" : "{} more panels left out", pic.panels_left_out), b.fig.width - 20,
                      b.fig.height - 16, 14, Anchor::end, kGrey);
    }
    colour_bar(b, pic, {b.fig.width - 200, 150, 28, 360});
}


// A polyline per run of finite values of one series; a run of one value, a short dash.
void series_lines(MarkGroup& g, const Series& s, Rgb color, Box box, double lo, double hi)
{
    Mark m;
    m.kind = Mark::Kind::polyline, m.color = color, m.width = 2.0;
    const std::size_t n = s.y.size();
    for (std::size_t i = 0; i <= n; ++i) {
        if (i == n || !std::isfinite(s.y[i])) {
            if (m.points.size() == 1) m.points = {{m.points[0].first - 6, m.points[0].second}, {m.points[0].first + 6, m.points[0].second}};
            if (m.points.size() > 1) g.marks.push_back(m);
            m.points.clear();
            continue;
        }
        const double x = box.x + (n > 1 ? static_cast<double>(i) / static_cast<double>(n - 1) : 0.5) * box.w;
        m.points.emplace_back(x, box.y + (hi - s.y[i]) / (hi - lo) * box.h);
    }
}

// A bar from lo to hi at each x where both are finite, with short caps.
void series_bars(MarkGroup& g, const Series& s, Rgb color, Box box, double lo, double hi)
{
    const std::size_t n = s.y.size();
    auto y_of = [&](double v) { return box.y + (hi - v) / (hi - lo) * box.h; };
    for (std::size_t i = 0; i < n && i < s.lo.size() && i < s.hi.size(); ++i) {
        if (!std::isfinite(s.lo[i]) || !std::isfinite(s.hi[i])) continue;
        const double x = box.x + (n > 1 ? static_cast<double>(i) / static_cast<double>(n - 1) : 0.5) * box.w;
        Builder::line(g, x, y_of(s.lo[i]), x, y_of(s.hi[i]), color, 1.5);
        for (double v : {s.lo[i], s.hi[i]}) Builder::line(g, x - 5, y_of(v), x + 5, y_of(v), color, 1.5);
    }
}

void curve_axes(Builder& b, const Picture& pic, Box box, double lo, double hi)
{
    MarkGroup& g = b.group("axes");
    const double unit = std::pow(10.0, std::floor(std::log10(hi - lo)) - 2);  // the middle tick at three figures of the range
    for (double v : {lo, lo < 0 && hi > 0 ? 0.0 : std::round((lo + hi) / 2 / unit) * unit, hi}) {
        const double y = box.y + (hi - v) / (hi - lo) * box.h;
        Builder::line(g, box.x, y, box.x + box.w, y, kRule);
        Builder::text(g, number(v), box.x - 8, y + 4, 13, Anchor::end);
    }
    if (lo < 0 && hi > 0) Builder::line(g, box.x, box.y + hi / (hi - lo) * box.h, box.x + box.w, box.y + hi / (hi - lo) * box.h, kGrey);
    Builder::rect(g, box, kGrey, true);
    const std::size_t n = pic.data_cols;
    for (const auto& [i, label] : ticks(n, 1, pic.col_labels)) {
        const double x = box.x + (n > 1 ? static_cast<double>(i) / static_cast<double>(n - 1) : 0.5) * box.w;
        Builder::line(g, x, box.y + box.h, x, box.y + box.h + 5, kInk);
        Builder::text(g, label, x, box.y + box.h + 20, 13, Anchor::middle);
    }
    Builder::text(g, pic.col_axis, box.x + box.w / 2, box.y + box.h + 44, 15, Anchor::middle, kGrey);
    Builder::text(g, pic.y_label.empty() ? pic.title : pic.y_label, box.x - 78, box.y + box.h / 2, 15, Anchor::middle, kGrey, -90);
}

void curves(Builder& b, const Picture& pic)
{
    const Box box{130, 100, b.fig.width - 420, b.fig.height - 190};
    const double pad = pic.hi > pic.lo ? 0.0 : std::max(1.0, std::abs(pic.lo) * 0.1);
    const double lo = pic.lo - pad, hi = pic.hi + pad;
    curve_axes(b, pic, box, lo, hi);
    MarkGroup& lines = b.group("curves");
    MarkGroup& legend = b.group("legend");
    for (std::size_t s = 0; s < pic.series.size(); ++s) {
        const Rgb color = series_color(static_cast<int>(s));
        series_lines(lines, pic.series[s], color, box, lo, hi);
        series_bars(lines, pic.series[s], color, box, lo, hi);
        const double y = box.y + 14 + 26.0 * static_cast<double>(s);
        Builder::line(legend, box.x + box.w + 30, y - 5, box.x + box.w + 56, y - 5, color, 3.0);
        Builder::text(legend, pic.series[s].label, box.x + box.w + 64, y, 14);
    }
    if (pic.panels_left_out > 0) {
        Builder::text(legend, fmt::format(b.zh ? "另有 {} 条曲线未画出" : "{} more curves left out", pic.panels_left_out), box.x + box.w + 30,
                      box.y + 20 + 26.0 * static_cast<double>(pic.series.size()), 14, Anchor::start, kGrey);
    }
}

}  // namespace

Figure lay_out(const Picture& pic, Lang lang, double width, double height)
{
    Builder b;
    b.fig.width = width, b.fig.height = height;
    b.zh = lang == Lang::zh;
    b.fig.zh = b.zh;
    b.fig.description = pic.heading.empty() ? pic.title : pic.heading + " - " + pic.title;
    titles(b, pic);
    if (pic.kind == PlotKind::lines) curves(b, pic);
    else heatmap(b, pic);
    return b.fig;
}

}  // namespace attnlab

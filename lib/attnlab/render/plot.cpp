#include "attnlab/render/plot.hpp"

#include "attnlab/core/report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnlab {

namespace {

// --- the picture ---

// The mean of a block; NaN if any value is NaN or both infinities are there.
double block_value(const std::vector<double>& v, std::size_t cols, std::size_t r0, std::size_t r1, std::size_t c0, std::size_t c1)
{
    double sum = 0.0;
    bool neg = false, pos = false;
    for (std::size_t r = r0; r < r1; ++r)
        for (std::size_t c = c0; c < c1; ++c) {
            const double x = v[r * cols + c];
            if (std::isnan(x)) return x;
            if (std::isinf(x)) (x < 0 ? neg : pos) = true;
            else sum += x;
        }
    if (neg && pos) return std::numeric_limits<double>::quiet_NaN();
    if (neg || pos) return neg ? -INFINITY : INFINITY;
    return sum / static_cast<double>((r1 - r0) * (c1 - c0));
}

Panel downsample(const Tensor& t, std::size_t k, std::size_t rows, std::size_t cols, std::size_t row_step, std::size_t col_step, std::string label)
{
    const std::vector<double> v = t.values.slice(k * rows * cols, (k + 1) * rows * cols);
    Panel p{std::move(label), (rows + row_step - 1) / row_step, (cols + col_step - 1) / col_step, {}, {}, std::nullopt};
    for (std::size_t r = 0; r < p.rows; ++r)
        for (std::size_t c = 0; c < p.cols; ++c)
            p.values.push_back(block_value(v, cols, r * row_step, std::min(rows, (r + 1) * row_step), c * col_step, std::min(cols, (c + 1) * col_step)));
    return p;
}

void note_range(Picture& pic, const std::vector<double>& values)
{
    for (double x : values) {
        if (std::isnan(x)) pic.nan = true;
        else if (std::isinf(x)) (x < 0 ? pic.neg_inf : pic.pos_inf) = true;
        else if (pic.lo > pic.hi) pic.lo = pic.hi = x;
        else pic.lo = std::min(pic.lo, x), pic.hi = std::max(pic.hi, x);
    }
}

// "head=1" (or "batch=0, head=1") for the panel at flat leading index n.
std::string panel_label(const Tensor& t, std::size_t n)
{
    std::vector<std::string> parts;
    for (std::size_t a = t.rank() - 2; a-- > 0;) {
        parts.insert(parts.begin(), fmt::format("{}={}", t.axes[a], n % t.shape[a]));
        n /= t.shape[a];
    }
    return fmt::format("{}", fmt::join(parts, ", "));
}

PlotKind resolved_kind(const Tensor& t, PlotKind kind)
{
    if (kind != PlotKind::automatic) return kind;
    // train's tables: a curve per scheme, against length or position
    const bool curves = t.name == "distance_profile" || t.name == "pe" || t.name == "extrapolation" || t.name == "exact_match" || t.name == "position_accuracy";
    return t.rank() == 1 || curves ? PlotKind::lines : PlotKind::heatmap;
}

void heatmap_panels(Picture& pic, const Tensor& t, std::size_t max_cols, std::size_t max_rows, std::size_t max_panels)
{
    const std::size_t rows = t.rank() == 1 ? 1 : t.shape[t.rank() - 2], cols = t.shape.back();
    pic.row_axis = t.rank() == 1 ? "" : t.axes[t.rank() - 2];
    pic.col_axis = t.axes.back();
    pic.data_rows = rows, pic.data_cols = cols;
    pic.col_step = (cols + max_cols - 1) / max_cols;
    pic.row_step = (rows + max_rows - 1) / max_rows;
    const std::size_t n = t.size() / (rows * cols);
    for (std::size_t k = 0; k < std::min(n, max_panels); ++k)
        pic.panels.push_back(downsample(t, k, rows, cols, pic.row_step, pic.col_step, t.rank() > 2 ? panel_label(t, k) : ""));
    pic.panels_left_out = n > max_panels ? n - max_panels : 0;
    for (const auto& p : pic.panels) note_range(pic, p.values);
}

void line_series(Picture& pic, const Tensor& t)
{
    if (t.rank() > 2) throw InputError(fmt::format("--plot lines draws a rank-1 or rank-2 tensor; {} has rank {} (try --plot heatmap)", t.name, t.rank()));
    const std::size_t cols = t.shape.back();
    if (t.rank() == 1) {
        pic.series.push_back({t.name, t.values.to_vector(), {}, {}});
        pic.col_axis = t.axes[0];
    } else if (t.name == "pe") {  // the first four dimensions against position
        pic.col_axis = t.axes[0];
        for (std::size_t c = 0; c < std::min<std::size_t>(4, cols); ++c) {
            Series s{fmt::format("{} {}", t.axes[1], c), {}, {}, {}};
            for (std::size_t r = 0; r < t.shape[0]; ++r) s.y.push_back(t.values[r * cols + c]);
            pic.series.push_back(std::move(s));
        }
    } else {  // each row a curve along the last axis
        pic.col_axis = t.axes[1];
        const bool named = t.entry_names.size() == t.shape[0];
        for (std::size_t r = 0; r < std::min<std::size_t>(8, t.shape[0]); ++r)
            pic.series.push_back({named ? t.entry_names[r] : fmt::format("{} {}", t.axes[0], r), t.values.slice(r * cols, (r + 1) * cols), {}, {}});
        pic.panels_left_out = t.shape[0] > 8 ? t.shape[0] - 8 : 0;
    }
    for (const auto& s : pic.series) note_range(pic, s.y);
    pic.data_cols = pic.series.front().y.size();
}

}  // namespace

void add_ranges(Picture& pic, const Tensor& lo, const Tensor& hi)
{
    if (pic.kind != PlotKind::lines || lo.rank() != 2 || lo.shape != hi.shape || lo.shape[1] != pic.data_cols) return;
    const std::size_t cols = lo.shape[1];
    for (std::size_t r = 0; r < pic.series.size() && r < lo.shape[0]; ++r) {
        pic.series[r].lo = lo.values.slice(r * cols, (r + 1) * cols), pic.series[r].hi = hi.values.slice(r * cols, (r + 1) * cols);
        note_range(pic, pic.series[r].lo), note_range(pic, pic.series[r].hi);
    }
}

Picture make_picture(const Tensor& t, PlotKind kind, std::size_t max_cols, std::size_t max_rows, std::size_t max_panels)
{
    if (t.values.empty() || t.rank() == 0) throw InputError(fmt::format("--plot: {} is empty", t.name));
    Picture pic;
    pic.kind = resolved_kind(t, kind);
    pic.title = fmt::format("{} [{}] ({})", t.name, fmt::join(t.shape, ", "), fmt::join(t.axes, ", "));
    pic.lo = 1.0, pic.hi = 0.0;  // empty until a finite value is seen
    if (pic.kind == PlotKind::lines) line_series(pic, t);
    else heatmap_panels(pic, t, std::max<std::size_t>(1, max_cols), std::max<std::size_t>(1, max_rows), std::max<std::size_t>(1, max_panels));
    if (pic.lo > pic.hi) pic.lo = pic.hi = 0.0;  // no finite value at all
    // Signed data (scores, PE, bias) is centred on 0; weights and masks are sequential.
    pic.diverging = pic.lo < 0.0 && pic.hi > 0.0;
    return pic;
}

}  // namespace attnlab

// The pictures as PNG or SVG files, through cairo, at a size fit for a slide (1280 x 720):
// the terminal's title, axes and colour bar, drawn with rectangles, lines and text. Text is in
// DejaVu Sans, or WenQuanYi Micro Hei for Chinese (Debian's fonts-dejavu-core and
// fonts-wqy-microhei). A module of its own (libattnlab_picture.so, with palette.cpp), loaded
// by plot_file.cpp only when a run writes a picture: a plain run does not load cairo and the
// X11 and font libraries that come with it.
#include "attnlab/render/picture_module.hpp"
#include "attnlab/render/plot.hpp"

#include <cairo-svg.h>
#include <cairo.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <memory>

namespace attnlab {

namespace {

constexpr double kWidth = 1280, kHeight = 720;

struct Box {
    double x, y, w, h;
};

void set_rgb(cairo_t* cr, Rgb c) { cairo_set_source_rgb(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0); }

void text(cairo_t* cr, const std::string& s, double x, double y, double size, double align = 0.0)
{
    cairo_set_font_size(cr, size);
    cairo_text_extents_t e;
    cairo_text_extents(cr, s.c_str(), &e);
    cairo_move_to(cr, x - align * e.x_advance, y);
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    cairo_show_text(cr, s.c_str());
}

void heatmap_panel(cairo_t* cr, const Picture& pic, const Panel& p, Box b)
{
    const double cw = b.w / static_cast<double>(p.cols), ch = b.h / static_cast<double>(p.rows);
    for (std::size_t r = 0; r < p.rows; ++r)
        for (std::size_t c = 0; c < p.cols; ++c) {
            set_rgb(cr, cell_color(pic, p.values[r * p.cols + c]));
            cairo_rectangle(cr, b.x + static_cast<double>(c) * cw, b.y + static_cast<double>(r) * ch, cw + 0.5, ch + 0.5);
            cairo_fill(cr);
        }
    if (!p.label.empty()) text(cr, p.label, b.x, b.y - 6, 14);
    for (std::size_t c : {std::size_t{0}, p.cols - 1})
        text(cr, std::to_string(c * pic.col_step), b.x + (static_cast<double>(c) + 0.5) * cw, b.y + b.h + 16, 12, 0.5);
    for (std::size_t r : {std::size_t{0}, p.rows - 1})
        text(cr, std::to_string(r * pic.row_step), b.x - 6, b.y + (static_cast<double>(r) + 0.5) * ch + 4, 12, 1.0);
}

void colour_bar(cairo_t* cr, const Picture& pic, Box b, bool zh)
{
    for (int i = 0; i < 64; ++i) {
        set_rgb(cr, cell_color(pic, pic.hi - (pic.hi - pic.lo) * i / 63.0));
        cairo_rectangle(cr, b.x, b.y + b.h * i / 64.0, b.w, b.h / 64.0 + 0.5);
        cairo_fill(cr);
    }
    text(cr, fmt::format("{:.3g}", pic.hi), b.x + b.w + 6, b.y + 10, 13);
    text(cr, fmt::format("{:.3g}", pic.lo), b.x + b.w + 6, b.y + b.h, 13);
    double y = b.y + b.h + 30;
    auto mark = [&](bool present, double v, const char* name) {
        if (!present) return;
        set_rgb(cr, cell_color(pic, v));
        cairo_rectangle(cr, b.x, y - 12, b.w, 14);
        cairo_fill(cr);
        text(cr, name, b.x + b.w + 6, y, 13);
        y += 22;
    };
    mark(pic.neg_inf, -INFINITY, "-inf");
    mark(pic.pos_inf, INFINITY, "+inf");
    mark(pic.nan, NAN, "NaN");
    if (pic.diverging) text(cr, zh ? "以 0 为中心" : "centred on 0", b.x - 10, b.y - 10, 12);
}

void heatmap(cairo_t* cr, const Picture& pic, bool zh)
{
    const std::size_t n = pic.panels.size(), across = static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(n))));
    const std::size_t down = (n + across - 1) / across;
    const Box area{70, 90, kWidth - 260, kHeight - 150};
    const double pw = area.w / static_cast<double>(across), ph = area.h / static_cast<double>(down);
    for (std::size_t k = 0; k < n; ++k)
        heatmap_panel(cr, pic, pic.panels[k], {area.x + static_cast<double>(k % across) * pw + 10, area.y + static_cast<double>(k / across) * ph + 20, pw - 40, ph - 50});
    text(cr, fmt::format(zh ? "行：{}，列：{}" : "rows: {}, columns: {}", pic.row_axis.empty() ? "-" : pic.row_axis, pic.col_axis), area.x, kHeight - 18, 15);
    if (pic.panels_left_out > 0) text(cr, fmt::format(zh ? "另有 {} 个面板未画出" : "{} more panels left out", pic.panels_left_out), kWidth - 20, kHeight - 18, 14, 1.0);
    colour_bar(cr, pic, {kWidth - 150, 110, 28, 380}, zh);
}

void curves(cairo_t* cr, const Picture& pic, bool zh)
{
    const Box b{110, 90, kWidth - 360, kHeight - 170};
    cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
    cairo_set_line_width(cr, 1.0);
    cairo_rectangle(cr, b.x, b.y, b.w, b.h);
    cairo_stroke(cr);
    const double span = pic.hi > pic.lo ? pic.hi - pic.lo : 1.0;
    for (std::size_t s = 0; s < pic.series.size(); ++s) {
        const auto& y = pic.series[s].y;
        set_rgb(cr, series_color(static_cast<int>(s)));
        cairo_set_line_width(cr, 2.0);
        bool pen = false;
        for (std::size_t i = 0; i < y.size(); ++i) {
            if (!std::isfinite(y[i])) {
                pen = false;
                continue;
            }
            const double px = b.x + (y.size() > 1 ? static_cast<double>(i) / static_cast<double>(y.size() - 1) : 0.5) * b.w;
            const double py = b.y + (pic.hi > pic.lo ? (pic.hi - y[i]) / span : 0.5) * b.h;
            pen ? cairo_line_to(cr, px, py) : cairo_move_to(cr, px, py);
            pen = true;
        }
        cairo_stroke(cr);
        cairo_rectangle(cr, b.x + b.w + 30, b.y + 10 + 26.0 * static_cast<double>(s), 24, 4);
        cairo_fill(cr);
        text(cr, pic.series[s].label, b.x + b.w + 62, b.y + 16 + 26.0 * static_cast<double>(s), 14);
    }
    text(cr, fmt::format("{:.3g}", pic.hi), b.x - 8, b.y + 5, 13, 1.0);
    text(cr, fmt::format("{:.3g}", pic.lo), b.x - 8, b.y + b.h, 13, 1.0);
    text(cr, "0", b.x, b.y + b.h + 20, 13, 0.5);
    text(cr, std::to_string(pic.data_cols - 1), b.x + b.w, b.y + b.h + 20, 13, 0.5);
    text(cr, pic.col_axis, b.x + b.w / 2, b.y + b.h + 44, 15, 0.5);
    if (pic.panels_left_out > 0) text(cr, fmt::format(zh ? "另有 {} 条曲线未画出" : "{} more curves left out", pic.panels_left_out), kWidth - 20, kHeight - 18, 14, 1.0);
}

void draw(cairo_t* cr, const Picture& pic, Lang lang)
{
    const bool zh = lang == Lang::zh;
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_select_font_face(cr, zh ? "WenQuanYi Micro Hei" : "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    text(cr, pic.title, 40, 48, 26);
    if (pic.row_step > 1 || pic.col_step > 1)
        text(cr, fmt::format(zh ? "降采样：每格是 {} x {} 个值的平均" : "downsampled: each cell is the mean of {} x {} values", pic.row_step, pic.col_step), 40, 74, 14);
    pic.kind == PlotKind::lines ? curves(cr, pic, zh) : heatmap(cr, pic, zh);
}

cairo_status_t append_bytes(void* closure, const unsigned char* data, unsigned int length)
{
    static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
    return CAIRO_STATUS_SUCCESS;
}

}  // namespace

}  // namespace attnlab

// The module's one entry point (picture_module.hpp): the file's bytes into *out, or 0 and
// the reason into *error. Nothing is thrown across the module's edge.
extern "C" int attnlab_picture_bytes(const attnlab::Picture* pic, int svg, int zh, std::string* out, std::string* error)
{
    using namespace attnlab;
    try {
        std::unique_ptr<cairo_surface_t, void (*)(cairo_surface_t*)> surface(
            svg ? cairo_svg_surface_create_for_stream(append_bytes, out, kWidth, kHeight)
                : cairo_image_surface_create(CAIRO_FORMAT_RGB24, static_cast<int>(kWidth), static_cast<int>(kHeight)),
            cairo_surface_destroy);
        std::unique_ptr<cairo_t, void (*)(cairo_t*)> cr(cairo_create(surface.get()), cairo_destroy);
        draw(cr.get(), *pic, zh ? Lang::zh : Lang::en);
        cairo_status_t status = cairo_status(cr.get());
        if (status == CAIRO_STATUS_SUCCESS && !svg) status = cairo_surface_write_to_png_stream(surface.get(), append_bytes, out);
        cairo_surface_finish(surface.get());
        if (status == CAIRO_STATUS_SUCCESS) status = cairo_surface_status(surface.get());
        if (status == CAIRO_STATUS_SUCCESS) return 1;
        *error = cairo_status_to_string(status);
    } catch (const std::exception& e) {
        *error = e.what();
    }
    return 0;
}

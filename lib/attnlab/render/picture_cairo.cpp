// The pictures as PNG files, through cairo: the figure that figure_layout.cpp lays out
// (figure.hpp), drawn mark by mark at 1280 x 720 points times a scale (2 for slides). Text is
// in DejaVu Sans, or WenQuanYi Micro Hei for Chinese and for any text that is not ASCII
// (Debian's fonts-dejavu-core and fonts-wqy-microhei). A module of its own
// (libattnlab_picture.so), loaded by plot_file.cpp only when a run writes a PNG: a plain run
// does not load cairo and the X11 and font libraries that come with it.
#include "attnlab/render/figure.hpp"
#include "attnlab/render/picture_module.hpp"

#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <memory>

namespace attnlab {

namespace {

void set_rgb(cairo_t* cr, Rgb c) { cairo_set_source_rgb(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0); }

bool ascii(const std::string& s)
{
    return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

void draw_text(cairo_t* cr, const Mark& m, bool zh)
{
    cairo_select_font_face(cr, zh || !ascii(m.text) ? "WenQuanYi Micro Hei" : "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                           m.bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, m.size);
    cairo_text_extents_t e;
    cairo_text_extents(cr, m.text.c_str(), &e);
    const double shift = m.anchor == Anchor::start ? 0.0 : m.anchor == Anchor::middle ? e.x_advance / 2 : e.x_advance;
    cairo_save(cr);
    cairo_translate(cr, m.x, m.y);
    cairo_rotate(cr, m.rotate * M_PI / 180.0);
    cairo_move_to(cr, -shift, 0);
    set_rgb(cr, m.color);
    cairo_show_text(cr, m.text.c_str());
    cairo_restore(cr);
}

void draw_mark(cairo_t* cr, const Mark& m, bool zh)
{
    switch (m.kind) {
        case Mark::Kind::rect:
            set_rgb(cr, m.color);
            cairo_rectangle(cr, m.x, m.y, m.w, m.h);
            if (m.outline) cairo_set_line_width(cr, m.width), cairo_stroke(cr);
            else cairo_fill(cr);
            break;
        case Mark::Kind::line:
            set_rgb(cr, m.color);
            cairo_set_line_width(cr, m.width);
            cairo_move_to(cr, m.x, m.y);
            cairo_line_to(cr, m.w, m.h);
            cairo_stroke(cr);
            break;
        case Mark::Kind::polyline:
            set_rgb(cr, m.color);
            cairo_set_line_width(cr, m.width);
            cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
            for (std::size_t i = 0; i < m.points.size(); ++i)
                (i == 0 ? cairo_move_to : cairo_line_to)(cr, m.points[i].first, m.points[i].second);
            cairo_stroke(cr);
            break;
        case Mark::Kind::text: draw_text(cr, m, zh); break;
    }
}

cairo_status_t append_bytes(void* closure, const unsigned char* data, unsigned int length)
{
    static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
    return CAIRO_STATUS_SUCCESS;
}

}  // namespace

}  // namespace attnlab

// The module's one entry point (picture_module.hpp): the PNG's bytes into *out, or 0 and the
// reason into *error. Nothing is thrown across the module's edge.
extern "C" int attnlab_picture_bytes(const attnlab::Figure* fig, double scale, std::string* out, std::string* error)
{
    using namespace attnlab;
    try {
        std::unique_ptr<cairo_surface_t, void (*)(cairo_surface_t*)> surface(
            cairo_image_surface_create(CAIRO_FORMAT_RGB24, static_cast<int>(std::lround(fig->width * scale)), static_cast<int>(std::lround(fig->height * scale))),
            cairo_surface_destroy);
        std::unique_ptr<cairo_t, void (*)(cairo_t*)> cr(cairo_create(surface.get()), cairo_destroy);
        cairo_scale(cr.get(), scale, scale);
        cairo_set_source_rgb(cr.get(), 1, 1, 1);
        cairo_paint(cr.get());
        for (const auto& g : fig->groups)
            for (const auto& m : g.marks) draw_mark(cr.get(), m, fig->zh);
        cairo_status_t status = cairo_status(cr.get());
        if (status == CAIRO_STATUS_SUCCESS) status = cairo_surface_write_to_png_stream(surface.get(), append_bytes, out);
        cairo_surface_finish(surface.get());
        if (status == CAIRO_STATUS_SUCCESS) status = cairo_surface_status(surface.get());
        if (status == CAIRO_STATUS_SUCCESS) return 1;
        *error = cairo_status_to_string(status);
    } catch (const std::exception& e) {
        *error = e.what();
    }
    return 0;
}

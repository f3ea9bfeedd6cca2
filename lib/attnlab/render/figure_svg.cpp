// A figure as SVG, written directly: text stays <text> in the figure's fonts, so a lecturer
// can edit a title in any SVG editor, and a page can hold the picture inline.
#include "attnlab/render/figure.hpp"
#include "attnlab/render/render.hpp"

#include <fmt/format.h>

namespace attnlab {

namespace {

// A coordinate with at most two decimals and no trailing zeros.
std::string num(double v)
{
    std::string s = fmt::format("{:.2f}", v);
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s == "-0" ? "0" : s;
}

std::string hex(Rgb c) { return fmt::format("#{:02x}{:02x}{:02x}", c.r, c.g, c.b); }

const char* anchor_name(Anchor a) { return a == Anchor::start ? "start" : a == Anchor::middle ? "middle" : "end"; }

void mark_svg(std::string& out, const Mark& m)
{
    switch (m.kind) {
        case Mark::Kind::rect:
            if (m.outline) out += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="{}"/>)", num(m.x), num(m.y), num(m.w), num(m.h), hex(m.color));
            else out += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}"/>)", num(m.x), num(m.y), num(m.w), num(m.h), hex(m.color));
            break;
        case Mark::Kind::line:
            out += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="{}"/>)", num(m.x), num(m.y), num(m.w), num(m.h), hex(m.color), num(m.width));
            break;
        case Mark::Kind::polyline: {
            std::string pts;
            for (const auto& [x, y] : m.points) pts += (pts.empty() ? "" : " ") + num(x) + "," + num(y);
            out += fmt::format(R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="{}" stroke-linejoin="round"/>)", pts, hex(m.color), num(m.width));
            break;
        }
        case Mark::Kind::text: {
            const std::string turn = m.rotate != 0.0 ? fmt::format(R"x( transform="rotate({} {} {})")x", num(m.rotate), num(m.x), num(m.y)) : "";
            out += fmt::format(R"(<text x="{}" y="{}" font-size="{}" text-anchor="{}" fill="{}"{}{}>{}</text>)", num(m.x), num(m.y), num(m.size),
                               anchor_name(m.anchor), hex(m.color), m.bold ? R"( font-weight="bold")" : "", turn, xml_escape(m.text));
            break;
        }
    }
    out += '\n';
}

std::string svg_body(const Figure& fig, const std::string& size_attributes)
{
    std::string out = fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" {} viewBox="0 0 {} {}" font-family="{}" role="img">)", size_attributes,
                                  num(fig.width), num(fig.height), xml_escape(figure_fonts(fig.zh)));
    out += "\n<title>" + xml_escape(fig.description) + "</title>\n";
    out += R"(<rect width="100%" height="100%" fill="#ffffff"/>)" "\n";
    for (const auto& g : fig.groups) {
        out += fmt::format(R"(<g class="{}"{}>)", g.cls, g.cls == "panel" ? R"( shape-rendering="crispEdges")" : "");
        out += '\n';
        for (const auto& m : g.marks) mark_svg(out, m);
        out += "</g>\n";
    }
    return out + "</svg>\n";
}

}  // namespace

std::string figure_fonts(bool zh)
{
    return zh ? "WenQuanYi Micro Hei, DejaVu Sans, sans-serif" : "DejaVu Sans, WenQuanYi Micro Hei, sans-serif";
}

std::string figure_svg(const Figure& fig)
{
    return R"(<?xml version="1.0" encoding="UTF-8"?>)" "\n" + svg_body(fig, fmt::format(R"(width="{}" height="{}")", num(fig.width), num(fig.height)));
}

std::string figure_svg_inline(const Figure& fig) { return svg_body(fig, R"(width="100%")"); }

}  // namespace attnlab

// The colours of a picture, shared by the terminal (plot_text.cpp) and the picture files
// (picture_cairo.cpp, a module of its own): it needs nothing but the Picture.
#include "attnlab/render/plot.hpp"

#include <algorithm>
#include <cmath>

namespace attnlab {

// --- colours ---

namespace {

Rgb mix(Rgb a, Rgb b, double t)
{
    auto m = [t](unsigned char x, unsigned char y) { return static_cast<unsigned char>(std::lround(x + (y - x) * t)); };
    return {m(a.r, b.r), m(a.g, b.g), m(a.b, b.b)};
}

Rgb along(const std::vector<Rgb>& stops, double t)
{
    t = std::clamp(t, 0.0, 1.0) * static_cast<double>(stops.size() - 1);
    const std::size_t i = std::min(stops.size() - 2, static_cast<std::size_t>(t));
    return mix(stops[i], stops[i + 1], t - static_cast<double>(i));
}

}  // namespace

Rgb diverging_color(double t) { return along({{33, 102, 172}, {146, 197, 222}, {247, 247, 247}, {244, 165, 130}, {178, 24, 43}}, (t + 1.0) / 2.0); }
Rgb sequential_color(double t) { return along({{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}}, t); }

Rgb series_color(int i)
{
    static const Rgb c[] = {{31, 119, 180}, {255, 127, 14}, {44, 160, 44}, {214, 39, 40}, {148, 103, 189}, {140, 86, 75}, {227, 119, 194}, {127, 127, 127}};
    return c[static_cast<std::size_t>(i) % 8];
}

double scale_position(const Scale& s, double v)
{
    if (s.diverging) {
        const double m = std::max(std::abs(s.lo), std::abs(s.hi));
        return m > 0.0 ? v / m : 0.0;
    }
    return s.hi > s.lo ? (v - s.lo) / (s.hi - s.lo) : 1.0;
}

Rgb cell_color(const Scale& s, double v)
{
    if (std::isnan(v)) return {0, 230, 0};           // NaN: green
    if (std::isinf(v)) return v < 0 ? Rgb{64, 64, 64} : Rgb{230, 0, 230};  // -inf: dark grey, +inf: magenta
    return s.diverging ? diverging_color(scale_position(s, v)) : sequential_color(scale_position(s, v));
}

Scale panel_scale(const Picture& pic, const Panel& p) { return p.own ? *p.own : Scale{pic.lo, pic.hi, pic.diverging}; }
Rgb cell_color(const Picture& pic, double v) { return cell_color(Scale{pic.lo, pic.hi, pic.diverging}, v); }

}  // namespace attnlab

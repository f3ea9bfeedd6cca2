// Pictures for files and pages: a tensor's picture with its heading, palette, scale and
// tokens, and two tensors compared side by side (--compare).
#include "attnlab/render/plot.hpp"

#include "attnlab/core/report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>

namespace attnlab {

namespace {

bool is_position_axis(const std::string& axis) { return axis == "pos" || axis == "query" || axis == "key"; }

// "head=1, batch=0" as a panel's title: "head 1, batch 0".
std::string panel_title(std::string label)
{
    std::replace(label.begin(), label.end(), '=', ' ');
    return label;
}

Scale finite_range(const std::vector<double>& values, bool diverging)
{
    Scale s{1.0, 0.0, diverging};
    for (double x : values) {
        if (!std::isfinite(x)) continue;
        if (s.lo > s.hi) s.lo = s.hi = x;
        else s.lo = std::min(s.lo, x), s.hi = std::max(s.hi, x);
    }
    if (s.lo > s.hi) s.lo = s.hi = 0.0;
    return s;
}

// The tokens along every position axis the picture shows; a count that differs is refused.
void label_tokens(Picture& pic, const std::vector<std::string>& tokens)
{
    if (tokens.empty()) return;
    const bool rows = pic.kind == PlotKind::heatmap && is_position_axis(pic.row_axis), cols = is_position_axis(pic.col_axis);
    if (!rows && !cols) throw InputError(fmt::format("--tokens labels the position axes (pos, query, key); this picture has none ({})", pic.title));
    const std::size_t n = cols ? pic.data_cols : pic.data_rows;
    if (tokens.size() != n || (rows && tokens.size() != pic.data_rows)) {
        throw InputError(fmt::format("--tokens gives {} tokens, but the picture has {} positions", tokens.size(), rows ? pic.data_rows : n));
    }
    if ((rows && pic.row_step > 1) || (cols && pic.col_step > 1)) throw InputError(fmt::format("--tokens: {} positions are too many to label one by one here", n));
    if (rows) pic.row_labels = tokens;
    if (cols) pic.col_labels = tokens;
}

// The run's context (its mask, its position scheme) belongs to what attention computes: a
// tensor over keys. An input or a weight matrix is the same whatever the mask.
std::string with_context(const std::string& heading, const std::vector<std::string>& axes, const PictureLabels& labels)
{
    if (labels.context.empty() || std::find(axes.begin(), axes.end(), "key") == axes.end()) return heading;
    return fmt::format(labels.lang == Lang::zh ? "{}（{}）" : "{} ({})", heading, labels.context);
}

// The first 2-D panel of a tensor (rank 2, or the first leading index of rank 3 and 4).
Tensor first_panel(const Tensor& t)
{
    if (t.rank() < 2) throw InputError(fmt::format("--compare draws matrices; {} has rank {}", t.name, t.rank()));
    const std::size_t r = t.rank();
    Tensor p{t.name, {t.axes[r - 2], t.axes[r - 1]}, t.elem, {t.shape[r - 2], t.shape[r - 1]}, {}};
    p.values = Values(t.values.slice(0, t.shape[r - 2] * t.shape[r - 1]));
    return p;
}

std::string first_panel_title(const Tensor& t, Lang lang)
{
    std::string title = tensor_heading(t.name, lang);
    for (std::size_t a = 0; a + 2 < t.rank(); ++a) title += fmt::format(", {} 0", t.axes[a]);
    return title;
}

}  // namespace

namespace {

// The heading, palette, scale, panel titles and tokens of a picture made from t.
void label_picture(Picture& pic, const Tensor& t, const PictureLabels& labels)
{
    pic.heading = with_context(tensor_heading(t.name, labels.lang), t.axes, labels);
    pic.y_label = pic.kind == PlotKind::lines ? tensor_heading(t.name, labels.lang) : "";
    const Palette palette = tensor_palette(t.name);
    if (palette != Palette::by_data) pic.diverging = palette == Palette::diverging;
    pic.scale = pic.panels.size() > 1 ? tensor_scale(t.name) : ScaleMode::shared;
    for (Panel& p : pic.panels) {
        p.title = panel_title(p.label);
        if (pic.scale == ScaleMode::per_panel) p.own = finite_range(p.values, pic.diverging);
    }
    label_tokens(pic, labels.tokens);
}

}  // namespace

Picture make_labelled_picture(const Tensor& t, PlotKind kind, const PictureLabels& labels, std::size_t max_panels)
{
    Picture pic = make_picture(t, kind, labels.max_cols, labels.max_rows, max_panels);
    label_picture(pic, t, labels);
    return pic;
}

Picture make_run_picture(const std::vector<Tensor>& drawn, const PictureLabels& labels)
{
    if (drawn.size() == 2) return make_compare_picture(drawn[0], drawn[1], labels, false);
    if (drawn.size() != 1) throw std::logic_error("a picture draws one tensor or a pair");
    return make_labelled_picture(drawn.front(), PlotKind::automatic, labels);
}

std::string picture_context(const ParamList& params, Lang lang)
{
    std::vector<std::string> parts;
    const bool zh = lang == Lang::zh;
    for (const char* key : {"mask", "kind"}) {
        const ParamValue* v = find_param(params, key);
        const auto* s = v ? std::get_if<std::string>(v) : nullptr;
        if (!s || *s == "none") continue;
        if (*s == "both") parts.push_back(zh ? "因果与填充掩码" : "causal and padding mask");
        else parts.push_back(fmt::format(zh ? "{} 掩码" : "{} mask", *s));
    }
    const ParamValue* pe = find_param(params, "pe");
    const auto* scheme = pe ? std::get_if<std::string>(pe) : nullptr;
    if (scheme && *scheme != "none") parts.push_back(fmt::format(zh ? "位置：{}" : "position: {}", *scheme));
    return fmt::format("{}", fmt::join(parts, zh ? "，" : ", "));
}

Picture make_compare_picture(const Tensor& a, const Tensor& b, const PictureLabels& labels, bool difference)
{
    const Tensor pa = first_panel(a), pb = first_panel(b);
    if (pa.shape != pb.shape) {
        throw InputError(fmt::format("--compare: {} [{}] and {} [{}] differ in shape", a.name, fmt::join(pa.shape, ", "), b.name, fmt::join(pb.shape, ", ")));
    }
    Picture pic = make_labelled_picture(pa, PlotKind::heatmap, labels);
    const Picture second = make_labelled_picture(pb, PlotKind::heatmap, labels);
    pic.title = fmt::format("{} | {} [{}] ({})", a.name, b.name, fmt::join(pa.shape, ", "), fmt::join(pa.axes, ", "));
    std::string second_heading = tensor_heading(b.name, labels.lang);
    if (second_heading.size() > 1 && std::isupper(static_cast<unsigned char>(second_heading[0])) && std::islower(static_cast<unsigned char>(second_heading[1])))
        second_heading[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(second_heading[0])));
    pic.heading = fmt::format(labels.lang == Lang::zh ? "{} 与 {}" : "{} vs {}", tensor_heading(a.name, labels.lang), second_heading);
    pic.heading = with_context(pic.heading, pa.axes, labels);
    pic.panels.front().title = first_panel_title(a, labels.lang);
    pic.panels.push_back(second.panels.front());
    pic.panels.back().title = first_panel_title(b, labels.lang);
    pic.lo = std::min(pic.lo, second.lo), pic.hi = std::max(pic.hi, second.hi);
    pic.neg_inf |= second.neg_inf, pic.pos_inf |= second.pos_inf, pic.nan |= second.nan;
    if (tensor_palette(a.name) == Palette::by_data) pic.diverging = pic.lo < 0.0 && pic.hi > 0.0;
    if (!difference) {
        for (Panel& p : pic.panels) p.label = p.title;
        return pic;
    }
    Tensor d = pb;
    d.name = "difference";
    for (std::size_t i = 0; i < d.size(); ++i) d.values.set(i, pa.values[i] == pb.values[i] ? 0.0 : pb.values[i] - pa.values[i]);
    Picture dp = make_picture(d, PlotKind::heatmap, labels.max_cols, labels.max_rows);
    Panel diff = dp.panels.front();
    diff.title = labels.lang == Lang::zh ? fmt::format("差值：{} - {}", b.name, a.name) : fmt::format("difference: {} - {}", b.name, a.name);
    diff.own = finite_range(diff.values, true);
    pic.panels.push_back(std::move(diff));
    for (Panel& p : pic.panels) p.label = p.title;  // the terminal names each panel too
    pic.nan |= dp.nan, pic.neg_inf |= dp.neg_inf, pic.pos_inf |= dp.pos_inf;
    return pic;
}

}  // namespace attnlab

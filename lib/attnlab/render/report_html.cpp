// The HTML report of one run (report_html.hpp); the tour's page is in report_html_tour.cpp.
#include "attnlab/render/report_html.hpp"

#include "attnlab/core/params_json.hpp"
#include "attnlab/render/figure.hpp"
#include "attnlab/render/plot.hpp"
#include "attnlab/render/render.hpp"
#include "attnlab/render/report_html_parts.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace attnlab {

namespace html {

const char* word(Lang lang, const char* en, const char* zh) { return lang == Lang::zh ? zh : en; }

// The page's style: one column below 700 px, pictures scaled to their column, long formulas
// wrapped rather than widening the page, details left out on paper.
const char* kStyle = R"(
:root { color-scheme: light; }
body { margin: 0; color: #1a1a1a; background: #fff; line-height: 1.45;
       font-family: "DejaVu Sans", "WenQuanYi Micro Hei", "Noto Sans CJK SC", sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 12px 16px 40px; }
h1 { font-size: 1.6em; margin: 0.4em 0 0.2em; } h2 { font-size: 1.25em; margin: 1.2em 0 0.4em; }
code { font-family: "DejaVu Sans Mono", monospace; font-size: 0.92em; overflow-wrap: anywhere; }
p, li, td, th, figcaption, summary { overflow-wrap: anywhere; }
.command { background: #f4f4f4; padding: 6px 10px; border-radius: 4px; }
.summary { font-weight: bold; } .summary.ok { color: #1a7f37; } .summary.fail { color: #b42318; }
ol.checks { list-style: none; padding: 0; margin: 0; }
li.check { border-left: 5px solid #1a7f37; background: #f6fbf7; padding: 5px 10px; margin: 6px 0; }
li.check.fail { border-color: #b42318; background: #fdf3f2; } li.check.wrong { border-color: #b7791f; background: #fdf8ee; } li.check.imprecise { border-color: #6b7280; background: #f6f7f9; }
.verdict { font-weight: bold; margin-right: 0.5em; } .figure { display: block; color: #444; font-size: 0.92em; }
.role { color: #666; font-size: 0.85em; margin-left: 0.4em; }
.quote { display: block; color: #333; font-size: 0.92em; font-style: italic; margin-top: 0.2em; }
.grid { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 14px; }
figure { margin: 0; border: 1px solid #ddd; border-radius: 4px; padding: 8px; min-width: 0; }
figure svg { display: block; width: 100%; height: auto; }
figcaption { font-size: 0.9em; color: #444; margin-top: 4px; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; font-size: 0.85em; }
td, th { border: 1px solid #ddd; padding: 2px 6px; text-align: left; vertical-align: top; }
td.num { text-align: right; font-family: "DejaVu Sans Mono", monospace; white-space: nowrap; }
.narration { white-space: pre-line; }
@media (max-width: 700px) { .grid { grid-template-columns: minmax(0, 1fr); } main { padding: 8px; } }
@media print { details { display: none; } figure, li.check { break-inside: avoid; } main { max-width: none; } }
)";

std::string page(const std::string& title, Lang lang, const std::string& body)
{
    return fmt::format("<!DOCTYPE html>\n<html lang=\"{}\">\n<head>\n<meta charset=\"utf-8\">\n"
                       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{}</style>\n"
                       "</head>\n<body>\n<main>\n{}</main>\n</body>\n</html>\n",
                       lang == Lang::zh ? "zh-CN" : "en", xml_escape(title), kStyle, body);
}

std::string check_item(const Check& c, Lang lang, const std::string& attribute)
{
    const std::string cls = c.passed() ? "ok" : c.role == Role::invariant ? "fail" : c.verdict() == Verdict::imprecise ? "imprecise" : "wrong";
    const std::string role = role_word(c, lang);
    const std::string words = words_line(c, lang);
    return fmt::format("<li class=\"check {}\" {}=\"{}\"><span class=\"verdict\">{}</span>{}{}<span class=\"figure\">{}</span>{}</li>\n", cls, attribute,
                       xml_escape(c.name), xml_escape(verdict_word(c, lang)), xml_escape(c.claim),
                       role.empty() ? "" : fmt::format("<span class=\"role\">({})</span>", xml_escape(role)), xml_escape(check_figure(c, lang)),
                       words.empty() ? "" : fmt::format("<span class=\"quote\">{}</span>", xml_escape(words)));
}

std::string checks_list(const std::vector<Check>& checks, Lang lang)
{
    if (checks.empty()) return "";
    std::string out = "<ol class=\"checks\">\n";
    for (const auto& c : checks) out += check_item(c, lang, "data-check");
    return out + "</ol>\n";
}

std::string notes_list(const std::vector<std::string>& notes)
{
    if (notes.empty()) return "";
    std::string out = "<ul class=\"notes\">\n";
    for (const auto& n : notes) out += "<li>" + xml_escape(n) + "</li>\n";
    return out + "</ul>\n";
}

std::string params_table(const ParamList& params, Lang lang, bool open)
{
    std::string rows;
    const nlohmann::ordered_json j = params_json(params);
    for (auto it = j.begin(); it != j.end(); ++it) {
        rows += fmt::format("<tr><th>{}</th><td><code>{}</code></td></tr>\n", xml_escape(it.key()), xml_escape(it->is_string() ? it->get<std::string>() : it->dump()));
    }
    const char* title = open ? word(lang, "Measurements", "测量值") : word(lang, "Parameters", "参数");
    return fmt::format("<details{}><summary>{}</summary>\n<div class=\"scroll\"><table>\n{}</table></div>\n</details>\n", open ? " open" : "", title, rows);
}

// A small tensor's values: one row per index of its leading axes, the last axis across.
std::string values_table(const Tensor& t, Lang lang)
{
    if (t.size() == 0 || t.size() > kTableValues) return "";
    const std::size_t cols = t.shape.back(), rows = t.size() / cols;
    std::string out = fmt::format("<details><summary>{}</summary>\n<div class=\"scroll\"><table>\n<tr><th></th>", word(lang, "Values", "数值"));
    for (std::size_t c = 0; c < cols; ++c) out += fmt::format("<th>{}</th>", c);
    out += "</tr>\n";
    for (std::size_t r = 0; r < rows; ++r) {
        std::vector<std::size_t> index;
        for (std::size_t a = t.rank() - 1, n = r; a-- > 0; n /= t.shape[a]) index.insert(index.begin(), n % t.shape[a]);
        out += fmt::format("<tr><th>{}</th>", xml_escape(fmt::format("[{}]", fmt::join(index, ", "))));
        for (std::size_t c = 0; c < cols; ++c) out += fmt::format("<td class=\"num\">{}</td>", xml_escape(fmt::format("{:.6g}", t.values[r * cols + c])));
        out += "</tr>\n";
    }
    return out + "</table></div>\n</details>\n";
}

// One picture: the tensor, or a pair side by side, as inline SVG with its caption.
std::string figure_element(const std::vector<Tensor>& drawn, const PictureLabels& labels)
{
    std::string names, caption, svg;
    for (const auto& t : drawn) {
        names += (names.empty() ? "" : ",") + t.name;
        caption += fmt::format("{}<code>{}</code> [{}] ({}) {}", caption.empty() ? "" : "; ", xml_escape(t.name), fmt::join(t.shape, ", "), xml_escape(fmt::format("{}", fmt::join(t.axes, ", "))), name_of(t.elem));
    }
    try {
        svg = figure_svg_inline(lay_out(make_run_picture(drawn, labels), labels.lang, 960, 600));
    } catch (const InputError& e) {  // nothing to draw (an empty tensor): said instead
        svg = "<p>" + xml_escape(e.what()) + "</p>";
    }
    return fmt::format("<figure data-tensor=\"{}\">\n{}<figcaption>{}</figcaption>\n{}</figure>\n", xml_escape(names), svg, caption,
                       drawn.size() == 1 ? values_table(drawn.front(), labels.lang) : "");
}

PictureLabels page_labels(const ParamList& params, Lang lang)
{
    PictureLabels labels{lang, picture_context(params, lang), {}};
    labels.max_cols = labels.max_rows = kPageCells;
    return labels;
}

}  // namespace html

namespace {

using namespace html;

// The learner's tensor beside the reference, and their difference, as --compare against
// draws them in the terminal.
std::string against_pictures(const Report& report, const Comparison& c, const std::optional<Tensor>& yours, Lang lang)
{
    const Tensor* reference = report.find(c.tensor);
    if (!yours || reference == nullptr || yours->shape != reference->shape) return "";
    Tensor mine = *yours;
    mine.name = "yours";
    mine.axes = reference->axes;
    const PictureLabels labels = page_labels(report.params, lang);
    std::string svg;
    try {
        svg = figure_svg_inline(lay_out(make_compare_picture(*reference, mine, labels, true), lang, 960, 600));
    } catch (const InputError& e) {  // nothing to draw: said instead
        svg = "<p>" + xml_escape(e.what()) + "</p>";
    }
    return fmt::format("<figure data-tensor=\"{},yours\">\n{}<figcaption>{}</figcaption>\n</figure>\n", xml_escape(c.tensor), svg,
                       xml_escape(word(lang, "the reference, yours, and yours minus the reference", "参考答案、你的张量，以及两者之差（你的减参考）")));
}

std::string against_section(const Report& report, const Comparison& c, const std::optional<Tensor>& yours, Lang lang)
{
    std::string out = fmt::format("<section class=\"against\">\n<h2>{}</h2>\n", word(lang, "Your tensor", "你的张量"));
    out += fmt::format("<p class=\"summary {}\">{}: <code>{}</code> ({} <code>{}</code>)</p>\n", c.passed ? "ok" : "fail",
                       c.passed ? word(lang, "MATCH", "一致") : word(lang, "DIFFERS", "不一致"), xml_escape(c.file), word(lang, "tensor", "张量"), xml_escape(c.tensor));
    out += fmt::format("<ul>\n<li>{}: {}</li>\n", word(lang, "judged at", "判定精度"), xml_escape(c.judged_at));
    out += fmt::format("<li>{}: [{}] / [{}]</li>\n", word(lang, "shape expected / yours", "期望形状 / 你的形状"), fmt::join(c.shape_expected, ", "), fmt::join(c.shape_got, ", "));
    out += fmt::format("<li>{}: |diff| &lt;= {} + {} |expected|; {} / {} {}</li>\n", word(lang, "tolerance", "容差"), format_figure(c.atol), format_figure(c.rtol),
                       c.mismatched, c.total, word(lang, "outside", "超出"));
    out += fmt::format("<li>max |diff| = {}</li>\n", format_figure(c.max_abs_diff));
    for (std::string located = located_text(c, lang); !located.empty();) {  // the worst element and where they differ
        const std::size_t nl = located.find('\n');
        out += fmt::format("<li class=\"located\">{}</li>\n", xml_escape(located.substr(2, nl - 2)));
        located.erase(0, nl + 1);
    }
    out += "</ul>\n" + against_pictures(report, c, yours, lang);
    out += checks_list(c.properties, lang);
    for (const auto& d : c.diagnosis) {
        out += fmt::format("<p class=\"diagnosis\" data-mistake=\"{}\"><strong>{}</strong> {}: {} (max |diff| = {})</p>\n", xml_escape(d.id),
                           d.certainty == Certainty::matches ? word(lang, "matches", "吻合") : word(lang, "closest", "最接近"), xml_escape(d.id), xml_escape(d.explanation),
                           format_figure(d.max_abs_diff));
    }
    return out + notes_list(c.notes) + "</section>\n";
}

}  // namespace

std::string report_html(const Report& report, const HtmlOptions& opts)
{
    const Lang lang = opts.lang;
    const bool ok = report.against ? report.against->passed : report.passed();
    std::string body = fmt::format("<h1>attnlab {}</h1>\n<p class=\"command\"><code>{}</code></p>\n", xml_escape(report.command), xml_escape(opts.command));
    body += fmt::format("<p class=\"summary {}\">{}</p>\n", ok ? "ok" : "fail",
                        ok ? word(lang, "Every checked property holds (exit status 0).", "所有检查的性质都成立（退出码 0）。")
                           : word(lang, "A checked property does not hold (exit status 1).", "有检查的性质不成立（退出码 1）。"));
    body += params_table(report.params, lang, false);
    if (!report.measurements.empty()) body += params_table(report.measurements, lang, true);  // bench: its timings
    body += fmt::format("<section class=\"checks\">\n<h2>{}</h2>\n{}</section>\n", word(lang, "Checks", "检查"), checks_list(report.checks, lang));
    if (report.against) body += against_section(report, *report.against, opts.yours, lang);
    if (!opts.quiet && !report.tensors.empty()) {
        body += fmt::format("<section class=\"tensors\">\n<h2>{}</h2>\n<div class=\"grid\">\n", word(lang, "Tensors", "张量"));
        for (const auto& t : report.tensors) body += figure_element({t}, page_labels(report.params, lang));
        body += "</div>\n</section>\n";
    }
    if (!report.notes.empty()) body += fmt::format("<section>\n<h2>{}</h2>\n{}</section>\n", word(lang, "Notes", "说明"), notes_list(report.notes));
    return page("attnlab " + report.command, lang, body);
}

}  // namespace attnlab

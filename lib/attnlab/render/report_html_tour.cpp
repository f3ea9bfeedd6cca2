// The tour's HTML page (report_html.hpp): each section's narration, its runs with the command
// that reproduces each, their checks and notes, the section's chosen picture; then the claims
// with their sources and the facts.
#include "attnlab/render/report_html.hpp"

#include "attnlab/render/render.hpp"
#include "attnlab/render/report_html_parts.hpp"

#include <fmt/format.h>

namespace attnlab {

namespace {

using namespace html;

std::string section_html(const TourSection& s, Lang lang)
{
    std::string out = fmt::format("<section class=\"tour-section\" id=\"{}\">\n<h2>{}</h2>\n<p class=\"narration\">{}</p>\n", xml_escape(s.name), xml_escape(s.title), xml_escape(s.text));
    std::string picture;
    for (const auto& run : s.runs) {
        out += fmt::format("<p class=\"command\">{} <code>{}</code></p>\n", word(lang, "reproduce:", "复现命令："), xml_escape(run.command));
        out += checks_list(run.checks, lang) + notes_list(run.notes);
        if (!run.picture.empty()) picture = figure_element(run.picture, page_labels(run.params, lang));
    }
    return out + picture + "</section>\n";
}

std::string claims_html(const TourReport& t)
{
    const Lang lang = t.lang;
    std::string out = fmt::format("<section class=\"claims\">\n<h2>{}</h2>\n<ol class=\"checks\">\n", word(lang, "Claims, their sources and the measurements", "论断、出处与测量结果"));
    for (const auto& c : t.claims) {
        std::string item = check_item(c.check, lang, "data-claim");
        item.insert(item.rfind("</li>"), fmt::format("<span class=\"figure\">{} {} · <code>{}</code></span>", word(lang, "source:", "出处："), xml_escape(c.source), xml_escape(c.command)));
        if (lang == Lang::zh) item.replace(item.find(xml_escape(c.check.claim)), xml_escape(c.check.claim).size(), xml_escape(c.claim));
        out += item;
    }
    return out + "</ol>\n</section>\n";
}

std::string facts_html(const TourReport& t)
{
    if (t.facts.empty()) return "";
    const Lang lang = t.lang;
    std::string out = fmt::format("<section class=\"facts\">\n<h2>{}</h2>\n<ul>\n", word(lang, "Facts: settled by the cited source, not measured", "事实：由所引来源判定，不是测量"));
    for (const auto& f : t.facts) {
        const std::string verdict = fact_verdict_word(f.verdict, lang);
        out += fmt::format("<li data-fact=\"{}\"><strong>{}</strong> {} <span class=\"figure\">{} · {}: {}</span></li>\n", xml_escape(f.id), verdict, xml_escape(f.statement),
                           xml_escape(f.where), xml_escape(f.source), xml_escape(f.source_value));
    }
    return out + "</ul>\n</section>\n";
}

}  // namespace

std::string tour_html(const TourReport& tour, const HtmlOptions& opts)
{
    const Lang lang = tour.lang;
    std::string body = fmt::format("<h1>{}</h1>\n<p class=\"command\"><code>{}</code></p>\n", word(lang, "attnlab tour", "attnlab 导览"), xml_escape(opts.command));
    body += fmt::format("<p class=\"summary {}\">{}</p>\n", tour.passed() ? "ok" : "fail",
                        tour.passed() ? word(lang, "The program's own invariants all hold (exit status 0); the articles' claims are judged below.",
                                             "程序自身的不变量全部成立（退出码 0）；文章的论断见下文的判定。")
                                      : word(lang, "An invariant of the program does not hold (exit status 1).", "程序自身有不变量不成立（退出码 1）。"));
    for (const auto& s : tour.sections) body += section_html(s, lang);
    body += claims_html(tour) + facts_html(tour);
    return page(word(lang, "attnlab tour", "attnlab 导览"), lang, body);
}

}  // namespace attnlab

#include "attnlab/render/tour.hpp"

#include "attnlab/core/params_json.hpp"
#include "attnlab/render/render.hpp"

#include <fmt/color.h>
#include <fmt/format.h>

namespace attnlab {

namespace {

// One run of a section: the command that reproduces it, then what the section shows of it.
std::string render_run(const TourRun& run, Lang lang, bool color, bool quiet, std::size_t width)
{
    Report r;
    r.tensors = run.tensors;
    r.checks = run.checks;
    r.notes = run.notes;
    RenderOptions o;
    o.color = color;
    o.quiet = quiet;
    o.lang = lang;
    o.width = width;
    const std::string command = (lang == Lang::zh ? "复现命令：" : "reproduce: ") + run.command;
    return wrap_text(color ? fmt::format(fmt::emphasis::faint, "{}", command) : command, width, 4) + "\n" + render_text(r, o);
}

std::string render_claims(const TourReport& t, std::size_t width)
{
    const bool zh = t.lang == Lang::zh;
    std::string out = zh ? "论断汇总：论断、出处、测量值与结论\n\n" : "Claims: each with its source, the measured figure and the verdict\n\n";
    for (const auto& c : t.claims) {
        out += wrap_text(fmt::format("  {:<9} {}", verdict_word(c.check, t.lang), c.claim), width, 12) + "\n";
        if (const std::string words = words_line(c.check, t.lang); !words.empty()) out += wrap_text("            " + words, width, 12) + "\n";
        out += wrap_text(fmt::format("            {} | {}", c.source, check_figure(c.check, t.lang)), width, 12) + "\n";
    }
    const ArticleCount n = count_article_claims(t);
    out += "\n";
    const std::string summary =
        zh ? fmt::format("{} 条文章论断与测量结果不符，{} 条不严谨（字面不成立、本意成立；见上表，附数值）；程序自身的不变量{}。", n.wrong, n.imprecise,
                         t.passed() ? "全部成立" : "有不成立的")
           : fmt::format("{} of the articles' claims {} with the measurement and {} {} imprecise (literally false, the meaning holds; figures above); "
                         "the program's own invariants {}.",
                         n.wrong, n.wrong == 1 ? "disagrees" : "disagree", n.imprecise, n.imprecise == 1 ? "is" : "are", t.passed() ? "all hold" : "do NOT all hold");
    return out + wrap_text(summary, width, 0) + "\n";
}

// The statements about models and papers: a source settles them, no measurement; they are
// not counted in the exit status.
std::string render_facts(const TourReport& t, std::size_t width)
{
    if (t.facts.empty()) return "";
    const bool zh = t.lang == Lang::zh;
    std::string out = "\n" + wrap_text(zh ? "事实：关于模型与论文的说法，由所引来源判定（不是测量，不影响退出码）"
                                          : "Facts: statements about models and papers, settled by the cited source (not measured; never in the exit status)",
                                       width, 0) + "\n\n";
    for (const auto& f : t.facts) {
        out += wrap_text(fmt::format("  {:<13} {}", fact_verdict_word(f.verdict, t.lang), f.statement), width, 16) + "\n";
        out += wrap_text(fmt::format("                {} | {}: {}", f.where, f.source, f.source_value), width, 16) + "\n";
    }
    return out;
}

nlohmann::ordered_json run_json(const TourRun& run, bool with_tensors)
{
    Report r;
    r.tensors = run.tensors;
    r.checks = run.checks;
    r.notes = run.notes;
    auto j = to_json(r, with_tensors);
    for (auto& c : j["checks"]) c["command"] = run.command;
    nlohmann::ordered_json out;
    out["command"] = run.command;
    out["params"] = params_json(run.params);
    out["tensors"] = j["tensors"];
    out["checks"] = j["checks"];
    out["notes"] = j["notes"];
    out["picture"] = nlohmann::ordered_json::array();  // the section's picture, when this run draws it
    for (const auto& t : run.picture) out["picture"].push_back(t.name);
    return out;
}

}  // namespace

std::string render_tour_text(const TourReport& t, bool color, bool quiet, const std::function<std::string(const TourRun&)>& picture, std::size_t width)
{
    std::string out;
    for (const auto& s : t.sections) {
        out += color ? fmt::format(fmt::emphasis::bold, "{}", s.title) : s.title;
        out += "\n" + wrap_text(s.text, width, 0) + "\n\n";
        for (const auto& run : s.runs) {
            out += render_run(run, t.lang, color, quiet, width) + "\n";
            if (picture && !run.picture.empty()) out += picture(run) + "\n";
        }
    }
    return out + render_claims(t, width) + render_facts(t, width);
}

nlohmann::ordered_json tour_to_json(const TourReport& t, bool with_tensors)
{
    nlohmann::ordered_json doc;
    doc["command"] = "tour";
    doc["params"] = params_json(t.params);
    auto secs = nlohmann::ordered_json::array();
    for (const auto& s : t.sections) {
        nlohmann::ordered_json sec;
        sec["name"] = s.name;
        sec["title"] = s.title;
        sec["text"] = s.text;
        sec["runs"] = nlohmann::ordered_json::array();
        sec["checks"] = nlohmann::ordered_json::array();
        for (const auto& run : s.runs) {
            auto j = run_json(run, with_tensors);
            for (const auto& c : j["checks"]) sec["checks"].push_back(c);
            sec["runs"].push_back(std::move(j));
        }
        sec["passed"] = s.passed;
        secs.push_back(std::move(sec));
    }
    doc["sections"] = std::move(secs);
    auto claims = nlohmann::ordered_json::array();
    for (const auto& c : t.claims) {
        auto j = check_json(c.check);
        j["command"] = c.command;
        j["section"] = c.section;
        j["source"] = c.source;
        j["claim_text"] = c.claim;
        claims.push_back(std::move(j));
    }
    doc["claims"] = std::move(claims);
    const ArticleCount n = count_article_claims(t);
    doc["article_claims"] = {{"distinct", n.distinct}, {"holds", n.holds}, {"wrong", n.wrong}, {"imprecise", n.imprecise}};
    auto facts = nlohmann::ordered_json::array();
    for (const auto& f : t.facts) {
        nlohmann::ordered_json j;
        j["name"] = f.id;
        j["role"] = "fact";
        j["section"] = f.section;
        j["where"] = f.where;
        j["statement"] = f.statement;
        j["verdict"] = name_of(f.verdict);
        j["source"] = f.source;
        j["source_value"] = f.source_value;
        facts.push_back(std::move(j));
    }
    doc["facts"] = std::move(facts);
    doc["passed"] = t.passed();
    return doc;
}

}  // namespace attnlab

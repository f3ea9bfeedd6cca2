// A check in words: its verdict, its role, its figure, and an article's quoted sentence.
#include "attnlab/render/render.hpp"

#include <fmt/format.h>

namespace attnlab {

std::string verdict_word(const Check& c, Lang lang)
{
    const bool ok = c.passed(), zh = lang == Lang::zh;
    switch (c.role) {
    case Role::invariant: return zh ? (ok ? "通过" : "失败") : (ok ? "PASS" : "FAIL");
    case Role::article:  // the wording against the measurement
        switch (c.verdict()) {
        case Verdict::holds: return zh ? "成立" : "HOLDS";
        case Verdict::wrong: return zh ? "不成立" : "WRONG";
        case Verdict::imprecise: return zh ? "不严谨" : "IMPRECISE";
        }
        return {};
    case Role::demonstration: return zh ? (ok ? "已演示" : "未演示") : (ok ? "SHOWN" : "NOT SHOWN");
    }
    return {};
}

std::string role_word(const Check& c, Lang lang)
{
    const bool zh = lang == Lang::zh;
    return c.role == Role::article ? (zh ? "文章的论断" : "article's claim") : c.role == Role::demonstration ? (zh ? "演示" : "demonstration") : "";
}

std::string check_figure(const Check& c, Lang lang)
{
    return fmt::format(lang == Lang::zh ? "{} = {}（要求 {} {}）" : "{} = {} (needs {} {})", c.metric, format_figure(c.measured), name_of(c.cmp),
                       format_figure(c.tolerance));
}

std::string words_line(const Check& c, Lang lang)
{
    if (c.quote.empty() && c.reading.empty()) return {};
    const bool zh = lang == Lang::zh;
    std::string out = fmt::format(zh ? "原文：“{}”" : "the article: “{}”", c.quote);
    if (!c.reading.empty()) out += fmt::format(zh ? "；本意：{}" : "; meant: {}", c.reading);
    if (c.intended)
        out += fmt::format(zh ? "（{} = {}，要求 {} {}：{}）" : " ({} = {}, needs {} {}: {})", c.intended->metric, format_figure(c.intended->measured),
                           name_of(c.intended->cmp), format_figure(c.intended->tolerance),
                           c.intended->holds() ? (zh ? "本意成立" : "the meaning holds") : (zh ? "本意也不成立" : "the meaning does not hold either"));
    return out;
}

}  // namespace attnlab

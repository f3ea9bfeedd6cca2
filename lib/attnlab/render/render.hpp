// One renderer for every experiment: text for people, CSV for plotting, JSON for scripts.
#pragma once

#include "attnlab/core/report.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace attnlab {

enum class Format { text, csv, json };
constexpr auto enum_names(Format)
{
    return std::array{std::pair{Format::text, std::string_view("text")},
                      std::pair{Format::csv, std::string_view("csv")},
                      std::pair{Format::json, std::string_view("json")}};
}

struct RenderOptions {
    Format format = Format::text;
    std::string tensor;   // CSV: which tensor (empty: the command's main tensor)
    bool wide = false;    // CSV: a rank-2 tensor as one row per first-axis index
    bool full = false;    // text: no summarising of large tensors
    bool quiet = false;   // text: check lines only; JSON: no tensors
    bool color = false;   // text: ANSI colour (the caller decides: terminal and no NO_COLOR)
    Lang lang = Lang::en; // text: verdict words and labels
    std::size_t width = 0;  // text: wrap check lines at this many columns (0: one line each, as in a pipe)
};

// The whole output as one string, so that nothing is half-written when something fails.
std::string render(const Report& report, const RenderOptions& opts);

std::string render_text(const Report& report, const RenderOptions& opts);
std::string render_csv(const Report& report, const RenderOptions& opts);
nlohmann::ordered_json to_json(const Report& report, bool with_tensors);
// One check as the JSON report lists it.
nlohmann::ordered_json check_json(const Check& c);

// Text made safe for XML and HTML content and double-quoted attributes (SVG, the report page,
// JUnit): bytes that are not UTF-8 and the non-characters U+FFFE and U+FFFF written as U+FFFD,
// & < > " escaped, and a control character XML 1.0 cannot hold (all but tab and newline)
// written as '?'.
std::string xml_escape(const std::string& s);

// One check as a text line: "PASS  claim: metric = 3.1e-07 (needs <= 1e-05)".
std::string check_line(const Check& c, bool color, Lang lang = Lang::en);
// Where a learner's tensor differs: its worst element and the ranges along every axis, one
// line each ("  worst: [0, 1] expected 1, got 0"); empty for a match or a shape mismatch.
std::string located_text(const Comparison& c, Lang lang);
// An article's claim, under its line: the article's words, what they mean, and the intended
// statement's figure when there is one; empty for a check without quoted words.
std::string words_line(const Check& c, Lang lang);
// What a check is, when it is not an invariant: "article's claim", "demonstration"; empty for
// an invariant.
std::string role_word(const Check& c, Lang lang);
// Its figure, with what the claim needs: "metric = 3.1e-07 (needs <= 1e-05)", which reads true
// whether the check passes or fails.
std::string check_figure(const Check& c, Lang lang = Lang::en);
// A line wrapped at `width` display columns (a Chinese character takes two, colour escapes
// none), between words or between Chinese characters; each further line is indented by
// `indent` spaces. A text of several lines has each wrapped. width 0 leaves it as it is. No
// trailing newline is added.
std::string wrap_text(const std::string& line, std::size_t width, std::size_t indent);

// The verdict of a check in words: PASS/FAIL (invariants), HOLDS/WRONG/IMPRECISE (an
// article's claim), SHOWN/NOT SHOWN (a demonstration), or their Chinese.
std::string verdict_word(const Check& c, Lang lang);

// A check's measured figure or tolerance as text lines show it: integers whole, others with
// three significant digits, "0" for -0, and "inf", "-inf", "nan".
std::string format_figure(double v);

// Numbers as CSV and JSON write them: shortest round-trip form of the element type,
// and "inf", "-inf", "nan" for non-finite values.
std::string format_value(double v, Elem elem);

}  // namespace attnlab

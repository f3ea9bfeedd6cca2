// The pieces both HTML pages are made of (report_html.cpp, report_html_tour.cpp).
#pragma once

#include "attnlab/core/report.hpp"
#include "attnlab/render/plot.hpp"

#include <string>
#include <vector>

namespace attnlab::html {

constexpr std::size_t kTableValues = 256;  // a tensor with at most this many values lists them
constexpr std::size_t kPageCells = 64;     // cells across and down a picture's panel, at most

const char* word(Lang lang, const char* en, const char* zh);
// The whole page: head, inline style, the body inside <main>.
std::string page(const std::string& title, Lang lang, const std::string& body);
// One check as an <li> with ATTRIBUTE="NAME" (data-check, or data-claim in the tour's table).
std::string check_item(const Check& c, Lang lang, const std::string& attribute);
std::string checks_list(const std::vector<Check>& checks, Lang lang);
std::string notes_list(const std::vector<std::string>& notes);
// The params (collapsed), or with open the measurements a run reports (bench's timings).
std::string params_table(const ParamList& params, Lang lang, bool open);
// <figure data-tensor="NAME"> (or "A,B" for a pair) with the inline SVG, its caption and, for
// one small tensor, its values.
std::string figure_element(const std::vector<Tensor>& drawn, const PictureLabels& labels);
PictureLabels page_labels(const ParamList& params, Lang lang);

}  // namespace attnlab::html

// `tour`: the two articles as one verified walk-through. Each section runs the library code
// of one subcommand (nothing is computed a second way), shows one small tensor and its
// checks; a closing table holds every claim against what was measured.
#pragma once

#include "attnlab/core/report.hpp"
#include "attnlab/core/tour_report.hpp"

#include <string>
#include <vector>

namespace attnlab {

struct TourParams {
    std::string section;  // empty: all
    Lang lang = Lang::en;
};

// Section names in the articles' order.
std::vector<std::string> tour_section_names();

TourReport run_tour(const TourParams& p, const RunContext& ctx);

// Throws std::logic_error unless the report has every named check: a tour section that
// refers to a check an experiment no longer makes fails loudly instead of showing less.
void require_checks(const Report& r, const std::vector<std::string>& names, const std::string& section);

}  // namespace attnlab

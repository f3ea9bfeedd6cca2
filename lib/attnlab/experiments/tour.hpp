// `tour`: the two articles as one verified walk-through. Each section runs the library code
// of one subcommand (nothing is computed a second way), shows one small tensor and its
// checks; a closing table holds every claim against what was measured.
#pragma once

#include "attnlab/core/report.hpp"

#include <functional>
#include <string>
#include <vector>

namespace attnlab {



struct TourClaim {
    std::string section;
    std::string source;   // article section, paper, or PyTorch documentation
    std::string claim;    // in the tour's language
    Check check;
    std::string command;  // the attnlab command line that reproduces the figure
};

// One experiment a section ran: the command that reproduces it, its params, and what the
// section shows of it.
struct TourRun {
    std::string command;
    nlohmann::ordered_json params;
    std::vector<Tensor> tensors;  // the one small tensor that shows the point, if any
    std::vector<Check> checks;    // the claims, and any failed invariant
    std::vector<std::string> notes;
};

struct TourSection {
    std::string name;    // for --section and JSON
    std::string title;
    std::string text;    // two to four lines of narration
    std::vector<TourRun> runs;
    bool passed = true;  // every invariant of every experiment the section ran
};

struct TourReport {
    Lang lang = Lang::en;
    nlohmann::ordered_json params = nlohmann::ordered_json::object();
    std::vector<TourSection> sections;
    std::vector<TourClaim> claims;
    bool passed() const;
};

struct TourParams {
    std::string section;  // empty: all
    Lang lang = Lang::en;
};

// Section names in the articles' order.
std::vector<std::string> tour_section_names();

TourReport run_tour(const TourParams& p, const RunContext& ctx);

// quiet: the sections' check lines and the claims table, without tensors and notes.
// picture: when set, draws the tensor each run shows (the terminal's --plot), after the run.
std::string render_tour_text(const TourReport& t, bool color, bool quiet = false,
                             const std::function<std::string(const Tensor&)>& picture = {});
nlohmann::ordered_json tour_to_json(const TourReport& t, bool with_tensors = true);

// Throws std::logic_error unless the report has every named check: a tour section that
// refers to a check an experiment no longer makes fails loudly instead of showing less.
void require_checks(const Report& r, const std::vector<std::string>& names, const std::string& section);

}  // namespace attnlab

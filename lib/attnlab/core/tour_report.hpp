// What the tour measured: its sections, each with the runs it made and what it shows of them,
// and the claims table. Built by experiments/tour.cpp, printed by render/tour.cpp.
#pragma once

#include "attnlab/core/report.hpp"

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

}  // namespace attnlab

// What the tour measured: its sections, each with the runs it made and what it shows of them,
// and the claims table. Built by experiments/tour.cpp, printed by render/tour.cpp.
#pragma once

#include "attnlab/core/enums.hpp"
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
    ParamList params;
    std::vector<Tensor> tensors;  // the one small tensor that shows the point, if any
    // The section's picture, when this run draws it: the tensor, or the pair side by side,
    // that shows the section's point (one run of each section).
    std::vector<Tensor> picture;
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

// A statement about a model or a paper rather than about a computation: no measurement can
// settle it, the cited source does. Its verdict never counts in the exit status.
enum class FactVerdict { confirmed, contradicted };
constexpr auto enum_names(FactVerdict)
{
    return std::array{std::pair{FactVerdict::confirmed, std::string_view("CONFIRMED")},
                      std::pair{FactVerdict::contradicted, std::string_view("CONTRADICTED")}};
}

struct TourFact {
    std::string id;            // for scripts, e.g. "mistral_uses_alibi"
    std::string section;       // the tour section it belongs to
    std::string where;         // the article and section that state it
    std::string statement;     // in the tour's language
    FactVerdict verdict = FactVerdict::contradicted;
    std::string source;        // a model config, a model card, a paper
    std::string source_value;  // what the source says, quoted or transcribed
};

struct TourReport {
    Lang lang = Lang::en;
    ParamList params;
    std::vector<TourSection> sections;
    std::vector<TourClaim> claims;
    std::vector<TourFact> facts;
    bool passed() const;
};

}  // namespace attnlab

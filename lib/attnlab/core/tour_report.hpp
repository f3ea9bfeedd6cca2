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
// ambiguous:     the sentence has two fair readings, and the source settles them apart.
// not_in_source: what the article attributes to the source is not there.
enum class FactVerdict { confirmed, contradicted, ambiguous, not_in_source };
constexpr auto enum_names(FactVerdict)
{
    return std::array{std::pair{FactVerdict::confirmed, std::string_view("CONFIRMED")},
                      std::pair{FactVerdict::contradicted, std::string_view("CONTRADICTED")},
                      std::pair{FactVerdict::ambiguous, std::string_view("AMBIGUOUS")},
                      std::pair{FactVerdict::not_in_source, std::string_view("NOT IN SOURCE")}};
}
// The verdict in the tour's language: "CONTRADICTED", "来源否定".
std::string fact_verdict_word(FactVerdict v, Lang lang);

struct TourFact {
    std::string id;            // for scripts, e.g. "mistral_uses_alibi"
    std::string section;       // the tour section it belongs to
    std::string where;         // the article and section that state it
    std::string statement;     // in the tour's language
    FactVerdict verdict = FactVerdict::contradicted;
    std::string source;        // a model config, a model card, a paper
    std::string source_value;  // what the source says, quoted or transcribed
};

// The articles' claims the tour judged, each counted once by name (a claim measured at two
// settings is wrong when either run finds it wrong, else imprecise when either does).
struct ArticleCount {
    long distinct = 0, holds = 0, wrong = 0, imprecise = 0;
};

struct TourReport {
    Lang lang = Lang::en;
    ParamList params;
    std::vector<TourSection> sections;
    std::vector<TourClaim> claims;
    std::vector<TourFact> facts;
    bool passed() const;
};

ArticleCount count_article_claims(const TourReport& t);

}  // namespace attnlab

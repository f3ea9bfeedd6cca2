// --report FILE.html: one self-contained page per run or per tour. Inline styles and inline
// SVG pictures, no script, nothing loaded: a teacher can send the file to a class. Each check
// is one element with data-check="NAME", each picture one with data-tensor="NAME". One column
// below 700 px, printable, in Chinese with --lang zh.
#pragma once

#include "attnlab/core/report.hpp"
#include "attnlab/core/tour_report.hpp"

#include <optional>
#include <string>

namespace attnlab {

struct HtmlOptions {
    Lang lang = Lang::en;
    std::string command;  // the command line that reproduces the run
    bool quiet = false;   // --quiet: no tensors (as in the run's JSON)
    // --against: the learner's tensor as read from its file, drawn beside the reference with
    // their difference (none when the file was not read again or its shape differs)
    std::optional<Tensor> yours;
};

// The page for one subcommand's run: the command, the params, every check with its figure,
// tolerance and verdict, the --against verdict and diagnosis, every tensor the run keeps with
// its picture (values in a collapsible table for small ones), and the notes.
std::string report_html(const Report& report, const HtmlOptions& opts);
// The page for the tour: each section's narration, runs, checks and chosen picture, then the
// claims with their sources and the facts.
std::string tour_html(const TourReport& tour, const HtmlOptions& opts);

}  // namespace attnlab

// --plot, --plot-style and --plot-file: what the terminal can show, and the picture of a
// report's tensor in it or in a file.
#pragma once

#include "attnlab/core/report.hpp"
#include "attnlab/render/plot.hpp"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace attnlab::app {

struct PlotOpts {
    std::optional<std::string> plot;  // --plot[=auto|heatmap|lines]: "" means auto
    std::optional<PlotStyle> style;   // default: unicode in a UTF-8 locale, ASCII otherwise
    std::string file;                 // --plot-file PATH.png|PATH.svg
    double scale = 1.0;               // --plot-scale: a PNG at this many times 1280 x 720
    std::string tokens;               // --tokens "狗 咬 人": labels of the position axes
    std::string compare;              // --compare A,B: two tensors side by side ("against": the learner's)

    bool drawn() const { return plot.has_value() || !file.empty(); }
    // The run's tensors --compare draws (not the learner's).
    std::vector<std::string> compared_tensors() const;
};

void add_plot_options(CLI::App& sub, PlotOpts& o);

// The terminal as the environment describes it: colour (stdout a terminal, NO_COLOR unset,
// TERM not dumb; 24-bit where COLORTERM says so), width (COLUMNS, the tty, 80 in a pipe),
// glyphs (Unicode in a UTF-8 locale).
PlotOptions terminal_plot_options(const PlotOpts& o, Lang lang);

// The width check lines wrap at: the terminal's on a terminal, 0 (one line each) in a pipe.
std::size_t wrap_width();

// Refuses what cannot work before anything runs: a --plot-file path, --plot outside text,
// --plot-scale without a PNG, --tokens or --compare with nothing drawn, --compare naming the
// learner's tensor without --against.
void check_plot_request(const PlotOpts& o, bool text_format, bool against);

// The picture of `tensor` (the report's main tensor when empty), or of --compare's pair: the
// terminal text (empty without --plot), and the file when --plot-file is given. against_file:
// the learner's file (--against), read within budget bytes when --compare names it.
std::string plot_report(const Report& report, const std::string& tensor, const PlotOpts& o, Lang lang, const std::string& against_file, double budget);

}  // namespace attnlab::app

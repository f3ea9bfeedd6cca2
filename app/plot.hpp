// --plot, --plot-style and --plot-file: what the terminal can show, and the picture of a
// report's tensor in it or in a file.
#pragma once

#include "attnlab/core/report.hpp"
#include "attnlab/render/plot.hpp"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace attnlab::app {

struct PlotOpts {
    std::optional<std::string> plot;  // --plot[=auto|heatmap|lines]: "" means auto
    std::optional<PlotStyle> style;   // default: unicode in a UTF-8 locale, ASCII otherwise
    std::string file;                 // --plot-file PATH.png|PATH.svg
};

void add_plot_options(CLI::App& sub, PlotOpts& o);

// The terminal as the environment describes it: colour (stdout a terminal, NO_COLOR unset,
// TERM not dumb; 24-bit where COLORTERM says so), width (COLUMNS, the tty, 80 in a pipe),
// glyphs (Unicode in a UTF-8 locale).
PlotOptions terminal_plot_options(const PlotOpts& o, Lang lang);

// Refuses what cannot work before anything runs: a --plot-file path, --plot outside text.
void check_plot_request(const PlotOpts& o, bool text_format);

// The picture of `tensor` (the report's main tensor when empty): the terminal text (empty
// without --plot), and the file when --plot-file is given.
std::string plot_report(const Report& report, const std::string& tensor, const PlotOpts& o, Lang lang);

}  // namespace attnlab::app

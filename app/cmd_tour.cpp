// attnlab tour: the two articles as one verified walk-through.
#include "commands.hpp"
#include "common.hpp"

#include "attnlab/experiments/tour.hpp"
#include "attnlab/render/report_html.hpp"
#include "attnlab/render/tour.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <unistd.h>

#include <tuple>

namespace attnlab::app {

namespace {
struct TourOpts {
    CommonOpts common;
    TourParams tour;
    bool no_plot = false;
};
// On a terminal each section's tensor is drawn too (--no-plot: not); elsewhere nothing.
std::function<std::string(const TourRun&)> terminal_picture(const TourOpts& opts, Lang lang)
{
    const CommonOpts& o = opts.common;
    if (o.format != Format::text || o.quiet || opts.no_plot || isatty(STDOUT_FILENO) != 1) return {};
    const PlotOptions term = terminal_plot_options(PlotOpts{}, lang);
    return [term](const TourRun& run) {
        PictureLabels labels{term.lang, picture_context(run.params, term.lang), {}};
        std::tie(labels.max_cols, labels.max_rows) = terminal_cells(term);
        return plot_text(make_run_picture(run.picture, labels), term);
    };
}

// The names of the invariant checks that failed anywhere in the tour, each once, in order.
std::vector<std::string> failed_invariants(const TourReport& t)
{
    std::vector<std::string> failed;
    for (const auto& section : t.sections)
        for (const auto& run : section.runs)
            for (const auto& c : run.checks)
                if (c.role == Role::invariant && !c.passed() && std::find(failed.begin(), failed.end(), c.name) == failed.end())
                    failed.push_back(c.name);
    return failed;
}

int run_tour_command(TourOpts& opts)
{
    const CommonOpts& o = opts.common;
    if (!o.report.empty()) require_report_path(o.report);
    const RunContext ctx = run_context(o);
    opts.tour.lang = ctx.lang;
    const TourReport t = run_tour(opts.tour, ctx);
    const bool color = o.format == Format::text && use_color();
    if (!o.report.empty()) write_file_atomic(o.report, tour_html(t, {ctx.lang, reported_command(), o.quiet, std::nullopt}), "--report");
    write_stdout(o.format == Format::json ? tour_to_json(t, !o.quiet).dump() + "\n"
                                          : render_tour_text(t, color, o.quiet, terminal_picture(opts, ctx.lang), wrap_width()));
    report_failed_checks(failed_invariants(t));
    return t.passed() ? 0 : 1;
}

}  // namespace

void setup_tour(CLI::App& app, Runners& runners)
{
    auto opts = std::make_shared<TourOpts>();
    auto* sub = app.add_subcommand("tour", "Walk through both articles in order, checking every claim, with a closing claims table");
    const std::string sections = fmt::format("{}", fmt::join(tour_section_names(), ", "));
    // An empty name would read as "all": refused, as any other name that is no section is.
    sub->add_option("--section", opts->tour.section, "Run one section: " + sections + " (default: all)")
        ->check(CLI::Validator([sections](const std::string& s) { return s.empty() ? "an empty name is no section; sections: " + sections : std::string(); }, ""));
    add_run_options(*sub, opts->common);
    sub->add_option_function<std::string>(
           "--format", [opts](const std::string& s) { opts->common.format = enum_map<Format>().at(s); },
           "text, or json (one document: sections with tensors and checks, then the claims)")
        ->check(CLI::IsMember({"text", "json"}))
        ->type_name("")
        ->default_str("text");
    sub->add_flag("--no-plot", opts->no_plot, "On a terminal, do not draw each section's tensor");
    sub->footer("Example: attnlab tour --section rope --lang zh");
    runners.emplace_back(sub, [opts] { return run_tour_command(*opts); });
}

}  // namespace attnlab::app

// Option plumbing shared by every subcommand: the global options of the experiment contract
// (seed, dtype, format, tolerance, memory budget, which tensors) and the one function that
// runs an experiment, renders it and turns the verdict into the exit status.
#pragma once

#include "attnlab/render/render.hpp"
#include "plot.hpp"
#include "attnlab/core/report.hpp"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnlab::app {

struct CommonOpts {
    std::uint64_t seed = 0;
    DType dtype = DType::float32;
    Format format = Format::text;
    std::string tensor;
    std::vector<std::string> show;
    bool wide = false;
    bool full = false;
    bool quiet = false;
    std::optional<double> tol;
    double max_memory_gib = 2.0;
    double max_work_g = 200.0;
    std::optional<Lang> lang;  // default: from the locale
    std::string against;       // --against FILE
    std::string against_tensor;
    std::optional<double> rtol, atol;
    std::optional<DType> judged_at;  // --judged-at
    std::string save;          // --save DIR
    std::string report;        // --report FILE.html
    std::vector<std::string> inputs;  // --input NAME=FILE, repeatable
    PlotOpts plot;             // --plot, --plot-style, --plot-file
    std::vector<std::string> given_flags;  // the experiment's own options the command line gave
};

// A seed: a whole number that fits 64 bits (never saturated to 2^64 - 1).
extern const CLI::Validator seed_number;
// Validators that, unlike CLI::PositiveNumber, refuse nan and inf with a short message.
extern const CLI::Validator finite_positive;
extern const CLI::Validator finite_non_negative;
// Refuses an empty entry of a comma-separated list ("3,,5" or "").
extern const CLI::Validator non_empty;
// Refuses an empty file or folder argument: an unset shell variable must not mean "none".
extern const CLI::Validator non_empty_path;
// A whole number ("abc" and "2.5" are "not a whole number", not "out of range").
extern const CLI::Validator whole_number;
// A whole number from lo to hi.
CLI::Validator whole_in(long lo, long hi);
// A finite number in lo..hi (UNIT names what it counts, for the message).
CLI::Validator number_in(double lo, double hi, const std::string& unit);
// "; did you mean --len?" for an option the subcommand does not have, or "".
std::string did_you_mean(const CLI::App& sub, const std::string& unexpected);
// Refuses (InputError) a comma-separated list option given twice, or with an empty item.
void refuse_loose_lists(const CLI::App& sub, const std::vector<std::string>& args);

// Registers the global options on a subcommand.
void add_common_options(CLI::App& sub, CommonOpts& o);
// The options every run takes, the tour included: --seed --dtype --quiet --tol --max-memory.
void add_run_options(CLI::App& sub, CommonOpts& o);
// The RunContext those options describe (which tensors to keep is the caller's business).
RunContext run_context(const CommonOpts& o);

// An option holding one of the enum's names, validated against the enum's one table of
// names (which --help lists); `store` receives the parsed value.
template <class E, class Store>
CLI::Option* add_enum_names_option(CLI::App& sub, const std::string& flag, Store store, const std::string& help)
{
    std::vector<std::string> names;
    for (const auto& entry : enum_names(E{})) names.emplace_back(entry.second);
    return sub
        .add_option_function<std::string>(
            flag, [store](const std::string& s) { store(enum_map<E>().at(s)); }, help)
        ->check(CLI::IsMember(names))
        ->type_name("");
}

// An enum option that takes only some of the enum's values (its --help lists only those).
template <class E>
CLI::Option* add_enum_subset_option(CLI::App& sub, const std::string& flag, E& target, const std::vector<E>& allowed,
                                    const std::string& help)
{
    std::vector<std::string> names;
    for (E e : allowed) names.push_back(name_of(e));
    return sub
        .add_option_function<std::string>(
            flag, [&target](const std::string& s) { target = enum_map<E>().at(s); }, help)
        ->check(CLI::IsMember(names))
        ->type_name("")
        ->default_str(name_of(target));
}

// An enum option with a default.
template <class E>
CLI::Option* add_enum_option(CLI::App& sub, const std::string& flag, E& target, const std::string& help)
{
    return add_enum_names_option<E>(sub, flag, [&target](E e) { target = e; }, help)->default_str(name_of(target));
}

// An enum option whose absence matters.
template <class E>
CLI::Option* add_optional_enum(CLI::App& sub, const std::string& flag, std::optional<E>& target,
                               const std::string& help)
{
    return add_enum_names_option<E>(sub, flag, [&target](E e) { target = e; }, help);
}

// An option whose absence matters (the experiment tells "not given" from any value).
template <class V>
CLI::Option* add_optional(CLI::App& sub, const std::string& flag, std::optional<V>& target,
                          const std::string& help)
{
    return sub.add_option_function<V>(flag, [&target](const V& v) { target = v; }, help);
}

// Runs one experiment, prints its rendering, returns the exit status (0 all invariants held,
// 1 some failed). Input errors propagate as exceptions to main, which prints them and exits 2.
int execute(const CommonOpts& o, const std::function<Report(const RunContext&)>& experiment);

// --report: refuses a path that is not .html or cannot be written, before anything runs.
void require_report_path(const std::string& path);
// The command line of this run, as a shell takes it, without --report: what the page shows.
std::string reported_command();

// Whether text output gets colour: stdout is a terminal, NO_COLOR is unset or empty, TERM is
// not "dumb".
bool use_color();

// Writes the whole rendered output at once (it was rendered before anything is written);
// throws OutputError when the write or the flush fails.
void write_stdout(const std::string& out);

// Makes sure descriptors 0, 1 and 2 are open, so that no file the program opens can take
// their place; remembers whether stdout was closed, which write_stdout then reports.
void guard_standard_streams();

// A tensor as the bytes of an NPY file.
std::string npy_file_bytes(const Tensor& t);

// A folder's path ending in its own name: "hw1/" is hw1, "." and ".." are made absolute.
std::filesystem::path named_folder(const std::string& dir);

// The program's own arguments, for run.json.
void set_command_line(int argc, char** argv);

// One line on stderr, "attnlab: failed checks: a, b", when invariants failed (exit 1).
void report_failed_checks(const std::vector<std::string>& names);

}  // namespace attnlab::app

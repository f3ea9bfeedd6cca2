#include "common.hpp"

#include "attnlab/core/params_json.hpp"
#include "attnlab/io/files.hpp"
#include "attnlab/io/npy.hpp"
#include "attnlab/io/read.hpp"
#include "attnlab/experiments/command_line.hpp"
#include "attnlab/render/report_html.hpp"

#include <fmt/format.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attnlab::app {

namespace {

CLI::Validator finite_number(bool allow_zero)
{
    return CLI::Validator(
        [allow_zero](std::string& text) -> std::string {
            char* end = nullptr;
            const double v = std::strtod(text.c_str(), &end);
            const bool numeric = !text.empty() && !std::isspace(static_cast<unsigned char>(text[0])) && end != nullptr && *end == '\0';
            if (!numeric || !std::isfinite(v) || v < 0.0 || (!allow_zero && v == 0.0)) {
                return fmt::format("must be a finite number {} 0 (got '{}')", allow_zero ? ">=" : ">", text);
            }
            return {};
        },
        allow_zero ? "FINITE >= 0" : "FINITE > 0");
}

}  // namespace

const CLI::Validator seed_number = CLI::Validator(
    [](std::string& text) -> std::string {
        // All digits, and no more than 2^64 - 1: strtoull would quietly saturate.
        const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        errno = 0;
        if (digits) std::strtoull(text.c_str(), nullptr, 10);
        if (!digits || errno == ERANGE) {
            return fmt::format("must be a whole number from 0 to 18446744073709551615 (got '{}')", text);
        }
        return {};
    },
    "UINT64");

const CLI::Validator finite_positive = finite_number(false);
const CLI::Validator finite_non_negative = finite_number(true);
namespace {

// A whole number and nothing else: no blank before it (strtol would skip one) or after it.
bool parse_whole(const std::string& text, long& value)
{
    char* end = nullptr;
    errno = 0;
    value = std::strtol(text.c_str(), &end, 10);
    return !text.empty() && !std::isspace(static_cast<unsigned char>(text[0])) && end != nullptr && *end == '\0' && errno != ERANGE;
}

std::size_t edit_distance(const std::string& a, const std::string& b)
{
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = up;
        }
    }
    return row[b.size()];
}

}  // namespace

const CLI::Validator whole_number = CLI::Validator(
    [](std::string& text) -> std::string {
        long v = 0;
        return parse_whole(text, v) ? std::string() : fmt::format("must be a whole number (got '{}')", text);
    },
    "INT");

CLI::Validator number_in(double lo, double hi, const std::string& unit)
{
    return CLI::Validator(
        [lo, hi, unit](std::string& text) -> std::string {
            char* end = nullptr;
            const double v = std::strtod(text.c_str(), &end);
            const bool numeric = !text.empty() && !std::isspace(static_cast<unsigned char>(text[0])) && end != nullptr && *end == '\0';
            if (!numeric || !std::isfinite(v) || v < lo || v > hi) return fmt::format("must lie in {:g}..{:g} {} (got '{}')", lo, hi, unit, text);
            return {};
        },
        fmt::format("NUMBER in {:g}..{:g}", lo, hi));
}

CLI::Validator whole_in(long lo, long hi)
{
    return CLI::Validator(
        [lo, hi](std::string& text) -> std::string {
            long v = 0;
            if (!parse_whole(text, v)) return fmt::format("must be a whole number (got '{}')", text);
            if (v < lo || v > hi) return fmt::format("must lie in {}..{} (got {})", lo, hi, v);
            return {};
        },
        fmt::format("INT in {}..{}", lo, hi));
}

std::string did_you_mean(const CLI::App& sub, const std::string& unexpected)
{
    std::string best;
    std::size_t best_distance = 3;  // suggest only names at most 2 edits away
    for (const CLI::Option* opt : sub.get_options()) {
        for (const auto& name : opt->get_lnames()) {
            const std::size_t d = edit_distance(unexpected, "--" + name);
            if (d < best_distance) best_distance = d, best = "--" + name;
        }
    }
    return best.empty() ? std::string() : fmt::format("; did you mean {}?", best);
}

const CLI::Validator non_empty = CLI::Validator(
    [](std::string& text) -> std::string { return text.empty() ? std::string("has an empty entry") : std::string(); }, "");

const CLI::Validator non_empty_path = CLI::Validator(
    [](std::string& text) -> std::string { return text.empty() ? std::string("is an empty path") : std::string(); }, "");

void add_run_options(CLI::App& sub, CommonOpts& o)
{
    sub.add_option("--seed", o.seed, "Seed of the random inputs (same numbers on every platform)")
        ->check(seed_number);
    add_enum_option(sub, "--dtype", o.dtype, "Precision the experiment computes in (16 bits as PyTorch on the CPU; bench: 32 and 64 only)");
    sub.add_flag("--quiet", o.quiet, "Print only the check lines (JSON: no tensors)");
    sub.add_option("--report", o.report, "Write the run as one self-contained HTML page (the folder must exist)")
        ->type_name("FILE.html")
        ->check(non_empty_path);
    add_optional_enum(sub, "--lang", o.lang,
                      "Language of check lines and notes, en or zh (default: from LC_ALL, LC_MESSAGES or LANG)");
    sub.add_option("--tol", o.tol, "Replace every numeric tolerance of the checks")
        ->check(finite_non_negative);
    sub.add_option("--max-memory", o.max_memory_gib, "Memory budget in GiB; larger requests are refused")
        ->check(finite_positive);
    sub.add_option("--max-work", o.max_work_g,
                   "Work budget in G multiply-adds (200: a few minutes); larger requests are refused up front")
        ->check(finite_positive);
}

RunContext run_context(const CommonOpts& o)
{
    RunContext ctx;
    ctx.dtype = o.dtype;
    ctx.seed = o.seed;
    ctx.tol = o.tol;
    ctx.max_memory_bytes = o.max_memory_gib * 1024.0 * 1024.0 * 1024.0;
    // Rendering costs memory too: JSON holds a tree of the numbers before it is written.
    ctx.render_bytes_per_element = o.quiet ? 0.0 : o.format == Format::json ? 64.0 : 24.0;  // --quiet prints no tensor
    ctx.render_format = name_of(o.format);
    ctx.max_work = o.max_work_g * 1e9;
    ctx.lang = o.lang.value_or(lang_from_env());
    ctx.given_flags = o.given_flags;
    // A run of more than about 2 s says so on a terminal, so that it is not mistaken for a hang.
    ctx.on_long_run = [](double work) {
        if (isatty(STDERR_FILENO) != 1) return;
        const std::string line = fmt::format("attnlab: working: about {:.3g} G multiply-adds, roughly {:.0f} s...\n",
                                             work / 1e9, work / kWorkPerSecond);
        std::fputs(line.c_str(), stderr);
    };
    // One line rewritten in place on a terminal; nothing when stderr is piped or a file.
    if (isatty(STDERR_FILENO) == 1) {
        ctx.on_progress = [](const std::string& line) {
            std::fputs(("\r\033[K" + line).c_str(), stderr);
            std::fflush(stderr);
        };
    }
    return ctx;
}

void add_common_options(CLI::App& sub, CommonOpts& o)
{
    add_run_options(sub, o);
    add_enum_option(sub, "--format", o.format, "Output format");
    sub.add_option("--tensor", o.tensor,
                   "Tensor to print (CSV prints exactly one; default: the command's main tensor)");
    sub.add_option("--show", o.show, "Tensors to print, comma-separated (default: all)")
        ->delimiter(',');
    sub.add_flag("--wide", o.wide, "CSV: print a rank-2 tensor as one row per first-axis index");
    sub.add_flag("--full", o.full, "Text: print every element of large tensors");
    sub.add_option("--against", o.against,
                   "Hold your tensor in FILE (NPY, CSV or JSON) against the run's; the exit status is that comparison")
        ->check(non_empty_path);
    sub.add_option("--against-tensor", o.against_tensor, "Which of the run's tensors --against compares with (default: the main one)");
    sub.add_option("--rtol", o.rtol, "--against: replaces the error model's relative term (default: the unit roundoff of the coarser of the file's and the run's dtype)")->check(finite_non_negative);
    sub.add_option("--atol", o.atol, "--against: replaces the error model's absolute term (default: twice a plain reference's measured error; see docs/check.md, The error model)")
        ->check(finite_non_negative);
    add_optional_enum(sub, "--judged-at", o.judged_at,
                      "--against: a file stored coarser than this dtype DIFFERS whatever its values (an exercise's check.sh and exercise grade "
                      "give float32)");
    sub.add_option("--save", o.save, "Write every tensor of the run to DIR/NAME.npy, and DIR/run.json")->check(non_empty_path);
    sub.add_option("--input", o.inputs, "NAME=FILE: use your own tensor for an input (x, w_q, q, scores, ...); repeatable")
        ->type_name("NAME=FILE");
    add_plot_options(sub, o.plot);
}

bool use_color()
{
    const char* no_color = std::getenv("NO_COLOR");
    if (no_color != nullptr && no_color[0] != '\0') return false;
    const char* term = std::getenv("TERM");
    if (term != nullptr && std::string(term) == "dumb") return false;
    return isatty(STDOUT_FILENO) == 1;
}

namespace {
bool g_stdout_closed = false;
}  // namespace

void guard_standard_streams()
{
    for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
        if (fcntl(fd, F_GETFD) != -1) continue;
        if (fd == STDOUT_FILENO) g_stdout_closed = true;
        const int null_fd = open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY);
        if (null_fd != -1 && null_fd != fd) {
            dup2(null_fd, fd);
            close(null_fd);
        }
    }
}

void write_stdout(const std::string& out)
{
    if (g_stdout_closed) throw OutputError("cannot write the output: standard output is closed");
    errno = 0;
    const std::size_t written = std::fwrite(out.data(), 1, out.size(), stdout);
    if (written != out.size() || std::fflush(stdout) != 0 || std::ferror(stdout)) {
        throw OutputError(fmt::format("cannot write the output: {}", errno != 0 ? std::strerror(errno) : "write failed"));
    }
}

void report_failed_checks(const std::vector<std::string>& names)
{
    if (names.empty()) return;
    const std::string line = fmt::format("attnlab: failed checks: {}\n", fmt::join(names, ", "));
    std::fputs(line.c_str(), stderr);
}

namespace {

std::vector<std::string> g_args;

void note_on_stderr(const std::string& note) { std::fputs(("attnlab: note: " + note + "\n").c_str(), stderr); }

// A file given with --input, read within the memory budget; what the reader decided about it
// is said on stderr.
Tensor read_input(const std::string& path, double budget)
{
    std::vector<std::string> notes;
    Tensor t = read_tensor_file(path, "", budget, &notes);
    for (const auto& n : notes) note_on_stderr(n);
    // NaN is no input of any experiment (-inf is: a mask); a run on it would blame the kernel
    for (std::size_t i = 0; i < t.values.size(); ++i) {
        if (!std::isnan(t.values[i])) continue;
        std::vector<std::size_t> index(t.shape.size());
        std::size_t flat = i;
        for (std::size_t k = t.shape.size(); k-- > 0;) index[k] = flat % t.shape[k], flat /= t.shape[k];
        throw InputError(fmt::format("--input {}: element {} is NaN; an input must hold numbers (or -inf in a mask)", excerpt(path), shape_text(index)));
    }
    return t;
}

// The tensor files that DIR's earlier run.json names (plain NAME.npy names only: a run.json
// from elsewhere never makes a file outside DIR go).
std::vector<std::string> saved_tensor_files(const OutputFolder& folder)
{
    std::vector<std::string> files;
    const auto text = folder.read_small("run.json", std::size_t{1} << 20);
    if (!text) return files;
    const auto j = nlohmann::json::parse(*text, nullptr, false);
    const auto tensors = j.is_object() ? j.find("tensors") : j.end();
    if (!j.is_object() || tensors == j.end() || !tensors->is_array()) return files;
    for (const auto& t : *tensors) {
        const auto file = t.is_object() ? t.find("file") : t.end();
        if (!t.is_object() || file == t.end() || !file->is_string()) continue;
        const std::string name = file->get<std::string>();
        if (name.size() > 4 && name.find('/') == std::string::npos && name[0] != '.' && name.compare(name.size() - 4, 4, ".npy") == 0) files.push_back(name);
    }
    return files;
}

// The files a save touches: this run's tensors and run.json, and the tensors an earlier run.json
// in DIR named. None may be a file this run reads (--against, --input).
std::set<std::string> touched_files(const Report& report, const OutputFolder& folder, const std::string& dir, const std::vector<FileId>& read)
{
    std::set<std::string> touched = {"run.json"};
    for (const auto& t : report.tensors) touched.insert(t.name + ".npy");
    for (const auto& f : saved_tensor_files(folder)) touched.insert(f);
    for (const auto& name : touched) {
        const auto id = folder.id_of(name);
        if (id && std::find(read.begin(), read.end(), *id) != read.end())
            throw InputError(fmt::format("--save {}: it would replace {}/{}, which this run reads; save to another folder", dir, dir, name));
    }
    return touched;
}

// Each tensor as NAME.npy, then run.json: the command, its argv and params, and each tensor's
// file, shape, axes and dtype.
void write_saved_run(const Report& report, const OutputFolder& folder)
{
    nlohmann::ordered_json run;
    run["command"] = report.command;
    run["argv"] = g_args;
    run["params"] = params_json(report.params);
    run["tensors"] = nlohmann::ordered_json::array();
    for (const auto& t : report.tensors) {
        folder.write(t.name + ".npy", npy_file_bytes(t));
        run["tensors"].push_back({{"name", t.name}, {"file", t.name + ".npy"}, {"shape", t.shape}, {"axes", t.axes}, {"dtype", name_of(t.elem)}});
    }
    if (!report.save_info.empty()) run.update(nlohmann::ordered_json::parse(report.save_info));
    if (!report.measurements.empty()) run["measurements"] = params_json(report.measurements);  // timings: not bit for bit
    folder.write("run.json", run.dump(2) + "\n");
}

// Every tensor as DIR/NAME.npy, and DIR/run.json with the params and the command line, as a
// set: the tensors an earlier run.json named that this run does not write are removed. A file
// this run reads (--against, --input) is never replaced or removed. The report then keeps only
// what the output asks for.
void save_run(Report& report, const std::string& dir, RunContext ctx, const std::vector<FileId>& read)
{
    FileSet set(dir, "--save");  // locked: no other save mixes its files in
    std::set<std::string> fresh = {"run.json"};
    for (const auto& t : report.tensors) fresh.insert(t.name + ".npy");
    const std::set<std::string> old = touched_files(report, set.current(), dir, read);  // run.json, and the earlier run's tensors
    write_saved_run(report, set.target());
    set.commit(old, fresh);
    ctx.keep_all = false;
    auto saved_only = [&](const std::string& name) {
        return std::find(report.saved_only.begin(), report.saved_only.end(), name) != report.saved_only.end();
    };
    std::vector<Tensor> shown;
    for (auto& t : report.tensors)
        if (ctx.keeps(t.name, report.main_tensor) && !saved_only(t.name))
            shown.push_back(std::move(t));
    report.tensors = std::move(shown);
}

}  // namespace

void set_command_line(int argc, char** argv) { g_args.assign(argv, argv + argc); }

// CLI11 drops the empty items of a comma-separated list and joins the lists of a repeated
// option: "--lengths 1,,2" would be a batch of 2, and "--lengths 1 --lengths 2" one list.
// Both are refused, as any other option given twice is.
void refuse_loose_lists(const CLI::App& sub, const std::vector<std::string>& args)
{
    std::map<std::string, int> seen;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i].rfind("--", 0) != 0) continue;
        const auto eq = args[i].find('=');
        const std::string flag = args[i].substr(0, eq);
        const CLI::Option* opt = sub.get_option_no_throw(flag);
        if (opt == nullptr || opt->get_delimiter() == '\0') continue;
        if (++seen[flag] > 1) throw InputError(fmt::format("{} is given twice; give one comma-separated list", flag));
        if (eq == std::string::npos && i + 1 >= args.size()) continue;  // CLI11 says the value is missing
        const std::string value = eq != std::string::npos ? args[i].substr(eq + 1) : args[i + 1];
        const std::string padded = "," + value + ",";
        if (padded.find(",,") != std::string::npos) throw InputError(fmt::format("{}: the list '{}' has an empty item", flag, value));
    }
}

std::filesystem::path named_folder(const std::string& dir)
{
    namespace fs = std::filesystem;
    fs::path p = fs::path(dir).lexically_normal();
    if (!p.has_filename()) p = p.parent_path();
    if (p.empty() || p.filename() == "." || p.filename() == "..") p = fs::absolute(p).lexically_normal();
    if (!p.has_filename()) p = p.parent_path();
    return p;
}

std::string npy_file_bytes(const Tensor& t)
{
    const auto bytes = write_npy(t);
    return std::string(bytes.begin(), bytes.end());
}

// "q=a.npy,k=b.npy" is two inputs: a comma starts a new one only where NAME= follows it, so a
// path that holds a comma still reads as one file.
std::vector<std::string> split_input_specs(const std::vector<std::string>& given)
{
    std::vector<std::string> specs;
    for (const auto& spec : given) {
        std::size_t start = 0;
        for (std::size_t comma = spec.find(','); comma != std::string::npos; comma = spec.find(',', comma + 1)) {
            std::size_t n = comma + 1;
            while (n < spec.size() && (std::isalnum(static_cast<unsigned char>(spec[n])) || spec[n] == '_')) ++n;
            if (n > comma + 1 && n < spec.size() && spec[n] == '=') specs.push_back(spec.substr(start, comma - start)), start = comma + 1;
        }
        specs.push_back(spec.substr(start));
    }
    return specs;
}

void require_report_path(const std::string& path)
{
    const std::size_t dot = path.rfind('.');
    const std::string ext = dot == std::string::npos ? "" : path.substr(dot);
    if (ext != ".html" && ext != ".htm") throw InputError(fmt::format("--report {}: the name must end in .html", path));
    check_output_file(path, "--report");
}

std::string reported_command()
{
    std::vector<std::string> args;  // command_text puts "attnlab" first
    for (std::size_t i = 1; i < g_args.size(); ++i) {
        if (g_args[i] == "--report") {
            ++i;
            continue;
        }
        if (g_args[i].rfind("--report=", 0) == 0) continue;
        args.push_back(g_args[i]);
    }
    return command_text(args);
}

// The report page's options: the learner's tensor is read from its file again (within the
// run's memory budget) to be drawn beside the reference; its read notes were said already.
HtmlOptions html_options(const Report& report, const CommonOpts& o, const RunContext& ctx)
{
    HtmlOptions h{ctx.lang, reported_command(), o.quiet, std::nullopt};
    if (report.against && !o.against.empty()) h.yours = read_tensor_file(o.against, report.against->tensor, ctx.max_memory_bytes, nullptr);
    return h;
}

namespace {

// The options that say how --against judges, without --against.
void check_against_request(const CommonOpts& o)
{
    if (!o.against.empty()) return;
    if (!o.against_tensor.empty()) throw InputError("--against-tensor names the tensor --against compares; give --against FILE");
    if (o.judged_at) throw InputError("--judged-at says how --against judges a file; give --against FILE");
}

// The options that cannot go together, refused before anything is read or computed.
void check_request(const CommonOpts& o)
{
    if (!o.report.empty()) require_report_path(o.report);
    if (o.format == Format::csv && o.quiet) {
        throw InputError("--quiet prints only check lines; it does not combine with --format csv");
    }
    if (o.wide && o.format != Format::csv) throw InputError("--wide applies to --format csv only");
    if (o.format == Format::csv && o.show.size() + (o.tensor.empty() ? 0 : 1) > 1) {
        std::vector<std::string> named = o.show;
        if (!o.tensor.empty()) named.insert(named.begin(), o.tensor);
        throw InputError(fmt::format("--format csv prints one tensor, and {} name {}: keep one (--tensor NAME)",
                                     o.tensor.empty() ? "--show" : o.show.empty() ? "--tensor" : "--tensor and --show",
                                     fmt::join(named, ", ")));
    }
    check_plot_request(o.plot, o.format == Format::text, !o.against.empty());
    check_against_request(o);
    if (!o.save.empty()) check_output_folder(o.save, "--save");
}

// The run's context: which tensors it keeps for the output, the plot, the page and --save.
RunContext request_context(const CommonOpts& o)
{
    RunContext ctx = run_context(o);
    ctx.show = o.show;
    if (!o.tensor.empty()) ctx.show.push_back(o.tensor);
    ctx.main_only = o.format == Format::csv && ctx.show.empty();
    if (o.quiet) ctx.main_only = true;  // tensors are not printed
    const bool plotted = o.plot.drawn();
    if (plotted && !o.tensor.empty()) ctx.main_only = false, ctx.show = {o.tensor}, ctx.drawn = o.tensor;  // kept to be drawn, with its range
    if (plotted && !o.plot.compare.empty()) ctx.main_only = false, ctx.show = o.plot.compared_tensors();
    ctx.keep_none = o.quiet && !plotted;  // an on-demand main tensor is not even computed
    if (o.quiet && !o.report.empty() && !o.against.empty()) {  // the page draws the compared tensor beside the learner's
        ctx.keep_none = false;
        ctx.main_only = o.against_tensor.empty();
        ctx.show.clear();
        if (!o.against_tensor.empty()) ctx.show = {o.against_tensor};
    }
    if (!o.against.empty()) ctx.against = AgainstRequest{o.against, o.against_tensor, o.rtol, o.atol, o.judged_at};
    ctx.keep_all = !o.save.empty();
    return ctx;
}

// Every file the run reads, read here (--input) or named (--against, read by the judge): the
// files --save must never replace.
std::vector<FileId> read_inputs(const CommonOpts& o, RunContext& ctx)
{
    std::vector<FileId> read;
    if (const auto id = file_id(o.against)) read.push_back(*id);
    for (const auto& spec : split_input_specs(o.inputs)) {
        const auto eq = spec.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) throw InputError(fmt::format("--input takes NAME=FILE (got '{}')", spec));
        const std::string name = spec.substr(0, eq), file = spec.substr(eq + 1);
        if (ctx.inputs.count(name)) throw InputError(fmt::format("--input {} is given twice", name));
        if (const auto id = file_id(file)) read.push_back(*id);
        ctx.inputs[name] = read_input(file, ctx.max_memory_bytes);
    }
    return read;
}

// The checks that decide the exit status: with --against, the comparison alone; otherwise
// the run's invariants (an article's claim or a demonstration never does).
std::vector<std::string> failed_checks(const Report& report)
{
    std::vector<std::string> failed;
    if (report.against) {
        if (!report.against->passed) failed.push_back(fmt::format("against ({}, tensor {})", report.against->file, report.against->tensor));
        return failed;
    }
    for (const auto& c : report.checks)
        if (c.role == Role::invariant && !c.passed()) failed.push_back(c.name);
    return failed;
}

// Saves, renders and writes the run (stdout, the page, the notes), and gives its exit status.
int emit(Report& report, const CommonOpts& o, const RunContext& ctx, std::vector<FileId> read)
{
    for (const auto& f : report.read_files)
        if (const auto id = file_id(f)) read.push_back(*id);
    if (!o.save.empty()) save_run(report, o.save, ctx, read);
    RenderOptions ropts;
    ropts.format = o.format;
    ropts.tensor = o.tensor.empty() && !o.show.empty() ? o.show.front() : o.tensor;
    ropts.wide = o.wide;
    ropts.full = o.full;
    ropts.quiet = o.quiet;
    ropts.color = o.format == Format::text && use_color();
    ropts.lang = ctx.lang;
    ropts.width = o.format == Format::text ? wrap_width() : 0;
    std::string out = render(report, ropts);
    out += plot_report(report, ropts.tensor, o.plot, ctx.lang, o.against, ctx.max_memory_bytes);
    if (!o.report.empty()) write_file_atomic(o.report, report_html(report, html_options(report, o, ctx)), "--report");
    write_stdout(out);
    if (report.against)
        for (const auto& n : report.against->read_notes) note_on_stderr(n);
    const auto failed = failed_checks(report);
    report_failed_checks(failed);
    return failed.empty() ? 0 : 1;
}

}  // namespace

// One path for every experiment: the request checked, its inputs read, the run, the output.
int execute(const CommonOpts& o, const std::function<Report(const RunContext&)>& experiment)
{
    check_request(o);
    RunContext ctx = request_context(o);
    const std::vector<FileId> read = read_inputs(o, ctx);
    Report report = experiment(ctx);
    return emit(report, o, ctx, read);
}

}  // namespace attnlab::app

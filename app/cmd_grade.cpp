// attnlab exercise grade: a class's submissions run on the visible and hidden cases, into a
// gradebook.
#include "commands.hpp"
#include "common.hpp"

#include "attnlab/core/parallel.hpp"
#include "attnlab/exercise/exercise_file.hpp"
#include "attnlab/exercise/grade.hpp"
#include "attnlab/exercise/gradebook.hpp"
#include "attnlab/exercise/platform.hpp"
#include "attnlab/exercise/roster.hpp"
#include "attnlab/exercise/shards.hpp"
#include "attnlab/io/files.hpp"
#include "attnlab/io/read.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <optional>
#include <set>

namespace attnlab::app {

namespace {

namespace fs = std::filesystem;

enum class GradeFormat { text, csv, json, junit, gradescope, prairielearn };
constexpr auto enum_names(GradeFormat)
{
    return std::array{std::pair{GradeFormat::text, std::string_view("text")},       std::pair{GradeFormat::csv, std::string_view("csv")},
                      std::pair{GradeFormat::json, std::string_view("json")},       std::pair{GradeFormat::junit, std::string_view("junit")},
                      std::pair{GradeFormat::gradescope, std::string_view("gradescope")}, std::pair{GradeFormat::prairielearn, std::string_view("prairielearn")}};
}

struct GradeOpts {
    std::string name;
    std::vector<std::string> submissions;
    int hidden = 5;
    std::uint64_t seed = 0;
    std::map<std::string, long> sizes;
    std::string grading, points, out, run;
    GradeFormat format = GradeFormat::text;
    std::optional<Lang> lang;
    GradeSettings settings;
    double memory_gib = 2.0, disk_gib = 1.0;
    bool isolate = false, show_hidden = false, hidden_verdict_only = false;
    std::string sandbox = "auto", teacher_report;
    std::string shard;  // --shard: I/N, auto or auto/N
    std::string roster, roster_column, folder_column;
    bool skip_unmatched = false;  // --unmatched skip
};

// Where a gradebook goes: DIR in every format, or one format on stdout; the teacher's report.
struct GradebookOut {
    GradeFormat format = GradeFormat::text;
    std::string out, teacher_report;
};

// A small file of the teacher's (grading.json, --points, --roster): a regular file of at most
// 1 MiB, or MAX bytes.
std::string small_file(const std::string& path, std::size_t max = std::size_t{1} << 20)
{
    const auto bytes = read_input_file(path, [max](std::string_view) { return ReadLimit{static_cast<double>(max), fmt::format("a file of at most {} MiB", max >> 20)}; });
    return std::string(bytes.begin(), bytes.end());
}

// The visible case, and the hidden seeds when grading.json keeps them (or, for a class with a
// roster, the variants every student's cases come from).
GradeCase visible_case(const GradeOpts& o, std::vector<std::uint64_t>& seeds, std::string& run, std::optional<Variants>& variants)
{
    if (o.grading.empty()) return {"visible", false, o.seed, o.sizes};
    const GradingFile g = parse_grading_file(small_file(o.grading, kMaxGradingFile), o.grading);
    if (g.exercise != o.name) throw InputError(fmt::format("{} is the grading file of exercise '{}', not {}", o.grading, excerpt(g.exercise), o.name));
    variants = g.variants;
    if (!variants && static_cast<std::size_t>(o.hidden) > g.hidden_seeds.size()) {
        throw InputError(fmt::format("--hidden {}: {} keeps {} hidden seeds", o.hidden, o.grading, g.hidden_seeds.size()));
    }
    seeds = g.hidden_seeds;
    if (run.empty()) run = g.run;
    return {"visible", false, g.seed, g.sizes};
}

// The folder name a submission's results.json goes under: "subs/alice/" and "subs/alice" are alice.
std::string submission_name(const std::string& path) { return named_folder(path).filename().string(); }

// Everything that can be refused is refused before the first program runs.
void check_request(const GradeOpts& o)
{
    for (const auto& s : o.submissions) {
        std::error_code ec;
        if (!fs::is_directory(s, ec)) throw InputError(fmt::format("{}: not a folder (a submission is the folder that holds the student's program)", excerpt(s)));
    }
    if (!o.settings.python.empty() && access(o.settings.python.c_str(), X_OK) != 0) {
        throw InputError(fmt::format("--python {}: not an executable file", excerpt(o.settings.python)));
    }
    if (o.format == GradeFormat::gradescope && o.submissions.size() > 1 && o.out.empty())
        throw InputError("--format gradescope with several submissions writes DIR/gradescope/NAME/results.json: give --out DIR");
    if (o.format == GradeFormat::prairielearn && (o.submissions.size() > 1 || !o.out.empty()))
        throw InputError("--format prairielearn grades one submission, to stdout (PrairieLearn's results.json)");
    if (!o.out.empty()) {
        std::set<std::string> names;
        for (const auto& s : o.submissions)
            if (!names.insert(submission_name(s)).second) {
                throw InputError(fmt::format("--out: two submissions are named {}; each needs a folder of its own name", excerpt(s)));
            }
        check_output_folder(o.out, "exercise grade");
    }
}

// --sandbox auto: bubblewrap where it works here, else none; bwrap: refused where it does not.
Sandbox chosen_sandbox(const GradeOpts& o)
{
    if (o.sandbox == "none") return Sandbox::none;
    if (bwrap_works()) return Sandbox::bwrap;
    if (o.sandbox == "bwrap") throw InputError("--sandbox bwrap: bubblewrap is not installed or cannot make its namespaces here (Debian: bubblewrap)");
    return Sandbox::none;
}

std::string utc_timestamp()
{
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
    return text;
}

std::string host_name()
{
    char name[256] = {};
    return gethostname(name, sizeof name - 1) == 0 && name[0] ? name : "localhost";
}

std::string gradebook_in(GradeFormat format, const Gradebook& g)
{
    switch (format) {
    case GradeFormat::text: return gradebook_text(g);
    case GradeFormat::csv: return gradebook_csv(g);
    case GradeFormat::json: return json_text(gradebook_json(g));
    case GradeFormat::junit: return gradebook_junit(g, utc_timestamp(), host_name());
    case GradeFormat::gradescope: return json_text(gradescope_results(g, g.submissions.front()));
    case GradeFormat::prairielearn: return json_text(prairielearn_results(g, g.submissions.front()));
    }
    return "";
}

// --out DIR: every format from the one grading.
void write_every_format(const std::string& dir, const Gradebook& g)
{
    const OutputFolder out(dir, "exercise grade", true);
    out.write("grades.txt", gradebook_text(g));
    out.write("grades.csv", gradebook_csv(g));
    out.write("grades.json", json_text(gradebook_json(g)));
    out.write("junit.xml", gradebook_junit(g, utc_timestamp(), host_name()));
    const OutputFolder gradescope = out.subfolder("gradescope");
    for (const auto& s : g.submissions) gradescope.subfolder(submission_name(s.path)).write("results.json", json_text(gradescope_results(g, s)));
}

void write_gradebook(const GradebookOut& o, const Gradebook& g)
{
    if (!o.teacher_report.empty()) {
        Gradebook teacher = g;
        teacher.show_hidden = true;
        teacher.teacher = true;
        write_file_atomic(o.teacher_report, gradebook_text(teacher), "exercise grade --teacher-report");
    }
    if (o.out.empty()) return write_stdout(gradebook_in(o.format, g));
    write_every_format(o.out, g);
    write_stdout(fmt::format("wrote {0}/grades.txt, grades.csv, grades.json, junit.xml and gradescope/NAME/results.json for {1} submissions\n",
                             o.out, g.submissions.size()));
}

// --shard: this shard's part, to DIR/part-I-of-N.json (a rerun replaces it) or stdout.
void write_part(const GradeOpts& o, const Gradebook& g, Shard shard, const std::string& digest, std::size_t class_size)
{
    const std::string text = json_text(part_json(g, shard, digest, class_size));
    if (o.out.empty()) return write_stdout(text);
    const std::string name = fmt::format("part-{}-of-{}.json", shard.index, shard.count);
    OutputFolder(o.out, "exercise grade --shard", true).write(name, text);
    write_stdout(fmt::format("wrote {}/{}: shard {} of {}, {} of {} submissions; merge every part with exercise merge\n", o.out, name, shard.index, shard.count,
                             g.submissions.size(), class_size));
}

// A class with a roster: each submission's student, by its folder's name, or by the folder
// column of --roster. A submission no student hands in is refused (or, with --unmatched skip,
// left out and named in the gradebook); so is a student who hands in two.
std::map<std::string, std::string> match_students(GradeOpts& o, const Variants& v, std::vector<std::string>& not_graded)
{
    std::map<std::string, std::string> id_of_folder;
    if (o.roster.empty()) {
        for (const auto& id : v.ids) id_of_folder[id] = id;
    } else {
        const std::set<std::string> known(v.ids.begin(), v.ids.end());
        for (const auto& row : parse_roster(small_file(o.roster, std::size_t{16} << 20), o.roster, {o.roster_column, o.folder_column})) {
            if (!known.count(row.id)) throw InputError(fmt::format("{}: student {} has no variant in {}", excerpt(o.roster), row.id, excerpt(o.grading)));
            id_of_folder[row.folder] = row.id;
        }
    }
    std::map<std::string, std::string> student_of, submission_of;  // path -> id, id -> path
    std::vector<std::string> matched;
    for (const auto& path : o.submissions) {
        const auto it = id_of_folder.find(submission_name(path));
        if (it == id_of_folder.end()) {
            if (!o.skip_unmatched)
                throw InputError(fmt::format("{}: no student of the roster hands in a folder of this name ({} students in {}; --unmatched skip grades the others)",
                                             excerpt(path), v.ids.size(), excerpt(o.grading)));
            not_graded.push_back(path);
            continue;
        }
        if (!submission_of.emplace(it->second, path).second)
            throw InputError(fmt::format("{} and {}: two submissions of student {}", excerpt(submission_of[it->second]), excerpt(path), it->second));
        student_of[path] = it->second;
        matched.push_back(path);
    }
    o.submissions = matched;
    return student_of;
}

// --shard refuses what only the merge can do, and takes this shard's submissions.
std::optional<Shard> take_shard(GradeOpts& o)
{
    if (o.shard.empty()) return std::nullopt;
    const Shard shard = parse_shard(o.shard, [](const char* name) { return std::getenv(name); });
    if (!o.teacher_report.empty() || o.show_hidden || o.hidden_verdict_only)
        throw InputError("--shard writes a part for exercise merge; give --teacher-report, --show-hidden and --hidden-detail to the merge");
    if (o.format != GradeFormat::text && o.format != GradeFormat::json) throw InputError("--shard writes a part (JSON) for exercise merge; give --format to the merge");
    o.submissions = shard_of(o.submissions, shard);
    return shard;
}

// What the submissions are graded on: the class's cases, or (a class with a roster) each
// student's own, of the same names.
struct ClassCases {
    std::vector<GradeCase> names;
    std::vector<PreparedCase> shared;
    std::vector<GradeCase> visible;  // with a roster: each submission's visible case, in order
    std::vector<std::string> students;
    std::optional<Variants> variants;
};

// With a roster, every student's visible case is drawn before the first run (a grading file
// whose sizes leave a student none is refused whole); their cases are made run by run.
ClassCases student_cases(const GradeOpts& o, const Variants& v, const std::map<std::string, std::string>& student_of)
{
    ClassCases out;
    out.variants = v;
    out.names.push_back({"visible", false, 0, {}});
    for (int i = 1; i <= o.hidden; ++i) out.names.push_back({fmt::format("hidden-{}", i), true, 0, {}});
    for (const auto& path : o.submissions) {
        out.students.push_back(student_of.at(path));
        out.visible.push_back(student_case(o.name, v, out.students.back()));
    }
    return out;
}

void apply_settings(const GradeOpts& o, GradeSettings& s)
{
    s.lang = o.lang.value_or(lang_from_env());
    s.limits.memory_bytes = o.memory_gib * 1024 * 1024 * 1024;
    s.limits.disk_bytes = o.disk_gib * 1024 * 1024 * 1024;
    s.limits.isolate = o.isolate;
    s.limits.sandbox = chosen_sandbox(o);
    if (o.isolate && s.limits.sandbox == Sandbox::none && !can_isolate())
        throw InputError("--isolate needs bubblewrap, root or unprivileged user namespaces (unshare), which this machine does not allow");
    if (!o.points.empty()) s.points = parse_points(small_file(o.points), o.points);
}

// Grades the submissions on their cases, on HOST (the caller's: the gradebook's isolation text
// reads it after): the signals that end a grading end the program.
std::vector<SubmissionResult> grade_class(const GradeOpts& o, const ClassCases& cases, GradeSettings& s, std::optional<RunHost>& host)
{
    s.limits.host = &host.emplace(AccountLimits{s.limits.memory_bytes, s.limits.processes}, thread_count(static_cast<unsigned>(s.jobs)));
    try {
        if (!cases.variants) return grade_submissions(o.name, o.submissions, cases.shared, s);
        return grade_submissions(o.name, o.submissions, cases.names, [&](std::size_t i) {
            return grade_cases(o.name, cases.visible[i], o.hidden, student_hidden_seeds(o.name, *cases.variants, cases.students[i], o.hidden));
        }, s);
    } catch (const Interrupted& e) {
        // every run is killed and the temporary folders and cgroups are gone: end as the signal would
        host.reset();
        std::signal(e.signal, SIG_DFL);
        std::raise(e.signal);
        throw;
    }
}

void run_grade(GradeOpts o)
{
    if (!o.grading.empty() && (o.seed != 0 || !o.sizes.empty())) throw InputError("--grading FILE sets the seed and sizes; give it without --seed and sizes");
    check_request(o);
    GradeSettings& s = o.settings;
    apply_settings(o, s);
    std::vector<std::uint64_t> seeds;
    std::string run = o.run;
    std::optional<Variants> variants;
    const GradeCase visible = visible_case(o, seeds, run, variants);
    s.run = run.empty() ? kExerciseRun : run;
    if (!variants && (!o.roster.empty() || o.skip_unmatched)) throw InputError("--roster and --unmatched are for a grading file of exercise new --roster");
    std::vector<std::string> not_graded;
    const auto student_of = variants ? match_students(o, *variants, not_graded) : std::map<std::string, std::string>{};
    const std::size_t class_size = o.submissions.size();
    const std::optional<Shard> shard = take_shard(o);
    ClassCases cases;
    if (variants) cases = student_cases(o, *variants, student_of);
    else {
        cases.shared = grade_cases(o.name, visible, o.hidden, seeds);
        for (const auto& c : cases.shared) cases.names.push_back(c.config);
    }
    case_points(cases.names, s);  // a points file naming no case is refused before anything runs
    std::optional<RunHost> host;  // until the gradebook is written: its isolation text reads it
    std::vector<SubmissionResult> results = grade_class(o, cases, s, host);
    for (std::size_t i = 0; i < cases.students.size(); ++i) results[i].student = cases.students[i];
    Gradebook g{o.name, cases.names, std::move(results), s.lang, o.show_hidden, isolation_text(s.limits, s.lang)};
    g.not_graded = not_graded;
    g.hidden_verdict_only = o.hidden_verdict_only;
    const std::string roster = variants ? fnv1a64_hex(grading_file_text({o.name, 0, variants->fixed, {}, "", variants})) : "";
    if (shard) return write_part(o, g, *shard, grading_digest(o.name, cases.names, s, roster), class_size);
    write_gradebook({o.format, o.out, o.teacher_report}, g);
}

struct MergeOpts {
    std::vector<std::string> parts;
    GradebookOut out;
    std::optional<Lang> lang;
    bool show_hidden = false, hidden_verdict_only = false;
};

void run_merge(const MergeOpts& o)
{
    if (o.out.format == GradeFormat::gradescope && o.out.out.empty()) throw InputError("--format gradescope writes DIR/gradescope/NAME/results.json: give --out DIR");
    if (!o.out.out.empty()) check_output_folder(o.out.out, "exercise merge");
    std::vector<std::pair<std::string, std::string>> texts;
    for (const auto& part : o.parts) {
        const auto bytes = read_input_file(part, [](std::string_view) { return ReadLimit{std::size_t{1} << 30, "a part of at most 1 GiB"}; });
        texts.emplace_back(part, std::string(bytes.begin(), bytes.end()));
    }
    Gradebook g = merge_parts(texts, o.lang.value_or(lang_from_env()), o.show_hidden);
    g.hidden_verdict_only = o.hidden_verdict_only;
    if (!o.out.out.empty()) {
        std::set<std::string> names;
        for (const auto& s : g.submissions)
            if (!names.insert(submission_name(s.path)).second) throw InputError(fmt::format("--out: two submissions are named {}; each needs a folder of its own name", excerpt(s.path)));
    }
    write_gradebook(o.out, g);
}

// --hidden-detail: how much of a hidden case the formats a student may see give.
void add_hidden_detail(CLI::App& sub, bool& verdict_only)
{
    sub.add_option_function<std::string>(
           "--hidden-detail", [&verdict_only](const std::string& v) { verdict_only = v == "verdict"; },
           "What a student sees of a hidden case: mistakes (its verdict, the catalogued mistake it matches and a crash's last output line) or "
           "verdict (the verdict alone); never its seed or sizes (--show-hidden shows everything)")
        ->check(CLI::IsMember({"mistakes", "verdict"}))
        ->default_str("mistakes");
}

}  // namespace

void setup_merge(CLI::App& exercise, Runners& runners)
{
    auto o = std::make_shared<MergeOpts>();
    auto* m = exercise.add_subcommand("merge", "For teachers: the parts of a class graded in shards (exercise grade --shard), merged into one gradebook");
    m->add_option("PART", o->parts, "A part file: exercise grade --shard I/N wrote it (part-I-of-N.json)")->required()->check(non_empty_path);
    add_enum_option(*m, "--format", o->out.format, "Gradebook format on stdout: text, csv, json, junit or gradescope");
    m->add_option("--out", o->out.out, "Write every format into DIR, as exercise grade --out does")->check(non_empty_path);
    m->add_flag("--show-hidden", o->show_hidden, "Show hidden cases' seeds, sizes, details and the smallest failing case in every format");
    add_hidden_detail(*m, o->hidden_verdict_only);
    m->add_option("--teacher-report", o->out.teacher_report, "Also write the text gradebook with everything about hidden cases to FILE")->check(non_empty_path);
    add_optional_enum(*m, "--lang", o->lang, "Language of the text gradebook, en or zh (default: from the locale)");
    runners.emplace_back(m, [o] { return run_merge(*o), 0; });
    m->footer("The parts must be every shard of one grading of one class: the same exercise, cases, run command, limits and points, each\n"
              "shard once, no submission in two. Each refusal names the file (exit 2). The gradebook is the class's, in the order of the\n"
              "submissions' paths, as one exercise grade over them in that order writes it (timings aside).\n"
              "Example:\n  attnlab exercise merge parts/part-*-of-4.json --out grades");
}

void setup_grade(CLI::App& exercise, Runners& runners)
{
    auto o = std::make_shared<GradeOpts>();
    auto* g = exercise.add_subcommand("grade", "For teachers: run each submission on the visible case and on hidden ones, into a gradebook");
    g->add_option("NAME", o->name, "Exercise name (attnlab exercise list)")->required();
    g->add_option("SUBMISSION", o->submissions, "A student's folder (its program reads inputs/ and writes the answer)")->required()->check(non_empty_path);
    g->add_option("--hidden", o->hidden, "Hidden cases: fresh seeds and other sizes within the exercise's size_range")->check(whole_in(0, 100))->default_str("5");
    g->add_option("--seed", o->seed, "Seed of the visible case (as given to exercise new)")->check(seed_number);
    for (const char* key : {"len", "dim", "heads", "batch"}) {
        g->add_option_function<long>(std::string("--") + key, [o, key](long v) { o->sizes[key] = v; }, "Size of the visible case (as given to exercise new)")
            ->check(whole_number);
    }
    g->add_option("--grading", o->grading, "The teacher's file from exercise new --hidden-seeds: the visible case and the hidden seeds")->check(non_empty_path);
    g->add_option("--run", o->run, "How to run a submission, from its folder (default: exercise.json's run, python3 starter.py)");
    g->add_option("--python", o->settings.python, "The interpreter that python3 in the run command means (the first python3 on PATH may lack numpy)")
        ->check(non_empty_path);
    g->add_option("--timeout", o->settings.limits.timeout_s, "Seconds a run may take before it is killed")
        ->check(number_in(kTimeoutRange.lo, kTimeoutRange.hi, "seconds"))
        ->default_str("20");
    g->add_option("--memory", o->memory_gib, "Memory a run may use, all its processes together, in GiB")
        ->check(number_in(kMemoryRange.lo, kMemoryRange.hi, "GiB"))
        ->default_str("2");
    g->add_option("--disk", o->disk_gib, "Disk a run may write, all its files together (its copy included), in GiB")
        ->check(number_in(kDiskRange.lo, kDiskRange.hi, "GiB"))
        ->default_str("1");
    g->add_option("--cpu-time", o->settings.limits.cpu_seconds, "CPU seconds a run may use, all its processes together")
        ->check(number_in(kCpuRange.lo, kCpuRange.hi, "seconds"))
        ->default_str("twice the timeout");
    g->add_option("--processes", o->settings.limits.processes, "Processes and threads a run may have at once (under a cgroup, or as root)")
        ->check(whole_in(static_cast<long>(kProcessRange.lo), static_cast<long>(kProcessRange.hi)))
        ->default_str("256");
    g->add_option("--sandbox", o->sandbox, "auto: bubblewrap where it works, else none; bwrap: refuse without it; none: process group and limits only")
        ->check(CLI::IsMember({"auto", "bwrap", "none"}))
        ->default_str("auto");
    g->add_option("--points", o->points, "JSON file: case name (visible, hidden-1, ...) -> points; other cases keep their share")->check(non_empty_path);
    g->add_option("--max-score", o->settings.max_score, "Points of a whole submission, shared equally by the cases")
        ->check(finite_positive)
        ->default_str("1 per case");
    add_enum_option(*g, "--format", o->format,
                    "Gradebook format on stdout: text, csv, json (the teacher's: everything), junit, gradescope or prairielearn (one submission each)");
    g->add_option("--out", o->out, "Write every format into DIR: grades.txt, grades.csv, grades.json, junit.xml, gradescope/NAME/results.json")
        ->check(non_empty_path);
    g->add_flag("--show-hidden", o->show_hidden, "Show hidden cases' seeds, sizes, details and the smallest failing case in text, CSV, JUnit and Gradescope");
    add_hidden_detail(*g, o->hidden_verdict_only);
    g->add_option("--teacher-report", o->teacher_report, "Also write the text gradebook with everything about hidden cases to FILE")
        ->check(non_empty_path);
    o->settings.jobs = static_cast<int>(thread_count(0));
    g->add_option("--jobs", o->settings.jobs, "Runs at a time")->check(whole_in(1, 256))->default_str("the cores");
    g->add_option("--shard", o->shard,
                  "I/N: grade the I-th (from 0) of N parts of the submissions sorted by path, into a part for exercise merge; auto: I and N "
                  "from a Slurm array task; auto/N: I from JOB_COMPLETION_INDEX (Kubernetes) or the Slurm task");
    g->add_option("--roster", o->roster, "With a grading file of exercise new --roster: a CSV saying which folder each student hands in (--folder-column)")
        ->check(non_empty_path);
    g->add_option("--roster-column", o->roster_column, "The column of --roster that holds the ids, named by its first row");
    g->add_option("--folder-column", o->folder_column, "The column of --roster that holds each student's submission folder name (default: the id)");
    g->add_option_function<std::string>(
         "--unmatched", [o](const std::string& v) { o->skip_unmatched = v == "skip"; },
         "A submission no student of the roster hands in: refuse (exit 2, the default) or skip (named in the gradebook)")
        ->check(CLI::IsMember({"refuse", "skip"}));
    g->add_flag("--isolate", o->isolate, "No network for the programs (always so under bubblewrap; else root or user namespaces)");
    add_optional_enum(*g, "--lang", o->lang, "Language of the text gradebook, en or zh (default: from the locale)");
    runners.emplace_back(g, [o] { return run_grade(*o), 0; });
    g->footer("Each run has a time limit and, for all its processes together, a memory, a disk, a CPU-time and a process limit;\n"
              "nothing it starts outlives it. Where the grader can make cgroups (v2 delegated, or v1 as root), the kernel counts each\n"
              "run's memory (shared memory and tmpfs files included), processes and CPU time, and shares the CPU equally between\n"
              "runs; elsewhere they are polled. Run as root, the grader gives each run a uid of its own.\n"
              "Under bubblewrap (--sandbox auto where installed, Debian: bubblewrap) it has PID, network, mount and cgroup namespaces of\n"
              "its own and sees /usr, /etc and the interpreter read-only, not your files. With --sandbox none it can read what its uid\n"
              "can: that is not a security sandbox. The gradebook says which isolation the runs had. Hidden cases show their name, verdict,\n"
              "matched mistake and a crash's last line, never their seed or sizes, except in --format json, --teacher-report and with\n"
              "--show-hidden.\n"
              "Exit status: 0 when the grading ran, whatever the grades; 2 for a usage error, an unreadable exercise or an interpreter\n"
              "without numpy; a SIGINT or SIGTERM kills every run, removes the temporary folders and ends as the signal does.\n"
              "Example:\n  attnlab exercise grade rope-interleaved subs/* --grading hw1.grading.json --python /usr/bin/python3 --out grades");
}

}  // namespace attnlab::app

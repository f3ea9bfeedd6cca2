// `exercise grade`: each submission's program run on the visible case and on hidden cases
// (fresh seeds, other sizes within the exercise's size_range, the smallest included), its
// answer judged as --against judges it, the first failing hidden case shrunk to the smallest
// sizes that still fail, and points per case.
#pragma once

#include "attnlab/core/enums.hpp"
#include "attnlab/exercise/exercise.hpp"
#include "attnlab/exercise/program.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnlab {

enum class CaseVerdict { match, differs, crash, timeout, missing, unreadable, wrong_shape, nan };
constexpr auto enum_names(CaseVerdict)
{
    return std::array{std::pair{CaseVerdict::match, std::string_view("match")},
                      std::pair{CaseVerdict::differs, std::string_view("differs")},
                      std::pair{CaseVerdict::crash, std::string_view("crash")},
                      std::pair{CaseVerdict::timeout, std::string_view("timeout")},
                      std::pair{CaseVerdict::missing, std::string_view("missing")},
                      std::pair{CaseVerdict::unreadable, std::string_view("unreadable")},
                      std::pair{CaseVerdict::wrong_shape, std::string_view("wrong_shape")},
                      std::pair{CaseVerdict::nan, std::string_view("nan")}};
}
// The verdict as the text gradebook shows it, in the user's language.
std::string verdict_text(CaseVerdict v, Lang lang);

// One configuration a submission is run on.
struct GradeCase {
    std::string name;  // "visible", "hidden-1", ...
    bool hidden = false;
    std::uint64_t seed = 0;
    std::map<std::string, long> sizes;  // those the exercise takes
};

// A case made: its inputs, reference answer and judge.
struct PreparedCase {
    GradeCase config;
    MadeExercise made;
};

// The case made, or nothing for sizes the exercise cannot hold together (dim not a multiple
// of heads, ...).
std::optional<PreparedCase> prepare_case(const std::string& exercise, const GradeCase& c);

// A case with sizes drawn from its seed within the exercise's size_range (those in FIXED kept),
// where the exercise holds and every mistake it names gives a wrong answer; nothing when 500
// draws find none.
std::optional<PreparedCase> drawn_case(const std::string& exercise, const GradeCase& c, const std::map<std::string, long>& fixed);

// The hidden case i (from 1) of an exercise made with SEED when no seeds were kept apart.
std::uint64_t derived_hidden_seed(std::uint64_t seed, int i);

// The visible case and `hidden` hidden ones, with seeds from `seeds` (kept in grading.json)
// or derived from the visible seed. Hidden case 1 has the smallest sizes the exercise takes
// (when the visible case does not), the others sizes drawn from each one's seed; every hidden
// case differs from the visible one in at least one size, and in each every mistake the
// exercise names (at its default sizes) gives an answer other than the reference. Throws InputError for a visible
// configuration the exercise cannot hold.
std::vector<PreparedCase> grade_cases(const std::string& exercise, const GradeCase& visible, int hidden,
                                      const std::vector<std::uint64_t>& seeds);

// `attnlab exercise new NAME DIR --seed S --len L ...`: the command that makes this case.
std::string case_command(const std::string& exercise, const GradeCase& c);

struct GradeSettings {
    std::string run = kExerciseRun;
    std::string python;  // what `python3` (and `python`) in the run command mean; empty: PATH's
    ProgramLimits limits;
    int jobs = 1;
    Lang lang = Lang::en;
    double max_score = 0.0;                // 0: one point per case
    std::map<std::string, double> points;  // --points FILE: case name -> points
};

struct CaseResult {
    GradeCase config;
    CaseVerdict verdict = CaseVerdict::missing;
    std::optional<double> max_diff;        // when the answer was compared
    std::string detail;                    // one line, in the user's language
    std::vector<Diagnosis> diagnosis;      // catalogued mistakes the answer matches
    double points = 0.0, max_points = 0.0;
    double time_s = 0.0;
    std::string answer_digest;             // fnv1a64_hex of the answer file's bytes, when there was one
    std::string last_line;                 // a crash's last line of output (the exception), escaped
    // A crash's or a timeout's last lines of stdout and of stderr (kTailLines each), escaped.
    std::vector<std::string> stdout_tail, stderr_tail;
};

// The smallest failing configuration found from the first failing hidden case.
struct Shrunk {
    GradeCase config;
    CaseVerdict verdict = CaseVerdict::differs;
    std::string command;  // case_command
    int runs = 0;         // how many runs the search took
};

struct SubmissionResult {
    std::string path;
    std::string student;                 // with a roster: the student whose variant it was graded on
    std::vector<CaseResult> cases;
    std::optional<Shrunk> smallest;
    std::vector<std::string> left_out;  // files of the submission not copied (links out, special files)
    // fnv1a64_hex of its code: its files' names and bytes, .py files without comments and blank
    // lines, leaving out .npy files and the exercise's own (README.md, check.sh, exercise.json,
    // inputs/), which differ from student to student in a class with a roster
    std::string code_digest;
    double score = 0.0, max_score = 0.0;
    double time_s = 0.0;
};

// Each case's points: from settings.points, else max_score / cases (1 each when 0). Throws
// InputError for a points file naming a case there is not.
std::vector<double> case_points(const std::vector<GradeCase>& cases, const GradeSettings& s);
std::vector<double> case_points(const std::vector<PreparedCase>& cases, const GradeSettings& s);

// A SIGINT, SIGTERM or SIGHUP ended the grading: every run was killed and the temporary
// folders removed; the caller ends the program as the signal would.
struct Interrupted : std::runtime_error {
    int signal;
    explicit Interrupted(int sig) : std::runtime_error("grading interrupted"), signal(sig) {}
};

// Grades every submission (a folder each, checked to be one before), on settings.jobs
// threads; the results are in argument order and do not depend on the thread count. Before
// any run, the interpreter the run command uses (settings.python, else python3 on PATH, when the
// command names python) must import numpy, and torch when a submission's .py files import it,
// under the grading's own limits and sandbox: else InputError naming it. Throws Interrupted.
std::vector<SubmissionResult> grade_submissions(const std::string& exercise, const std::vector<std::string>& submissions,
                                                const std::vector<PreparedCase>& cases, const GradeSettings& s);

// The cases of the submission at index i, for a class where each student has their own (a
// roster): made when its first run starts and let go after its last, so that a class of any
// size holds only the cases of the submissions being run. Each has the cases CASES names, in
// that order.
using CasesOf = std::function<std::vector<PreparedCase>(std::size_t submission)>;
std::vector<SubmissionResult> grade_submissions(const std::string& exercise, const std::vector<std::string>& submissions,
                                                const std::vector<GradeCase>& cases, const CasesOf& cases_of, const GradeSettings& s);

}  // namespace attnlab

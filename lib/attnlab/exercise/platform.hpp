// An exercise graded where courses grade: inside Gradescope's autograder container and
// PrairieLearn's external grader, each of which runs one container per submission and reads a
// results file back.
//
// Gradescope (autograder.zip, unpacked to /autograder/source): setup.sh, run once as root when
// the image is built, installs the runtime packages (python3, python3-numpy, bubblewrap) and the
// program (attnlab, the one that made the bundle: it needs glibc 2.36 or later, so Debian 12,
// Ubuntu 24.04 or a later base image); run_autograder grades /autograder/submission with the
// grading file into /autograder/results/results.json (score, execution_time, output, tests
// with name, score, max_score, status, output and visibility: after_published for a hidden
// case).
//
// PrairieLearn (the question's tests/ folder, mounted at /grade/tests): run.sh, the external
// grader's entrypoint, grades /grade/student into /grade/results/results.json (gradable,
// score from 0 to 1, message, output, tests with name, description, points, max_points,
// message, output); a submission without a file is not gradable, so no attempt is charged.
// info.json holds the question's externalGradingOptions.
//
// Both take their root from ATTNLAB_AUTOGRADER_ROOT and ATTNLAB_GRADE_ROOT (for tests), and
// the program from ATTNLAB where set.
#pragma once

#include "attnlab/exercise/gradebook.hpp"

#include <string>
#include <utility>
#include <vector>

namespace attnlab {

enum class Platform { gradescope, prairielearn };
constexpr auto enum_names(Platform)
{
    return std::array{std::pair{Platform::gradescope, std::string_view("gradescope")},
                      std::pair{Platform::prairielearn, std::string_view("prairielearn")}};
}

// A file of a bundle: its name (with folders), its bytes, and whether it is a program.
struct BundleFile {
    std::string name, bytes;
    bool executable = false;
};

// The files of the platform's bundle for EXERCISE, graded with GRADING_JSON (the grading file's
// text) by the program PROGRAM (its bytes).
std::vector<BundleFile> platform_bundle(Platform platform, const std::string& exercise, const std::string& grading_json, const std::string& program);

// A ZIP archive of FILES, stored (not compressed), with Unix modes (0755 for programs, else 0644).
std::string zip_archive(const std::vector<BundleFile>& files);

// PrairieLearn's results.json for one submission: gradable, score (0..1), message, output, tests.
nlohmann::ordered_json prairielearn_results(const Gradebook& g, const SubmissionResult& s);

}  // namespace attnlab

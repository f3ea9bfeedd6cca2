// exercise.json read back by exercise solve. A folder that went round a class is data from
// strangers: every field is checked against its schema before use, and every refusal names
// the field, with at most an escaped excerpt of what was there.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnlab {

constexpr std::size_t kMaxExerciseFile = std::size_t{1} << 20;  // bytes
constexpr std::size_t kMaxGradingFile = std::size_t{8} << 20;  // bytes: a roster of 50,000 fits

struct ExerciseFile {
    std::string name;
    std::uint64_t seed = 0;
    std::map<std::string, long> sizes;
    // Each input's name and file: a relative path with no ".." part (the app still resolves
    // it, links included, and refuses it when it leaves the folder).
    std::vector<std::pair<std::string, std::string>> inputs;
};

// Throws InputError ("WHAT: \"inputs\"[1].\"file\" is missing") for anything that is not an
// exercise file written by attnlab exercise new.
ExerciseFile parse_exercise_file(const std::string& text, const std::string& what);

inline constexpr std::size_t kMaxRoster = 50000;  // students
// A student's id names their folder: 1 to 64 letters, digits and . _ @ + -, not starting with
// . or -.
bool valid_student_id(std::string_view id);

// What the grading file keeps for a class with a variant per student (exercise new --roster).
struct Variants {
    std::string secret;                 // 32 hex digits: the key of the students' seeds
    std::map<std::string, long> fixed;  // sizes the teacher fixed; the others are drawn per student
    std::vector<std::string> ids;       // the roster's students, in its order
};

// The teacher's file that exercise new --hidden-seeds writes beside the folder (DIR.grading.json,
// never inside DIR): the visible case and the seeds of the hidden cases, kept from the class.
struct GradingFile {
    std::string exercise;
    std::uint64_t seed = 0;
    std::map<std::string, long> sizes;  // those the exercise takes
    std::vector<std::uint64_t> hidden_seeds;
    std::string run;
    std::optional<Variants> variants;  // with a roster: each student's cases come from it
};
// How many hidden seeds exercise new --hidden-seeds keeps: exercise grade --hidden takes up to that.
constexpr std::size_t kKeptHiddenSeeds = 10;
std::string grading_file_text(const GradingFile& g);
GradingFile parse_grading_file(const std::string& text, const std::string& what);

// exercise grade --points FILE: a JSON object, case name -> points >= 0.
std::map<std::string, double> parse_points(const std::string& text, const std::string& what);

}  // namespace attnlab

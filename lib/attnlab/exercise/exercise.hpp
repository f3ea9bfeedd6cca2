// Ready-made, self-grading exercises: each is a task from the articles, the inputs a student
// gets, the answer the reference command computes, and the catalogued mistakes its check
// recognises. `exercise new` writes them as files; `check.sh` grades an answer with the
// subcommand's own --against.
#pragma once

#include "attnlab/core/report.hpp"
#include "attnlab/core/tensor.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace attnlab {

// What `exercise list` shows.
struct ExerciseInfo {
    std::string name;
    std::string subcommand;  // the subcommand whose --against grades it
    std::string title_en;
    std::string title_zh;
    std::vector<std::string> sizes;  // the size options it takes: len, dim, heads, batch
    std::map<std::string, long> defaults;
    // The sizes a hidden case of `exercise grade` is drawn from, each inclusive.
    std::map<std::string, std::pair<long, long>> size_range;
    // The precision `exercise grade` judges an answer at: a file stored at less is wrong.
    DType judged_at = DType::float32;

    const std::string& title(Lang lang) const { return lang == Lang::zh ? title_zh : title_en; }
};

const std::vector<ExerciseInfo>& exercise_list();
// Throws InputError naming the exercises there are.
const ExerciseInfo& find_exercise(const std::string& name);

// A tensor the student gets, as DIR/inputs/NAME.npy. `replaces`: the reference command takes it
// with --input (x, weights, q); otherwise the command's options already imply it (a
// permutation, lengths).
struct ExerciseInput {
    std::string name;
    std::string file;
    Tensor tensor;
    bool replaces = false;
};

// A catalogued mistake this exercise's check recognises, and the wrong answer it gives.
struct ExerciseMistake {
    std::string id;
    std::string en;
    std::string zh;
    Tensor answer;
};

// One exercise made for given sizes and seed.
struct MadeExercise {
    ExerciseInfo info;
    std::map<std::string, long> sizes;   // every size it takes, defaults filled in
    std::uint64_t seed = 0;
    std::vector<std::string> command;    // the reference: subcommand, options, --input NAME=inputs/NAME.npy
    std::string answer_tensor;           // the run's tensor the answer is held against
    std::string answer_file = "answer.npy";
    Tensor answer;                       // the reference answer
    std::vector<ExerciseInput> inputs;
    std::vector<ExerciseMistake> mistakes;
    // Runs the reference command in-process, as it would run from the exercise's folder: with
    // ctx.against set, the report's comparison is what check.sh would say.
    std::function<Report(const RunContext& ctx)> judge;
};

// How a student's program is run, as exercise.json says: from its folder, reading inputs/.
inline const char* const kExerciseRun = "python3 starter.py";

struct ExerciseRequest {
    std::string name;
    std::map<std::string, long> sizes;  // only those given; each must be one the exercise takes
    std::uint64_t seed = 0;
    std::map<std::string, Tensor> inputs;  // replacements read back from DIR/inputs (solve)
};

// Computes the reference (float64) and every catalogued mistake that differs from it.
// Throws InputError for a size the exercise does not take or cannot hold.
MadeExercise make_exercise(const ExerciseRequest& request);

// inputs/params.json: every size of the exercise (those it takes and those its builder
// derives, max_len, buckets, ...), which the starter reads instead of constants.
std::string exercise_params_text(const MadeExercise& m);
// The files of DIR, as text.
std::string exercise_readme(const MadeExercise& m, Lang lang);
std::string exercise_starter(const MadeExercise& m, Lang lang);
std::string exercise_check_script(const MadeExercise& m, Lang lang);
// exercise.json; `params` is every option of the reference command (the app knows them).
nlohmann::ordered_json exercise_json(const MadeExercise& m, const nlohmann::ordered_json& params, Lang lang);

}  // namespace attnlab

// The exercises as data: what each one asks (its task text, in English and Chinese, beside the
// code that builds its reference), and the function a student fills in.
#pragma once

#include "attnlab/exercise/exercise.hpp"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace attnlab::exercise_detail {

// The task's text. In `task_*` and `doc_*`, {len}, {dim}, {heads}, {batch}, {head_dim},
// {max_len} and any size the builder records ({buckets}, ...) stand for the exercise's sizes.
struct ExerciseText {
    std::string task_en;
    std::string task_zh;
    std::vector<std::pair<std::string, std::string>> constants;  // starter.py's NAME = size
    std::string signature;  // "def sinusoidal_table(L, D):"
    std::string doc_en;
    std::string doc_zh;
    std::string stub;  // what the unfilled function returns: right shape, wrong values
    std::string call;  // the answer, in terms of the constants and the inputs
};

struct ExerciseDef {
    ExerciseInfo info;
    ExerciseText text;
    // Fills the reference command, the answer, the inputs and the mistakes, from m.sizes and
    // m.seed; `given` are the inputs read back from DIR.
    std::function<void(MadeExercise& m, const std::map<std::string, Tensor>& given)> build;
};

const std::vector<ExerciseDef>& exercise_defs();
const ExerciseDef& exercise_def(const std::string& name);

}  // namespace attnlab::exercise_detail

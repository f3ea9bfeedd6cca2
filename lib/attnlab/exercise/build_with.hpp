// How an exercise builds its reference from an experiment: the run in float64 with the
// experiment's own compute, the inputs handed out, and the catalogued mistakes that differ
// from the answer. Shared by the catalogue's files; not part of the library's interface.
#pragma once

#include "attnlab/core/error_model.hpp"
#include "attnlab/exercise/catalogue.hpp"
#include "attnlab/experiments/experiment.hpp"
#include "attnlab/learner/against.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace attnlab::exercise_detail {

using Given = std::map<std::string, Tensor>;

inline bool takes_input(const std::vector<std::string>& inputs, const std::string& name)
{
    return std::find(inputs.begin(), inputs.end(), name) != inputs.end();
}

// A catalogued mistake is offered only when it gives a tensor other than the answer here
// (asking for interleaved pairs makes "interleaved where half was asked" the right answer),
// told apart even at float32 precision, which check.sh accepts for an answer.
inline bool differs(const Tensor& wrong, const Tensor& answer)
{
    if (wrong.values.empty()) return false;
    const ReferenceError f32{measure_reference_error(answer, answer).max_abs, 0.0};
    double diff = 0.0;
    return !tensors_match(answer, wrong, judging_tolerance({DType::float32, DType::float32}, f32, 0.0), &diff);
}

// The reference computed in float64 with the experiment's own compute; the inputs handed out
// are the run's own (or the ones read back from DIR), and the command takes them with --input.
template <class P>
void build_with(MadeExercise& m, const Experiment<P>& e, const P& p, const std::string& tensor,
                const std::vector<std::string>& handed_out, const Given& given, const std::vector<Tensor>& extra = {})
{
    RunContext ctx;
    ctx.dtype = DType::float64;
    ctx.seed = m.seed;
    ctx.keep_all = true;
    ctx.render_bytes_per_element = 0.0;  // written as NPY files, never printed
    ctx.memory_advice = fmt::format("reduce the exercise's sizes (exercise list shows which {} takes)", m.info.name);
    ctx.advise_show = false;
    for (const auto& [name, t] : given)
        if (takes_input(e.inputs, name) && takes_input(handed_out, name)) ctx.inputs[name] = t;
    const Run run = compute_all(e, p, ctx);
    m.answer_tensor = tensor;
    m.answer = run.at(tensor);
    m.judge = [&e, p](const RunContext& c) { return run_judged(e, p, c); };
    m.command.push_back("--dtype");
    m.command.push_back("float64");
    m.command.push_back("--seed");
    m.command.push_back(std::to_string(m.seed));
    for (const auto& name : handed_out) {
        const bool replaces = takes_input(e.inputs, name);
        m.inputs.push_back({name, "inputs/" + name + ".npy", run.at(name), replaces});
        if (replaces) {
            m.command.push_back("--input");
            m.command.push_back(name + "=inputs/" + name + ".npy");
        }
    }
    for (const Tensor& t : extra) m.inputs.push_back({t.name, "inputs/" + t.name + ".npy", t, false});
    for (const auto& mistake : e.mistakes) {
        if (mistake.tensor != tensor) continue;
        Tensor wrong = mistake.build(p, run);
        if (differs(wrong, m.answer)) m.mistakes.push_back({mistake.id, mistake.en, mistake.zh, std::move(wrong)});
    }
}

inline long size(const MadeExercise& m, const char* key) { return m.sizes.at(key); }

// The exercises on the position schemes the articles name but do not build (catalogue_schemes.cpp).
ExerciseDef learned_exercise();
ExerciseDef shaw_exercise();
ExerciseDef t5_exercise();
ExerciseDef nope_exercise();
ExerciseDef decode_exercise();
// The backward pass (catalogue_backward.cpp).
ExerciseDef softmax_backward_exercise();
ExerciseDef attention_backward_exercise();

}  // namespace attnlab::exercise_detail

// What train.cpp (the compute, the descriptor) and train_checks.cpp (the checks and the figures
// they read) share.
#pragma once

#include "attnlab/experiments/train.hpp"

#include <vector>

namespace attnlab::train_detail {

constexpr long kMaxEvalLen = 2048;
constexpr long kEvalSequences = 64;    // sequences per evaluation length
constexpr long kThreadCheckSteps = 2;  // steps run twice, on one thread and on two, for the bit-identity check
// A model has learned its task when it scores at least this at its training length: below it,
// how its accuracy carries past that length says nothing about its positions.
constexpr double kLearned = 0.9;
constexpr long kLearnRound = 100;  // --until-learned: steps between two looks at the accuracy

// The steps a model may take in all: --until-learned's cap, else --steps. The loss has one
// column per step up to it, NaN past the steps a model took.
inline long step_cap(const TrainParams& p) { return p.until_learned.value_or(p.steps); }

std::vector<long> eval_lengths(const TrainParams& p);
long longest_eval(const TrainParams& p);
std::vector<train::Scheme> schemes_of(const TrainParams& p);
// The training seeds per scheme: --seeds, default 3 with --compare-schemes, else 1.
long seeds_of(const TrainParams& p);
train::ModelConfig model_config(const TrainParams& p, train::Scheme pe);
void validate(const TrainParams& p);
double train_memory(const TrainParams& p);

// A directional derivative check of the loss with respect to the first block's parameters, in
// float64 (see train_checks.cpp for its error model).
struct FiniteDifference {
    double measured = 0.0, bound = 0.0, scale = 0.0;
};
FiniteDifference first_block_fd(const train::Model<double>& m, const train::Batch& batch, const std::vector<double>& grads, std::uint64_t seed);

// The figures of the bit-identity and gradient checks, into run.measured.
template <class T>
void keep_thread_and_gradient_figures(const TrainParams& p, std::uint64_t seed, Run& run);

std::vector<CheckDef<TrainParams>> train_checks();
// The note that names the schemes that did not learn the task, whose article rows then say little.
std::optional<std::string> unlearned_note(const TrainParams& p, const Run& run, const CheckEnv& env);
// The published findings on length (Press et al. 2022; Kazemnejad et al. 2023) beside the
// table at its longest length, with where they differ and why; it starts "published:"
// ("已发表：" in Chinese), which the tour looks for.
std::optional<std::string> findings_note(const TrainParams& p, const Run& run, const CheckEnv& env);

// Where a run of one scheme stands: the model, AdamW's moments and step count (the data
// position: step s trains on batch s), and the losses of the steps taken (train_checkpoint.cpp).
template <class T>
struct TrainState {
    train::Model<T> model;
    train::Optimizer<T> opt;
    std::vector<double> loss;
};
// The state before the first step: the model drawn from the seed.
template <class T>
TrainState<T> fresh_state(const TrainParams& p, train::Scheme pe, std::uint64_t seed);
// The state --resume DIR saved, refused (InputError) unless it was trained with this run's
// options, seed and dtype; the paths read go into `read`.
template <class T>
TrainState<T> load_checkpoint(const TrainParams& p, const Plan& plan, std::vector<std::string>& read);
// The state as the saved tensors model_params, adam_m, adam_v and steps_done, and the layout of
// model_params for run.json.
template <class T>
void add_checkpoint(const TrainState<T>& s, Elem elem, Run& run);

}  // namespace attnlab::train_detail

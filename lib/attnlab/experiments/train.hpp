// `train`: a tiny decoder trained on a task only order solves, with each position scheme, and
// evaluated past its training length (train_model.hpp, train_tasks.hpp).
#pragma once

#include "attnlab/experiments/experiment.hpp"
#include "attnlab/model/train_tasks.hpp"

#include <optional>
#include <string>
#include <vector>

namespace attnlab {

struct TrainParams {
    train::Task task = train::Task::k_back;
    train::Scheme pe = train::Scheme::alibi;
    long steps = 800;
    long vocab = 16;
    long d_model = 64;
    long layers = 2;
    long heads = 4;
    long train_len = 16;
    std::vector<long> eval_lens;  // default 1x, 2x and 4x --train-len
    long batch = 16;
    double lr = 3e-3;
    long k = 1;
    bool compare = false;
    // --compare-schemes: models per scheme, each trained from its own seed (seed, seed + 1, ...)
    // on the same evaluation data; every cell is their median (default 3).
    std::optional<long> seeds;
    // --until-learned CAP: after --steps, train on in rounds of kLearnRound steps until the
    // accuracy at the training length reaches kLearned on held-out sequences, or CAP steps in all.
    std::optional<long> until_learned;
    unsigned threads = 0;
    std::string resume;  // a folder `train --save` wrote: go on from its state
};

const Experiment<TrainParams>& train_experiment();
Report run_train(const TrainParams& p, const RunContext& ctx);

}  // namespace attnlab

// What attend.cpp (the compute, the descriptor) and attend_checks.cpp (the checks and notes)
// share: the configuration resolved from the options, and readers of a run.
#pragma once

#include "attnlab/experiments/attend.hpp"
#include "attnlab/model/block.hpp"

#include <optional>
#include <vector>

namespace attnlab::attend_detail {

struct Resolved {
    BlockConfig cfg;
    long batch = 1, len = 1, kv_len = 1, dim = 1;
    bool cross = false;
};

// The options checked and resolved (sizes, the block's configuration); throws InputError.
Resolved resolve(const AttendParams& p);
// Multiply-adds of one query row of a reference pass, over every (batch, head).
double work_per_row(const AttendParams& p);

// The option rows, the params `attend` reports beside them, and --input positions (`grad`
// takes the same options).
std::vector<OptionRow<AttendParams>> attend_options();
ParamList attend_derived_params(const AttendParams& p);
void adopt_positions(AttendParams& p, RunContext& ctx);

inline long head_dim(const AttendParams& p) { return p.dim / p.heads; }

// Whether the cross-positions check applies: it runs the block twice more, both runs alive
// together (the work and memory estimates count them).
bool cross_positions_checked(const AttendParams& p, const Resolved& r);

template <class T>
BlockWeights<T> weights_of(const Run& run)
{
    return {from_tensor<T, 2>(run.at("w_q")), from_tensor<T, 2>(run.at("w_k")), from_tensor<T, 2>(run.at("w_v"))};
}

template <class T>
Ten3<T> x_of(const Run& run, const char* name)
{
    return from_tensor<T, 3>(run.at(name));
}

// A check that runs attnlab's block again from X: with q, k or v given there is no X behind
// them, so it does not apply.
template <class F>
auto from_x(F check)
{
    return [check](const AttendParams& p, const Run& run, const CheckEnv& env) -> std::optional<Check> {
        if (find_param(run.derived, "qkv_given") != nullptr) return std::nullopt;
        return check(p, run, env);
    };
}

// The checks and notes that judge a run computed in T.
template <class T>
std::vector<CheckDef<AttendParams>> attend_checks();
std::vector<NoteFn<AttendParams>> attend_notes();

}  // namespace attnlab::attend_detail

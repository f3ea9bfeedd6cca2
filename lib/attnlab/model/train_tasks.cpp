#include "attnlab/model/train_tasks.hpp"

#include "attnlab/core/rng.hpp"

#include <algorithm>

namespace attnlab::train {

long task_positions(Task task, long length)
{
    switch (task) {
    case Task::copy:
    case Task::reverse: return 2 * length;
    case Task::k_back: return length;
    case Task::induction: return 2 * length - 1;
    }
    return length;
}

namespace {

// One sequence's tokens and targets (-1: not scored), appended to the batch.
void one_sequence(const TaskSpec& spec, long L, Rng& rng, Batch& batch)
{
    std::vector<long> a(static_cast<std::size_t>(L));
    for (long& t : a) t = 1 + static_cast<long>(rng.below(static_cast<std::uint32_t>(spec.vocab - 1)));
    std::vector<long> seq;  // the whole sequence: inputs are seq[0..T-1], next-token targets seq[1..T]
    std::vector<long> targets;
    if (spec.task == Task::k_back) {
        for (long t = 0; t < L; ++t) targets.push_back(t >= spec.k ? a[static_cast<std::size_t>(t - spec.k)] : -1);
        batch.tokens.insert(batch.tokens.end(), a.begin(), a.end());
        batch.targets.insert(batch.targets.end(), targets.begin(), targets.end());
        return;
    }
    seq = a;
    if (spec.task == Task::induction) {
        seq.insert(seq.end(), a.begin(), a.end());
    } else {
        seq.push_back(0);
        if (spec.task == Task::reverse) std::reverse(a.begin(), a.end());
        seq.insert(seq.end(), a.begin(), a.end());
    }
    // position t predicts seq[t + 1]; scored from the first position of the answer's context on
    // (copy, reverse: t >= L, the separator and after; induction: t >= L, the second copy)
    const long T = task_positions(spec.task, L);
    for (long t = 0; t < T; ++t) {
        batch.tokens.push_back(seq[static_cast<std::size_t>(t)]);
        batch.targets.push_back(t >= L ? seq[static_cast<std::size_t>(t + 1)] : -1);
    }
}

}  // namespace

Batch task_batch(const TaskSpec& spec, long length, long sequences, std::uint64_t seed, std::uint64_t stream, std::uint64_t index)
{
    Batch batch;
    batch.sequences = sequences;
    batch.positions = task_positions(spec.task, length);
    Rng rng(seed, stream);
    rng.advance(index << 32);  // each batch draws far fewer than 2^32 numbers
    for (long s = 0; s < sequences; ++s) one_sequence(spec, length, rng, batch);
    return batch;
}

}  // namespace attnlab::train

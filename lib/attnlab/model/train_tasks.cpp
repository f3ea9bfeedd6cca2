#include "attnlab/model/train_tasks.hpp"

#include "attnlab/core/rng.hpp"

#include <algorithm>
#include <limits>

namespace attnlab::train {

long task_positions(Task task, long length)
{
    switch (task) {
    case Task::copy:
    case Task::reverse: return 2 * length;
    case Task::k_back: return length;
    case Task::induction: return 2 * length - 1;
    case Task::count: return 2 * length + 1;
    }
    return length;
}

namespace {

// One sequence's tokens and targets (-1: not scored), appended to the batch.
void one_sequence(const TaskSpec& spec, long L, Rng& rng, Batch& batch)
{
    std::vector<long> a(static_cast<std::size_t>(L));
    const long first = spec.task == Task::count ? 2 : 1;  // count keeps token 1 for its marks
    for (long& t : a) t = first + static_cast<long>(rng.below(static_cast<std::uint32_t>(spec.vocab - first)));
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
    } else if (spec.task == Task::count) {
        seq.push_back(0);
        seq.insert(seq.end(), static_cast<std::size_t>(L), 1L);
        seq.push_back(0);
    } else {
        seq.push_back(0);
        if (spec.task == Task::reverse) std::reverse(a.begin(), a.end());
        seq.insert(seq.end(), a.begin(), a.end());
    }
    // position t predicts seq[t + 1]; scored from the first position of the answer's context on
    // (copy, reverse, count: t >= L, the separator and after; induction: t >= L, the second copy)
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

Scores score_hits(const std::vector<int>& hits, long sequences, long positions)
{
    const auto B = static_cast<std::size_t>(sequences), T = static_cast<std::size_t>(positions);
    Scores s;
    std::vector<double> right(T, 0.0), scored(T, 0.0);
    double all_right = 0.0, all_scored = 0.0, exact = 0.0;
    for (std::size_t b = 0; b < B; ++b) {
        bool whole = true;
        for (std::size_t t = 0; t < T; ++t) {
            const int h = hits[b * T + t];
            if (h < 0) continue;
            scored[t] += 1.0, right[t] += h;
            whole = whole && h == 1;
        }
        exact += whole ? 1.0 : 0.0;
    }
    for (std::size_t t = 0; t < T; ++t) {
        all_right += right[t], all_scored += scored[t];
        s.by_position.push_back(scored[t] > 0.0 ? right[t] / scored[t] : std::numeric_limits<double>::quiet_NaN());
    }
    s.accuracy = all_scored > 0.0 ? all_right / all_scored : std::numeric_limits<double>::quiet_NaN();
    s.exact_match = B > 0 ? exact / static_cast<double>(B) : std::numeric_limits<double>::quiet_NaN();
    return s;
}

}  // namespace attnlab::train

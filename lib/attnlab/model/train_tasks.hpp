// The synthetic tasks `attnlab train` learns, each one only the order of the tokens solves.
// Tokens 1..V-1 are content, drawn uniformly from the seed; token 0 is the separator. A task
// of length L (--train-len, --eval-lens):
//   copy       a_1 .. a_L 0 a_1 .. a_L, the second half predicted token by token (2L positions);
//   reverse    a_1 .. a_L 0 a_L .. a_1, likewise;
//   k-back     a_1 .. a_L, position t answers the token k positions earlier (t >= k);
//   induction  s s for a random s of L tokens: past the first copy, after A comes the token
//              that followed A before (2L - 1 positions, the second copy's next tokens scored);
//   count      a_1 .. a_L 0 1 .. 1 0: after the separator, as many marks (token 1) as the input
//              had tokens, then the separator again (2L + 1 positions; content is 2..V-1). Each
//              mark is easy; knowing when to stop is counting, which only position can tell.
// A sequence is an exact match when every scored position of it is right.
#pragma once

#include "attnlab/model/train_model.hpp"

#include <array>
#include <cstdint>
#include <string_view>
#include <utility>

namespace attnlab::train {

enum class Task { copy, reverse, k_back, induction, count };
constexpr auto enum_names(Task)
{
    return std::array{std::pair{Task::copy, std::string_view("copy")}, std::pair{Task::reverse, std::string_view("reverse")},
                      std::pair{Task::k_back, std::string_view("k-back")}, std::pair{Task::induction, std::string_view("induction")},
                      std::pair{Task::count, std::string_view("count")}};
}

struct TaskSpec {
    Task task = Task::k_back;
    long vocab = 16;
    long k = 3;  // k-back's distance
};

// The positions the model sees for a task of length L.
long task_positions(Task task, long length);

// Batch `index` of a stream (stream::train_data for training, stream::eval_data for the
// evaluation at each length): `sequences` sequences of length L, the same for a seed and index
// on every platform.
Batch task_batch(const TaskSpec& spec, long length, long sequences, std::uint64_t seed, std::uint64_t stream, std::uint64_t index);

// How a model did on a batch, from hits (1 right, 0 wrong, -1 not scored, per position [B, T]):
// the share of scored positions right; the share of sequences with every scored position right;
// and per position t, the share of sequences right there (NaN where t is never scored).
struct Scores {
    double accuracy = 0.0, exact_match = 0.0;
    std::vector<double> by_position;
};
Scores score_hits(const std::vector<int>& hits, long sequences, long positions);

}  // namespace attnlab::train

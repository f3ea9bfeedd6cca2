// A class graded in shards (a Slurm array, a Kubernetes Indexed Job, N machines by hand) and
// merged into the gradebook of the whole class.
//
// `exercise grade --shard I/N` grades the I-th (from 0) of N contiguous parts of the
// submissions sorted by their paths' bytes: a rerun of a shard grades the same students. It
// writes a part: the exercise, a digest of the grading (the cases, the run command, the limits,
// the points: everything that decides a grade), the shard, the class's size, the submissions it
// graded, and their gradebook. `exercise merge` reads the N parts back, refuses a set that is
// not one grading of one class (each refusal names the file), and writes the class's gradebook,
// in every format, as one run over the sorted submissions would have (timings aside).
#pragma once

#include "attnlab/exercise/gradebook.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnlab {

struct Shard {
    long index = 0, count = 1;
};

// "I/N" (0 <= I < N <= kMaxShards); "auto": I and N from Slurm's SLURM_ARRAY_TASK_ID (less
// SLURM_ARRAY_TASK_MIN) and SLURM_ARRAY_TASK_COUNT; "auto/N": I from JOB_COMPLETION_INDEX (a
// Kubernetes Indexed Job) or SLURM_ARRAY_TASK_ID. getenv is the environment's (a parameter,
// for tests). Throws InputError naming what is missing or wrong.
inline constexpr long kMaxShards = 100000;
Shard parse_shard(const std::string& spec, const std::function<const char*(const char*)>& getenv);

// The shard's submissions: the I-th of N contiguous blocks of SUBMISSIONS sorted by bytes,
// as even as they can be (sizes differ by one at most).
std::vector<std::string> shard_of(std::vector<std::string> submissions, Shard shard);

// What decides a grade, as one digest ("fnv1a64:" and 16 hex digits): the exercise, every
// case's name, seed and sizes, the run command, the limits and the points; with a roster, a
// digest of its variants (the secret and the students).
std::string grading_digest(const std::string& exercise, const std::vector<GradeCase>& cases, const GradeSettings& s, const std::string& variants = "");

// The part file a shard writes (JSON).
nlohmann::ordered_json part_json(const Gradebook& g, Shard shard, const std::string& digest, std::size_t class_size);

// The class's gradebook from its parts (file name, text), in shard order. Refused (InputError
// naming the file): a file that is no part, parts of different exercises or gradings or shard
// counts, a shard twice, a missing shard (named), a submission in two parts.
Gradebook merge_parts(const std::vector<std::pair<std::string, std::string>>& parts, Lang lang, bool show_hidden);

// The cases of a gradebook as a part carries them, and back.
nlohmann::ordered_json cases_json(const std::vector<GradeCase>& cases);

}  // namespace attnlab

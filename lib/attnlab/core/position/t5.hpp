// T5's bucketed relative position bias (Raffel et al. 2020, §2.1), as Hugging Face transformers'
// T5Attention._relative_position_bucket computes it (modeling_t5.py, v4.15.0; the same on main,
// from Mesh TensorFlow). The offset is j - i (key minus query). A bidirectional run (T5's
// encoder) gives each sign half of the N buckets; a causal one (the decoder) folds every later
// key into bucket 0. On each side the first max_exact = side / 2 buckets hold one distance each,
// and the rest are log-spaced up to max_distance; farther distances share the last bucket.
#pragma once

#include <array>
#include <string_view>
#include <utility>

namespace attnlab {

enum class T5Direction { bidirectional, causal };
constexpr auto enum_names(T5Direction)
{
    return std::array{std::pair{T5Direction::bidirectional, std::string_view("bidirectional")},
                      std::pair{T5Direction::causal, std::string_view("causal")}};
}

// The buckets one side has (N / 2 bidirectional, N causal), and how many of them are exact.
struct T5Side {
    long buckets = 0;    // on this side
    long max_exact = 0;  // distances 0 .. max_exact - 1 have a bucket each
    long base_of_later = 0;  // added to a later key's bucket (N / 2 bidirectional, 0 causal)
};
T5Side t5_side(T5Direction direction, long buckets);

// The bucket of offset j - i. The log bucket is computed in float32 as Hugging Face does
// (log of a float32 quotient, divided by log(D / max_exact) rounded to float32, times the log
// buckets, truncated), so boundary offsets land where theirs do. Needs max_exact >= 1 and
// max_distance > max_exact.
long t5_bucket(long offset, T5Direction direction, long buckets, long max_distance);

// The distance a bucket's side reads: |j - i| bidirectional, max(i - j, 0) causal.
long t5_distance(long offset, T5Direction direction);

// The real-valued position of distance n among the log buckets, x = log(n / e) / log(D / e)
// (S - e), in long double (e = max_exact, S the side's buckets): bucket e + floor(x).
long double t5_log_position(long distance, const T5Side& side, long max_distance);

}  // namespace attnlab

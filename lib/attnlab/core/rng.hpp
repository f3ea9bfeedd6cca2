// The project's own random numbers, so that a seed gives the same inputs on every platform
// and standard library (std::normal_distribution differs between libstdc++ and libc++).
//
// Algorithm, in full:
//   - PCG32 (O'Neill 2014, "pcg32_random_r", XSH-RR output on a 64-bit LCG with multiplier
//     6364136223846793005). Seeding as the reference pcg32_srandom_r: state = 0,
//     inc = 2*stream + 1, step, state += seed, step.
//   - uniform(): the top 24 bits of one output, times 2^-24: a multiple of 2^-24 in [0, 1).
//   - normal(): Irwin-Hall, the sum of 12 uniform() minus 6 (mean 0, variance 1, bounded
//     to [-6, 6)). Every term is a multiple of 2^-24 below 1, so the sum is exact in
//     double: no libm call and no rounding anywhere, hence bit-identical everywhere.
//   - below(n): Lemire's multiply-shift with rejection, unbiased.
//   - permutation(n): Fisher-Yates from the last index down, using below().
// Each tensor an experiment draws uses its own stream (the seed is shared), so adding a
// tensor to an experiment never changes the numbers of the others.
#pragma once

#include "attnlab/core/parallel.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace attnlab {

class Rng {
public:
    Rng(std::uint64_t seed, std::uint64_t stream);

    std::uint32_t next_u32();
    // Skips `steps` outputs in O(log steps) (pcg32_advance_r): the same state as that many
    // next_u32() calls.
    void advance(std::uint64_t steps);
    double uniform();
    double normal();
    // The next n normal() values, computed faster, with exactly the values and the final
    // state of n normal() calls: with AVX-512, 32 generators each sum one normal's 12 outputs
    // (blocks of 32 normals); otherwise four copies of the generator, each stepping four
    // outputs at a time (the LCG jumped by 4), interleave the one sequence.
    void normals(double* out, std::size_t n);
    std::uint32_t below(std::uint32_t n);
    std::vector<std::size_t> permutation(std::size_t n);

private:
    std::uint64_t state_ = 0;
    std::uint64_t inc_ = 1;
};

// A whole number drawn uniformly from [lo, hi] (below(hi - lo + 1) from lo).
inline long between(Rng& rng, long lo, long hi) { return lo + static_cast<long>(rng.below(static_cast<std::uint32_t>(hi - lo + 1))); }
// A divisor of n >= 1, each equally likely (a key-value head count for n query heads).
inline long divisor_of(Rng& rng, long n)
{
    std::vector<long> divisors;
    for (long k = 1; k <= n; ++k)
        if (n % k == 0) divisors.push_back(k);
    return divisors[rng.below(static_cast<std::uint32_t>(divisors.size()))];
}

// Fills n elements with seeded normals from one stream, times `scale` in double, converted to
// T: element i is the stream's normal number offset + i. Large fills are drawn in chunks on
// every core, each chunk's generator advanced to its first element, so the numbers are those
// of one sequential draw.
template <class T>
void fill_normal(T* data, std::size_t n, std::uint64_t seed, std::uint64_t stream, std::size_t offset = 0, double scale = 1.0)
{
    constexpr std::size_t chunk = std::size_t{1} << 16;
    parallel_for((n + chunk - 1) / chunk, n > chunk ? thread_count(0) : 1, [&](std::size_t c) {
        Rng rng(seed, stream);
        rng.advance(12 * (offset + c * chunk));  // 12 outputs per normal
        const std::size_t first = c * chunk, count = std::min(n, first + chunk) - first;
        if constexpr (std::is_same_v<T, double>) {
            rng.normals(data + first, count);
            if (scale != 1.0)
                for (std::size_t i = 0; i < count; ++i) data[first + i] *= scale;
        } else {
            std::vector<double> values(count);
            rng.normals(values.data(), count);
            for (std::size_t i = 0; i < count; ++i) data[first + i] = static_cast<T>(values[i] * scale);
        }
    });
}

// Stream numbers, one per kind of random input, fixed forever so seeds stay comparable.
namespace stream {
constexpr std::uint64_t x = 1, w_q = 2, w_k = 3, w_v = 4, q = 5, k = 6, v = 7, scores = 8,
                        perm = 9, x_kv = 10, perturb = 11, lengths = 12, pos_emb = 13, bucket_bias = 14,
                        rel_k = 15, rel_v = 16, hidden_cases = 17, d_out = 18, fd_direction = 19,
                        model_init = 20, train_data = 21, eval_data = 22;
// decode draws x, w_q, w_k and w_v on the streams attend uses.
}

}  // namespace attnlab

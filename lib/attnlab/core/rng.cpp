#include "attnlab/core/rng.hpp"

#include "attnlab/core/isa.hpp"

#include <stdexcept>

// The eight-lane normals need GCC's or Clang's x86 intrinsics and target attributes.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ATTNLAB_WIDE_NORMALS 1
// GCC 12 reports the headers' own _mm512_undefined_* placeholders as maybe uninitialized.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#define ATTNLAB_WIDE_NORMALS 0
#endif

namespace attnlab {

namespace {

constexpr std::uint64_t kMultiplier = 6364136223846793005ULL;

// XSH-RR: the output of one old state.
std::uint32_t output_of(std::uint64_t old)
{
    const auto xorshifted = static_cast<std::uint32_t>(((old >> 18u) ^ old) >> 27u);
    const auto rot = static_cast<std::uint32_t>(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((32u - rot) & 31u));
}

struct Stride {
    std::uint64_t mult, plus;
};

// `steps` steps of the LCG as one affine map, state * mult + plus: Brown, "Random number
// generation with arbitrary strides" (1994), as pcg32_advance_r.
Stride stride_of(std::uint64_t steps, std::uint64_t inc)
{
    std::uint64_t mult = kMultiplier, plus = inc;
    Stride acc{1, 0};
    for (; steps > 0; steps >>= 1u) {
        if (steps & 1u) {
            acc.mult *= mult;
            acc.plus = acc.plus * mult + plus;
        }
        plus = (mult + 1) * plus;
        mult *= mult;
    }
    return acc;
}

#if ATTNLAB_WIDE_NORMALS
// Blocks of 32 normals, one per lane of four vectors of eight generators: lane j of vector v
// starts at output 12 (8 v + j) of the block and steps one output at a time, so each lane sums
// its own normal's 12 outputs; then every lane jumps 372 outputs to its place in the next
// block (four vectors, so that four multiplications are in flight). The sums are the scalar
// code's (integers below 2^28) and sum * 2^-24 is exact: the values are the same bits.
// Returns the state after `blocks` blocks of 384 outputs.
__attribute__((target("avx512f,avx512dq,avx512vl"))) std::uint64_t normals_x32(std::uint64_t state, std::uint64_t inc, double* out,
                                                                             std::size_t blocks)
{
    constexpr int V = 4;
    alignas(64) std::uint64_t start[8 * V];
    const Stride twelve = stride_of(12, inc), jump = stride_of(12 * 8 * V - 12, inc);
    for (auto& lane : start) lane = state, state = state * twelve.mult + twelve.plus;
    __m512i s[V];
    for (int v = 0; v < V; ++v) s[v] = _mm512_load_si512(start + 8 * v);
    const __m512i m1 = _mm512_set1_epi64(static_cast<long long>(kMultiplier)), c1 = _mm512_set1_epi64(static_cast<long long>(inc));
    const __m512i mj = _mm512_set1_epi64(static_cast<long long>(jump.mult)), cj = _mm512_set1_epi64(static_cast<long long>(jump.plus));
    const __m512d unit = _mm512_set1_pd(1.0 / 16777216.0), six = _mm512_set1_pd(6.0);
    for (std::size_t blk = 0; blk < blocks; ++blk) {
        __m256i sum[V];
        for (auto& one : sum) one = _mm256_setzero_si256();
        for (int t = 0; t < 12; ++t)
            for (int v = 0; v < V; ++v) {
                const __m256i xorshifted = _mm512_cvtepi64_epi32(_mm512_srli_epi64(_mm512_xor_si512(_mm512_srli_epi64(s[v], 18), s[v]), 27));
                const __m256i rot = _mm512_cvtepi64_epi32(_mm512_srli_epi64(s[v], 59));
                sum[v] = _mm256_add_epi32(sum[v], _mm256_srli_epi32(_mm256_rorv_epi32(xorshifted, rot), 8));
                s[v] = _mm512_add_epi64(_mm512_mullo_epi64(s[v], m1), c1);
            }
        for (int v = 0; v < V; ++v) {
            s[v] = _mm512_add_epi64(_mm512_mullo_epi64(s[v], mj), cj);
            _mm512_storeu_pd(out + 8 * (V * blk + v), _mm512_sub_pd(_mm512_mul_pd(_mm512_cvtepi32_pd(sum[v]), unit), six));
        }
    }
    _mm512_store_si512(start, s[0]);
    return start[0];
}

// The eight-lane body when the kernels' target (isa.hpp) is avx512 and the CPU has the
// extensions it also needs.
bool has_avx512()
{
    static const bool cpu = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    return cpu && active_isa() == Isa::avx512;
}
#endif

}  // namespace

Rng::Rng(std::uint64_t seed, std::uint64_t stream) : state_(0), inc_((stream << 1u) | 1u)
{
    next_u32();
    state_ += seed;
    next_u32();
}

std::uint32_t Rng::next_u32()
{
    const std::uint64_t old = state_;
    state_ = old * kMultiplier + inc_;
    return output_of(old);
}

void Rng::advance(std::uint64_t steps)
{
    const Stride st = stride_of(steps, inc_);
    state_ = st.mult * state_ + st.plus;
}

double Rng::uniform()
{
    return static_cast<double>(next_u32() >> 8u) * (1.0 / 16777216.0);
}

double Rng::normal()
{
    double sum = 0.0;
    for (int i = 0; i < 12; ++i) sum += uniform();
    return sum - 6.0;
}


void Rng::normals(double* out, std::size_t n)
{
#if ATTNLAB_WIDE_NORMALS
    if (n >= 32 && has_avx512()) {
        state_ = normals_x32(state_, inc_, out, n / 32);
        out += n / 32 * 32;
        n %= 32;
    }
#endif
    // Lane i holds the state of output base + i; four steps are state * m4 + c4.
    const std::uint64_t m4 = kMultiplier * kMultiplier * kMultiplier * kMultiplier;
    const std::uint64_t c4 = ((inc_ * kMultiplier + inc_) * kMultiplier + inc_) * kMultiplier + inc_;
    std::uint64_t lane[4] = {state_, 0, 0, 0};
    for (int i = 1; i < 4; ++i) lane[i] = lane[i - 1] * kMultiplier + inc_;
    for (std::size_t k = 0; k < n; ++k) {
        std::uint32_t sum = 0;  // 12 values below 2^24: exact, as the double sum of normal()
        for (int round = 0; round < 3; ++round)
            for (auto& s : lane) {
                sum += output_of(s) >> 8u;
                s = s * m4 + c4;
            }
        out[k] = static_cast<double>(sum) * (1.0 / 16777216.0) - 6.0;
    }
    state_ = lane[0];
}

std::uint32_t Rng::below(std::uint32_t n)
{
    if (n == 0) throw std::invalid_argument("Rng::below(0)");
    // Lemire, "Fast random integer generation in an interval" (2019), algorithm 5.
    std::uint64_t m = std::uint64_t{next_u32()} * n;
    auto low = static_cast<std::uint32_t>(m);
    if (low < n) {
        const std::uint32_t threshold = (0u - n) % n;
        while (low < threshold) {
            m = std::uint64_t{next_u32()} * n;
            low = static_cast<std::uint32_t>(m);
        }
    }
    return static_cast<std::uint32_t>(m >> 32u);
}

std::vector<std::size_t> Rng::permutation(std::size_t n)
{
    std::vector<std::size_t> p(n);
    for (std::size_t i = 0; i < n; ++i) p[i] = i;
    for (std::size_t i = n; i > 1; --i) {
        const std::size_t j = below(static_cast<std::uint32_t>(i));
        std::swap(p[i - 1], p[j]);
    }
    return p;
}

}  // namespace attnlab

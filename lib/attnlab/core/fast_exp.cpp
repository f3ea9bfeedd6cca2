#include "attnlab/core/fast_exp.hpp"

#include "attnlab/core/isa_targets.hpp"

#include <cstdint>
#include <cstring>
#include <iterator>
#include <type_traits>

#include <immintrin.h>

namespace attnlab {

namespace {

// 2^n from the bits of `rounded` = n + 1.5 * 2^p (p = 23 or 52), whose last mantissa bits hold
// n: shifted up to the exponent field, the constant's bits fall off the top and n + bias stays.
// No float-to-integer conversion, so a NaN (whose p is NaN, and so its result) needs no care.
__attribute__((always_inline)) inline float pow2_of_rounded(float rounded)
{
    std::uint32_t bits;
    std::memcpy(&bits, &rounded, sizeof bits);
    bits = (bits + 127u) << 23;
    float out;
    std::memcpy(&out, &bits, sizeof out);
    return out;
}

__attribute__((always_inline)) inline double pow2_of_rounded(double rounded)
{
    std::uint64_t bits;
    std::memcpy(&bits, &rounded, sizeof bits);
    bits = (bits + 1023u) << 52;
    double out;
    std::memcpy(&out, &bits, sizeof out);
    return out;
}

// float32's constants, shared by exp_one and its AVX-512 row step.
namespace f32 {
constexpr float log2e = 1.44269504088896341f, ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
constexpr float magic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to a whole number
// Below -88 (-inf too), x is taken as -88, whose n = -127 gives 2^n's exponent field 0: the
// result is exactly 0 from there up to -87.68, the smallest x with n = -126. A NaN stays.
constexpr float floor = -88.0f;
// 1 + r + r^2 q(r), q of degree 4 fitted to the relative error of exp on [-ln2/2, ln2/2]
// (near-minimax, 3.1e-9 with exact coefficients; these are rounded to float), by Horner's
// rule from the highest power.
constexpr float poly[] = {1.381461276e-3f, 8.368710056e-3f, 4.166838899e-2f, 1.666652113e-1f, 4.999999404e-1f, 1.0f, 1.0f};
}  // namespace f32

// The reduction and the polynomial for one element; x <= 0 or NaN. Every helper is
// inlined into each target's copy below (isa_targets.hpp), so that each is compiled for its
// instruction set.
__attribute__((always_inline)) inline float exp_one(float x)
{
    const float xc = f32::floor > x ? f32::floor : x;
    const float rounded = xc * f32::log2e + f32::magic;
    const float n = rounded - f32::magic;
    const float r = (xc - n * f32::ln2_hi) - n * f32::ln2_lo;
    float p = f32::poly[0];
    for (std::size_t i = 1; i < std::size(f32::poly); ++i) p = p * r + f32::poly[i];
    return p * pow2_of_rounded(rounded);
}

__attribute__((always_inline)) inline double exp_one(double x)
{
    constexpr double log2e = 1.4426950408889634, ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    constexpr double lo = -708.0, magic = 6755399441055744.0;  // 1.5 * 2^52
    const bool under = x < lo;
    const double xc = under ? 0.0 : x;
    const double rounded = xc * log2e + magic;
    const double n = rounded - magic;
    const double r = (xc - n * ln2_hi) - n * ln2_lo;
    constexpr double c[] = {1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0,
                            1.0 / 120.0,       1.0 / 24.0,       1.0 / 6.0,       0.5,            1.0,           1.0};
    double p = c[0];
    for (int k = 1; k < 13; ++k) p = p * r + c[k];
    const double y = p * pow2_of_rounded(rounded);
    return under ? 0.0 : y;
}

// A vector of the target's width (isa.hpp) in the compiler's vector extension: 64 bytes for
// avx512, 32 for avx2, 16 for sse4; the scalar target's "vector" is one element. Sixteen
// lanes are 16 / Width<I, T> of them side by side: lane u is element u of every block of 16,
// whatever the width, so every target sums the same elements in the same order. A vector
// wider than the target's registers is split by the compiler element by element: the avx2
// copy of a 64-byte max ran as 16 scalar vmaxss, 11 % of the kernel's time.
template <class T, std::size_t Bytes>
struct VecOf {
    typedef T type __attribute__((vector_size(Bytes)));
};
template <Isa I>
constexpr std::size_t kVectorBytes = I == Isa::avx512 ? 64 : I == Isa::avx2 ? 32 : 16;
template <Isa I, class T>
using Vec = typename VecOf<T, kVectorBytes<I>>::type;
template <Isa I, class T>
constexpr std::size_t kWidth = I == Isa::scalar ? 1 : kVectorBytes<I> / sizeof(T);
constexpr std::size_t kLanes = 16;

// exp_one on a vector: the same operations in the same order (so the same fused pairs), lane
// by lane. The float form only: its row step is the kernel's.
template <class V>
__attribute__((always_inline)) inline V exp_lanes(V x)
{
    typedef unsigned int VI __attribute__((vector_size(sizeof(V))));
    const V floor = V{} + f32::floor;
    const V xc = floor > x ? floor : x;
    const V rounded = xc * f32::log2e + f32::magic;
    const V n = rounded - f32::magic;
    const V r = (xc - n * f32::ln2_hi) - n * f32::ln2_lo;
    V p = V{} + f32::poly[0];
    for (std::size_t i = 1; i < std::size(f32::poly); ++i) p = p * r + f32::poly[i];
    const VI bits = ((VI)rounded + 127u) << 23;  // pow2_of_rounded, lane by lane
    return p * (V)bits;
}

// The largest of start and x[0..n), sixteen running maxima.
template <Isa I, class T>
__attribute__((always_inline)) inline T lanes_max(const T* x, std::size_t n, T start)
{
    T part[kLanes];
    for (std::size_t u = 0; u < kLanes; ++u) part[u] = start;
    std::size_t c = 0;
    if constexpr (I == Isa::scalar) {
        for (; c + kLanes <= n; c += kLanes)
            for (std::size_t u = 0; u < kLanes; ++u) part[u] = x[c + u] > part[u] ? x[c + u] : part[u];
    } else {
        using V = Vec<I, T>;
        constexpr std::size_t P = kLanes / kWidth<I, T>;
        V vpart[P];
        std::memcpy(vpart, part, sizeof vpart);
        for (; c + kLanes <= n; c += kLanes)
            for (std::size_t q = 0; q < P; ++q) {
                V v;
                std::memcpy(&v, x + c + q * kWidth<I, T>, sizeof v);
                vpart[q] = v > vpart[q] ? v : vpart[q];
            }
        std::memcpy(part, vpart, sizeof part);
    }
    T best = start;
    for (std::size_t u = 0; u < kLanes; ++u) best = part[u] > best ? part[u] : best;
    for (; c < n; ++c) best = x[c] > best ? x[c] : best;
    return best;
}

// The end of a row step, shared by both of its bodies so that their sums agree bit for bit:
// exp of the elements from `at` on, one at a time, then the sum of the sixteen lanes' sums in
// order, plus the tail's.
template <class T>
__attribute__((always_inline)) inline T finish_exp_sum(T* x, std::size_t at, std::size_t n, T shift, const T* lanes)
{
    T tail = 0;
    for (; at < n; ++at) {
        x[at] = exp_one(x[at] - shift);
        tail += x[at];
    }
    T sum = 0;
    for (std::size_t u = 0; u < 16; ++u) sum += lanes[u];
    return sum + tail;
}

// Sixteen running sums in a fixed order, whatever the vector width: float on the target's
// vectors (exp_lanes), double one element at a time.
template <Isa I, class T>
__attribute__((always_inline)) inline T lanes_exp_sum(T* x, std::size_t n, T shift)
{
    T lanes[kLanes] = {};
    std::size_t c = 0;
    if constexpr (I == Isa::scalar || !std::is_same_v<T, float>) {
        for (; c + kLanes <= n; c += kLanes)
            for (std::size_t u = 0; u < kLanes; ++u) {
                x[c + u] = exp_one(x[c + u] - shift);
                lanes[u] += x[c + u];
            }
    } else {
        using V = Vec<I, T>;
        constexpr std::size_t W = kWidth<I, T>, P = kLanes / W;
        V part[P] = {};
        for (; c + kLanes <= n; c += kLanes)
            for (std::size_t q = 0; q < P; ++q) {
                V v;
                std::memcpy(&v, x + c + q * W, sizeof v);
                v = exp_lanes(v - shift);
                std::memcpy(x + c + q * W, &v, sizeof v);
                part[q] += v;
            }
        std::memcpy(lanes, part, sizeof lanes);
    }
    return finish_exp_sum(x, c, n, shift, lanes);
}

// lo > x ? lo : x in each lane, NaN kept: one vmaxps, written in asm because GCC turns the
// intrinsic back into a compare and a mask.
__attribute__((target("avx512f"), always_inline)) inline __m512 clamp_below(__m512 x, __m512 lo)
{
    __m512 out;
    asm("vmaxps %1, %2, %0" : "=v"(out) : "v"(x), "v"(lo));
    return out;
}

// lanes_exp_sum<float> for AVX-512, in intrinsics so that exp_one's clamp is one vmaxps: GCC
// vectorises that clamp into a compare and a mask on every later step, and the loop took
// 0.168 ns per element on rows of 512 instead of 0.144. The same operations in the same
// order as the avx512 and avx2 copies of exp_one (-ffp-contract=fast fuses the same pairs),
// and the same sixteen-lane sum: the same bits, which a test holds.
__attribute__((target("avx512f"))) float exp_sum_avx512(float* x, std::size_t n, float shift)
{
    const __m512 lo = _mm512_set1_ps(f32::floor), by = _mm512_set1_ps(shift), magic = _mm512_set1_ps(f32::magic);
    const __m512 log2e = _mm512_set1_ps(f32::log2e), ln2_hi = _mm512_set1_ps(f32::ln2_hi), ln2_lo = _mm512_set1_ps(f32::ln2_lo);
    __m512 part = _mm512_setzero_ps();
    std::size_t at = 0;
    for (; at + 16 <= n; at += 16) {
        const __m512 xc = clamp_below(_mm512_sub_ps(_mm512_loadu_ps(x + at), by), lo);
        const __m512 rounded = _mm512_fmadd_ps(xc, log2e, magic), k = _mm512_sub_ps(rounded, magic);
        const __m512 r = _mm512_fnmadd_ps(k, ln2_lo, _mm512_fnmadd_ps(k, ln2_hi, xc));
        __m512 p = _mm512_set1_ps(f32::poly[0]);
        for (std::size_t i = 1; i < std::size(f32::poly); ++i) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(f32::poly[i]));
        // 2^n as pow2_of_rounded builds it: (the bits of rounded + 127) << 23, lane by lane.
        const __m512i bits = (__m512i)(((__v16su)_mm512_castps_si512(rounded) + 127u) << 23);
        const __m512 e = _mm512_mul_ps(p, _mm512_castsi512_ps(bits));
        _mm512_storeu_ps(x + at, e);
        part = _mm512_add_ps(part, e);
    }
    float lanes[16];
    _mm512_storeu_ps(lanes, part);
    return finish_exp_sum(x, at, n, shift, lanes);
}

// The row steps, one struct each, compiled for every target (isa_targets.hpp); the
// element-wise ones are loops the compiler vectorises for each.
struct RowMax {
    template <Isa I, class T>
    __attribute__((always_inline)) static T run(const T* x, std::size_t n, T start)
    {
        return lanes_max<I>(x, n, start);
    }
};
struct ExpSum {
    template <Isa I, class T>
    __attribute__((always_inline)) static T run(T* x, std::size_t n, T shift)
    {
        return lanes_exp_sum<I>(x, n, shift);
    }
};
struct Scale {
    template <Isa I, class T>
    __attribute__((always_inline)) static void run(T* x, std::size_t n, T by)
    {
        for (std::size_t i = 0; i < n; ++i) x[i] *= by;
    }
};
struct Divide {
    template <Isa I, class T>
    __attribute__((always_inline)) static void run(T* out, const T* x, std::size_t n, T by)
    {
        for (std::size_t i = 0; i < n; ++i) out[i] = x[i] / by;
    }
};
struct Exp {
    template <Isa I, class T>
    __attribute__((always_inline)) static void run(T* x, std::size_t n)
    {
        for (std::size_t i = 0; i < n; ++i) x[i] = exp_one(x[i]);
    }
};

}  // namespace

float row_max(const float* x, std::size_t n, float start) { return targets::run<RowMax>(x, n, start); }
double row_max(const double* x, std::size_t n, double start) { return targets::run<RowMax>(x, n, start); }
float exp_shifted_sum(float* x, std::size_t n, float shift)
{
    const Isa isa = active_isa();
    return isa == Isa::avx512 ? exp_sum_avx512(x, n, shift) : targets::run_on<ExpSum>(isa, x, n, shift);
}
double exp_shifted_sum(double* x, std::size_t n, double shift) { return targets::run<ExpSum>(x, n, shift); }
void scale_inplace(float* x, std::size_t n, float by) { targets::run<Scale>(x, n, by); }
void scale_inplace(double* x, std::size_t n, double by) { targets::run<Scale>(x, n, by); }
void divide_into(float* out, const float* x, std::size_t n, float by) { targets::run<Divide>(out, x, n, by); }
void divide_into(double* out, const double* x, std::size_t n, double by) { targets::run<Divide>(out, x, n, by); }
void exp_inplace(float* x, std::size_t n) { targets::run<Exp>(x, n); }
void exp_inplace(double* x, std::size_t n) { targets::run<Exp>(x, n); }

}  // namespace attnlab

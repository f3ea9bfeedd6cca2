#include "attnlab/core/microkernel.hpp"

#include "attnlab/core/isa_targets.hpp"

#include <cstring>

namespace attnlab {

namespace {

// Sixteen floats: one AVX-512 register, two AVX2 ones; unaligned loads and stores.
typedef float v16 __attribute__((vector_size(64), aligned(4)));

template <class V = v16>
__attribute__((always_inline)) inline V load(const float* p)
{
    V v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

template <class V>
__attribute__((always_inline)) inline void store(float* p, V v)
{
    std::memcpy(p, &v, sizeof v);
}

// R rows of C, NV vectors of V wide, starting at C's column 0: R NV accumulators, each vector
// of a B row loaded once for all R rows. Each element is summed over k in order, one
// multiply-add each, whatever R, NV or V: every tile gives the same bits.
template <class V, int R, int NV>
__attribute__((always_inline)) inline void rows(std::size_t k, const float* A, std::size_t lda, const float* B, std::size_t ldb, float* C,
                                                std::size_t ldc, bool accumulate)
{
    constexpr std::size_t W = sizeof(V) / sizeof(float);
    V acc[R][NV];
    for (int i = 0; i < R; ++i)
        for (int q = 0; q < NV; ++q) acc[i][q] = accumulate ? load<V>(C + i * ldc + W * q) : V{};
    for (std::size_t j = 0; j < k; ++j) {
        V b[NV];
        for (int q = 0; q < NV; ++q) b[q] = load<V>(B + j * ldb + W * q);
        for (int i = 0; i < R; ++i) {
            const float a = A[i * lda + j];
            for (int q = 0; q < NV; ++q) acc[i][q] += a * b[q];
        }
    }
    for (int i = 0; i < R; ++i)
        for (int q = 0; q < NV; ++q) store(C + i * ldc + W * q, acc[i][q]);
}

// The panel in stripes of NV vectors of V (the whole 64 columns when they fit the registers),
// six rows at a time, then four, two and one.
template <class V, int NV>
__attribute__((always_inline)) inline void panel_in_stripes(std::size_t n, std::size_t k, const float* A, std::size_t lda, const float* B,
                                                            std::size_t ldb, float* C, std::size_t ldc, bool accumulate)
{
    constexpr std::size_t S = NV * sizeof(V) / sizeof(float);
    static_assert(kPanelWidth % S == 0, "a stripe divides the panel");
    for (std::size_t c0 = 0; c0 < kPanelWidth; c0 += S) {
        const float* b = B + c0;
        float* c = C + c0;
        std::size_t r = 0;
        for (; r + 6 <= n; r += 6) rows<V, 6, NV>(k, A + r * lda, lda, b, ldb, c + r * ldc, ldc, accumulate);
        if (r + 4 <= n) rows<V, 4, NV>(k, A + r * lda, lda, b, ldb, c + r * ldc, ldc, accumulate), r += 4;
        if (r + 2 <= n) rows<V, 2, NV>(k, A + r * lda, lda, b, ldb, c + r * ldc, ldc, accumulate), r += 2;
        if (r < n) rows<V, 1, NV>(k, A + r * lda, lda, b, ldb, c + r * ldc, ldc, accumulate);
    }
}

typedef float v8 __attribute__((vector_size(32), aligned(4)));
typedef float v4 __attribute__((vector_size(16), aligned(4)));

// One body per target, each tile sized to its registers (six rows of NV vectors, plus the B
// vectors and a broadcast, within the register file):
// - avx512 (32 registers of 16): six rows of the whole 64 columns, 24 accumulators;
// - avx2 with FMA (16 of 8): six rows of 16 columns, 12 accumulators. Compiled from the
//   AVX-512 tile, a row of 64 columns is eight registers, the six rows' 48 spill to memory:
//   that body ran at 4.5-5.2 GFLOP/s, this one at 105-114, the AVX-512 one at 214-221
//   (rows 384, k 64, one thread, on an AMD EPYC with AVX-512, each body chosen by hand). With
//   FMA its bits are the AVX-512 body's (a test holds them equal);
// - sse4 (16 SSE registers of 4, no FMA): six rows of 8 columns;
// - scalar: six rows of 2 columns, one float each; the bits of sse4 (the same sums, unfused).
struct PanelBody {
    template <Isa I>
    __attribute__((always_inline)) static void run(std::size_t n, std::size_t k, const float* A, std::size_t lda, const float* B,
                                                   std::size_t ldb, float* C, std::size_t ldc, bool accumulate)
    {
        if constexpr (I == Isa::avx512)
            panel_in_stripes<v16, 4>(n, k, A, lda, B, ldb, C, ldc, accumulate);
        else if constexpr (I == Isa::avx2)
            panel_in_stripes<v8, 2>(n, k, A, lda, B, ldb, C, ldc, accumulate);
        else if constexpr (I == Isa::sse4)
            panel_in_stripes<v4, 2>(n, k, A, lda, B, ldb, C, ldc, accumulate);
        else
            panel_in_stripes<float, 2>(n, k, A, lda, B, ldb, C, ldc, accumulate);
    }
};

// One round of the transposition: rows i and i + B exchange the lanes whose bit B differs
// from the row's, so after the rounds B = 1, 2, 4, 8 element (i, j) has moved to (j, i).
#define ATTNLAB_LO(B, j) (((j) & (B)) ? 16 + (j) - (B) : (j))
#define ATTNLAB_HI(B, j) (((j) & (B)) ? 16 + (j) : (j) + (B))
#define ATTNLAB_LANES(M, B)                                                                                                     \
    M(B, 0), M(B, 1), M(B, 2), M(B, 3), M(B, 4), M(B, 5), M(B, 6), M(B, 7), M(B, 8), M(B, 9), M(B, 10), M(B, 11), M(B, 12), \
        M(B, 13), M(B, 14), M(B, 15)

template <int B>
__attribute__((always_inline)) inline void exchange(v16* r)
{
    for (int i = 0; i < 16; ++i) {
        if (i & B) continue;
        const v16 a = r[i], c = r[i + B];
        r[i] = __builtin_shufflevector(a, c, ATTNLAB_LANES(ATTNLAB_LO, B));
        r[i + B] = __builtin_shufflevector(a, c, ATTNLAB_LANES(ATTNLAB_HI, B));
    }
}

__attribute__((always_inline)) inline void transpose_in_registers(std::size_t nk, std::size_t d, float scale, const float* k, float* kt)
{
    for (std::size_t j0 = 0; j0 < nk; j0 += 16)
        for (std::size_t c0 = 0; c0 < d; c0 += 16) {
            v16 r[16];
            for (std::size_t i = 0; i < 16; ++i) r[i] = load(k + (j0 + i) * d + c0);
            exchange<1>(r);
            exchange<2>(r);
            exchange<4>(r);
            exchange<8>(r);
            float* panel = kt + j0 / kPanelWidth * d * kPanelWidth + j0 % kPanelWidth;
            for (std::size_t i = 0; i < 16; ++i) store(panel + (c0 + i) * kPanelWidth, scale * r[i]);
        }
}

__attribute__((always_inline)) inline void transpose_plain(std::size_t nk, std::size_t d, float scale, const float* k, float* kt)
{
    for (std::size_t j = 0; j < nk; ++j) {
        float* panel = kt + j / kPanelWidth * d * kPanelWidth;
        for (std::size_t c = 0; c < d; ++c) panel[c * kPanelWidth + j % kPanelWidth] = scale * k[j * d + c];
    }
}

// The vector targets transpose in registers, scalar element by element: one product each, the
// same bits.
struct TransposeBody {
    template <Isa I>
    __attribute__((always_inline)) static void run(std::size_t nk, std::size_t d, float scale, const float* k, float* kt)
    {
        if constexpr (I == Isa::scalar)
            transpose_plain(nk, d, scale, k, kt);
        else
            transpose_in_registers(nk, d, scale, k, kt);
    }
};

}  // namespace

void transpose_scaled(std::size_t nk, std::size_t d, float scale, const float* k, float* kt)
{
    targets::run<TransposeBody>(nk, d, scale, k, kt);
}

void transpose_scaled_reference(std::size_t nk, std::size_t d, float scale, const float* k, float* kt)
{
    transpose_plain(nk, d, scale, k, kt);
}

// Compiled with -ffp-contract=fast (CMakeLists.txt): acc += a * b is one fused multiply-add
// in the avx512 and avx2 bodies, a multiply and an add in the others.
void panel64_on(Isa isa, std::size_t n, std::size_t k, const float* A, std::size_t lda, const float* B, std::size_t ldb, float* C,
                std::size_t ldc, bool accumulate)
{
    targets::run_on<PanelBody>(isa, n, k, A, lda, B, ldb, C, ldc, accumulate);
}

void panel64(std::size_t n, std::size_t k, const float* A, std::size_t lda, const float* B, std::size_t ldb, float* C, std::size_t ldc,
             bool accumulate)
{
    targets::run<PanelBody>(n, k, A, lda, B, ldb, C, ldc, accumulate);
}

void panel64_reference(std::size_t n, std::size_t k, const float* A, std::size_t lda, const float* B, std::size_t ldb, float* C,
                       std::size_t ldc, bool accumulate)
{
    for (std::size_t r = 0; r < n; ++r)
        for (std::size_t c = 0; c < kPanelWidth; ++c) {
            double sum = accumulate ? C[r * ldc + c] : 0.0;
            for (std::size_t j = 0; j < k; ++j) sum += static_cast<double>(A[r * lda + j]) * B[j * ldb + c];
            C[r * ldc + c] = static_cast<float>(sum);
        }
}

}  // namespace attnlab

#include "attnlab/core/microkernel.hpp"

#include <cstring>

namespace attnlab {

namespace {

// Sixteen floats: one AVX-512 register, two AVX2 ones; unaligned loads and stores.
typedef float v16 __attribute__((vector_size(64), aligned(4)));

__attribute__((always_inline)) inline v16 load(const float* p)
{
    v16 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

__attribute__((always_inline)) inline void store(float* p, v16 v) { std::memcpy(p, &v, sizeof v); }

// R rows of C: 4 R accumulators, each B row loaded once for all of them.
template <int R>
__attribute__((always_inline)) inline void rows(std::size_t k, const float* A, std::size_t lda, const float* B, std::size_t ldb, float* C,
                                                std::size_t ldc, bool accumulate)
{
    v16 acc[R][4];
    for (int i = 0; i < R; ++i)
        for (int q = 0; q < 4; ++q) acc[i][q] = accumulate ? load(C + i * ldc + 16 * q) : v16{};
    for (std::size_t j = 0; j < k; ++j) {
        const float* b = B + j * ldb;
        const v16 b0 = load(b), b1 = load(b + 16), b2 = load(b + 32), b3 = load(b + 48);
        for (int i = 0; i < R; ++i) {
            const float a = A[i * lda + j];
            acc[i][0] += a * b0;
            acc[i][1] += a * b1;
            acc[i][2] += a * b2;
            acc[i][3] += a * b3;
        }
    }
    for (int i = 0; i < R; ++i)
        for (int q = 0; q < 4; ++q) store(C + i * ldc + 16 * q, acc[i][q]);
}

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

}  // namespace

__attribute__((target_clones("avx512f", "avx2", "default"))) void transpose_scaled(std::size_t nk, std::size_t d, float scale,
                                                                                   const float* k, float* kt)
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

void transpose_scaled_reference(std::size_t nk, std::size_t d, float scale, const float* k, float* kt)
{
    for (std::size_t j = 0; j < nk; ++j) {
        float* panel = kt + j / kPanelWidth * d * kPanelWidth;
        for (std::size_t c = 0; c < d; ++c) panel[c * kPanelWidth + j % kPanelWidth] = scale * k[j * d + c];
    }
}

// Compiled with -ffp-contract=fast (CMakeLists.txt): acc += a * b is one fused multiply-add
// in the AVX-512 and AVX2 clones, a multiply and an add in the default one.
__attribute__((target_clones("avx512f", "avx2", "default"))) void panel64(std::size_t n, std::size_t k, const float* A, std::size_t lda,
                                                                          const float* B, std::size_t ldb, float* C, std::size_t ldc,
                                                                          bool accumulate)
{
    std::size_t r = 0;
    for (; r + 6 <= n; r += 6) rows<6>(k, A + r * lda, lda, B, ldb, C + r * ldc, ldc, accumulate);
    if (r + 4 <= n) rows<4>(k, A + r * lda, lda, B, ldb, C + r * ldc, ldc, accumulate), r += 4;
    if (r + 2 <= n) rows<2>(k, A + r * lda, lda, B, ldb, C + r * ldc, ldc, accumulate), r += 2;
    if (r < n) rows<1>(k, A + r * lda, lda, B, ldb, C + r * ldc, ldc, accumulate);
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

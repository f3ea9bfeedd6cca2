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

}  // namespace

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

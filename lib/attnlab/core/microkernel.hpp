// The kernel's own float32 product, one panel of 64 columns: C [n, 64] (+)= A [n, k] B [k, 64]
// (q k^T on 64 keys; p v on 64 of a head's 64, 128, ... dimensions), row-major with row
// strides, no packing. It reads A where the kernel wrote it (the exp'd
// scores, a query block) and B's rows in place (a value block, a transposed key block), which
// OpenBLAS would copy first; it keeps six rows of C (or of a stripe of C: one body per
// target of isa.hpp, each tile sized to its registers) in registers and streams B row by row.
// Each row of C is accumulated in the same order (over k, one fused multiply-add per element)
// wherever it sits in a panel, so its bits do not depend on n or on which rows are computed.
// panel64_reference is the plain loop the tests hold it to.
#pragma once

#include "attnlab/core/isa.hpp"

#include <cstddef>

namespace attnlab {

constexpr std::size_t kPanelWidth = 64;

void panel64(std::size_t n, std::size_t k, const float* A, std::size_t lda, const float* B, std::size_t ldb, float* C, std::size_t ldc,
             bool accumulate);
void panel64_reference(std::size_t n, std::size_t k, const float* A, std::size_t lda, const float* B, std::size_t ldb, float* C,
                       std::size_t ldc, bool accumulate);

// panel64's body for a given target (isa.hpp), which the CPU must have; panel64 runs the
// active one. The tests run each.
void panel64_on(Isa isa, std::size_t n, std::size_t k, const float* A, std::size_t lda, const float* B, std::size_t ldb, float* C,
                std::size_t ldc, bool accumulate);

// kt = scale * the transpose of k [nk, d] (row stride d), in panels of 64 keys: panel p is
// [d, 64] (row stride 64) at kt + 64 d p, and holds keys [64 p, 64 p + 64); nk is a whole
// multiple of 64 and d of 16. Sixteen rows of 16 keys are transposed in registers (four rounds
// of two-source shuffles), then scaled, so every product is the same float as the plain loop's.
// A panel is one contiguous block (16 KB at d = 64), the B that panel64 reads again for every
// six rows: in [d, nk] with its 2 KB rows, it fell into 8 of L1's 64 sets and was read from L2
// each time (the kernel took 0.0253-0.0260 s instead of 0.0238-0.0248 s at causal L = 2048,
// d = 64, one thread).
void transpose_scaled(std::size_t nk, std::size_t d, float scale, const float* k, float* kt);
void transpose_scaled_reference(std::size_t nk, std::size_t d, float scale, const float* k, float* kt);

}  // namespace attnlab

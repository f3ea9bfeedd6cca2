// The kernel's own float32 product, one panel of 64 columns: C [n, 64] (+)= A [n, k] B [k, 64]
// (q k^T on 64 keys; p v on 64 of a head's 64, 128, ... dimensions), row-major with row
// strides, no packing. It reads A where the kernel wrote it (the exp'd
// scores, a query block) and B's rows in place (a value block, a transposed key block), which
// OpenBLAS would copy first; it keeps six rows of C in registers and streams B row by row.
// Each row of C is accumulated in the same order (over k, one fused multiply-add per element)
// wherever it sits in a panel, so its bits do not depend on n or on which rows are computed.
// panel64_reference is the plain loop the tests hold it to.
#pragma once

#include <cstddef>

namespace attnlab {

constexpr std::size_t kPanelWidth = 64;

void panel64(std::size_t n, std::size_t k, const float* A, std::size_t lda, const float* B, std::size_t ldb, float* C, std::size_t ldc,
             bool accumulate);
void panel64_reference(std::size_t n, std::size_t k, const float* A, std::size_t lda, const float* B, std::size_t ldb, float* C,
                       std::size_t ldc, bool accumulate);

// kt [d, nk] (row stride nk) = scale * the transpose of k [nk, d] (row stride d), for nk and d
// whole multiples of 16: sixteen rows of 16 keys are transposed in registers (four rounds of
// two-source shuffles), then scaled, so every product is the same float as the plain loop's.
void transpose_scaled(std::size_t nk, std::size_t d, float scale, const float* k, float* kt);
void transpose_scaled_reference(std::size_t nk, std::size_t d, float scale, const float* k, float* kt);

}  // namespace attnlab

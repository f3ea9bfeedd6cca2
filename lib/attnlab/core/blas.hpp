// The matrix products of the fast kernels, through OpenBLAS (Debian's libopenblas), called
// single-threaded: attnlab splits the work over its own threads, so that each product's shape
// and therefore its rounding do not depend on how many threads run.
#pragma once

#include <cstddef>

#include <string>

namespace attnlab::blas {

// The OpenBLAS kernels in use ("SkylakeX", "Haswell", ...).
std::string kernel_name();

// C [M, N] = alpha A [M, K] B^T (B is [N, K]) + beta C; row-major with leading dimensions.
void gemm_nt(std::size_t M, std::size_t N, std::size_t K, float alpha, const float* A, std::size_t lda, const float* B,
             std::size_t ldb, float beta, float* C, std::size_t ldc);
void gemm_nt(std::size_t M, std::size_t N, std::size_t K, double alpha, const double* A, std::size_t lda, const double* B,
             std::size_t ldb, double beta, double* C, std::size_t ldc);
// C [M, N] = alpha A [M, K] B [K, N] + beta C.
void gemm_nn(std::size_t M, std::size_t N, std::size_t K, float alpha, const float* A, std::size_t lda, const float* B,
             std::size_t ldb, float beta, float* C, std::size_t ldc);
void gemm_nn(std::size_t M, std::size_t N, std::size_t K, double alpha, const double* A, std::size_t lda, const double* B,
             std::size_t ldb, double beta, double* C, std::size_t ldc);

// C [M, N] = alpha A^T B + beta C, A stored [K, M] (a weight's gradient X^T dY).
void gemm_tn(std::size_t M, std::size_t N, std::size_t K, float alpha, const float* A, std::size_t lda, const float* B,
             std::size_t ldb, float beta, float* C, std::size_t ldc);
void gemm_tn(std::size_t M, std::size_t N, std::size_t K, double alpha, const double* A, std::size_t lda, const double* B,
             std::size_t ldb, double beta, double* C, std::size_t ldc);

}  // namespace attnlab::blas

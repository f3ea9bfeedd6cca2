#include "attnlab/core/blas.hpp"

#include <cblas.h>

#include <string>

#include <cstdlib>
#include <cstring>

// OpenBLAS's runtime kernel choice (DYNAMIC_ARCH builds, as Debian's); weak, so that a build
// without it still links and keeps its own choice.
extern "C" void gotoblas_dynamic_init();
extern "C" void gotoblas_dynamic_quit();
#pragma weak gotoblas_dynamic_init
#pragma weak gotoblas_dynamic_quit
extern "C" char* openblas_get_corename();
// Stops OpenBLAS's own worker threads, which otherwise spin on sched_yield for a while after
// start-up, taking a core from the kernel's threads.
extern "C" int blas_thread_shutdown_();
#pragma weak blas_thread_shutdown_

namespace attnlab::blas {

namespace {

// OpenBLAS 0.3.21 (Debian 12) falls back to its Prescott (SSE3) kernels on Intel processors
// it does not know by model number (OpenBLAS issue #4267, fixed in 0.3.25): about a fifth of
// the speed on a processor with AVX-512. Unless OPENBLAS_CORETYPE says otherwise, such a
// processor gets the kernels of its instruction set, before any product has run.
void choose_kernels()
{
    if (std::getenv("OPENBLAS_CORETYPE") != nullptr || gotoblas_dynamic_init == nullptr || gotoblas_dynamic_quit == nullptr) return;
    if (std::strcmp(openblas_get_corename(), "Prescott") != 0) return;
    const char* core = __builtin_cpu_supports("avx512f") ? "SkylakeX" : __builtin_cpu_supports("avx2") ? "Haswell" : nullptr;
    if (core == nullptr) return;
    setenv("OPENBLAS_CORETYPE", core, 0);
    gotoblas_dynamic_quit();
    gotoblas_dynamic_init();
    unsetenv("OPENBLAS_CORETYPE");
}

// OpenBLAS's own threads stay off: the callers run products on several threads at once.
struct SingleThreaded {
    SingleThreaded()
    {
        choose_kernels();
        openblas_set_num_threads(1);
        if (blas_thread_shutdown_ != nullptr) blas_thread_shutdown_();
    }
};

void once()
{
    static const SingleThreaded set;
    (void)set;
}

blasint as_int(std::size_t n) { return static_cast<blasint>(n); }

// Row-major C = alpha A op(B) + beta C, op(B) = B or its transpose, through ?gemm.
void gemm(CBLAS_TRANSPOSE tb, std::size_t M, std::size_t N, std::size_t K, float alpha, const float* A, std::size_t lda, const float* B,
          std::size_t ldb, float beta, float* C, std::size_t ldc)
{
    once();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, tb, as_int(M), as_int(N), as_int(K), alpha, A, as_int(lda), B, as_int(ldb), beta, C, as_int(ldc));
}

void gemm(CBLAS_TRANSPOSE tb, std::size_t M, std::size_t N, std::size_t K, double alpha, const double* A, std::size_t lda, const double* B,
          std::size_t ldb, double beta, double* C, std::size_t ldc)
{
    once();
    cblas_dgemm(CblasRowMajor, CblasNoTrans, tb, as_int(M), as_int(N), as_int(K), alpha, A, as_int(lda), B, as_int(ldb), beta, C, as_int(ldc));
}

}  // namespace

std::string kernel_name()
{
    once();
    return openblas_get_corename();
}

void gemm_nt(std::size_t M, std::size_t N, std::size_t K, float alpha, const float* A, std::size_t lda, const float* B,
             std::size_t ldb, float beta, float* C, std::size_t ldc)
{
    gemm(CblasTrans, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void gemm_nt(std::size_t M, std::size_t N, std::size_t K, double alpha, const double* A, std::size_t lda, const double* B,
             std::size_t ldb, double beta, double* C, std::size_t ldc)
{
    gemm(CblasTrans, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void gemm_nn(std::size_t M, std::size_t N, std::size_t K, float alpha, const float* A, std::size_t lda, const float* B,
             std::size_t ldb, float beta, float* C, std::size_t ldc)
{
    gemm(CblasNoTrans, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void gemm_nn(std::size_t M, std::size_t N, std::size_t K, double alpha, const double* A, std::size_t lda, const double* B,
             std::size_t ldb, double beta, double* C, std::size_t ldc)
{
    gemm(CblasNoTrans, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

}  // namespace attnlab::blas

#include "attnlab/core/blas.hpp"

#include "attnlab/core/isa.hpp"

#include <cblas.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <strings.h>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnlab::blas {

namespace {

// OpenBLAS, loaded on the first product rather than at start-up: its constructor starts a
// thread pool and maps 128 MB, which a run that multiplies no matrix (most small runs) need
// not pay for. The symbols OpenBLAS builds do not all have are optional.
struct OpenBlas {
    decltype(&cblas_sgemm) sgemm = nullptr;
    decltype(&cblas_dgemm) dgemm = nullptr;
    decltype(&openblas_set_num_threads) set_num_threads = nullptr;
    char* (*get_corename)() = nullptr;
    void (*dynamic_init)() = nullptr;  // the runtime kernel choice of DYNAMIC_ARCH builds (Debian's)
    void (*dynamic_quit)() = nullptr;
    // Stops OpenBLAS's own worker threads, which otherwise spin on sched_yield for a while
    // after start-up, taking a core from the kernel's threads.
    int (*thread_shutdown)() = nullptr;
};

void* open_library()
{
    std::string errors;
    for (const char* name : {"libopenblas.so.0", ATTNLAB_OPENBLAS_LIBRARY}) {
        if (void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return handle;
        const char* why = dlerror();
        errors += std::string(errors.empty() ? "" : "; ") + (why ? why : name);
    }
    throw std::runtime_error("OpenBLAS cannot be loaded: " + errors);
}

template <class F>
void find(void* handle, const char* name, F& out, bool required)
{
    out = reinterpret_cast<F>(dlsym(handle, name));
    if (out == nullptr && required) throw std::runtime_error(std::string("OpenBLAS has no ") + name);
}

OpenBlas load()
{
    void* handle = open_library();
    OpenBlas b;
    find(handle, "cblas_sgemm", b.sgemm, true);
    find(handle, "cblas_dgemm", b.dgemm, true);
    find(handle, "openblas_set_num_threads", b.set_num_threads, true);
    find(handle, "openblas_get_corename", b.get_corename, true);
    find(handle, "gotoblas_dynamic_init", b.dynamic_init, false);
    find(handle, "gotoblas_dynamic_quit", b.dynamic_quit, false);
    find(handle, "blas_thread_shutdown_", b.thread_shutdown, false);
    return b;
}

// OpenBLAS's kernels for each of the kernel's targets (isa.hpp).
const char* openblas_core(Isa isa)
{
    switch (isa) {
        case Isa::avx512: return "SkylakeX";
        case Isa::avx2: return "Haswell";
        case Isa::sse4: return "Nehalem";
        case Isa::scalar: break;
    }
    return "Prescott";
}

// OpenBLAS 0.3.21 (Debian 12) falls back to its Prescott (SSE3) kernels on Intel processors
// it does not know by model number (OpenBLAS issue #4267, fixed in 0.3.25): about a fifth of
// the speed on a processor with AVX-512. Unless OPENBLAS_CORETYPE says otherwise, such a
// processor gets the kernels of its instruction set, before any product has run. A run with
// ATTNLAB_ISA gets the kernels of that target, so that the products it is measured against
// use the same instructions as its own.
void choose_kernels(const OpenBlas& b)
{
    if (std::getenv("OPENBLAS_CORETYPE") != nullptr || b.dynamic_init == nullptr || b.dynamic_quit == nullptr) return;
    const bool asked = std::getenv("ATTNLAB_ISA") != nullptr;
    if (!asked && std::strcmp(b.get_corename(), "Prescott") != 0) return;
    const char* core = openblas_core(active_isa());
    if (strcasecmp(b.get_corename(), core) == 0) return;
    setenv("OPENBLAS_CORETYPE", core, 0);
    b.dynamic_quit();
    b.dynamic_init();
    unsetenv("OPENBLAS_CORETYPE");
}

// Loaded once; OpenBLAS's own threads stay off: the callers run products on several threads
// at once.
const OpenBlas& once()
{
    static const OpenBlas b = [] {
        OpenBlas loaded = load();
        choose_kernels(loaded);
        loaded.set_num_threads(1);
        if (loaded.thread_shutdown != nullptr) loaded.thread_shutdown();
        return loaded;
    }();
    return b;
}

blasint as_int(std::size_t n) { return static_cast<blasint>(n); }

// Row-major C = alpha op(A) op(B) + beta C in plain loops: each element summed over k in
// order, one product and one sum each (no fused multiply-add: ISO C++ contracts nothing), then
// scaled; beta = 0 reads nothing of C, as BLAS. The same bits on every CPU, at any vector width.
template <class T>
void plain_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, std::size_t M, std::size_t N, std::size_t K, T alpha, const T* A, std::size_t lda,
                const T* B, std::size_t ldb, T beta, T* C, std::size_t ldc)
{
    std::vector<T> acc(N);
    for (std::size_t i = 0; i < M; ++i) {
        std::fill(acc.begin(), acc.end(), T(0));
        for (std::size_t k = 0; k < K; ++k) {
            const T a = ta == CblasTrans ? A[k * lda + i] : A[i * lda + k];
            if (tb == CblasTrans) {
                for (std::size_t j = 0; j < N; ++j) acc[j] += a * B[j * ldb + k];
            } else {
                for (std::size_t j = 0; j < N; ++j) acc[j] += a * B[k * ldb + j];
            }
        }
        for (std::size_t j = 0; j < N; ++j) C[i * ldc + j] = alpha * acc[j] + (beta == T(0) ? T(0) : beta * C[i * ldc + j]);
    }
}

// Products of at most kPlainLimit multiply-adds run in plain loops: OpenBLAS chooses its
// kernels by CPU (SkylakeX, Haswell, ...), each rounding another way, so a small run's figures
// (every example in docs/ and the tour) would depend on the machine; and a run whose products
// are all small never loads OpenBLAS. At 2^16 a plain product takes tens of microseconds.
constexpr double kPlainLimit = 65536.0;

bool plain(std::size_t M, std::size_t N, std::size_t K)
{
    return static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K) <= kPlainLimit;
}

// Row-major C = alpha op(A) op(B) + beta C, op(X) = X or its transpose, through ?gemm.
void gemm(CBLAS_TRANSPOSE tb, std::size_t M, std::size_t N, std::size_t K, float alpha, const float* A, std::size_t lda, const float* B,
          std::size_t ldb, float beta, float* C, std::size_t ldc, CBLAS_TRANSPOSE ta = CblasNoTrans)
{
    if (plain(M, N, K)) return plain_gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    once().sgemm(CblasRowMajor, ta, tb, as_int(M), as_int(N), as_int(K), alpha, A, as_int(lda), B, as_int(ldb), beta, C, as_int(ldc));
}

void gemm(CBLAS_TRANSPOSE tb, std::size_t M, std::size_t N, std::size_t K, double alpha, const double* A, std::size_t lda, const double* B,
          std::size_t ldb, double beta, double* C, std::size_t ldc, CBLAS_TRANSPOSE ta = CblasNoTrans)
{
    if (plain(M, N, K)) return plain_gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    once().dgemm(CblasRowMajor, ta, tb, as_int(M), as_int(N), as_int(K), alpha, A, as_int(lda), B, as_int(ldb), beta, C, as_int(ldc));
}

}  // namespace

std::string kernel_name()
{
    return once().get_corename();
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

void gemm_tn(std::size_t M, std::size_t N, std::size_t K, float alpha, const float* A, std::size_t lda, const float* B,
             std::size_t ldb, float beta, float* C, std::size_t ldc)
{
    gemm(CblasNoTrans, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, CblasTrans);
}

void gemm_tn(std::size_t M, std::size_t N, std::size_t K, double alpha, const double* A, std::size_t lda, const double* B,
             std::size_t ldb, double beta, double* C, std::size_t ldc)
{
    gemm(CblasNoTrans, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, CblasTrans);
}

}  // namespace attnlab::blas

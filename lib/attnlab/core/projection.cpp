// The projections x w of the attention block: BLAS over fixed blocks of rows, on the kernel's
// threads; the 16-bit types through float32 products, rounded once.
#include "attnlab/core/attention.hpp"

#include "attnlab/core/blas.hpp"
#include "attnlab/core/parallel.hpp"

#include <algorithm>

namespace attnlab {

namespace {

// The float32 and float64 products: BLAS over fixed blocks of rows.
template <class T>
Ten3<T> project_wide(const Ten3<T>& x, const Mat<T>& w, unsigned threads)
{
    const std::size_t B = x.shape(0), L = x.shape(1), n_in = x.shape(2), n_out = w.shape(1);
    if (w.shape(0) != n_in) throw std::logic_error("project: x [B, L, in] and w [in, out] expected");
    Ten3<T> y = xt::zeros<T>({B, L, n_out});
    const std::size_t rows = B * L, chunk = 256;
    parallel_for((rows + chunk - 1) / chunk, thread_count(threads), [&](std::size_t c) {
        const std::size_t r0 = c * chunk, m = std::min(chunk, rows - r0);
        blas::gemm_nn(m, n_out, n_in, T(1), x.data() + r0 * n_in, n_in, w.data(), n_out, T(0), y.data() + r0 * n_out, n_out);
    });
    return y;
}

}  // namespace

template <class T>
Ten4<T> project_heads(const Ten3<T>& x, const Mat<T>& w, long heads, unsigned threads)
{
    if constexpr (is_narrow<T>) {
        return split_heads(project(x, w, threads), heads);
    } else {
        const std::size_t B = x.shape(0), L = x.shape(1), n_in = x.shape(2), n_out = w.shape(1), H = static_cast<std::size_t>(heads);
        if (w.shape(0) != n_in || H == 0 || n_out % H != 0) throw std::logic_error("project_heads: x [B, L, in] and w [in, H * d] expected");
        const std::size_t d = n_out / H, chunk = 1024, chunks = (L + chunk - 1) / chunk;
        Ten4<T> y = xt::empty<T>({B, H, L, d});  // every element is written by a product
        parallel_for(B * H * chunks, thread_count(threads), [&](std::size_t item) {
            const std::size_t b = item / (H * chunks), h = item / chunks % H, r0 = item % chunks * chunk, m = std::min(chunk, L - r0);
            blas::gemm_nn(m, d, n_in, T(1), x.data() + (b * L + r0) * n_in, n_in, w.data() + h * d, n_out, T(0),
                          y.data() + ((b * H + h) * L + r0) * d, d);
        });
        return y;
    }
}

template <class T>
Ten3<T> project(const Ten3<T>& x, const Mat<T>& w, unsigned threads)
{
    if constexpr (is_narrow<T>) {  // float32 products, as a 16-bit matmul accumulates, rounded once
        const Ten3<float> wide = project<float>(xt::cast<float>(x), xt::cast<float>(w), threads);
        Ten3<T> y = xt::zeros<T>(wide.shape());
        std::transform(wide.begin(), wide.end(), y.begin(), [](float v) { return T(v); });
        return y;
    } else {
        return project_wide(x, w, threads);
    }
}

#define ATTNLAB_PROJECTION_INSTANTIATE(T)                                   \
    template Ten3<T> project<T>(const Ten3<T>&, const Mat<T>&, unsigned); \
    template Ten4<T> project_heads<T>(const Ten3<T>&, const Mat<T>&, long, unsigned);
ATTNLAB_PROJECTION_INSTANTIATE(float)
ATTNLAB_PROJECTION_INSTANTIATE(double)
ATTNLAB_PROJECTION_INSTANTIATE(f16)
ATTNLAB_PROJECTION_INSTANTIATE(bf16)

}  // namespace attnlab

#include "attnlab/core/nn.hpp"

#include "attnlab/core/blas.hpp"

#include <cmath>
#include <limits>

namespace attnlab::nn {

template <class T>
void layernorm_forward(const T* x, const T* w, const T* b, T* out, T* mean, T* rstd, std::size_t N, std::size_t C)
{
    for (std::size_t r = 0; r < N; ++r) {
        const T* x_r = x + r * C;
        // pass 1: the mean; pass 2: the biased variance
        T m = 0;
        for (std::size_t c = 0; c < C; ++c) m += x_r[c];
        m /= static_cast<T>(C);
        T var = 0;
        for (std::size_t c = 0; c < C; ++c) var += (x_r[c] - m) * (x_r[c] - m);
        var /= static_cast<T>(C);
        const T s = T(1) / std::sqrt(var + static_cast<T>(kLayerNormEps));
        // pass 3: normalise, scale and shift
        for (std::size_t c = 0; c < C; ++c) out[r * C + c] = (x_r[c] - m) * s * w[c] + b[c];
        mean[r] = m;
        rstd[r] = s;
    }
}

template <class T>
void layernorm_backward(const T* d_out, const T* x, const T* w, const T* mean, const T* rstd, T* d_x, T* d_w, T* d_b, std::size_t N,
                        std::size_t C)
{
    for (std::size_t r = 0; r < N; ++r) {
        const T* g = d_out + r * C;
        const T* x_r = x + r * C;
        // xhat = (x - mean) rstd; dxhat = g w; d_x = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat))
        T mean_dxhat = 0, mean_dxhat_xhat = 0;
        for (std::size_t c = 0; c < C; ++c) {
            const T xhat = (x_r[c] - mean[r]) * rstd[r];
            const T dxhat = g[c] * w[c];
            mean_dxhat += dxhat;
            mean_dxhat_xhat += dxhat * xhat;
            d_w[c] += g[c] * xhat;
            d_b[c] += g[c];
        }
        mean_dxhat /= static_cast<T>(C);
        mean_dxhat_xhat /= static_cast<T>(C);
        for (std::size_t c = 0; c < C; ++c) {
            const T xhat = (x_r[c] - mean[r]) * rstd[r];
            d_x[r * C + c] += rstd[r] * (g[c] * w[c] - mean_dxhat - xhat * mean_dxhat_xhat);
        }
    }
}

namespace {
template <class T>
constexpr T kGeluScale = static_cast<T>(0.7978845608028654);  // sqrt(2 / pi)
}

template <class T>
void gelu_forward(const T* x, T* out, T* th, std::size_t n)
{
    for (std::size_t i = 0; i < n; ++i) {
        const T u = kGeluScale<T> * (x[i] + static_cast<T>(0.044715) * x[i] * x[i] * x[i]);
        th[i] = std::tanh(u);
        out[i] = static_cast<T>(0.5) * x[i] * (T(1) + th[i]);
    }
}

template <class T>
void gelu_backward(const T* x, const T* tanh_u, const T* d_out, T* d_x, std::size_t n)
{
    for (std::size_t i = 0; i < n; ++i) {
        const T th = tanh_u[i];
        const T du = kGeluScale<T> * (T(1) + static_cast<T>(3.0 * 0.044715) * x[i] * x[i]);
        // d/dx 0.5 x (1 + tanh u) = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) du/dx
        d_x[i] += d_out[i] * (static_cast<T>(0.5) * (T(1) + th) + static_cast<T>(0.5) * x[i] * (T(1) - th * th) * du);
    }
}

template <class T>
void linear_forward(const T* x, const T* w, const T* b, T* out, std::size_t N, std::size_t in, std::size_t out_dim)
{
    if (b != nullptr)
        for (std::size_t r = 0; r < N; ++r)
            for (std::size_t o = 0; o < out_dim; ++o) out[r * out_dim + o] = b[o];
    blas::gemm_nn(N, out_dim, in, T(1), x, in, w, out_dim, b != nullptr ? T(1) : T(0), out, out_dim);
}

template <class T>
void linear_backward(const T* d_out, const T* x, const T* w, T* d_x, T* d_w, T* d_b, std::size_t N, std::size_t in, std::size_t out_dim)
{
    blas::gemm_nt(N, in, out_dim, T(1), d_out, out_dim, w, out_dim, T(1), d_x, in);  // d_x += d_out W^T
    blas::gemm_tn(in, out_dim, N, T(1), x, in, d_out, out_dim, T(1), d_w, out_dim);  // d_W += x^T d_out
    if (d_b != nullptr)
        for (std::size_t r = 0; r < N; ++r)
            for (std::size_t o = 0; o < out_dim; ++o) d_b[o] += d_out[r * out_dim + o];
}

template <class T>
double cross_entropy(const T* logits, const std::vector<long>& targets, T* d_logits, std::size_t N, std::size_t V)
{
    std::size_t scored = 0;
    for (long t : targets) scored += t >= 0;
    double loss = 0.0;
    for (std::size_t r = 0; r < N; ++r) {
        T* d = d_logits + r * V;
        if (targets[r] < 0) {
            for (std::size_t j = 0; j < V; ++j) d[j] = T(0);
            continue;
        }
        const T* z = logits + r * V;
        T z_max = z[0];
        for (std::size_t j = 1; j < V; ++j) z_max = std::max(z_max, z[j]);
        T sum = 0;
        for (std::size_t j = 0; j < V; ++j) sum += std::exp(z[j] - z_max);
        const auto t = static_cast<std::size_t>(targets[r]);
        loss += static_cast<double>(std::log(sum) + z_max - z[t]);
        // d loss / d z_j = (softmax_j - [j == t]) / scored
        for (std::size_t j = 0; j < V; ++j) d[j] = (std::exp(z[j] - z_max) / sum - (j == t ? T(1) : T(0))) / static_cast<T>(scored);
    }
    return scored == 0 ? std::numeric_limits<double>::quiet_NaN() : loss / static_cast<double>(scored);
}

template <class T>
void adamw_step(T* p, const T* g, T* m, T* v, std::size_t n, long t, const AdamW& opt)
{
    const T lr = static_cast<T>(opt.lr), b1 = static_cast<T>(opt.beta1), b2 = static_cast<T>(opt.beta2);
    const T bias1 = T(1) - static_cast<T>(std::pow(opt.beta1, static_cast<double>(t)));
    const T bias2_sqrt = std::sqrt(T(1) - static_cast<T>(std::pow(opt.beta2, static_cast<double>(t))));
    const T step_size = lr / bias1, decay = T(1) - lr * static_cast<T>(opt.weight_decay);
    for (std::size_t i = 0; i < n; ++i) {
        p[i] *= decay;
        m[i] = m[i] * b1 + (T(1) - b1) * g[i];
        v[i] = v[i] * b2 + (T(1) - b2) * g[i] * g[i];
        p[i] -= step_size * m[i] / (std::sqrt(v[i]) / bias2_sqrt + static_cast<T>(opt.eps));
    }
}

#define ATTNLAB_NN_INSTANTIATE(T)                                                                                          \
    template void layernorm_forward<T>(const T*, const T*, const T*, T*, T*, T*, std::size_t, std::size_t);               \
    template void layernorm_backward<T>(const T*, const T*, const T*, const T*, const T*, T*, T*, T*, std::size_t, std::size_t); \
    template void gelu_forward<T>(const T*, T*, T*, std::size_t);                                                          \
    template void gelu_backward<T>(const T*, const T*, const T*, T*, std::size_t);                                         \
    template void linear_forward<T>(const T*, const T*, const T*, T*, std::size_t, std::size_t, std::size_t);              \
    template void linear_backward<T>(const T*, const T*, const T*, T*, T*, T*, std::size_t, std::size_t, std::size_t);    \
    template double cross_entropy<T>(const T*, const std::vector<long>&, T*, std::size_t, std::size_t);                   \
    template void adamw_step<T>(T*, const T*, T*, T*, std::size_t, long, const AdamW&);
ATTNLAB_NN_INSTANTIATE(float)
ATTNLAB_NN_INSTANTIATE(double)

}  // namespace attnlab::nn

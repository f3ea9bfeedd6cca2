// The layers of a small decoder and their backward passes, on row-major buffers (llm.c's
// train_gpt2.c has the same passes in C). Sizes: N rows (batch times positions), C channels,
// V vocabulary. Each backward ADDS into its gradients (a residual stream's gradient is a sum),
// so the caller zeroes them once per step. Products go through OpenBLAS, one call per product,
// single-threaded: the results do not depend on any thread count.
#pragma once

#include <cstddef>
#include <vector>

namespace attnlab::nn {

constexpr double kLayerNormEps = 1e-5;  // PyTorch's nn.LayerNorm default

// out [N, C] = (x - mean) / sqrt(var + eps) * w + b per row; mean and rstd [N] kept for the
// backward (var the biased variance, as nn.LayerNorm).
template <class T>
void layernorm_forward(const T* x, const T* w, const T* b, T* out, T* mean, T* rstd, std::size_t N, std::size_t C);
template <class T>
void layernorm_backward(const T* d_out, const T* x, const T* w, const T* mean, const T* rstd, T* d_x, T* d_w, T* d_b, std::size_t N,
                        std::size_t C);

// GELU, tanh approximation (GPT-2's; torch's gelu(approximate='tanh')): 0.5 x (1 + tanh(k (x + 0.044715 x^3))),
// k = sqrt(2 / pi). The forward keeps tanh(u) of each element in th, which the backward reads
// rather than computing it again (the same values: tanh is most of the MLP's time).
template <class T>
void gelu_forward(const T* x, T* out, T* th, std::size_t n);
template <class T>
void gelu_backward(const T* x, const T* th, const T* d_out, T* d_x, std::size_t n);

// out [N, out] = x [N, in] W [in, out] (+ b [out]); b may be null.
template <class T>
void linear_forward(const T* x, const T* w, const T* b, T* out, std::size_t N, std::size_t in, std::size_t out_dim);
// d_x += d_out W^T; d_W += x^T d_out; d_b += column sums of d_out (d_b may be null).
template <class T>
void linear_backward(const T* d_out, const T* x, const T* w, T* d_x, T* d_w, T* d_b, std::size_t N, std::size_t in, std::size_t out_dim);

// The mean cross-entropy of softmax(logits) [N, V] against targets [N] (-1: not scored, as
// PyTorch's ignore_index), and d_logits = (softmax - onehot) / scored rows (zero on rows not
// scored). Returns the mean loss (NaN when no row is scored).
template <class T>
double cross_entropy(const T* logits, const std::vector<long>& targets, T* d_logits, std::size_t N, std::size_t V);

// PyTorch's torch.optim.AdamW (1.13's single-tensor path), one step t >= 1 on one parameter:
//   p <- p (1 - lr wd);  m <- b1 m + (1 - b1) g;  v <- b2 v + (1 - b2) g^2;
//   p <- p - lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps).
struct AdamW {
    double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.01;
};
template <class T>
void adamw_step(T* p, const T* g, T* m, T* v, std::size_t n, long t, const AdamW& opt);

}  // namespace attnlab::nn

// The backward pass of attention, in plain loops: the reference a tiled kernel would be held
// against (llm.c's attention_backward does the same passes in C).
//
// Sizes: B batch, H heads, Hkv key/value heads (H % Hkv == 0; head h reads key/value head
// h / (H / Hkv)), L queries, S keys, d head dimension.
//
// Forward (core/attention.hpp):
//   scores = scale q k^T + bias + mask      [B, H, L, S]
//   P      = softmax(scores) over the keys  [B, H, L, S]   ("weights")
//   out    = P v                            [B, H, L, d]
// Backward, given d_out = dloss/dout [B, H, L, d], one pass per formula:
//   d_weights = d_out v^T                               [B, H, L, S]
//   d_scores  = P * (d_weights - rowsum(d_weights * P))  [B, H, L, S]   (the softmax Jacobian)
//   d_q       = scale d_scores k                        [B, H, L, d]
//   d_k       = scale sum over the group of d_scores^T q [B, Hkv, S, d]
//   d_v       = sum over the group of P^T d_out          [B, Hkv, S, d]
// The bias and the mask are constants: a masked key has P = 0, so its d_scores is exactly 0
// and no gradient reaches it through that query. Each element is accumulated in Compute<T>
// (float32 for the 16-bit types) and stored once, as the forward does.
#pragma once

#include "attnlab/core/xt.hpp"

namespace attnlab {

template <class T>
struct AttentionGrads {
    Ten4<T> d_weights;  // [B, H, L, S]
    Ten4<T> d_scores;   // [B, H, L, S]
    Ten4<T> d_q;        // [B, H, L, d]
    Ten4<T> d_k;        // [B, Hkv, S, d]
    Ten4<T> d_v;        // [B, Hkv, S, d]
};

// d_out [B, H, L, d], v [B, Hkv, S, d] -> d_weights [B, H, L, S].
template <class T>
Ten4<T> weights_backward(const Ten4<T>& d_out, const Ten4<T>& v);

// weights P and d_weights [B, H, L, S] -> d_scores [B, H, L, S]. A row of P that is all zeros
// (a fully masked row under the safe softmax) gets zeros; a NaN row stays NaN.
template <class T>
Ten4<T> softmax_backward(const Ten4<T>& weights, const Ten4<T>& d_weights);

// d_scores [B, H, L, S], q [B, H, L, d], k [B, Hkv, S, d] -> d_q [B, H, L, d].
template <class T>
Ten4<T> query_backward(const Ten4<T>& d_scores, const Ten4<T>& k, double scale);

// d_scores [B, H, L, S], q [B, H, L, d] -> d_k [B, Hkv, S, d], summed over each group's heads.
template <class T>
Ten4<T> key_backward(const Ten4<T>& d_scores, const Ten4<T>& q, long kv_heads, double scale);

// weights [B, H, L, S], d_out [B, H, L, d] -> d_v [B, Hkv, S, d], summed over each group's heads.
template <class T>
Ten4<T> value_backward(const Ten4<T>& weights, const Ten4<T>& d_out, long kv_heads);

// All five passes. q and k are the tensors the scores were formed from (rotated, with RoPE).
template <class T>
AttentionGrads<T> attention_backward(const Ten4<T>& q, const Ten4<T>& k, const Ten4<T>& v, const Ten4<T>& weights,
                                     const Ten4<T>& d_out, double scale);

// The projection Y = X W (X [B, L, in], W [in, out]) backwards:
//   d_W [in, out] = sum over b, l of X[b, l]^T d_Y[b, l]
template <class T>
Mat<T> weight_backward(const Ten3<T>& x, const Ten3<T>& d_y);

// d_X [B, L, in] = sum over the pairs of d_Y W^T, accumulated in one sum per element (X feeds
// q, k and v in self-attention: its gradient is the sum of the three).
template <class T>
struct ProjectionGrad {
    const Ten3<T>* d_y;
    const Mat<T>* w;
};
template <class T>
Ten3<T> input_backward(const std::vector<ProjectionGrad<T>>& pairs);

}  // namespace attnlab

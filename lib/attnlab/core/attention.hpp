// Multi-head scaled dot-product attention, the core every position mechanism plugs into:
//   scores = q k^T * scale (+ additive mask) (+ per-head bias),  weights = softmax over keys,
//   out = weights v.
// Sizes: B batch, H query heads, Hkv key/value heads (H % Hkv == 0: grouped-query attention,
// Hkv = 1 multi-query), L queries, S keys, d per-head dimension, E = H * d model dimension.
#pragma once

#include "attnlab/core/mask_spec.hpp"
#include "attnlab/core/measure.hpp"
#include "attnlab/core/softmax.hpp"
#include "attnlab/core/xt.hpp"

#include <optional>

namespace attnlab {

template <class T>
struct AttentionInputs {
    const Ten4<T>* q = nullptr;          // [B, H, L, d]
    const Ten4<T>* k = nullptr;          // [B, Hkv, S, d]
    const Ten4<T>* v = nullptr;          // [B, Hkv, S, d]
    const MaskSpec* mask = nullptr;      // additive mask by spec; null or kind none: no mask
    const Ten3<T>* head_bias = nullptr;  // [H, L, S], e.g. ALiBi; null: none
    double scale = 1.0;
    SoftmaxKind softmax = SoftmaxKind::plain;
};

// [L, S]: 0 where query i of sequence b may look, the spec's fill where it may not.
template <class T>
Mat<T> additive_mask(const MaskSpec& m, long b = 0);

// The additive mask as a tensor named "mask": [query, key] for causal and window, or
// [batch, head = 1, query, key] once padding makes it differ per sequence (the shape
// scaled_dot_product_attention broadcasts over heads), for `batch` sequences.
template <class T>
Tensor additive_mask_tensor(const MaskSpec& m, long batch);

// Measured while the rows are computed, so checks need no stored weights.
struct AttentionStats {
    double max_row_sum_error = 0.0;  // |sum_j w - 1| over rows that are not fully masked
    double max_masked_weight = 0.0;  // |w| where the mask hides the key
    long nan_weights = 0;
};

template <class T>
struct AttentionOutput {
    Ten4<T> out;      // [B, H, L, d]; rows outside the range stay 0
    Ten4<T> scores;   // [B, H, L, S] after mask and bias, when kept (else empty)
    Ten4<T> weights;  // [B, H, L, S], when kept (else empty)
    AttentionStats stats;
};

// The main implementation: one query row at a time with O(S) scratch, so long sequences
// need no [L, S] matrix unless keep_matrices asks for it. A causal mask filled with -inf
// becomes a loop bound: hidden keys are never multiplied.
template <class T>
AttentionOutput<T> attention(const AttentionInputs<T>& in, bool keep_matrices, std::optional<RowRange> rows = {});

// The reference: the formula pass by pass on full matrices, plain loops, nothing skipped.
// Its scores and weights are [B, H, rows, S]: row r is query rows.begin + r.
template <class T>
AttentionOutput<T> attention_reference(const AttentionInputs<T>& in, RowRange rows);

// scores [N, L, S] = q k^T * scale for q [N, L, d], k [N, S, d] (N: any leading batch of heads).
template <class T>
Ten3<T> scaled_scores(const Ten3<T>& q, const Ten3<T>& k, double scale);

// Row vectors times W with W stored [in, out] (PyTorch's nn.Linear stores [out, in]):
// x [B, L, in], w [in, out] -> [B, L, out].
template <class T>
Ten3<T> project(const Ten3<T>& x, const Mat<T>& w);

// [B, L, H*d] <-> [B, H, L, d]
template <class T>
Ten4<T> split_heads(const Ten3<T>& x, long heads);
template <class T>
Ten3<T> merge_heads(const Ten4<T>& x);

// A [rows, cols] matrix of seeded normals scaled by 1/sqrt(rows), so projections keep the
// scale of their input.
template <class T>
Mat<T> random_weight(long rows, long cols, std::uint64_t seed, std::uint64_t stream);
template <class T>
Ten3<T> random_tensor3(std::size_t a, std::size_t b, std::size_t c, std::uint64_t seed, std::uint64_t stream);

}  // namespace attnlab

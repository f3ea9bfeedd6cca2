// The whole attention block of the articles' diagram, with the three places position can
// enter: sinusoidal PE added to X before the projections, RoPE applied to q and k after them,
// ALiBi added to the scores. Shared by `attend`, `permute-test` and the tour.
// Sizes: B batch, L queries, S keys, E model dimension, H heads, Hkv key/value heads,
// d = E / H per-head dimension.
#pragma once

#include "attnlab/core/attention.hpp"
#include "attnlab/model/block_params.hpp"
#include "attnlab/core/position/rope.hpp"

#include <optional>
#include <utility>

namespace attnlab {

struct BlockConfig {
    long heads = 1;              // H
    long kv_heads = 1;           // Hkv (H % Hkv == 0)
    std::optional<double> scale; // default 1/sqrt(d)
    PeKind pe = PeKind::none;
    RopeStyle rope_style = RopeStyle::interleaved;
    MaskSpec mask;               // kind none: no mask
    SoftmaxKind softmax = SoftmaxKind::plain;
    unsigned threads = 0;        // the kernel's and the projections' (results do not depend on it)
    std::vector<RowRange> probes;  // rows whose weight sums the kernel measures (AttentionInputs::probes)
    // Each token's position, for queries and keys alike (self-attention with a position
    // scheme: --positions); empty: 0, 1, 2, ...
    std::vector<long> positions;
};

template <class T>
struct BlockWeights {
    Mat<T> w_q;  // [E, E]
    Mat<T> w_k;  // [E, Hkv*d]
    Mat<T> w_v;  // [E, Hkv*d]
};

template <class T>
struct BlockResult {
    Ten3<T> x_pe;     // [B, L, E] the queries' input after sinusoidal PE (empty without it)
    Ten3<T> x_kv_pe;  // [B, S, E] the keys' input after sinusoidal PE, cross-attention only
    Ten4<T> q, k, v;  // after projection (and RoPE for q, k)
    Ten4<T> q_unrotated, k_unrotated;  // with RoPE: q and k before the rotation (else empty)
    Ten3<T> bias;     // [H, L, S] ALiBi for the report, or empty
    std::vector<double> slopes;  // ALiBi's slopes: the kernel computes its bias tiles from them
    long q0 = 0;                 // the position of query 0
    AttentionOutput<T> attn;
    double scale = 1.0;
};

// The position of query 0: S - L for a lower-right decoder step after S - L cached keys
// (S > L), 0 otherwise (upper-left counts queries and keys both from 0).
long query_position_offset(Align align, long queries, long keys);

// What attention() is given for a block's q, k, v, bias and scale.
template <class T>
AttentionInputs<T> attention_inputs(const BlockResult<T>& r, const BlockConfig& cfg);

// Everything before attention: PE, the projections, RoPE, ALiBi's bias (attn left empty).
template <class T>
BlockResult<T> prepare_block(const Ten3<T>& x, const Ten3<T>& x_kv, const BlockWeights<T>& w, const BlockConfig& cfg);

// RoPE as the block applies it, base 10000 at the block's positions: to q (first = the
// position of query 0) or to k (first = 0), forward; or, Direction::inverse, to a gradient of
// the rotated tensor, which the backward turns by the transposed rotation. `positions` is how
// many positions the block places (max(q0 + L, S)).
template <class T>
Ten4<T> block_rotate(const Ten4<T>& t, const BlockConfig& cfg, long positions, long first, Direction dir);

// Self-attention's keys and values (RoPE applied) for rows of X at positions first..first+n-1
// of a block of `positions` positions: x_rows [B, n, E] through sinusoidal PE, the projections
// and RoPE at those positions, as prepare_block takes every row; each of those steps acts on
// one position at a time. Returns k, v [B, Hkv, n, d].
template <class T>
std::pair<Ten4<T>, Ten4<T>> self_kv_rows(const Ten3<T>& x_rows, long first, long positions, const BlockWeights<T>& w, const BlockConfig& cfg);

// Runs X (queries) against X_kv (keys and values; the same tensor for self-attention).
template <class T>
BlockResult<T> run_block(const Ten3<T>& x, const Ten3<T>& x_kv, const BlockWeights<T>& w, const BlockConfig& cfg,
                         Matrices matrices, std::optional<RowRange> rows = {});

}  // namespace attnlab

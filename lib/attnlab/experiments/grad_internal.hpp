// What grad.cpp (the compute, the descriptor, the mistakes) and grad_checks.cpp (the checks)
// share: the block's forward and backward passes, from the run's inputs.
// Sizes as in block.hpp: B batch, L queries, S keys, E model dimension, H heads, Hkv
// key/value heads, d = E / H.
#pragma once

#include "attnlab/core/attention_backward.hpp"
#include "attnlab/experiments/attend_internal.hpp"
#include "attnlab/experiments/grad.hpp"

#include <memory>
#include <string>
#include <vector>

namespace attnlab::grad_detail {

using attend_detail::Resolved;

// The loss whose gradients `grad` computes: loss = sum(d_out * out_merged), so that
// dloss/dout_merged is the given d_out [B, L, E].
template <class T>
struct BlockInputs {
    Ten3<T> x;     // [B, L, E]
    Ten3<T> x_kv;  // [B, S, E], cross-attention only (empty: the keys read x)
    BlockWeights<T> w;
    Ten3<T> d_out;  // [B, L, E]
    const Ten3<T>& keys() const { return x_kv.size() == 0 ? x : x_kv; }
};

template <class T>
struct BlockGrads {
    // d_weights, d_scores, d_v; attn.d_q and attn.d_k are those of the tensors the scores were
    // formed from: q_rot and k_rot with RoPE, q and k without.
    AttentionGrads<T> attn;
    Ten4<T> d_q, d_k;          // of the projections, before RoPE: [B, H, L, d], [B, Hkv, S, d]
    Ten3<T> d_x, d_x_kv;       // [B, L, E]; [B, S, E] for cross-attention (empty otherwise)
    Mat<T> d_w_q, d_w_k, d_w_v;  // [E, E], [E, Hkv d], [E, Hkv d]
};

// A usual mistake in a learner's backward pass (the catalogue's variants).
enum class Slip {
    none,
    no_row_term,          // d_scores = P * d_weights, without the subtraction of the row term
    scale_forgotten,      // d_q and d_k without the factor scale
    d_k_transposed,       // d_k from d_scores instead of d_scores^T
    mask_not_applied,     // the weights recomputed in the backward without the mask
    rope_same_direction,  // the gradients of q_rot and k_rot rotated forwards instead of back
};

// `attend`'s resolution, and the configurations without a gradient refused: under the plain
// softmax a fully masked row is NaN, and so is everything it reaches.
Resolved resolve_grad(const AttendParams& p);
// How many positions the block places: max(q0 + L, S).
long block_positions(const Resolved& r);

template <class T>
BlockInputs<T> inputs_of(const Run& run, const Resolved& r);
// The block's forward pass with the scores and the weights kept.
template <class T>
BlockResult<T> block_forward(const Resolved& r, const BlockInputs<T>& in);
template <class T>
BlockGrads<T> block_backward(const Resolved& r, const BlockInputs<T>& in, const BlockResult<T>& f, Slip slip = Slip::none);

// The float64 passes from the run's inputs, made once by the compute for the checks: the
// finite differences start from this forward, and it is the reference r_C is measured against.
struct GradKept {
    Resolved r;
    std::shared_ptr<const BlockInputs<double>> in;
    std::shared_ptr<const BlockResult<double>> forward;
    std::shared_ptr<const BlockGrads<double>> grads;
};

// A gradient's name and the tensor it is the gradient of, in the order the run holds them.
struct GradName {
    std::string grad, of;
};
const std::vector<GradName>& grad_names();
// The gradient `name` ("d_x", ...) of a backward pass, or null where the configuration has none.
template <class T>
const xt::xtensor<T, 4>* grad4(const BlockGrads<T>& g, const std::string& name);
template <class T>
Tensor grad_tensor(const BlockGrads<T>& g, const std::string& name, const std::vector<std::string>& axes, Elem elem);
bool has_grad(const AttendParams& p, const std::string& name);

template <class T>
std::vector<CheckDef<AttendParams>> grad_checks();

}  // namespace attnlab::grad_detail

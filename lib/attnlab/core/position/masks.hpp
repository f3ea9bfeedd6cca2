// Masks in PyTorch's conventions, applied: the causal triangle built as torch.tril builds it,
// the two boolean conventions (key_padding_mask, attn_mask), the masked softmax each way, and
// the measurements the mask checks read. The rules themselves are core/mask_spec.hpp.
// Sizes: B batch, L queries, S keys.
#pragma once

#include "attnlab/core/attention.hpp"
#include "attnlab/core/mask_spec.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/core/xt.hpp"

namespace attnlab {

// The causal mask built the other way PyTorch builds it: visible where
// tril(ones(L, S), diagonal = offset + diagonal - 1) is 1 (scaled_dot_product_attention's
// is_causal and torch.nn.attention.bias.causal_lower_right at the usual diagonal 1), the fill
// elsewhere. additive_mask follows triu(full(fill), diagonal) instead
// (generate_square_subsequent_mask); for the same diagonal the two agree element for element.
template <class T>
Mat<T> causal_reference_tril(long queries, long keys, Align align, long diagonal, T fill);

// [B, S] key_padding_mask (true = ignore) and its complement, attn_mask (true = may attend).
xt::xtensor<bool, 2> key_padding_mask(const MaskSpec& m);
xt::xtensor<bool, 2> attn_mask_bool(const MaskSpec& m);
// [B, 1, L, S] the whole mask as one boolean (true = may attend): padding and the causal
// triangle together, as Hugging Face's sdpa_mask hands it to scaled_dot_product_attention.
xt::xtensor<bool, 4> sdpa_mask_bool(const MaskSpec& m, long batch);

// scores [B, L, S] -> weights, with the mask given one of three ways.
template <class T>
Ten3<T> masked_softmax_additive(const Ten3<T>& scores, const MaskSpec& m, SoftmaxKind kind);
template <class T>
Ten3<T> masked_softmax_key_padding(const Ten3<T>& scores, const xt::xtensor<bool, 2>& kpm, SoftmaxKind kind);
template <class T>
Ten3<T> masked_softmax_attn_bool(const Ten3<T>& scores, const xt::xtensor<bool, 2>& amb, SoftmaxKind kind);

// --- measurements behind the checks: each reads any mask or weights tensor ---

// Rows (b, i) of an additive mask ([L, S], or [B, 1, L, S]) whose count of visible keys
// (entries equal to 0) differs from the spec's expected_visible.
long rows_with_wrong_visibility(const Tensor& mask, const MaskSpec& m);
// max |w| at the positions the spec hides, for weights [B, L, S].
double max_masked_weight(const Tensor& w, const MaskSpec& m);
// max |sum_j w - 1| over the rows the spec does not hide entirely.
double max_row_sum_error(const Tensor& w, const MaskSpec& m);

}  // namespace attnlab

#include "attnlab/core/position/masks.hpp"

#include "attnlab/core/measure.hpp"
#include "attnlab/core/narrow.hpp"
#include "attnlab/core/softmax.hpp"

#include <algorithm>
#include <cmath>

namespace attnlab {

template <class T>
Mat<T> causal_reference_tril(long queries, long keys, Align align, long diagonal, T fill)
{
    // triu(fill, diagonal) hides j - i >= diagonal, so tril(ones, diagonal - 1) keeps the rest;
    // lower-right alignment shifts both by S - L.
    const long diag = (align == Align::lower_right ? keys - queries : 0) + diagonal - 1;
    // tril(ones, diag): 1 where j - i <= diag.
    Mat<T> out = xt::zeros<T>({static_cast<std::size_t>(queries), static_cast<std::size_t>(keys)});
    for (long i = 0; i < queries; ++i)
        for (long j = 0; j < keys; ++j) {
            const bool tril_one = j - i <= diag;
            out(i, j) = tril_one ? T(0) : fill;
        }
    return out;
}

xt::xtensor<bool, 2> key_padding_mask(const MaskSpec& m)
{
    const auto B = static_cast<std::size_t>(m.lengths.size());
    xt::xtensor<bool, 2> out = xt::zeros<bool>({B, static_cast<std::size_t>(m.keys)});
    for (std::size_t b = 0; b < B; ++b)
        for (long j = 0; j < m.keys; ++j) out(b, j) = j >= m.lengths[b];  // true = padding
    return out;
}

xt::xtensor<bool, 2> attn_mask_bool(const MaskSpec& m)
{
    const auto B = static_cast<std::size_t>(m.lengths.size());
    xt::xtensor<bool, 2> out = xt::zeros<bool>({B, static_cast<std::size_t>(m.keys)});
    for (std::size_t b = 0; b < B; ++b)
        for (long j = 0; j < m.keys; ++j) out(b, j) = j < m.lengths[b];  // true = may attend
    return out;
}

xt::xtensor<bool, 4> sdpa_mask_bool(const MaskSpec& m, long batch)
{
    const auto B = static_cast<std::size_t>(batch), L = static_cast<std::size_t>(m.queries), S = static_cast<std::size_t>(m.keys);
    xt::xtensor<bool, 4> out = xt::zeros<bool>({B, std::size_t{1}, L, S});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t i = 0; i < L; ++i)
            for (std::size_t j = 0; j < S; ++j) out(b, 0, i, j) = !m.masked(static_cast<long>(b), static_cast<long>(i), static_cast<long>(j));
    return out;
}

template <class T>
Ten3<T> masked_softmax_additive(const Ten3<T>& scores, const MaskSpec& m, SoftmaxKind kind)
{
    Ten3<T> w = scores;
    for (long b = 0; b < static_cast<long>(w.shape(0)); ++b) {
        const Mat<T> mask = additive_mask<T>(m, b);
        for (std::size_t i = 0; i < w.shape(1); ++i)
            for (std::size_t j = 0; j < w.shape(2); ++j) w(b, i, j) += mask(i, j);  // scores + mask
    }
    softmax_rows(w.data(), w.shape(0) * w.shape(1), w.shape(2), kind);
    return w;
}

namespace {

// scores.masked_fill(hide(b, j), -inf), then the softmax: the one body behind both
// boolean conventions, which differ only in what `true` means.
template <class T, class Hide>
Ten3<T> masked_fill_softmax(const Ten3<T>& scores, Hide hide, SoftmaxKind kind)
{
    Ten3<T> w = scores;
    for (std::size_t b = 0; b < w.shape(0); ++b)
        for (std::size_t i = 0; i < w.shape(1); ++i)
            for (std::size_t j = 0; j < w.shape(2); ++j)
                if (hide(b, j)) w(b, i, j) = -std::numeric_limits<T>::infinity();
    softmax_rows(w.data(), w.shape(0) * w.shape(1), w.shape(2), kind);
    return w;
}

}  // namespace

template <class T>
Ten3<T> masked_softmax_key_padding(const Ten3<T>& scores, const xt::xtensor<bool, 2>& kpm, SoftmaxKind kind)
{
    // key_padding_mask: true means "ignore this key".
    return masked_fill_softmax(scores, [&](std::size_t b, std::size_t j) { return kpm(b, j); }, kind);
}

template <class T>
Ten3<T> masked_softmax_attn_bool(const Ten3<T>& scores, const xt::xtensor<bool, 2>& amb, SoftmaxKind kind)
{
    // scaled_dot_product_attention's boolean attn_mask: true means "may attend".
    return masked_fill_softmax(scores, [&](std::size_t b, std::size_t j) { return !amb(b, j); }, kind);
}

long rows_with_wrong_visibility(const Tensor& mask, const MaskSpec& m)
{
    const std::size_t L = mask.shape[mask.rank() - 2], S = mask.shape.back();
    const std::size_t batches = mask.size() / (L * S);
    long wrong = 0;
    for (std::size_t b = 0; b < batches; ++b)
        for (std::size_t i = 0; i < L; ++i) {
            long visible = 0;
            for (std::size_t j = 0; j < S; ++j) visible += mask.values[(b * L + i) * S + j] == 0.0 ? 1 : 0;
            wrong += visible != m.expected_visible(static_cast<long>(b), static_cast<long>(i));
        }
    return wrong;
}

double max_masked_weight(const Tensor& w, const MaskSpec& m)
{
    return max_masked_weight(w, [&](std::size_t b, std::size_t i, std::size_t j) {
        return m.masked(static_cast<long>(b), static_cast<long>(i), static_cast<long>(j));
    });
}

double max_row_sum_error(const Tensor& w, const MaskSpec& m)
{
    return max_row_sum_error(w, [&](std::size_t b, std::size_t i) {
        return m.row_fully_masked(static_cast<long>(b), static_cast<long>(i));
    });
}

#define ATTNLAB_MASK_INSTANTIATE(T)                                                                                \
    template Mat<T> causal_reference_tril<T>(long, long, Align, long, T);                                                \
    template Ten3<T> masked_softmax_additive<T>(const Ten3<T>&, const MaskSpec&, SoftmaxKind);                     \
    template Ten3<T> masked_softmax_key_padding<T>(const Ten3<T>&, const xt::xtensor<bool, 2>&, SoftmaxKind);      \
    template Ten3<T> masked_softmax_attn_bool<T>(const Ten3<T>&, const xt::xtensor<bool, 2>&, SoftmaxKind);
ATTNLAB_MASK_INSTANTIATE(float)
ATTNLAB_MASK_INSTANTIATE(double)
ATTNLAB_MASK_INSTANTIATE(f16)
ATTNLAB_MASK_INSTANTIATE(bf16)

}  // namespace attnlab

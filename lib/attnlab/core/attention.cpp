#include "attnlab/core/attention.hpp"

#include "attnlab/core/rng.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace attnlab {

namespace {

// The sizes of one attention call, after checking that q, k and v fit together.
struct Dims {
    std::size_t B, H, L, d, Hkv, S, group;  // group: query heads per key/value head
};

template <class T>
Dims dims_of(const AttentionInputs<T>& in)
{
    const auto& q = *in.q;
    const auto& k = *in.k;
    const auto& v = *in.v;
    if (k.shape() != v.shape() || q.shape(0) != k.shape(0) || q.shape(3) != k.shape(3) || k.shape(1) == 0 ||
        q.shape(1) % k.shape(1) != 0) {
        throw std::logic_error("attention: q [B,H,L,d] and k, v [B,Hkv,S,d] with H % Hkv == 0 expected");
    }
    return {q.shape(0), q.shape(1), q.shape(2), q.shape(3), k.shape(1), k.shape(2), q.shape(1) / k.shape(1)};
}

template <class T>
Accum<T> wide(T x)
{
    return static_cast<Accum<T>>(x);
}

// q . k * scale over d elements, accumulated in Accum<T> and rounded once when stored (a
// 16-bit matmul accumulates in float32).
template <class T>
T scaled_dot(const T* q, const T* k, std::size_t d, double scale)
{
    Accum<T> dot = 0;
    for (std::size_t c = 0; c < d; ++c) dot += wide(q[c]) * wide(k[c]);
    return static_cast<T>(dot * static_cast<Accum<T>>(scale));
}

}  // namespace

template <class T>
Mat<T> additive_mask(const MaskSpec& m, long b)
{
    Mat<T> out = xt::zeros<T>({static_cast<std::size_t>(m.queries), static_cast<std::size_t>(m.keys)});
    const T fill = static_cast<T>(m.fill);
    for (long i = 0; i < m.queries; ++i)
        for (long j = 0; j < m.keys; ++j)
            if (m.masked(b, i, j)) out(i, j) = fill;
    return out;
}


// The additive mask: [L, S] for causal and window, [B, 1, L, S] once padding makes it differ
// per sequence (the shape scaled_dot_product_attention broadcasts over heads).
template <class T>
Tensor additive_mask_tensor(const MaskSpec& m, long B)
{
    if (!m.has_padding()) return to_tensor("mask", {"query", "key"}, additive_mask<T>(m, 0), elem_of<T>());
    const auto L = static_cast<std::size_t>(m.queries), S = static_cast<std::size_t>(m.keys);
    Ten4<T> mask4 = xt::zeros<T>({static_cast<std::size_t>(B), std::size_t{1}, L, S});
    for (long b = 0; b < B; ++b) xt::view(mask4, b, 0, xt::all(), xt::all()) = additive_mask<T>(m, b);
    return to_tensor("mask", {"batch", "head", "query", "key"}, mask4, elem_of<T>());
}

template <class T>
AttentionOutput<T> attention_reference(const AttentionInputs<T>& in, RowRange rows)
{
    const auto [B, H, L, d, Hkv, S, group] = dims_of(in);
    const auto& q = *in.q;
    const auto& k = *in.k;
    const auto& v = *in.v;
    const auto i0 = static_cast<std::size_t>(rows.begin), n = static_cast<std::size_t>(rows.end - rows.begin);
    // scores and weights hold the n rows of the range only: row r is query i0 + r.
    AttentionOutput<T> res;
    res.out = xt::zeros<T>({B, H, n, d});
    res.scores = xt::zeros<T>({B, H, n, S});
    // pass 1: scores = q k^T * scale
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t r = 0; r < n; ++r)
                for (std::size_t j = 0; j < S; ++j)
                    res.scores(b, h, r, j) = scaled_dot(&q(b, h, i0 + r, 0), &k(b, h / group, j, 0), d, in.scale);
    // pass 2: + additive mask, + per-head bias
    if (active_mask(in)) {
        const T fill = static_cast<T>(in.mask->fill);
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t r = 0; r < n; ++r)
                    for (std::size_t j = 0; j < S; ++j)
                        if (in.mask->masked(static_cast<long>(b), static_cast<long>(i0 + r), static_cast<long>(j)) && fill != T(0))
                            res.scores(b, h, r, j) += fill;
    }
    if (in.head_bias) {
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t r = 0; r < n; ++r)
                    for (std::size_t j = 0; j < S; ++j) res.scores(b, h, r, j) += (*in.head_bias)(h, i0 + r, j);
    }
    if (in.alibi_slopes) {
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t r = 0; r < n; ++r)
                    for (std::size_t j = 0; j < S; ++j) {
                        const long distance = std::abs(in.alibi_q0 + static_cast<long>(i0 + r) - static_cast<long>(j));
                        if (distance != 0) res.scores(b, h, r, j) += -static_cast<T>((*in.alibi_slopes)[h]) * static_cast<T>(distance);
                    }
    }
    // pass 3: softmax over keys
    res.weights = res.scores;
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t r = 0; r < n; ++r) softmax_inplace(&res.weights(b, h, r, 0), S, in.softmax);
    // pass 4: out = weights v, each element summed over j in order (a row of d accumulators
    // walks v row by row)
    std::vector<Accum<T>> acc(d);
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t r = 0; r < n; ++r) {
                std::fill(acc.begin(), acc.end(), Accum<T>(0));
                for (std::size_t j = 0; j < S; ++j) {
                    const Accum<T> w = wide(res.weights(b, h, r, j));
                    const T* vj = &v(b, h / group, j, 0);
                    for (std::size_t c = 0; c < d; ++c) acc[c] += w * wide(vj[c]);
                }
                for (std::size_t c = 0; c < d; ++c) res.out(b, h, r, c) = static_cast<T>(acc[c]);
            }
    return res;
}

template <class T>
Ten3<T> scaled_scores(const Ten3<T>& q, const Ten3<T>& k, double scale)
{
    const std::size_t N = q.shape(0), L = q.shape(1), S = k.shape(1), d = q.shape(2);
    Ten3<T> scores = xt::zeros<T>({N, L, S});
    for (std::size_t n = 0; n < N; ++n)
        for (std::size_t i = 0; i < L; ++i)
            for (std::size_t j = 0; j < S; ++j) scores(n, i, j) = scaled_dot(&q(n, i, 0), &k(n, j, 0), d, scale);
    return scores;
}

template <class T>
Ten3<T> project_reference(const Ten3<T>& x, const Mat<T>& w)
{
    const std::size_t B = x.shape(0), L = x.shape(1), n_in = x.shape(2), n_out = w.shape(1);
    if (w.shape(0) != n_in) throw std::logic_error("project: x [B, L, in] and w [in, out] expected");
    Ten3<T> y = xt::zeros<T>({B, L, n_out});
    std::vector<Accum<T>> y_i(n_out);
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t i = 0; i < L; ++i) {
            std::fill(y_i.begin(), y_i.end(), Accum<T>(0));
            for (std::size_t c = 0; c < n_in; ++c) {
                const Accum<T> x_ic = wide(x(b, i, c));
                const T* w_c = &w(c, 0);
                for (std::size_t o = 0; o < n_out; ++o) y_i[o] += x_ic * wide(w_c[o]);
            }
            for (std::size_t o = 0; o < n_out; ++o) y(b, i, o) = static_cast<T>(y_i[o]);
        }
    return y;
}

template <class T>
Ten4<T> split_heads(const Ten3<T>& x, long heads)
{
    const std::size_t B = x.shape(0), L = x.shape(1), H = static_cast<std::size_t>(heads), d = x.shape(2) / H;
    Ten4<T> out = xt::zeros<T>({B, H, L, d});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t i = 0; i < L; ++i)
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t c = 0; c < d; ++c) out(b, h, i, c) = x(b, i, h * d + c);
    return out;
}

template <class T>
Ten3<T> merge_heads(const Ten4<T>& x)
{
    const std::size_t B = x.shape(0), H = x.shape(1), L = x.shape(2), d = x.shape(3);
    Ten3<T> out = xt::zeros<T>({B, L, H * d});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t i = 0; i < L; ++i)
                for (std::size_t c = 0; c < d; ++c) out(b, i, h * d + c) = x(b, h, i, c);
    return out;
}

template <class T>
Mat<T> random_weight(long rows, long cols, std::uint64_t seed, std::uint64_t stream)
{
    // The stream's normals (drawn on every core, the numbers of one sequential draw), scaled by
    // 1/sqrt(rows) in double before they are stored.
    Mat<T> w = xt::empty<T>({static_cast<std::size_t>(rows), static_cast<std::size_t>(cols)});
    fill_normal(w.data(), w.size(), seed, stream, 0, 1.0 / std::sqrt(static_cast<double>(rows)));
    return w;
}

template <class T>
Ten3<T> random_tensor3(std::size_t a, std::size_t b, std::size_t c, std::uint64_t seed, std::uint64_t stream)
{
    Ten3<T> x = xt::empty<T>({a, b, c});
    fill_normal(x.data(), x.size(), seed, stream);
    return x;
}

#define ATTNLAB_ATTENTION_INSTANTIATE(T)                                                              \
    template Mat<T> additive_mask<T>(const MaskSpec&, long);                                          \
    template Tensor additive_mask_tensor<T>(const MaskSpec&, long);                                   \
    template AttentionOutput<T> attention_reference<T>(const AttentionInputs<T>&, RowRange);          \
    template Ten3<T> project_reference<T>(const Ten3<T>&, const Mat<T>&);                              \
    template Ten3<T> scaled_scores<T>(const Ten3<T>&, const Ten3<T>&, double);                         \
    template Ten4<T> split_heads<T>(const Ten3<T>&, long);                                             \
    template Ten3<T> merge_heads<T>(const Ten4<T>&);                                                   \
    template Mat<T> random_weight<T>(long, long, std::uint64_t, std::uint64_t);                        \
    template Ten3<T> random_tensor3<T>(std::size_t, std::size_t, std::size_t, std::uint64_t, std::uint64_t);
ATTNLAB_ATTENTION_INSTANTIATE(float)
ATTNLAB_ATTENTION_INSTANTIATE(double)
ATTNLAB_ATTENTION_INSTANTIATE(f16)
ATTNLAB_ATTENTION_INSTANTIATE(bf16)

}  // namespace attnlab

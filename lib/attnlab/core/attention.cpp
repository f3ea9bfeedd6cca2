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

bool has_mask(const MaskSpec* m) { return m != nullptr && m->kind != MaskKind::none; }

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

namespace {

// One query row of the streaming implementation: its scratch and what it needs to know.
template <class T>
struct RowPass {
    const AttentionInputs<T>& in;
    const MaskSpec* mask;       // null: no mask
    bool causal_bound;          // a causal -inf triangle: keys past the diagonal are a loop bound
    std::vector<T> row;         // [S]: scores, then weights
    std::vector<char> hidden;   // [S]: the mask hides key j

    // pass 1: scores, mask and bias of row i; returns the end of the keys it computed.
    std::size_t scores(std::size_t b, std::size_t h, long il, std::size_t hk)
    {
        const auto& q = *in.q;
        const auto& k = *in.k;
        const std::size_t S = row.size(), d = q.shape(3), i = static_cast<std::size_t>(il);
        const T scale = static_cast<T>(in.scale), fill = mask ? static_cast<T>(mask->fill) : T(0);
        const std::size_t j_end =
            causal_bound ? static_cast<std::size_t>(std::clamp(il + mask->offset() + mask->diagonal, 0L, static_cast<long>(S))) : S;
        const T* q_i = &q(b, h, i, 0);
        for (std::size_t j = 0; j < S; ++j) {
            hidden[j] = mask && mask->masked(static_cast<long>(b), il, static_cast<long>(j)) ? 1 : 0;
            if (j >= j_end) {
                row[j] = -std::numeric_limits<T>::infinity();
                continue;
            }
            const T* k_j = &k(b, hk, j, 0);
            T dot = 0;
            for (std::size_t c = 0; c < d; ++c) dot += q_i[c] * k_j[c];
            T s_ij = dot * scale;
            if (hidden[j]) s_ij += fill;
            if (in.head_bias) s_ij += (*in.head_bias)(h, i, j);
            row[j] = s_ij;
        }
        return j_end;
    }

    // pass 3: out_i = sum_j w_ij v_j, and the stats.
    void accumulate(T* out_i, std::size_t b, std::size_t hk, std::size_t j_end, AttentionStats& st)
    {
        const auto& v = *in.v;
        const std::size_t d = v.shape(3);
        double sum = 0.0;
        bool all_hidden = true;
        for (std::size_t j = 0; j < row.size(); ++j) {
            const T w = row[j];
            sum += static_cast<double>(w);
            if (std::isnan(w)) ++st.nan_weights;
            if (hidden[j]) st.max_masked_weight = worse(st.max_masked_weight, std::abs(static_cast<double>(w)));
            all_hidden = all_hidden && hidden[j];
            // Keys past the loop bound carry weight exactly 0, unless the whole row is masked
            // and the plain softmax made every weight NaN: then out is NaN too, as in PyTorch.
            if (j >= j_end && w == T(0)) continue;
            const T* v_j = &v(b, hk, j, 0);
            for (std::size_t c = 0; c < d; ++c) out_i[c] += w * v_j[c];
        }
        if (!all_hidden) st.max_row_sum_error = worse(st.max_row_sum_error, std::abs(sum - 1.0));
    }
};

}  // namespace

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
AttentionOutput<T> attention(const AttentionInputs<T>& in, bool keep_matrices, std::optional<RowRange> rows)
{
    const auto [B, H, L, d, Hkv, S, group] = dims_of(in);
    const RowRange range = rows.value_or(RowRange{0, static_cast<long>(L)});
    const MaskSpec* mask = has_mask(in.mask) ? in.mask : nullptr;
    // A causal triangle with -inf is a loop bound: keys past i + offset are never touched.
    const bool causal_bound = mask && std::isinf(mask->fill) && mask->kind == MaskKind::causal && mask->diagonal >= 1;
    AttentionOutput<T> res;
    res.out = xt::zeros<T>({B, H, L, d});
    if (keep_matrices) {
        res.scores = xt::zeros<T>({B, H, L, S});
        res.weights = xt::zeros<T>({B, H, L, S});
    }
    RowPass<T> pass{in, mask, causal_bound, std::vector<T>(S), std::vector<char>(S)};
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h) {
            const std::size_t hk = h / group;  // the key/value head this query head shares
            for (long il = range.begin; il < range.end; ++il) {
                const auto i = static_cast<std::size_t>(il);
                const std::size_t j_end = pass.scores(b, h, il, hk);
                if (keep_matrices) std::copy(pass.row.begin(), pass.row.end(), &res.scores(b, h, i, 0));
                softmax_inplace(pass.row.data(), S, in.softmax);  // pass 2: softmax over keys
                pass.accumulate(&res.out(b, h, i, 0), b, hk, j_end, res.stats);
                if (keep_matrices) std::copy(pass.row.begin(), pass.row.end(), &res.weights(b, h, i, 0));
            }
        }
    return res;
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
    res.out = xt::zeros<T>({B, H, L, d});
    res.scores = xt::zeros<T>({B, H, n, S});
    // pass 1: scores = q k^T * scale
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t r = 0; r < n; ++r)
                for (std::size_t j = 0; j < S; ++j) {
                    T dot = 0;
                    for (std::size_t c = 0; c < d; ++c) dot += q(b, h, i0 + r, c) * k(b, h / group, j, c);
                    res.scores(b, h, r, j) = dot * static_cast<T>(in.scale);
                }
    // pass 2: + additive mask, + per-head bias
    if (has_mask(in.mask)) {
        for (std::size_t b = 0; b < B; ++b) {
            const Mat<T> m = additive_mask<T>(*in.mask, static_cast<long>(b));
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t r = 0; r < n; ++r)
                    for (std::size_t j = 0; j < S; ++j)
                        if (m(i0 + r, j) != T(0)) res.scores(b, h, r, j) += m(i0 + r, j);
        }
    }
    if (in.head_bias) {
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t r = 0; r < n; ++r)
                    for (std::size_t j = 0; j < S; ++j) res.scores(b, h, r, j) += (*in.head_bias)(h, i0 + r, j);
    }
    // pass 3: softmax over keys
    res.weights = res.scores;
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t r = 0; r < n; ++r) softmax_inplace(&res.weights(b, h, r, 0), S, in.softmax);
    // pass 4: out = weights v
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t r = 0; r < n; ++r)
                for (std::size_t c = 0; c < d; ++c) {
                    T acc = 0;
                    for (std::size_t j = 0; j < S; ++j) acc += res.weights(b, h, r, j) * v(b, h / group, j, c);
                    res.out(b, h, i0 + r, c) = acc;
                }
    return res;
}

template <class T>
Ten3<T> scaled_scores(const Ten3<T>& q, const Ten3<T>& k, double scale)
{
    const std::size_t N = q.shape(0), L = q.shape(1), S = k.shape(1), d = q.shape(2);
    const T s = static_cast<T>(scale);
    Ten3<T> scores = xt::zeros<T>({N, L, S});
    for (std::size_t n = 0; n < N; ++n)
        for (std::size_t i = 0; i < L; ++i)
            for (std::size_t j = 0; j < S; ++j) {
                T dot = 0;
                for (std::size_t c = 0; c < d; ++c) dot += q(n, i, c) * k(n, j, c);
                scores(n, i, j) = dot * s;
            }
    return scores;
}

template <class T>
Ten3<T> project(const Ten3<T>& x, const Mat<T>& w)
{
    const std::size_t B = x.shape(0), L = x.shape(1), n_in = x.shape(2), n_out = w.shape(1);
    if (w.shape(0) != n_in) throw std::logic_error("project: x [B, L, in] and w [in, out] expected");
    Ten3<T> y = xt::zeros<T>({B, L, n_out});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t i = 0; i < L; ++i) {
            T* y_i = &y(b, i, 0);
            for (std::size_t c = 0; c < n_in; ++c) {
                const T x_ic = x(b, i, c);
                const T* w_c = &w(c, 0);
                for (std::size_t o = 0; o < n_out; ++o) y_i[o] += x_ic * w_c[o];
            }
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
    Rng rng(seed, stream);  // normals scaled by 1/sqrt(rows): not fill_normal's plain normals
    Mat<T> w = xt::zeros<T>({static_cast<std::size_t>(rows), static_cast<std::size_t>(cols)});
    const double s = 1.0 / std::sqrt(static_cast<double>(rows));
    for (auto& x : w) x = static_cast<T>(rng.normal() * s);
    return w;
}

template <class T>
Ten3<T> random_tensor3(std::size_t a, std::size_t b, std::size_t c, std::uint64_t seed, std::uint64_t stream)
{
    Ten3<T> x = xt::zeros<T>({a, b, c});
    fill_normal(x.data(), x.size(), seed, stream);
    return x;
}

#define ATTNLAB_ATTENTION_INSTANTIATE(T)                                                              \
    template Mat<T> additive_mask<T>(const MaskSpec&, long);                                          \
    template Tensor additive_mask_tensor<T>(const MaskSpec&, long);                                   \
    template AttentionOutput<T> attention<T>(const AttentionInputs<T>&, bool, std::optional<RowRange>); \
    template AttentionOutput<T> attention_reference<T>(const AttentionInputs<T>&, RowRange);          \
    template Ten3<T> project<T>(const Ten3<T>&, const Mat<T>&);                                        \
    template Ten3<T> scaled_scores<T>(const Ten3<T>&, const Ten3<T>&, double);                         \
    template Ten4<T> split_heads<T>(const Ten3<T>&, long);                                             \
    template Ten3<T> merge_heads<T>(const Ten4<T>&);                                                   \
    template Mat<T> random_weight<T>(long, long, std::uint64_t, std::uint64_t);                        \
    template Ten3<T> random_tensor3<T>(std::size_t, std::size_t, std::size_t, std::uint64_t, std::uint64_t);
ATTNLAB_ATTENTION_INSTANTIATE(float)
ATTNLAB_ATTENTION_INSTANTIATE(double)

}  // namespace attnlab

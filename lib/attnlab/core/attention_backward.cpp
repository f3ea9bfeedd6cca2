#include "attnlab/core/attention_backward.hpp"

#include "attnlab/core/narrow.hpp"

#include <cmath>
#include <stdexcept>

namespace attnlab {

namespace {

struct Sizes {
    std::size_t B, H, Hkv, L, S, d;
    std::size_t group() const { return H / Hkv; }
};

template <class T>
Ten4<T> zeros4(std::size_t a, std::size_t b, std::size_t c, std::size_t e)
{
    return xt::zeros<T>({a, b, c, e});
}

}  // namespace

template <class T>
Ten4<T> weights_backward(const Ten4<T>& d_out, const Ten4<T>& v)
{
    const Sizes z{d_out.shape(0), d_out.shape(1), v.shape(1), d_out.shape(2), v.shape(2), d_out.shape(3)};
    Ten4<T> d_weights = zeros4<T>(z.B, z.H, z.L, z.S);
    // d_weights_ij = sum_c d_out_ic v_jc
    for (std::size_t b = 0; b < z.B; ++b)
        for (std::size_t h = 0; h < z.H; ++h)
            for (std::size_t i = 0; i < z.L; ++i)
                for (std::size_t j = 0; j < z.S; ++j) {
                    Compute<T> acc = 0;
                    for (std::size_t c = 0; c < z.d; ++c)
                        acc += static_cast<Compute<T>>(d_out(b, h, i, c)) * static_cast<Compute<T>>(v(b, h / z.group(), j, c));
                    d_weights(b, h, i, j) = static_cast<T>(acc);
                }
    return d_weights;
}

template <class T>
Ten4<T> softmax_backward(const Ten4<T>& weights, const Ten4<T>& d_weights)
{
    const std::size_t S = weights.shape(3), rows = weights.size() / S;
    Ten4<T> d_scores = zeros4<T>(weights.shape(0), weights.shape(1), weights.shape(2), S);
    for (std::size_t r = 0; r < rows; ++r) {
        const T* p = weights.data() + r * S;
        const T* dp = d_weights.data() + r * S;
        // pass 1: the row term delta_i = sum_k P_ik d_weights_ik
        Compute<T> delta = 0;
        for (std::size_t j = 0; j < S; ++j) delta += static_cast<Compute<T>>(p[j]) * static_cast<Compute<T>>(dp[j]);
        // pass 2: d_scores_ij = P_ij (d_weights_ij - delta_i)
        for (std::size_t j = 0; j < S; ++j)
            d_scores.data()[r * S + j] = static_cast<T>(static_cast<Compute<T>>(p[j]) * (static_cast<Compute<T>>(dp[j]) - delta));
    }
    return d_scores;
}

template <class T>
Ten4<T> query_backward(const Ten4<T>& d_scores, const Ten4<T>& k, double scale)
{
    const Sizes z{d_scores.shape(0), d_scores.shape(1), k.shape(1), d_scores.shape(2), d_scores.shape(3), k.shape(3)};
    Ten4<T> d_q = zeros4<T>(z.B, z.H, z.L, z.d);
    const auto s = static_cast<Compute<T>>(scale);
    // d_q_ic = scale sum_j d_scores_ij k_jc
    for (std::size_t b = 0; b < z.B; ++b)
        for (std::size_t h = 0; h < z.H; ++h)
            for (std::size_t i = 0; i < z.L; ++i)
                for (std::size_t c = 0; c < z.d; ++c) {
                    Compute<T> acc = 0;
                    for (std::size_t j = 0; j < z.S; ++j)
                        acc += static_cast<Compute<T>>(d_scores(b, h, i, j)) * static_cast<Compute<T>>(k(b, h / z.group(), j, c));
                    d_q(b, h, i, c) = static_cast<T>(s * acc);
                }
    return d_q;
}

template <class T>
Ten4<T> key_backward(const Ten4<T>& d_scores, const Ten4<T>& q, long kv_heads, double scale)
{
    const Sizes z{d_scores.shape(0), d_scores.shape(1), static_cast<std::size_t>(kv_heads), d_scores.shape(2), d_scores.shape(3), q.shape(3)};
    Ten4<T> d_k = zeros4<T>(z.B, z.Hkv, z.S, z.d);
    const auto s = static_cast<Compute<T>>(scale);
    // d_k_jc = scale sum over the group's heads h and the queries i of d_scores_ij q_ic
    for (std::size_t b = 0; b < z.B; ++b)
        for (std::size_t g = 0; g < z.Hkv; ++g)
            for (std::size_t j = 0; j < z.S; ++j)
                for (std::size_t c = 0; c < z.d; ++c) {
                    Compute<T> acc = 0;
                    for (std::size_t h = g * z.group(); h < (g + 1) * z.group(); ++h)
                        for (std::size_t i = 0; i < z.L; ++i)
                            acc += static_cast<Compute<T>>(d_scores(b, h, i, j)) * static_cast<Compute<T>>(q(b, h, i, c));
                    d_k(b, g, j, c) = static_cast<T>(s * acc);
                }
    return d_k;
}

template <class T>
Ten4<T> value_backward(const Ten4<T>& weights, const Ten4<T>& d_out, long kv_heads)
{
    const Sizes z{weights.shape(0), weights.shape(1), static_cast<std::size_t>(kv_heads), weights.shape(2), weights.shape(3), d_out.shape(3)};
    Ten4<T> d_v = zeros4<T>(z.B, z.Hkv, z.S, z.d);
    // d_v_jc = sum over the group's heads h and the queries i of P_ij d_out_ic
    for (std::size_t b = 0; b < z.B; ++b)
        for (std::size_t g = 0; g < z.Hkv; ++g)
            for (std::size_t j = 0; j < z.S; ++j)
                for (std::size_t c = 0; c < z.d; ++c) {
                    Compute<T> acc = 0;
                    for (std::size_t h = g * z.group(); h < (g + 1) * z.group(); ++h)
                        for (std::size_t i = 0; i < z.L; ++i)
                            acc += static_cast<Compute<T>>(weights(b, h, i, j)) * static_cast<Compute<T>>(d_out(b, h, i, c));
                    d_v(b, g, j, c) = static_cast<T>(acc);
                }
    return d_v;
}

template <class T>
AttentionGrads<T> attention_backward(const Ten4<T>& q, const Ten4<T>& k, const Ten4<T>& v, const Ten4<T>& weights,
                                     const Ten4<T>& d_out, double scale)
{
    if (q.shape(1) % k.shape(1) != 0) throw std::logic_error("attention_backward: the key/value heads must divide the heads");
    AttentionGrads<T> g;
    g.d_weights = weights_backward(d_out, v);
    g.d_scores = softmax_backward(weights, g.d_weights);
    g.d_q = query_backward(g.d_scores, k, scale);
    g.d_k = key_backward(g.d_scores, q, static_cast<long>(k.shape(1)), scale);
    g.d_v = value_backward(weights, d_out, static_cast<long>(v.shape(1)));
    return g;
}

template <class T>
Mat<T> weight_backward(const Ten3<T>& x, const Ten3<T>& d_y)
{
    const std::size_t rows = x.shape(0) * x.shape(1), in = x.shape(2), out = d_y.shape(2);
    Mat<T> d_w = xt::zeros<T>({in, out});
    // d_W_eo = sum over the rows r of X_re d_Y_ro
    for (std::size_t e = 0; e < in; ++e)
        for (std::size_t o = 0; o < out; ++o) {
            Compute<T> acc = 0;
            for (std::size_t r = 0; r < rows; ++r) acc += static_cast<Compute<T>>(x.data()[r * in + e]) * static_cast<Compute<T>>(d_y.data()[r * out + o]);
            d_w(e, o) = static_cast<T>(acc);
        }
    return d_w;
}

template <class T>
Ten3<T> input_backward(const std::vector<ProjectionGrad<T>>& pairs)
{
    const Ten3<T>& first = *pairs.front().d_y;
    const std::size_t rows = first.shape(0) * first.shape(1), in = pairs.front().w->shape(0);
    Ten3<T> d_x = xt::zeros<T>({first.shape(0), first.shape(1), in});
    // d_X_re = sum over the pairs and their outputs o of d_Y_ro W_eo
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t e = 0; e < in; ++e) {
            Compute<T> acc = 0;
            for (const auto& pair : pairs) {
                const std::size_t out = pair.w->shape(1);
                for (std::size_t o = 0; o < out; ++o)
                    acc += static_cast<Compute<T>>(pair.d_y->data()[r * out + o]) * static_cast<Compute<T>>((*pair.w)(e, o));
            }
            d_x.data()[r * in + e] = static_cast<T>(acc);
        }
    return d_x;
}

#define ATTNLAB_BACKWARD_INSTANTIATE(T)                                                                       \
    template Ten4<T> weights_backward<T>(const Ten4<T>&, const Ten4<T>&);                                     \
    template Ten4<T> softmax_backward<T>(const Ten4<T>&, const Ten4<T>&);                                     \
    template Ten4<T> query_backward<T>(const Ten4<T>&, const Ten4<T>&, double);                               \
    template Ten4<T> key_backward<T>(const Ten4<T>&, const Ten4<T>&, long, double);                           \
    template Ten4<T> value_backward<T>(const Ten4<T>&, const Ten4<T>&, long);                                 \
    template AttentionGrads<T> attention_backward<T>(const Ten4<T>&, const Ten4<T>&, const Ten4<T>&, const Ten4<T>&, \
                                                     const Ten4<T>&, double);                                 \
    template Mat<T> weight_backward<T>(const Ten3<T>&, const Ten3<T>&);                                       \
    template Ten3<T> input_backward<T>(const std::vector<ProjectionGrad<T>>&);
ATTNLAB_BACKWARD_INSTANTIATE(float)
ATTNLAB_BACKWARD_INSTANTIATE(double)
ATTNLAB_BACKWARD_INSTANTIATE(f16)
ATTNLAB_BACKWARD_INSTANTIATE(bf16)

}  // namespace attnlab

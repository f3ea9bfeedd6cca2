#include "attnlab/model/train_model.hpp"

#include "attnlab/core/nn.hpp"
#include "attnlab/core/parallel.hpp"
#include "attnlab/core/position/rope.hpp"
#include "attnlab/core/position/sinusoidal.hpp"
#include "attnlab/core/report.hpp"
#include "attnlab/core/rng.hpp"
#include "attnlab/core/position/alibi.hpp"
#include "attnlab/core/position/t5.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace attnlab::train {

Layout model_layout(const ModelConfig& cfg)
{
    const auto V = static_cast<std::size_t>(cfg.vocab), C = static_cast<std::size_t>(cfg.d_model), F = 4 * C;
    Layout l;
    auto add = [&l](std::string name, std::vector<std::size_t> shape) {
        std::size_t size = 1;
        for (std::size_t s : shape) size *= s;
        l.index[name] = l.entries.size();
        l.entries.push_back({std::move(name), std::move(shape), l.total, size});
        l.total += size;
    };
    add("wte", {V, C});
    if (cfg.pe == Scheme::learned) add("wpe", {static_cast<std::size_t>(cfg.max_len), C});
    if (cfg.pe == Scheme::t5) add("rel_bias", {static_cast<std::size_t>(kT5Buckets), static_cast<std::size_t>(cfg.heads)});
    for (long i = 0; i < cfg.layers; ++i) {
        const std::string p = fmt::format("l{}_", i);
        add(p + "ln1_w", {C}), add(p + "ln1_b", {C});
        add(p + "w_q", {C, C}), add(p + "w_k", {C, C}), add(p + "w_v", {C, C}), add(p + "w_o", {C, C});
        if (cfg.pe == Scheme::shaw) {
            const auto rows = static_cast<std::size_t>(2 * kShawClip + 1), d = C / static_cast<std::size_t>(cfg.heads);
            add(p + "rel_k", {rows, d}), add(p + "rel_v", {rows, d});
        }
        add(p + "ln2_w", {C}), add(p + "ln2_b", {C});
        add(p + "w_1", {C, F}), add(p + "b_1", {F}), add(p + "w_2", {F, C}), add(p + "b_2", {C});
    }
    add("lnf_w", {C}), add("lnf_b", {C}), add("w_u", {C, V});
    return l;
}

namespace {

// FNV-1a of a parameter's name, 24 bits: where its numbers start in the initialisation stream,
// so a weight starts the same whatever other parameters the model has (learned PE adds wpe).
std::uint64_t name_hash(const std::string& name)
{
    std::uint64_t h = 1469598103934665603ULL;
    for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    return h & 0xFFFFFFULL;
}

}  // namespace

template <class T>
Model<T> init_model(const ModelConfig& cfg, std::uint64_t seed)
{
    Model<T> m{cfg, model_layout(cfg), {}};
    m.params.assign(m.layout.total, T(0));
    for (std::size_t e = 0; e < m.layout.entries.size(); ++e) {
        const auto& entry = m.layout.entries[e];
        T* p = m.params.data() + entry.offset;
        const bool norm_weight = entry.name.size() > 2 && entry.name.compare(entry.name.size() - 2, 2, "_w") == 0 && entry.name.find("ln") != std::string::npos;
        const bool bias = entry.name.find("_b") != std::string::npos && entry.shape.size() == 1;
        if (norm_weight) std::fill(p, p + entry.size, T(1));
        else if (!bias) fill_normal(p, entry.size, seed, stream::model_init, name_hash(entry.name) << 24, 0.02);
    }
    return m;
}

namespace {

struct Dims {
    std::size_t B, T, N, C, H, d, F, V;
};
template <class T>
Dims dims(const Model<T>& m, const Batch& batch)
{
    const auto B = static_cast<std::size_t>(batch.sequences), T_len = static_cast<std::size_t>(batch.positions);
    const auto C = static_cast<std::size_t>(m.cfg.d_model), H = static_cast<std::size_t>(m.cfg.heads);
    return {B, T_len, B * T_len, C, H, C / H, 4 * C, static_cast<std::size_t>(m.cfg.vocab)};
}

// cos and sin of position t times theta_i, [T, d/2] each, computed in T as the block computes them.
template <class T>
RopeCache<T> rope_table(std::size_t T_len, std::size_t d)
{
    const long len = static_cast<long>(T_len);
    return rope_cache<T>(len, rope_frequencies<T>(static_cast<long>(d), 10000.0, RopeScalingParams{}, len).theta);
}

// q or k [N, C] rotated position by position in every head, forwards or back.
template <class T>
void rotate_rows(const std::vector<T>& in, std::vector<T>& out, const Dims& z, const RopeCache<T>& cache, Direction dir)
{
    out.resize(in.size());
    for (std::size_t r = 0; r < z.N; ++r) {
        const std::size_t t = r % z.T;
        for (std::size_t h = 0; h < z.H; ++h)
            rope_rotate(in.data() + r * z.C + h * z.d, out.data() + r * z.C + h * z.d, static_cast<long>(z.d), static_cast<long>(z.d),
                        &cache.cos(t, 0), &cache.sin(t, 0), RopeStyle::interleaved, dir);
    }
}

// What position adds to one head's attention: bias[n], its term at distance n = i - j; and
// Shaw's tables rel_k and rel_v [2K + 1, d] (null unless shaw), read at row shaw_row(i, j).
template <class T>
struct HeadPosition {
    const T* bias;
    const T* rel_k = nullptr;
    const T* rel_v = nullptr;
};
// Their gradients for one (sequence, head): d_bias [T], d_rel_k and d_rel_v [2K + 1, d].
template <class T>
struct HeadPositionGrads {
    T* bias;
    T* rel_k = nullptr;
    T* rel_v = nullptr;
};
// Row clip(j - i, -K, K) + K of Shaw's tables, for a key j <= i.
std::size_t shaw_row(std::size_t i, std::size_t j)
{
    const auto K = static_cast<std::size_t>(kShawClip);
    return K - std::min(i - j, K);
}

template <class T>
T dot(const T* a, const T* b, std::size_t n)
{
    T s = 0;
    for (std::size_t c = 0; c < n; ++c) s += a[c] * b[c];
    return s;
}

// Causal attention of one (sequence b, head h): probs [T, T] (0 above the diagonal), att rows.
// The causal mask is the loop bound j <= i; the score is (q_i . k_j (+ q_i . rel_k)) / sqrt(d)
// + bias[i - j], the output sums P_ij (v_j (+ rel_v)).
template <class T>
void attend_one(const T* q, const T* k, const T* v, T* probs, T* att, const Dims& z, std::size_t b, std::size_t h, const HeadPosition<T>& pos)
{
    const T scale = T(1) / std::sqrt(static_cast<T>(z.d));
    for (std::size_t i = 0; i < z.T; ++i) {
        const T* q_i = q + (b * z.T + i) * z.C + h * z.d;
        T* p_i = probs + i * z.T;
        // pass 1: the scores and their max
        T s_max = -std::numeric_limits<T>::infinity();
        for (std::size_t j = 0; j <= i; ++j) {
            T s = dot(q_i, k + (b * z.T + j) * z.C + h * z.d, z.d);
            if (pos.rel_k != nullptr) s += dot(q_i, pos.rel_k + shaw_row(i, j) * z.d, z.d);
            p_i[j] = s * scale + pos.bias[i - j];
            s_max = std::max(s_max, p_i[j]);
        }
        // pass 2: exp and sum; pass 3: normalise and sum the values
        T sum = 0;
        for (std::size_t j = 0; j <= i; ++j) sum += (p_i[j] = std::exp(p_i[j] - s_max));
        T* a_i = att + (b * z.T + i) * z.C + h * z.d;
        std::fill(a_i, a_i + z.d, T(0));
        for (std::size_t j = 0; j <= i; ++j) {
            p_i[j] /= sum;
            const T* v_j = v + (b * z.T + j) * z.C + h * z.d;
            for (std::size_t c = 0; c < z.d; ++c) a_i[c] += p_i[j] * v_j[c];
            if (pos.rel_v != nullptr)
                for (std::size_t c = 0; c < z.d; ++c) a_i[c] += p_i[j] * pos.rel_v[shaw_row(i, j) * z.d + c];
        }
        std::fill(p_i + i + 1, p_i + z.T, T(0));
    }
}

// Its backward: d_q, d_k, d_v rows of head h (each (b, h) writes only its own columns), and
// the position terms' own gradients: d_bias[n] += the scores' gradient at distance n; Shaw's
// rows get what their k_j and v_j would.
template <class T>
void attend_one_backward(const T* q, const T* k, const T* v, const T* probs, const T* d_att, T* d_q, T* d_k, T* d_v, const HeadPosition<T>& pos,
                         const HeadPositionGrads<T>& d_pos, const Dims& z, std::size_t b, std::size_t h)
{
    const T scale = T(1) / std::sqrt(static_cast<T>(z.d));
    std::vector<T> dp(z.T);
    auto row = [&](const T* base, std::size_t t) { return base + (b * z.T + t) * z.C + h * z.d; };
    auto row_w = [&](T* base, std::size_t t) { return base + (b * z.T + t) * z.C + h * z.d; };
    for (std::size_t i = 0; i < z.T; ++i) {
        const T* p_i = probs + i * z.T;
        const T* da_i = row(d_att, i);
        // d_weights_ij = d_att_i . (v_j + rel_v); d_v_j (and d_rel_v) += P_ij d_att_i
        T delta = 0;
        for (std::size_t j = 0; j <= i; ++j) {
            const T* v_j = row(v, j);
            T* dv_j = row_w(d_v, j);
            T s = 0;
            for (std::size_t c = 0; c < z.d; ++c) s += da_i[c] * v_j[c], dv_j[c] += p_i[j] * da_i[c];
            if (pos.rel_v != nullptr) {
                const std::size_t r = shaw_row(i, j) * z.d;
                for (std::size_t c = 0; c < z.d; ++c) s += da_i[c] * pos.rel_v[r + c], d_pos.rel_v[r + c] += p_i[j] * da_i[c];
            }
            dp[j] = s;
            delta += p_i[j] * s;
        }
        // d_scores_ij = P_ij (d_weights_ij - delta_i); d_q_i += scale ds (k_j + rel_k); d_k_j (and d_rel_k) += scale ds q_i
        T* dq_i = row_w(d_q, i);
        const T* q_i = row(q, i);
        for (std::size_t j = 0; j <= i; ++j) {
            const T raw = p_i[j] * (dp[j] - delta), ds = raw * scale;
            d_pos.bias[i - j] += raw;
            const T* k_j = row(k, j);
            T* dk_j = row_w(d_k, j);
            for (std::size_t c = 0; c < z.d; ++c) dq_i[c] += ds * k_j[c], dk_j[c] += ds * q_i[c];
            if (pos.rel_k != nullptr) {
                const std::size_t r = shaw_row(i, j) * z.d;
                for (std::size_t c = 0; c < z.d; ++c) dq_i[c] += ds * pos.rel_k[r + c], d_pos.rel_k[r + c] += ds * q_i[c];
            }
        }
    }
}

// T5's decoder bucket of distance n = i - j (offset j - i = -n, causal).
std::size_t t5_decoder_bucket(std::size_t n)
{
    return static_cast<std::size_t>(t5_bucket(-static_cast<long>(n), T5Direction::causal, kT5Buckets, kT5MaxDistance));
}

// The term head h adds to a score at distance n = i - j, [H, T]: ALiBi's -(slope n), T5's
// rel_bias[bucket(-n), h], 0 otherwise.
template <class T>
std::vector<T> distance_bias(const Model<T>& m, const Dims& z)
{
    std::vector<T> bias(z.H * z.T, T(0));
    if (m.cfg.pe == Scheme::alibi) {
        const std::vector<double> slopes = alibi_slopes(m.cfg.heads, SlopeRule::reference_code);
        for (std::size_t h = 0; h < z.H; ++h)
            for (std::size_t n = 0; n < z.T; ++n) bias[h * z.T + n] = -(static_cast<T>(slopes[h]) * static_cast<T>(n));
    }
    if (m.cfg.pe == Scheme::t5) {
        const T* table = m.p("rel_bias");
        for (std::size_t n = 0; n < z.T; ++n) {
            const std::size_t bucket = t5_decoder_bucket(n);
            for (std::size_t h = 0; h < z.H; ++h) bias[h * z.T + n] = table[bucket * z.H + h];
        }
    }
    return bias;
}

// x0 [N, C]: the token's embedding plus the position's (learned row or sinusoidal PE).
template <class T>
void embed(const Model<T>& m, const Batch& batch, const Dims& z, std::vector<T>& x0)
{
    if (m.cfg.pe == Scheme::learned && batch.positions > m.cfg.max_len) {
        throw InputError(fmt::format("a learned position table has {} rows: it cannot run at {} positions", m.cfg.max_len, batch.positions));
    }
    x0.assign(z.N * z.C, T(0));
    Mat<T> pe;
    if (m.cfg.pe == Scheme::sinusoidal) {
        std::vector<long> positions(z.T);
        std::iota(positions.begin(), positions.end(), 0L);
        pe = sinusoidal_rows<T>(positions, pe_frequencies<T>(static_cast<long>(z.C), 10000.0, PeLayout::interleaved, FreqMethod::exp_log), PeLayout::interleaved);
    }
    const T* wte = m.p("wte");
    for (std::size_t r = 0; r < z.N; ++r) {
        const T* e = wte + static_cast<std::size_t>(batch.tokens[r]) * z.C;
        const std::size_t t = r % z.T;
        for (std::size_t c = 0; c < z.C; ++c) x0[r * z.C + c] = e[c];
        if (m.cfg.pe == Scheme::learned)
            for (std::size_t c = 0; c < z.C; ++c) x0[r * z.C + c] += m.p("wpe")[t * z.C + c];
        if (m.cfg.pe == Scheme::sinusoidal)
            for (std::size_t c = 0; c < z.C; ++c) x0[r * z.C + c] += pe(t, c);
    }
}

// One block forward: x (the residual stream [N, C]) updated in place, the caches filled.
template <class T>
void block_forward(const Model<T>& m, long layer, const Dims& z, std::vector<T>& x, typename Activations<T>::LayerCache& c, unsigned threads)
{
    const std::string p = fmt::format("l{}_", layer);
    const std::size_t NC = z.N * z.C;
    c.x_in = x;
    c.ln1.resize(NC), c.mean1.resize(z.N), c.rstd1.resize(z.N), c.q.resize(NC), c.k.resize(NC), c.v.resize(NC), c.att.resize(NC);
    nn::layernorm_forward(x.data(), m.p(p + "ln1_w"), m.p(p + "ln1_b"), c.ln1.data(), c.mean1.data(), c.rstd1.data(), z.N, z.C);
    nn::linear_forward(c.ln1.data(), m.p(p + "w_q"), static_cast<const T*>(nullptr), c.q.data(), z.N, z.C, z.C);
    nn::linear_forward(c.ln1.data(), m.p(p + "w_k"), static_cast<const T*>(nullptr), c.k.data(), z.N, z.C, z.C);
    nn::linear_forward(c.ln1.data(), m.p(p + "w_v"), static_cast<const T*>(nullptr), c.v.data(), z.N, z.C, z.C);
    const bool rope = m.cfg.pe == Scheme::rope;
    if (rope) {
        const RopeCache<T> cache = rope_table<T>(z.T, z.d);
        rotate_rows(c.q, c.q_rot, z, cache, Direction::forward);
        rotate_rows(c.k, c.k_rot, z, cache, Direction::forward);
    }
    const std::vector<T>&q = rope ? c.q_rot : c.q, &k = rope ? c.k_rot : c.k;
    c.probs.assign(z.B * z.H * z.T * z.T, T(0));
    const std::vector<T> bias = distance_bias(m, z);
    const bool shaw = m.cfg.pe == Scheme::shaw;
    parallel_for(z.B * z.H, thread_count(threads), [&](std::size_t bh) {
        const HeadPosition<T> pos{bias.data() + (bh % z.H) * z.T, shaw ? m.p(p + "rel_k") : nullptr, shaw ? m.p(p + "rel_v") : nullptr};
        attend_one(q.data(), k.data(), c.v.data(), c.probs.data() + bh * z.T * z.T, c.att.data(), z, bh / z.H, bh % z.H, pos);
    });
    std::vector<T> proj(NC);
    nn::linear_forward(c.att.data(), m.p(p + "w_o"), static_cast<const T*>(nullptr), proj.data(), z.N, z.C, z.C);
    for (std::size_t i = 0; i < NC; ++i) x[i] += proj[i];
    c.x_mid = x;
    c.ln2.resize(NC), c.mean2.resize(z.N), c.rstd2.resize(z.N), c.h1.resize(z.N * z.F), c.g.resize(z.N * z.F), c.tanh_u.resize(z.N * z.F);
    nn::layernorm_forward(x.data(), m.p(p + "ln2_w"), m.p(p + "ln2_b"), c.ln2.data(), c.mean2.data(), c.rstd2.data(), z.N, z.C);
    nn::linear_forward(c.ln2.data(), m.p(p + "w_1"), m.p(p + "b_1"), c.h1.data(), z.N, z.C, z.F);
    nn::gelu_forward(c.h1.data(), c.g.data(), c.tanh_u.data(), z.N * z.F);
    nn::linear_forward(c.g.data(), m.p(p + "w_2"), m.p(p + "b_2"), proj.data(), z.N, z.F, z.C);
    for (std::size_t i = 0; i < NC; ++i) x[i] += proj[i];
}

}  // namespace

template <class T>
double model_forward(const Model<T>& m, const Batch& batch, Activations<T>& act, unsigned threads)
{
    const Dims z = dims(m, batch);
    act.B = batch.sequences, act.T_len = batch.positions;
    embed(m, batch, z, act.x0);
    std::vector<T> x = act.x0;
    act.layers.resize(static_cast<std::size_t>(m.cfg.layers));
    for (long l = 0; l < m.cfg.layers; ++l) block_forward(m, l, z, x, act.layers[static_cast<std::size_t>(l)], threads);
    act.x_final = x;
    act.lnf.resize(z.N * z.C), act.meanf.resize(z.N), act.rstdf.resize(z.N), act.logits.resize(z.N * z.V), act.d_logits.resize(z.N * z.V);
    nn::layernorm_forward(x.data(), m.p("lnf_w"), m.p("lnf_b"), act.lnf.data(), act.meanf.data(), act.rstdf.data(), z.N, z.C);
    nn::linear_forward(act.lnf.data(), m.p("w_u"), static_cast<const T*>(nullptr), act.logits.data(), z.N, z.C, z.V);
    return nn::cross_entropy(act.logits.data(), batch.targets, act.d_logits.data(), z.N, z.V);
}

namespace {

// rel_bias's gradient from one layer's d_bias [B, H, distance]: each distance's to its bucket.
template <class T>
void add_t5_gradient(const std::vector<T>& d_bias, const Dims& z, T* g)
{
    for (std::size_t n = 0; n < z.T; ++n) {
        const std::size_t bucket = t5_decoder_bucket(n);
        for (std::size_t b = 0; b < z.B; ++b)
            for (std::size_t h = 0; h < z.H; ++h) g[bucket * z.H + h] += d_bias[(b * z.H + h) * z.T + n];
    }
}

// g[e] += sum over the (b, h) blocks of per_head[block * n + e], in block order.
template <class T>
void sum_rows(const std::vector<T>& per_head, std::size_t n, T* g)
{
    for (std::size_t block = 0; block * n < per_head.size(); ++block)
        for (std::size_t e = 0; e < n; ++e) g[e] += per_head[block * n + e];
}

// One block backward: d_x (the residual stream's gradient) updated in place.
template <class T>
void block_backward(const Model<T>& m, const Layout& lay, long layer, const Dims& z, const typename Activations<T>::LayerCache& c,
                    std::vector<T>& d_x, std::vector<T>& grads, unsigned threads)
{
    const std::string p = fmt::format("l{}_", layer);
    auto g = [&](const std::string& name) { return grads.data() + lay.at(p + name).offset; };
    const std::size_t NC = z.N * z.C;
    // the MLP: x += GELU(LN2(x) W_1 + b_1) W_2 + b_2
    std::vector<T> d_g(z.N * z.F, T(0)), d_h1(z.N * z.F, T(0)), d_ln(NC, T(0));
    nn::linear_backward(d_x.data(), c.g.data(), m.p(p + "w_2"), d_g.data(), g("w_2"), g("b_2"), z.N, z.F, z.C);
    nn::gelu_backward(c.h1.data(), c.tanh_u.data(), d_g.data(), d_h1.data(), z.N * z.F);
    nn::linear_backward(d_h1.data(), c.ln2.data(), m.p(p + "w_1"), d_ln.data(), g("w_1"), g("b_1"), z.N, z.C, z.F);
    nn::layernorm_backward(d_ln.data(), c.x_mid.data(), m.p(p + "ln2_w"), c.mean2.data(), c.rstd2.data(), d_x.data(), g("ln2_w"), g("ln2_b"), z.N, z.C);
    // attention: x += a W_o
    std::vector<T> d_att(NC, T(0)), d_q(NC, T(0)), d_k(NC, T(0)), d_v(NC, T(0));
    nn::linear_backward(d_x.data(), c.att.data(), m.p(p + "w_o"), d_att.data(), g("w_o"), static_cast<T*>(nullptr), z.N, z.C, z.C);
    const bool rope = m.cfg.pe == Scheme::rope;
    const std::vector<T>&q = rope ? c.q_rot : c.q, &k = rope ? c.k_rot : c.k;
    // the position terms' gradients, [B, H, ...]: each (b, h) its own rows, summed below in one order
    const bool shaw = m.cfg.pe == Scheme::shaw;
    const std::size_t table = shaw ? static_cast<std::size_t>(2 * kShawClip + 1) * z.d : 0;
    std::vector<T> d_bias(z.B * z.H * z.T, T(0)), d_rel_k(z.B * z.H * table, T(0)), d_rel_v(z.B * z.H * table, T(0));
    const std::vector<T> bias = distance_bias(m, z);
    parallel_for(z.B * z.H, thread_count(threads), [&](std::size_t bh) {
        const HeadPosition<T> pos{bias.data() + (bh % z.H) * z.T, shaw ? m.p(p + "rel_k") : nullptr, shaw ? m.p(p + "rel_v") : nullptr};
        const HeadPositionGrads<T> d_pos{d_bias.data() + bh * z.T, d_rel_k.data() + bh * table, d_rel_v.data() + bh * table};
        attend_one_backward(q.data(), k.data(), c.v.data(), c.probs.data() + bh * z.T * z.T, d_att.data(), d_q.data(), d_k.data(), d_v.data(), pos, d_pos, z,
                            bh / z.H, bh % z.H);
    });
    if (m.cfg.pe == Scheme::t5) add_t5_gradient(d_bias, z, grads.data() + lay.at("rel_bias").offset);
    if (shaw) sum_rows(d_rel_k, table, g("rel_k")), sum_rows(d_rel_v, table, g("rel_v"));
    if (rope) {  // q_rot = R q, so d_q = R^T d_q_rot: the rotation back
        const RopeCache<T> cache = rope_table<T>(z.T, z.d);
        std::vector<T> back;
        rotate_rows(d_q, back, z, cache, Direction::inverse), d_q.swap(back);
        rotate_rows(d_k, back, z, cache, Direction::inverse), d_k.swap(back);
    }
    std::fill(d_ln.begin(), d_ln.end(), T(0));
    nn::linear_backward(d_q.data(), c.ln1.data(), m.p(p + "w_q"), d_ln.data(), g("w_q"), static_cast<T*>(nullptr), z.N, z.C, z.C);
    nn::linear_backward(d_k.data(), c.ln1.data(), m.p(p + "w_k"), d_ln.data(), g("w_k"), static_cast<T*>(nullptr), z.N, z.C, z.C);
    nn::linear_backward(d_v.data(), c.ln1.data(), m.p(p + "w_v"), d_ln.data(), g("w_v"), static_cast<T*>(nullptr), z.N, z.C, z.C);
    nn::layernorm_backward(d_ln.data(), c.x_in.data(), m.p(p + "ln1_w"), c.mean1.data(), c.rstd1.data(), d_x.data(), g("ln1_w"), g("ln1_b"), z.N, z.C);
}

}  // namespace

template <class T>
void model_backward(const Model<T>& m, const Batch& batch, Activations<T>& act, std::vector<T>& grads, unsigned threads)
{
    const Dims z = dims(m, batch);
    const Layout& lay = m.layout;
    grads.assign(m.params.size(), T(0));
    auto g = [&](const std::string& name) { return grads.data() + lay.at(name).offset; };
    std::vector<T> d_lnf(z.N * z.C, T(0)), d_x(z.N * z.C, T(0));
    nn::linear_backward(act.d_logits.data(), act.lnf.data(), m.p("w_u"), d_lnf.data(), g("w_u"), static_cast<T*>(nullptr), z.N, z.C, z.V);
    nn::layernorm_backward(d_lnf.data(), act.x_final.data(), m.p("lnf_w"), act.meanf.data(), act.rstdf.data(), d_x.data(), g("lnf_w"), g("lnf_b"), z.N, z.C);
    for (long l = m.cfg.layers; l-- > 0;) block_backward(m, lay, l, z, act.layers[static_cast<std::size_t>(l)], d_x, grads, threads);
    // the embeddings: each row's gradient goes to its token's row (and its position's)
    for (std::size_t r = 0; r < z.N; ++r) {
        T* e = g("wte") + static_cast<std::size_t>(batch.tokens[r]) * z.C;
        for (std::size_t c = 0; c < z.C; ++c) e[c] += d_x[r * z.C + c];
        if (m.cfg.pe == Scheme::learned)
            for (std::size_t c = 0; c < z.C; ++c) g("wpe")[(r % z.T) * z.C + c] += d_x[r * z.C + c];
    }
}

template <class T>
std::vector<int> hits(const Activations<T>& act, const Batch& batch, long vocab)
{
    const auto V = static_cast<std::size_t>(vocab);
    std::vector<int> out(batch.targets.size(), -1);
    for (std::size_t r = 0; r < batch.targets.size(); ++r) {
        if (batch.targets[r] < 0) continue;
        const T* z = act.logits.data() + r * V;
        out[r] = static_cast<long>(std::max_element(z, z + V) - z) == batch.targets[r] ? 1 : 0;
    }
    return out;
}

template <class T>
double train_step(Model<T>& m, Optimizer<T>& opt, const Batch& batch, const StepConfig& cfg)
{
    StepBuffers<T> buffers;
    return train_step(m, opt, batch, cfg, buffers);
}

template <class T>
double train_step(Model<T>& m, Optimizer<T>& opt, const Batch& batch, const StepConfig& cfg, StepBuffers<T>& buffers)
{
    Activations<T>& act = buffers.act;
    std::vector<T>& grads = buffers.grads;
    const double loss = model_forward(m, batch, act, cfg.threads);
    model_backward(m, batch, act, grads, cfg.threads);
    // clip_grad_norm_: the norm of the per-parameter norms, which is the norm of them all
    double sum_sq = 0.0;
    for (const auto& e : m.layout.entries) {
        double part = 0.0;
        for (std::size_t i = e.offset; i < e.offset + e.size; ++i) part += static_cast<double>(grads[i]) * static_cast<double>(grads[i]);
        sum_sq += part;
    }
    const T coef = static_cast<T>(std::min(1.0, cfg.max_norm / (std::sqrt(sum_sq) + 1e-6)));
    for (T& g : grads) g *= coef;
    if (opt.m.empty()) opt.m.assign(m.params.size(), T(0)), opt.v.assign(m.params.size(), T(0));
    ++opt.step;
    const nn::AdamW adamw{cfg.lr, cfg.beta1, cfg.beta2, cfg.eps, cfg.weight_decay};
    nn::adamw_step(m.params.data(), grads.data(), opt.m.data(), opt.v.data(), m.params.size(), opt.step, adamw);
    return loss;
}

#define ATTNLAB_TRAIN_INSTANTIATE(T)                                                                 \
    template Model<T> init_model<T>(const ModelConfig&, std::uint64_t);                              \
    template double model_forward<T>(const Model<T>&, const Batch&, Activations<T>&, unsigned);      \
    template void model_backward<T>(const Model<T>&, const Batch&, Activations<T>&, std::vector<T>&, unsigned); \
    template std::vector<int> hits<T>(const Activations<T>&, const Batch&, long);                    \
    template double train_step<T>(Model<T>&, Optimizer<T>&, const Batch&, const StepConfig&);          \
    template double train_step<T>(Model<T>&, Optimizer<T>&, const Batch&, const StepConfig&, StepBuffers<T>&);
ATTNLAB_TRAIN_INSTANTIATE(float)
ATTNLAB_TRAIN_INSTANTIATE(double)

}  // namespace attnlab::train

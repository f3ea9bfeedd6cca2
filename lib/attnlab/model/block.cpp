#include "attnlab/model/block.hpp"

#include "attnlab/core/position/alibi.hpp"
#include "attnlab/core/position/sinusoidal.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <numeric>

namespace attnlab {

namespace {

// The tokens' positions: the ones given (--positions), else 0..count-1.
std::vector<long> token_positions(const BlockConfig& cfg, long count)
{
    if (!cfg.positions.empty()) return cfg.positions;
    std::vector<long> positions(static_cast<std::size_t>(count));
    std::iota(positions.begin(), positions.end(), 0L);
    return positions;
}

// The sinusoidal rows the block adds to X, one per position.
template <class T>
Mat<T> pe_table(long E, const std::vector<long>& positions)
{
    return sinusoidal_rows<T>(positions, pe_frequencies<T>(E, 10000.0, PeLayout::interleaved, FreqMethod::exp_log), PeLayout::interleaved);
}

// RoPE's angles at those positions, base 10000, no scaling.
template <class T>
RopeCache<T> block_rope_cache(long d, const std::vector<long>& positions)
{
    return rope_cache_at<T>(positions, rope_frequencies<T>(d, 10000.0, RopeScalingParams{}, static_cast<long>(positions.size())).theta);
}

}  // namespace

template <class T>
BlockResult<T> prepare_block(const Ten3<T>& x, const Ten3<T>& x_kv, const BlockWeights<T>& w, const BlockConfig& cfg)
{
    const long E = static_cast<long>(x.shape(2));
    const long L = static_cast<long>(x.shape(1)), S = static_cast<long>(x_kv.shape(1));
    const long d = E / cfg.heads;
    BlockResult<T> r;
    r.scale = cfg.scale.value_or(1.0 / std::sqrt(static_cast<double>(d)));
    // Query i sits at position q0 + i: past the S - L cached keys for a lower-right decoder
    // step (Hugging Face's position_ids = cache_len + arange(L)), from 0 otherwise.
    const long q0 = query_position_offset(cfg.mask.align, L, S);
    r.q0 = q0;
    const std::vector<long> positions = token_positions(cfg, std::max(q0 + L, S));  // given ones: self-attention, q0 = 0

    // 1. sinusoidal PE is added to the embeddings, before any projection (x_pe stays empty
    //    without it: the projections then read x itself, and no copy is made).
    //    Self-attention's keys read x_pe too (q0 = 0 there); cross-attention keeps its own.
    const bool cross = &x_kv != &x;
    if (cfg.pe == PeKind::sinusoidal) {
        const Mat<T> table = pe_table<T>(E, positions);
        r.x_pe = x + xt::view(table, xt::newaxis(), xt::range(q0, q0 + L), xt::all());
        if (cross) r.x_kv_pe = x_kv + xt::view(table, xt::newaxis(), xt::range(0, S), xt::all());
    }
    const Ten3<T>& x_in = cfg.pe == PeKind::sinusoidal ? r.x_pe : x;
    const Ten3<T>& kv_in = cfg.pe == PeKind::sinusoidal ? (cross ? r.x_kv_pe : r.x_pe) : x_kv;
    // 2. projections, row vectors times W [in, out], then the heads split.
    r.q = project_heads(x_in, w.w_q, cfg.heads, cfg.threads);
    r.k = project_heads(kv_in, w.w_k, cfg.kv_heads, cfg.threads);
    r.v = project_heads(kv_in, w.w_v, cfg.kv_heads, cfg.threads);
    // 3. RoPE rotates q and k after the projections, by their own positions.
    if (cfg.pe == PeKind::rope) {
        const RopeCache<T> cache = block_rope_cache<T>(d, positions);
        r.q_unrotated = r.q;
        r.k_unrotated = r.k;
        r.q = rope_apply(r.q, cache, d, cfg.rope_style, Direction::forward, q0);
        r.k = rope_apply(r.k, cache, d, cfg.rope_style);
    }
    // 4. ALiBi is a per-head bias on the scores, -m |position(i) - j|.
    if (cfg.pe == PeKind::alibi) {
        r.slopes = alibi_slopes(cfg.heads, SlopeRule::reference_code);
        r.bias = cfg.positions.empty() ? alibi_bias<T>(r.slopes, L, S, AlibiVariant::symmetric, q0) : alibi_bias_at<T>(r.slopes, positions);
    }
    return r;
}

template <class T>
Ten4<T> block_rotate(const Ten4<T>& t, const BlockConfig& cfg, long positions, long first, Direction dir)
{
    const long d = static_cast<long>(t.shape(3));
    return rope_apply(t, block_rope_cache<T>(d, token_positions(cfg, positions)), d, cfg.rope_style, dir, first);
}

template <class T>
std::pair<Ten4<T>, Ten4<T>> self_kv_rows(const Ten3<T>& x_rows, long first, long positions, const BlockWeights<T>& w, const BlockConfig& cfg)
{
    const long E = static_cast<long>(x_rows.shape(2)), n = static_cast<long>(x_rows.shape(1));
    const std::vector<long> at = token_positions(cfg, positions);
    Ten3<T> with_pe;
    if (cfg.pe == PeKind::sinusoidal) {
        const Mat<T> table = pe_table<T>(E, at);
        with_pe = x_rows + xt::view(table, xt::newaxis(), xt::range(first, first + n), xt::all());
    }
    const Ten3<T>& in = cfg.pe == PeKind::sinusoidal ? with_pe : x_rows;
    std::pair<Ten4<T>, Ten4<T>> kv{project_heads(in, w.w_k, cfg.kv_heads, cfg.threads), project_heads(in, w.w_v, cfg.kv_heads, cfg.threads)};
    if (cfg.pe == PeKind::rope) {
        const long d = E / cfg.heads;
        kv.first = rope_apply(kv.first, block_rope_cache<T>(d, at), d, cfg.rope_style, Direction::forward, first);
    }
    return kv;
}

template <class T>
BlockResult<T> run_block(const Ten3<T>& x, const Ten3<T>& x_kv, const BlockWeights<T>& w, const BlockConfig& cfg,
                         Matrices matrices, std::optional<RowRange> rows)
{
    BlockResult<T> r = prepare_block(x, x_kv, w, cfg);
    r.attn = attention(attention_inputs(r, cfg), matrices, rows);
    return r;
}

template <class T>
AttentionInputs<T> attention_inputs(const BlockResult<T>& r, const BlockConfig& cfg)
{
    AttentionInputs<T> in;
    in.q = &r.q;
    in.k = &r.k;
    in.v = &r.v;
    in.mask = &cfg.mask;
    // ALiBi's bias tiles are computed from the slopes as the kernel goes (the same bits as r.bias);
    // at given positions the kernel reads r.bias itself.
    if (cfg.pe == PeKind::alibi && cfg.positions.empty()) in.alibi_slopes = &r.slopes, in.alibi_q0 = r.q0;
    if (cfg.pe == PeKind::alibi && !cfg.positions.empty()) in.head_bias = View<T, 3>(&r.bias);
    in.scale = r.scale;
    in.softmax = cfg.softmax;
    in.threads = cfg.threads;
    in.probes = cfg.probes.empty() ? nullptr : &cfg.probes;
    return in;
}

long query_position_offset(Align align, long queries, long keys)
{
    return align == Align::lower_right && keys > queries ? keys - queries : 0;
}

#define ATTNLAB_BLOCK_INSTANTIATE(T)                                                                            \
    template AttentionInputs<T> attention_inputs<T>(const BlockResult<T>&, const BlockConfig&);                 \
    template BlockResult<T> prepare_block<T>(const Ten3<T>&, const Ten3<T>&, const BlockWeights<T>&, const BlockConfig&); \
    template Ten4<T> block_rotate<T>(const Ten4<T>&, const BlockConfig&, long, long, Direction); \
    template std::pair<Ten4<T>, Ten4<T>> self_kv_rows<T>(const Ten3<T>&, long, long, const BlockWeights<T>&, const BlockConfig&); \
    template BlockResult<T> run_block<T>(const Ten3<T>&, const Ten3<T>&, const BlockWeights<T>&, const BlockConfig&, \
                                         Matrices, std::optional<RowRange>);
ATTNLAB_BLOCK_INSTANTIATE(float)
ATTNLAB_BLOCK_INSTANTIATE(double)
ATTNLAB_BLOCK_INSTANTIATE(f16)
ATTNLAB_BLOCK_INSTANTIATE(bf16)

}  // namespace attnlab

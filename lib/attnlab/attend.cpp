#include "attnlab/attend.hpp"

#include "attnlab/rng.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace attnlab {

namespace {

struct Resolved {
    BlockConfig cfg;
    long batch = 1, len = 1, kv_len = 1, dim = 1;
    bool cross = false;
};

Resolved resolve(const AttendParams& p)
{
    Resolved r;
    if (p.len < 1 || p.dim < 1 || p.heads < 1) throw InputError("--len, --dim and --heads must be at least 1");
    if (p.dim % p.heads != 0) {
        throw InputError(fmt::format("--dim {} is not divisible by --heads {}: each head takes E/H dimensions", p.dim, p.heads));
    }
    const long d = p.dim / p.heads;
    const long kv_heads = p.kv_heads.value_or(p.heads);
    if (kv_heads < 1 || p.heads % kv_heads != 0) {
        throw InputError(fmt::format("--kv-heads {} must divide --heads {} (grouped-query attention)", kv_heads, p.heads));
    }
    if (p.pe == PeKind::rope && d % 2 != 0) {
        throw InputError(fmt::format("--pe rope needs an even head dimension; E/H = {}/{} = {}", p.dim, p.heads, d));
    }
    if (p.pe == PeKind::sinusoidal && p.dim % 2 != 0) {
        throw InputError(fmt::format("--pe sinusoidal needs an even --dim (got {})", p.dim));
    }
    if (p.scale && !(*p.scale > 0.0)) throw InputError("--scale must be positive");
    r.len = p.len;
    r.kv_len = p.kv_len.value_or(p.len);
    if (r.kv_len < 1) throw InputError("--kv-len must be at least 1");
    r.cross = p.kv_len.has_value();
    r.dim = p.dim;
    const bool padding = p.mask == MaskKind::padding || p.mask == MaskKind::both;
    if (padding) {
        if (p.lengths.empty()) throw InputError(fmt::format("--mask {} needs --lengths", name_of(p.mask)));
        if (p.batch_given && *p.batch_given != static_cast<long>(p.lengths.size())) {
            throw InputError(fmt::format("--batch {} but --lengths gives {} lengths", *p.batch_given, p.lengths.size()));
        }
        for (long n : p.lengths) {
            if (n < 0 || n > r.kv_len) {
                throw InputError(fmt::format("--lengths must lie in 0..{} (the key length); got {}", r.kv_len, n));
            }
        }
        r.batch = static_cast<long>(p.lengths.size());
    } else {
        if (!p.lengths.empty()) throw InputError(fmt::format("--lengths describes padding; it makes no sense with --mask {}", name_of(p.mask)));
        r.batch = p.batch_given.value_or(p.batch);
    }
    if (r.batch < 1) throw InputError("--batch must be at least 1");
    if (p.mask == MaskKind::window && (!p.window || *p.window < 1)) throw InputError("--mask window needs --window W >= 1");
    if (p.mask != MaskKind::window && p.window) throw InputError("--window applies to --mask window");
    r.cfg.heads = p.heads;
    r.cfg.kv_heads = kv_heads;
    r.cfg.scale = p.scale;
    r.cfg.pe = p.pe;
    r.cfg.rope_style = p.rope_style;
    r.cfg.softmax = p.softmax;
    r.cfg.mask.kind = p.mask;
    r.cfg.mask.queries = r.len;
    r.cfg.mask.keys = r.kv_len;
    r.cfg.mask.lengths = p.lengths;
    r.cfg.mask.window = p.window.value_or(0);
    r.cfg.mask.align = p.align;
    return r;
}

template <class T>
double max_abs_diff_rows(const Ten4<T>& a, const Ten4<T>& b, const std::vector<RowRange>& rows, long row_limit = -1)
{
    double worst = 0.0;
    for (std::size_t bb = 0; bb < a.shape(0); ++bb)
        for (std::size_t h = 0; h < a.shape(1); ++h)
            for (const auto& r : rows)
                for (long i = r.begin; i < r.end; ++i) {
                    if (row_limit >= 0 && i > row_limit) continue;
                    for (std::size_t c = 0; c < a.shape(3); ++c) {
                        const double x = a(bb, h, i, c), y = b(bb, h, i, c);
                        if (std::isnan(x) && std::isnan(y)) continue;
                        worst = std::max(worst, std::isnan(x - y) ? std::numeric_limits<double>::infinity() : std::abs(x - y));
                    }
                }
    return worst;
}

template <class T>
Report run_attend_typed(const AttendParams& p, const Resolved& r, const RunContext& ctx)
{
    const auto B = static_cast<std::size_t>(r.batch), L = static_cast<std::size_t>(r.len),
               S = static_cast<std::size_t>(r.kv_len), E = static_cast<std::size_t>(r.dim),
               H = static_cast<std::size_t>(p.heads), Hkv = static_cast<std::size_t>(r.cfg.kv_heads);
    const std::size_t d = E / H;

    Recorder rec("attend", "out_merged", ctx);
    auto& par = rec.params();
    par["batch"] = r.batch;
    par["len"] = r.len;
    par["kv_len"] = r.kv_len;
    par["cross_attention"] = r.cross;
    par["heads"] = p.heads;
    par["kv_heads"] = r.cfg.kv_heads;
    par["dim"] = r.dim;
    par["head_dim"] = d;
    par["pe"] = name_of(p.pe);
    par["rope_style"] = name_of(p.rope_style);
    par["mask"] = name_of(p.mask);
    par["lengths"] = p.lengths;
    par["window"] = p.window ? nlohmann::ordered_json(*p.window) : nullptr;
    par["align"] = name_of(p.align);
    par["softmax"] = name_of(p.softmax);
    par["weight_layout"] = "[in, out]: Q = X W_q (PyTorch's nn.Linear stores the transpose)";

    const bool keep = rec.wants("scores") || rec.wants("weights");
    const double elem = sizeof(T);
    const double big = static_cast<double>(B) * static_cast<double>(H) * static_cast<double>(L) * static_cast<double>(S);
    double bytes = elem * (4.0 * static_cast<double>(B * L * E) + 4.0 * static_cast<double>(B * S * E) +
                           3.0 * static_cast<double>(E * E)) * 2.0;
    if (keep) bytes += 2.0 * big * (elem + 8.0);
    if (p.pe == PeKind::alibi) bytes += static_cast<double>(H * L * S) * elem;
    require_memory(bytes, ctx, keep ? fmt::format("scores and weights [{}, {}, {}, {}]; --show can leave them out", B, H, L, S)
                                    : fmt::format("x, q, k, v and out for [{}, {}, {}]", B, L, E));

    const Elem EL = elem_of<T>();
    const double eps = eps_of(ctx.dtype);
    const Ten3<T> x = random_tensor3<T>(B, L, E, ctx.seed, stream::x);
    const Ten3<T> x_kv = r.cross ? random_tensor3<T>(B, S, E, ctx.seed, stream::x_kv) : x;
    BlockWeights<T> w{random_weight<T>(r.dim, r.dim, ctx.seed, stream::w_q),
                      random_weight<T>(r.dim, static_cast<long>(Hkv * d), ctx.seed, stream::w_k),
                      random_weight<T>(r.dim, static_cast<long>(Hkv * d), ctx.seed, stream::w_v)};
    const BlockResult<T> res = run_block(x, x_kv, w, r.cfg, keep);
    par["scale"] = res.scale;

    // Pipeline order, so the text reads as the data flows.
    rec.tensor("x", {"batch", "pos", "dim"}, x, EL);
    if (r.cross) rec.tensor("x_kv", {"batch", "pos", "dim"}, x_kv, EL);
    if (p.pe == PeKind::sinusoidal) rec.tensor("x_pe", {"batch", "pos", "dim"}, res.x_pe, EL);
    rec.tensor("w_q", {"in", "out"}, w.w_q, EL);
    rec.tensor("w_k", {"in", "out"}, w.w_k, EL);
    rec.tensor("w_v", {"in", "out"}, w.w_v, EL);
    rec.tensor("q", {"batch", "head", "pos", "dim"}, res.q, EL);
    rec.tensor("k", {"batch", "head", "pos", "dim"}, res.k, EL);
    rec.tensor("v", {"batch", "head", "pos", "dim"}, res.v, EL);
    if (p.pe == PeKind::alibi) rec.tensor("bias", {"head", "query", "key"}, res.bias, EL);
    if (keep) {
        rec.tensor("scores", {"batch", "head", "query", "key"}, res.attn.scores, EL);
        rec.tensor("weights", {"batch", "head", "query", "key"}, res.attn.weights, EL);
    }
    rec.tensor("out", {"batch", "head", "pos", "dim"}, res.attn.out, EL);
    if (rec.wants("out_merged")) rec.tensor("out_merged", {"batch", "pos", "dim"}, merge_heads(res.attn.out), EL);

    const auto& st = res.attn.stats;
    const bool any_mask = p.mask != MaskKind::none;
    rec.check({"rows_sum_to_one", "every weights row that is not fully masked sums to 1", "max |sum_j w - 1|",
               st.max_row_sum_error, eps * (static_cast<double>(S) + 4.0)});
    if (any_mask) {
        rec.check({"masked_weights_exactly_zero", "every masked weight is exactly 0", "max |w| at masked keys",
                   st.max_masked_weight, 0.0, Compare::le, Role::invariant, TolKind::fixed});
    }
    rec.check({"no_nan_weights", "no attention weight is NaN", "NaN weights", static_cast<double>(st.nan_weights), 0.0,
               Compare::le, Role::invariant, TolKind::fixed});

    // Main against the plain-loop reference, on the rows a reference pass can afford.
    const auto rows = check_rows(r.len, static_cast<double>(B * H * S * d) * 2.0);
    {
        AttentionInputs<T> in;
        in.q = &res.q;
        in.k = &res.k;
        in.v = &res.v;
        in.mask = &r.cfg.mask;
        in.head_bias = p.pe == PeKind::alibi ? &res.bias : nullptr;
        in.scale = res.scale;
        in.softmax = p.softmax;
        double worst = 0.0, max_v = 0.0;
        for (const auto& rr : rows) worst = std::max(worst, max_abs_diff_rows(attention_reference(in, rr).out, res.attn.out, {rr}));
        for (T v : res.v) max_v = std::max(max_v, std::abs(static_cast<double>(v)));
        rec.check({"main_matches_reference", "the main implementation matches the plain-loop reference",
                   fmt::format("max |out - out_ref|, {}", rows_description(rows, r.len)), worst,
                   eps * (static_cast<double>(S) + static_cast<double>(d)) * (max_v + 1.0)});
    }

    // Causality: change X after position i; rows 0..i must not move under a causal mask.
    const bool causal = p.mask == MaskKind::causal || p.mask == MaskKind::both || p.mask == MaskKind::window;
    if (!r.cross && r.len >= 2 && (causal || p.mask == MaskKind::none)) {
        const long i_last = r.len / 2 - 1;  // rows 0..i_last are compared
        Ten3<T> changed = x;
        Rng rng(ctx.seed, stream::perturb);
        for (std::size_t b = 0; b < B; ++b)
            for (long i = i_last + 1; i < r.len; ++i)
                for (std::size_t c = 0; c < E; ++c) changed(b, i, c) = static_cast<T>(rng.normal());
        std::vector<RowRange> early;
        for (const auto& rr : check_rows(i_last + 1, static_cast<double>(B * H * S * d) * 2.0)) early.push_back(rr);
        double worst = 0.0;
        for (const auto& rr : early) {
            const BlockResult<T> again = run_block(changed, changed, w, r.cfg, false, rr);
            worst = std::max(worst, max_abs_diff_rows(again.attn.out, res.attn.out, {rr}));
        }
        if (causal) {
            rec.check({"causal_rows_unchanged",
                       fmt::format("with the causal mask, changing X after position {} leaves output rows 0..{} bit-identical", i_last, i_last),
                       fmt::format("max |out' - out|, {}", rows_description(early, i_last + 1)), worst, 0.0,
                       Compare::le, Role::invariant, TolKind::fixed});
        } else {
            rec.check({"unmasked_rows_change",
                       fmt::format("without a mask, changing X after position {} changes rows 0..{} (the encoder sees the future)", i_last, i_last),
                       fmt::format("max |out' - out|, {}", rows_description(early, i_last + 1)), worst, 0.0,
                       Compare::gt, Role::invariant, TolKind::fixed});
        }
    }
    // Padding: change X at padded positions; no non-padded output may move.
    if (!r.cross && (p.mask == MaskKind::padding || p.mask == MaskKind::both)) {
        Ten3<T> changed = x;
        Rng rng(ctx.seed, stream::perturb);
        for (std::size_t b = 0; b < B; ++b)
            for (long i = p.lengths[b]; i < r.len; ++i)
                for (std::size_t c = 0; c < E; ++c) changed(b, i, c) = static_cast<T>(rng.normal());
        double worst = 0.0;
        for (const auto& rr : rows) {
            const BlockResult<T> again = run_block(changed, changed, w, r.cfg, false, rr);
            for (std::size_t b = 0; b < B; ++b)
                for (std::size_t h = 0; h < H; ++h)
                    for (long i = rr.begin; i < std::min(rr.end, p.lengths[b]); ++i)
                        for (std::size_t c = 0; c < d; ++c)
                            worst = std::max(worst, std::abs(static_cast<double>(again.attn.out(b, h, i, c)) -
                                                             static_cast<double>(res.attn.out(b, h, i, c))));
        }
        rec.check({"padding_ignored", "changing X at padded positions leaves every non-padded output unchanged",
                   fmt::format("max |out' - out| at non-padded rows, {}", rows_description(rows, r.len)), worst, 0.0,
                   Compare::le, Role::invariant, TolKind::fixed});
    }
    // RoPE: the same token at every position gives scores that depend on i - j alone.
    if (p.pe == PeKind::rope) {
        const long n = std::min<long>(r.len, 256);
        Ten3<T> same = xt::zeros<T>({std::size_t{1}, static_cast<std::size_t>(n), E});
        for (long i = 0; i < n; ++i)
            for (std::size_t c = 0; c < E; ++c) same(0, i, c) = x(0, 0, c);
        BlockConfig cfg = r.cfg;
        cfg.mask = MaskSpec{};
        cfg.mask.kind = MaskKind::none;
        cfg.mask.queries = cfg.mask.keys = n;
        const BlockResult<T> tok = run_block(same, same, w, cfg, true);
        Mat<double> sc = xt::zeros<double>({static_cast<std::size_t>(n), static_cast<std::size_t>(n)});
        double qk = 0.0;
        for (long i = 0; i < n; ++i)
            for (long j = 0; j < n; ++j) sc(i, j) = tok.attn.scores(0, 0, i, j);
        double nq = 0.0, nk = 0.0;
        for (std::size_t c = 0; c < d; ++c) {
            nq += static_cast<double>(tok.q(0, 0, 0, c)) * tok.q(0, 0, 0, c);
            nk += static_cast<double>(tok.k(0, 0, 0, c)) * tok.k(0, 0, 0, c);
        }
        qk = std::sqrt(nq * nk) * res.scale;
        rec.check({"rope_scores_relative",
                   "with RoPE and the same token at every position, the scores depend on i - j alone",
                   fmt::format("max spread along a diagonal of head 0's scores, first {} positions", n),
                   toeplitz_spread(sc), qk * eps * (4.0 * static_cast<double>(n) + 16.0)});
    }
    if (p.mask == MaskKind::causal && r.cross && r.len != r.kv_len) {
        rec.note(fmt::format("causal mask with L = {} queries and S = {} keys: aligned {} (is_causal=True is upper-left)",
                             r.len, r.kv_len, name_of(p.align)));
    }
    if (p.pe == PeKind::alibi && r.cross) {
        rec.note("ALiBi counts query and key positions both from 0 here; a decoder with a cache would offset the queries");
    }
    return rec.finish();
}

}  // namespace

Report run_attend(const AttendParams& p, const RunContext& ctx)
{
    const Resolved r = resolve(p);
    return ctx.dtype == DType::float32 ? run_attend_typed<float>(p, r, ctx) : run_attend_typed<double>(p, r, ctx);
}

}  // namespace attnlab

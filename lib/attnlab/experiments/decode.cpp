#include "attnlab/experiments/decode.hpp"
#include "attnlab/experiments/decode_internal.hpp"

#include "attnlab/core/attention.hpp"
#include "attnlab/core/error_model.hpp"
#include "attnlab/core/half.hpp"
#include "attnlab/core/measure.hpp"
#include "attnlab/core/position/rope.hpp"
#include "attnlab/core/position/sinusoidal.hpp"
#include "attnlab/core/rng.hpp"
#include "attnlab/core/softmax.hpp"
#include "attnlab/core/xt.hpp"
#include "attnlab/core/position/alibi.hpp"
#include "attnlab/experiments/inputs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace attnlab {

namespace {

using namespace decode_detail;


// --- one query against its keys, in T: the scores and the weighted sum accumulated in
// Compute<T> and stored once; RoPE rotates with cos/sin rows rounded in T ---

template <class T>
struct Heads {
    Ten4<T> q, k, v;  // [B, H, N, d], [B, Hkv, N, d] twice, before any rotation
    RopeCache<T> rope;  // rows 0 .. N + 1
    std::vector<double> slopes;
    std::vector<double> sinks;  // gpt-oss's sink logits, one per head (none: empty)
};

template <class T>
std::vector<T> rotated(const DecodeParams& p, const Heads<T>& h, const Ten4<T>& x, std::size_t b, std::size_t head, long token, long position)
{
    const auto d = static_cast<std::size_t>(head_dim(p));
    std::vector<T> row(d), out(d);
    for (std::size_t c = 0; c < d; ++c) row[c] = x(b, head, static_cast<std::size_t>(token), c);
    if (p.pe != PeKind::rope) return row;
    const auto m = static_cast<std::size_t>(position);
    rope_rotate(row.data(), out.data(), head_dim(p), head_dim(p), &h.rope.cos(m, 0), &h.rope.sin(m, 0), p.rope_style, Direction::forward);
    return out;
}

template <class T>
void attend_one(const DecodeParams& p, const Heads<T>& h, std::size_t b, std::size_t head, long query, const Visible& vis, T* out)
{
    const auto d = static_cast<std::size_t>(head_dim(p));
    const std::size_t kv = head / static_cast<std::size_t>(p.heads / kv_heads(p));
    const std::vector<T> q = rotated(p, h, h.q, b, head, query, vis.query_position);
    const Compute<T> scale = Compute<T>(1) / std::sqrt(static_cast<Compute<T>>(d));
    std::vector<T> w(vis.tokens.size());
    for (std::size_t s = 0; s < w.size(); ++s) {
        const std::vector<T> k = rotated(p, h, h.k, b, kv, vis.tokens[s], vis.positions[s]);
        Compute<T> acc = 0;
        for (std::size_t c = 0; c < d; ++c) acc += static_cast<Compute<T>>(q[c]) * static_cast<Compute<T>>(k[c]);
        acc *= scale;
        if (p.pe == PeKind::alibi) acc -= static_cast<Compute<T>>(h.slopes[head] * static_cast<double>(std::labs(vis.query_position - vis.positions[s])));
        w[s] = static_cast<T>(acc);
    }
    if (!h.sinks.empty()) w.push_back(static_cast<T>(h.sinks[head]));  // a column of its own, dropped after the softmax
    softmax_inplace(w.data(), w.size(), SoftmaxKind::safe);
    for (std::size_t c = 0; c < d; ++c) {
        Compute<T> acc = 0;
        for (std::size_t s = 0; s < vis.tokens.size(); ++s)
            acc += static_cast<Compute<T>>(w[s]) * static_cast<Compute<T>>(h.v(b, kv, static_cast<std::size_t>(vis.tokens[s]), c));
        out[c] = static_cast<T>(acc);
    }
}

// What the heads take besides q, k and v: RoPE's cos/sin rows 0 .. N, or ALiBi's slopes; the
// sink logits.
template <class T>
Heads<T> with_head_terms(const DecodeParams& p, Heads<T> h)
{
    h.sinks = sink_logits(p);
    if (p.pe == PeKind::rope) {
        std::vector<long> positions(static_cast<std::size_t>(tokens(p)) + 1);
        for (std::size_t m = 0; m < positions.size(); ++m) positions[m] = static_cast<long>(m);
        h.rope = rope_cache_at<T>(positions, rope_frequencies<T>(head_dim(p), kBase, {}, tokens(p)).theta);
    }
    if (p.pe == PeKind::alibi) h.slopes = alibi_slopes(p.heads, SlopeRule::reference_code);
    return h;
}

template <class T>
Heads<T> heads_of(const DecodeParams& p, const Plan& plan, Run& run)
{
    const auto B = static_cast<std::size_t>(p.batch), N = static_cast<std::size_t>(tokens(p)), E = static_cast<std::size_t>(p.dim);
    const long kv_out = kv_heads(p) * head_dim(p);
    Ten3<T> x = input_or<T, 3>(plan, "x", [&] { return random_tensor3<T>(B, N, E, plan.seed, stream::x); });
    const Mat<T> w_q = input_or<T, 2>(plan, "w_q", [&] { return random_weight<T>(p.dim, p.dim, plan.seed, stream::w_q); });
    const Mat<T> w_k = input_or<T, 2>(plan, "w_k", [&] { return random_weight<T>(p.dim, kv_out, plan.seed, stream::w_k); });
    const Mat<T> w_v = input_or<T, 2>(plan, "w_v", [&] { return random_weight<T>(p.dim, kv_out, plan.seed, stream::w_v); });
    run.add(to_tensor("x", {"batch", "pos", "dim"}, x, elem_of<T>()));
    if (p.pe == PeKind::sinusoidal) {  // added to x at each token's own position, before the projections
        const Mat<T> pe = sinusoidal_table<T>(tokens(p), pe_frequencies<T>(p.dim, kBase, PeLayout::interleaved, FreqMethod::exp_log), PeLayout::interleaved);
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t t = 0; t < N; ++t)
                xt::view(x, b, t, xt::all()) += xt::view(pe, static_cast<std::size_t>(position_of_token(p, b, static_cast<long>(t))), xt::all());
    }
    for (auto [name, w] : {std::pair{"w_q", &w_q}, {"w_k", &w_k}, {"w_v", &w_v}}) run.add(to_tensor(name, {"in", "out"}, *w, elem_of<T>()));
    Heads<T> h = with_head_terms(p, Heads<T>{project_heads(x, w_q, p.heads), project_heads(x, w_k, kv_heads(p)), project_heads(x, w_v, kv_heads(p)), {}, {}, {}});
    for (auto [name, t] : {std::pair{"q", &h.q}, {"k", &h.k}, {"v", &h.v}}) run.add(to_tensor(name, {"batch", "head", "pos", "dim"}, *t, elem_of<T>()));
    return h;
}

// The position cache slot s (holding `token`) is read with: its index with sinks, the
// token's own otherwise; -1 for a pad, which the mask hides.
long slot_position(const DecodeParams& p, std::size_t b, long token, std::size_t s)
{
    if (token < pad_of(p, b)) return -1;
    return p.sinks > 0 ? static_cast<long>(s) : position_of_token(p, b, token);
}

// What query `query` of sequence b reads from a cache holding these tokens: every entry but
// the pads.
Visible reading(const DecodeParams& p, std::size_t b, const std::vector<long>& cache)
{
    Visible vis;
    for (std::size_t s = 0; s < cache.size(); ++s) {
        const long position = slot_position(p, b, cache[s], s);
        if (position < 0) continue;
        vis.tokens.push_back(cache[s]);
        vis.positions.push_back(position);
    }
    vis.query_position = vis.positions.back();  // the new token is never a pad
    return vis;
}

// The cache after the last step, as that step reads it: keys rotated with their positions
// (RoPE), values as projected; a pad's slot holds zeros.
template <class T>
void add_cache(const DecodeParams& p, const Heads<T>& h, const std::vector<long>& cache, Run& run)
{
    const auto B = static_cast<std::size_t>(p.batch), Hkv = static_cast<std::size_t>(kv_heads(p)), n = cache.size(),
               d = static_cast<std::size_t>(head_dim(p));
    Ten4<T> k = xt::zeros<T>({B, Hkv, n, d}), v = xt::zeros<T>({B, Hkv, n, d});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t s = 0; s < n; ++s) {
            const long position = slot_position(p, b, cache[s], s);
            if (position < 0) continue;
            for (std::size_t g = 0; g < Hkv; ++g) {
                const std::vector<T> key = rotated(p, h, h.k, b, g, cache[s], position);
                for (std::size_t c = 0; c < d; ++c) k(b, g, s, c) = key[c], v(b, g, s, c) = h.v(b, g, static_cast<std::size_t>(cache[s]), c);
            }
        }
    run.add(to_tensor("cache_k", {"batch", "kv_head", "slot", "dim"}, k, elem_of<T>()));
    run.add(to_tensor("cache_v", {"batch", "kv_head", "slot", "dim"}, v, elem_of<T>()));
}

// The steps through a real cache: token ids in insertion order (pads included, as Hugging
// Face's cache holds them), the oldest non-sink evicted once it holds more than S + W.
template <class T>
void decode_steps(const DecodeParams& p, const Heads<T>& h, Run& run)
{
    const auto B = static_cast<std::size_t>(p.batch), H = static_cast<std::size_t>(p.heads), T_ = static_cast<std::size_t>(p.steps),
               d = static_cast<std::size_t>(head_dim(p)), S = static_cast<std::size_t>(slots(p));
    Ten4<T> out = xt::zeros<T>({B, H, T_, d});
    std::vector<double> positions(B * T_ * S, -1.0);
    std::vector<long> cache;
    auto insert = [&](long t) {
        cache.push_back(t);
        if (p.window > 0 && static_cast<long>(cache.size()) > p.sinks + p.window) cache.erase(cache.begin() + p.sinks);
    };
    for (long t = 0; t < p.prefill; ++t) insert(t);
    for (std::size_t step = 0; step < T_; ++step) {
        insert(p.prefill + static_cast<long>(step));
        for (std::size_t b = 0; b < B; ++b) {
            for (std::size_t s = 0; s < cache.size(); ++s) positions[(b * T_ + step) * S + s] = static_cast<double>(slot_position(p, b, cache[s], s));
            const Visible vis = reading(p, b, cache);
            for (std::size_t head = 0; head < H; ++head) attend_one(p, h, b, head, p.prefill + static_cast<long>(step), vis, &out(b, head, step, 0));
        }
    }
    run.add(Tensor{"positions", {"batch", "step", "slot"}, Elem::index, {B, T_, S}, std::move(positions)});
    run.add(to_tensor("out_steps", {"batch", "head", "step", "dim"}, out, elem_of<T>()));
    add_cache(p, h, cache, run);
}

// All P + T tokens in one pass, each query against the keys the formula gives it, read with
// the tokens' own positions (the window's mask, sinks kept as a mask keeps them, pads masked).
template <class T>
void full_pass(const DecodeParams& p, const Heads<T>& h, Run& run)
{
    const auto B = static_cast<std::size_t>(p.batch), H = static_cast<std::size_t>(p.heads), N = static_cast<std::size_t>(tokens(p)),
               d = static_cast<std::size_t>(head_dim(p));
    Ten4<T> out = xt::zeros<T>({B, H, N, d});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t n = 0; n < N; ++n) {
            const Visible vis = visible_at(p, b, static_cast<long>(n), PositionRule::sinks_original);
            if (vis.tokens.empty()) continue;  // a pad's own row: every key masked, left 0
            for (std::size_t head = 0; head < H; ++head) attend_one(p, h, b, head, static_cast<long>(n), vis, &out(b, head, n, 0));
        }
    run.add(to_tensor("out_full", {"batch", "head", "pos", "dim"}, out, elem_of<T>()));
}

// Rows first .. first + count - 1 of every (batch, head), computed as the run computes them
// (attend_one in T) from the run's q, k and v, each query seeing what `rule` gives it.
template <class T>
std::vector<double> rows_typed(const DecodeParams& p, const Run& run, long first, long count, PositionRule rule)
{
    const Heads<T> h = with_head_terms(p, Heads<T>{from_tensor<T, 4>(run.at("q")), from_tensor<T, 4>(run.at("k")), from_tensor<T, 4>(run.at("v")), {}, {}, {}});
    const auto B = static_cast<std::size_t>(p.batch), H = static_cast<std::size_t>(p.heads), C = static_cast<std::size_t>(count),
               d = static_cast<std::size_t>(head_dim(p));
    std::vector<T> out(B * H * C * d, T(0));
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t r = 0; r < C; ++r) {
            const long n = first + static_cast<long>(r);
            const Visible vis = visible_at(p, b, n, rule);
            if (vis.tokens.empty()) continue;
            for (std::size_t head = 0; head < H; ++head) attend_one(p, h, b, head, n, vis, &out[((b * H + head) * C + r) * d]);
        }
    std::vector<double> values(out.size());
    for (std::size_t n = 0; n < out.size(); ++n) values[n] = static_cast<double>(out[n]);
    return values;
}

template <class T>
Run compute_decode(const DecodeParams& p, const Plan& plan)
{
    Run run;
    const Heads<T> h = heads_of<T>(p, plan, run);
    decode_steps(p, h, run);
    full_pass(p, h, run);
    return run;
}

template <class T>
Typed<DecodeParams> decode_typed()
{
    return {compute_decode<T>, decode_checks(), {}};
}

std::vector<OptionRow<DecodeParams>> decode_options()
{
    using P = DecodeParams;
    std::vector<OptionRow<P>> rows{option<P>("--prefill", "Prompt tokens P, processed at once into the cache", &P::prefill, whole_range(1, 4096)),
            option<P>("--steps", "Decode steps T, one token each", &P::steps, whole_range(1, 4096)),
            option<P>("--pe", "none; sinusoidal: added to x at each token's position; rope: q and k rotated; alibi: a bias on the scores", &P::pe),
            option<P>("--rope-style", "RoPE pairing: interleaved (2i, 2i+1) or half (i, i+d/2)", &P::rope_style),
            option<P>("--heads", "Heads H", &P::heads, whole_range(1, 256)),
            option<P>("--kv-heads", "Key/value heads, dividing H (grouped-query; 1 is multi-query)", &P::kv_heads, whole_range(1, 256)),
            option<P>("--dim", "Model dimension E, a multiple of H (head dimension d = E/H, even with RoPE)", &P::dim, whole_range(1, 4096)),
            option<P>("--batch", "Batch size B", &P::batch, whole_range(1, 64)),
            option<P>("--window", "A ring buffer of W entries, the new token included (0: keep every token)", &P::window, whole_range(0, 4096)),
            option<P>("--sinks", "StreamingLLM: keep the first S tokens besides the window; keys read at their cache indices", &P::sinks,
                      whole_range(0, 4096)),
            option<P>("--left-pad", "Real prompt lengths, one per sequence (each <= P), padded on the left to P, e.g. 2,4", &P::left_pad),
            option<P>("--sink-logits", "gpt-oss's learned sinks: one logit per head (or one for all), comma-separated, e.g. 0.5,-1: a column "
                                       "appended to each row's scores, dropped after the softmax",
                      &P::sink_logits)};
    row_of(rows, "--left-pad").sets_length_of = "--batch";
    row_of(rows, "--left-pad").excludes = {"--window", "--sinks"};
    return rows;
}

std::vector<TensorDecl<DecodeParams>> decode_tensors()
{
    using P = DecodeParams;
    auto n = [](const P& p) { return dsize(tokens(p)); };
    auto heads = [n](const P& p) { return std::vector<double>{dsize(p.batch), dsize(p.heads), n(p), dsize(head_dim(p))}; };
    auto kv = [n](const P& p) { return std::vector<double>{dsize(p.batch), dsize(kv_heads(p)), n(p), dsize(head_dim(p))}; };
    auto cache = [](const P& p) { return std::vector<double>{dsize(p.batch), dsize(kv_heads(p)), dsize(slots_at_end(p)), dsize(head_dim(p))}; };
    auto weight = [](bool kv_out) {
        return [kv_out](const P& p) { return std::vector<double>{dsize(p.dim), kv_out ? dsize(kv_heads(p) * head_dim(p)) : dsize(p.dim)}; };
    };
    return {{"x", {"batch", "pos", "dim"}, Need::always, [n](const P& p) { return std::vector<double>{dsize(p.batch), n(p), dsize(p.dim)}; }, {}, {}},
            {"w_q", {"in", "out"}, Need::always, weight(false), {}, {}},
            {"w_k", {"in", "out"}, Need::always, weight(true), {}, {}},
            {"w_v", {"in", "out"}, Need::always, weight(true), {}, {}},
            {"q", {"batch", "head", "pos", "dim"}, Need::always, heads, {}, {}},
            {"k", {"batch", "head", "pos", "dim"}, Need::always, kv, {}, {}},
            {"v", {"batch", "head", "pos", "dim"}, Need::always, kv, {}, {}},
            {"positions", {"batch", "step", "slot"}, Need::always,
             [](const P& p) { return std::vector<double>{dsize(p.batch), dsize(p.steps), dsize(slots(p))}; }, {}, {}},
            {"out_steps", {"batch", "head", "step", "dim"}, Need::always,
             [](const P& p) { return std::vector<double>{dsize(p.batch), dsize(p.heads), dsize(p.steps), dsize(head_dim(p))}; }, {}, {}},
            {"cache_k", {"batch", "kv_head", "slot", "dim"}, Need::always, cache, {}, {}},
            {"cache_v", {"batch", "kv_head", "slot", "dim"}, Need::always, cache, {}, {}},
            {"out_full", {"batch", "head", "pos", "dim"}, Need::always, heads, {}, {}}};
}

void validate_decode(const DecodeParams& p)
{
    if (p.dim % p.heads != 0) throw InputError(fmt::format("--dim {} is not a multiple of --heads {}", p.dim, p.heads));
    if (p.heads % kv_heads(p) != 0) throw InputError(fmt::format("--kv-heads {} must divide --heads {} (grouped-query attention)", kv_heads(p), p.heads));
    if (p.pe == PeKind::rope && head_dim(p) % 2 != 0) throw InputError(fmt::format("--pe rope needs an even head dimension (got {})", head_dim(p)));
    if (p.pe == PeKind::sinusoidal && p.dim % 2 != 0) throw InputError(fmt::format("--pe sinusoidal needs an even --dim (got {})", p.dim));
    if (p.sinks > 0 && p.window == 0) throw InputError("--sinks needs --window: the sinks are kept besides a window of recent tokens");
    if (!p.left_pad.empty() && static_cast<long>(p.left_pad.size()) != p.batch) {
        throw InputError(fmt::format("--left-pad gives {} lengths for --batch {}", p.left_pad.size(), p.batch));
    }
    for (long length : p.left_pad)
        if (length < 1 || length > p.prefill) throw InputError(fmt::format("--left-pad: each length must lie in 1..{} (--prefill), got {}", p.prefill, length));
    if (!p.sink_logits.empty()) {
        sink_logits(p);  // throws on an item that is not a number
        const long items = static_cast<long>(std::count(p.sink_logits.begin(), p.sink_logits.end(), ',')) + 1;
        if (items != 1 && items != p.heads) {
            throw InputError(fmt::format("--sink-logits gives {} logits for --heads {}: one per head, or one for every head", items, p.heads));
        }
    }
    if (p.sinks > 0 && p.pe == PeKind::sinusoidal) {
        throw InputError("--sinks with --pe sinusoidal: the encoding is added to x before the cache, so a key cannot be re-read at its cache index");
    }
}

// Random valid parameters for the random tests: a window with sinks, or left padding.
DecodeParams sample_decode(Rng& rng)
{
    DecodeParams p;
    p.prefill = between(rng, 1, 6), p.steps = between(rng, 1, 4), p.pe = static_cast<PeKind>(rng.below(4));
    p.rope_style = rng.below(2) ? RopeStyle::half : RopeStyle::interleaved;
    p.heads = between(rng, 1, 4), p.kv_heads = divisor_of(rng, p.heads), p.dim = p.heads * 2 * between(rng, 1, 3);
    p.window = rng.below(2) ? between(rng, 1, 4) : 0;
    p.sinks = p.window > 0 && p.pe != PeKind::sinusoidal && rng.below(2) ? between(rng, 1, 2) : 0;
    if (p.window == 0 && rng.below(2)) p.left_pad = {between(rng, 1, p.prefill), p.prefill}, p.batch = 2;
    if (rng.below(3) == 0) {  // gpt-oss's sinks: halves from -2 to 2, one per head
        for (long h = 0; h < p.heads; ++h) p.sink_logits += fmt::format("{}{}", h ? "," : "", 0.5 * static_cast<double>(between(rng, -4, 4)));
    }
    return p;
}

Experiment<DecodeParams> make_decode_experiment()
{
    Experiment<DecodeParams> e;
    e.command = "decode";
    e.summary = "A decoder at inference: a prefill, then one token per step against a KV cache (ring buffer, StreamingLLM sinks), held to one full pass";
    e.example = "attnlab decode --prefill 4 --steps 4 --window 3 --sinks 1 --show positions";
    e.options = decode_options();
    e.main_tensor = "out_steps";
    e.tensors = decode_tensors();
    e.validate = validate_decode;
    e.derived_params = [](const DecodeParams& p) { return ParamList{{"head_dim", head_dim(p)}, {"kv_heads", kv_heads(p)}}; };
    // The projections; every row's attention (RoPE rotates each key again) in T for the steps
    // and the full pass and in float64 for the checks (about four passes); the exps.
    e.work = [](const DecodeParams& p, const Plan&) {
        const double N = dsize(tokens(p)), pairs = dsize(p.batch) * dsize(p.heads) * N * N;
        return 3.0 * dsize(p.batch) * N * dsize(p.dim) * dsize(p.dim) + 4.0 * pairs * (4.0 * dsize(head_dim(p)) + kExpWork);
    };
    e.work_what = [](const DecodeParams& p) { return fmt::format("{} queries against {} keys, {} heads", tokens(p), tokens(p), p.heads); };
    e.inputs = {"x", "w_q", "w_k", "w_v"};
    e.mistakes = decode_mistakes();
    e.sample = sample_decode;
    e.set_typed([](auto t) { return decode_typed<typename decltype(t)::type>(); });
    return e;
}

}  // namespace

namespace decode_detail {

std::vector<double> rows_in(DType dtype, const DecodeParams& p, const Run& run, long first, long count, PositionRule rule)
{
    switch (dtype) {
    case DType::float32: return rows_typed<float>(p, run, first, count, rule);
    case DType::float16: return rows_typed<Narrow<Float16Format>>(p, run, first, count, rule);
    case DType::bfloat16: return rows_typed<Narrow<BFloat16Format>>(p, run, first, count, rule);
    case DType::float64: break;
    }
    return rows_typed<double>(p, run, first, count, rule);
}

}  // namespace decode_detail

const Experiment<DecodeParams>& decode_experiment()
{
    static const Experiment<DecodeParams> e = make_decode_experiment();
    return e;
}

Report run_decode(const DecodeParams& p, const RunContext& ctx) { return run_experiment(decode_experiment(), p, ctx); }

std::vector<std::string> decode_command(const DecodeParams& p) { return command_of(decode_experiment(), p); }

}  // namespace attnlab

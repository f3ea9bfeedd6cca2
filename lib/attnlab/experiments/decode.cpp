#include "attnlab/experiments/decode.hpp"

#include "attnlab/core/attention.hpp"
#include "attnlab/core/error_model.hpp"
#include "attnlab/core/half.hpp"
#include "attnlab/core/measure.hpp"
#include "attnlab/core/position/rope.hpp"
#include "attnlab/core/position/sinusoidal.hpp"
#include "attnlab/core/rng.hpp"
#include "attnlab/core/softmax.hpp"
#include "attnlab/core/xt.hpp"
#include "attnlab/experiments/alibi.hpp"
#include "attnlab/experiments/inputs.hpp"

#include <fmt/format.h>

#include <cmath>

namespace attnlab {

namespace {

constexpr double kBase = 10000.0;  // RoPE's and the sinusoidal table's

long tokens(const DecodeParams& p) { return p.prefill + p.steps; }
long kv_heads(const DecodeParams& p) { return p.kv_heads.value_or(p.heads); }
long head_dim(const DecodeParams& p) { return p.dim / p.heads; }
// Slots of the cache: every token without a window, S + W with one.
long slots(const DecodeParams& p) { return p.window > 0 ? p.sinks + p.window : tokens(p); }
long slots_at_end(const DecodeParams& p) { return std::min(slots(p), tokens(p)); }

// --- the cache's rule, written once as a formula: which tokens query n sees, oldest first,
// and the position each is read with. The compute keeps a real cache; the checks and the
// mistakes use this. ---

enum class PositionRule { correct, restart_each_step, off_by_one, sinks_original };

struct Visible {
    std::vector<long> tokens;     // oldest first, sinks first
    std::vector<long> positions;  // of each key
    long query_position = 0;
};

Visible visible_at(const DecodeParams& p, long n, PositionRule rule)
{
    Visible v;
    const long first_window = p.window > 0 ? std::max(p.sinks, n - p.window + 1) : 0;
    for (long t = 0; t <= n; ++t)
        if (t < p.sinks || t >= first_window) v.tokens.push_back(t);
    const bool by_index = p.sinks > 0 && rule != PositionRule::sinks_original;
    auto position_of = [&](long t, std::size_t index) {
        if (by_index) return static_cast<long>(index);
        if (t >= p.prefill && rule == PositionRule::restart_each_step) return 0L;
        if (t >= p.prefill && rule == PositionRule::off_by_one) return t + 1;
        return t;
    };
    for (std::size_t s = 0; s < v.tokens.size(); ++s) v.positions.push_back(position_of(v.tokens[s], s));
    v.query_position = v.positions.back();
    return v;
}

// --- one query against its keys, in T: the scores and the weighted sum accumulated in
// Compute<T> and stored once; RoPE rotates with cos/sin rows rounded in T ---

template <class T>
struct Heads {
    Ten4<T> q, k, v;  // [B, H, N, d], [B, Hkv, N, d] twice, before any rotation
    RopeCache<T> rope;  // rows 0 .. N + 1
    std::vector<double> slopes;
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
    softmax_inplace(w.data(), w.size(), SoftmaxKind::safe);
    for (std::size_t c = 0; c < d; ++c) {
        Compute<T> acc = 0;
        for (std::size_t s = 0; s < w.size(); ++s)
            acc += static_cast<Compute<T>>(w[s]) * static_cast<Compute<T>>(h.v(b, kv, static_cast<std::size_t>(vis.tokens[s]), c));
        out[c] = static_cast<T>(acc);
    }
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
        x = x + xt::view(pe, xt::newaxis(), xt::all(), xt::all());
    }
    for (auto [name, w] : {std::pair{"w_q", &w_q}, {"w_k", &w_k}, {"w_v", &w_v}}) run.add(to_tensor(name, {"in", "out"}, *w, elem_of<T>()));
    Heads<T> h{project_heads(x, w_q, p.heads), project_heads(x, w_k, kv_heads(p)), project_heads(x, w_v, kv_heads(p)), {}, {}};
    if (p.pe == PeKind::rope) {
        std::vector<long> positions(N + 1);
        for (std::size_t m = 0; m <= N; ++m) positions[m] = static_cast<long>(m);
        h.rope = rope_cache_at<T>(positions, rope_frequencies<T>(head_dim(p), kBase, {}, tokens(p)).theta);
    }
    if (p.pe == PeKind::alibi) h.slopes = alibi_slopes(p.heads, SlopeRule::reference_code);
    for (auto [name, t] : {std::pair{"q", &h.q}, {"k", &h.k}, {"v", &h.v}}) run.add(to_tensor(name, {"batch", "head", "pos", "dim"}, *t, elem_of<T>()));
    return h;
}

// The cache after the last step, as that step reads it: keys rotated with their positions
// (RoPE), values as projected.
template <class T>
void add_cache(const DecodeParams& p, const Heads<T>& h, const Visible& last, Run& run)
{
    const auto B = static_cast<std::size_t>(p.batch), Hkv = static_cast<std::size_t>(kv_heads(p)), n = last.tokens.size(),
               d = static_cast<std::size_t>(head_dim(p));
    Ten4<T> k = xt::zeros<T>({B, Hkv, n, d}), v = xt::zeros<T>({B, Hkv, n, d});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t g = 0; g < Hkv; ++g)
            for (std::size_t s = 0; s < n; ++s) {
                const std::vector<T> key = rotated(p, h, h.k, b, g, last.tokens[s], last.positions[s]);
                for (std::size_t c = 0; c < d; ++c) k(b, g, s, c) = key[c], v(b, g, s, c) = h.v(b, g, static_cast<std::size_t>(last.tokens[s]), c);
            }
    run.add(to_tensor("cache_k", {"batch", "kv_head", "slot", "dim"}, k, elem_of<T>()));
    run.add(to_tensor("cache_v", {"batch", "kv_head", "slot", "dim"}, v, elem_of<T>()));
}

// The steps through a real cache: token ids in insertion order, the oldest non-sink evicted
// once it holds more than S + W; positions are the cache indices with sinks, the tokens'
// own otherwise.
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
    Visible vis;
    for (std::size_t step = 0; step < T_; ++step) {
        insert(p.prefill + static_cast<long>(step));
        vis.tokens = cache;
        vis.positions.clear();
        for (std::size_t s = 0; s < cache.size(); ++s) vis.positions.push_back(p.sinks > 0 ? static_cast<long>(s) : cache[s]);
        vis.query_position = vis.positions.back();
        for (std::size_t b = 0; b < B; ++b) {
            for (std::size_t s = 0; s < cache.size(); ++s) positions[(b * T_ + step) * S + s] = static_cast<double>(vis.positions[s]);
            for (std::size_t head = 0; head < H; ++head) attend_one(p, h, b, head, p.prefill + static_cast<long>(step), vis, &out(b, head, step, 0));
        }
    }
    run.add(Tensor{"positions", {"batch", "step", "slot"}, Elem::index, {B, T_, S}, std::move(positions)});
    run.add(to_tensor("out_steps", {"batch", "head", "step", "dim"}, out, elem_of<T>()));
    add_cache(p, h, vis, run);
}

// All P + T tokens in one pass, each query against the keys the formula gives it, read with
// the tokens' own positions (the window's mask; sinks kept, as a mask keeps them).
template <class T>
void full_pass(const DecodeParams& p, const Heads<T>& h, Run& run)
{
    const auto B = static_cast<std::size_t>(p.batch), H = static_cast<std::size_t>(p.heads), N = static_cast<std::size_t>(tokens(p)),
               d = static_cast<std::size_t>(head_dim(p));
    Ten4<T> out = xt::zeros<T>({B, H, N, d});
    for (std::size_t n = 0; n < N; ++n) {
        const Visible vis = visible_at(p, static_cast<long>(n), PositionRule::sinks_original);
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t head = 0; head < H; ++head) attend_one(p, h, b, head, static_cast<long>(n), vis, &out(b, head, n, 0));
    }
    run.add(to_tensor("out_full", {"batch", "head", "pos", "dim"}, out, elem_of<T>()));
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

// --- the same attention in float64 from the run's own q, k and v: the checks' reference and
// the mistakes' builder ---

std::vector<double> rotated_double(const DecodeParams& p, const Tensor& x, std::size_t row, long position)
{
    const auto d = static_cast<std::size_t>(head_dim(p));
    std::vector<double> v(d);
    for (std::size_t c = 0; c < d; ++c) v[c] = x.values[row * d + c];
    if (p.pe != PeKind::rope) return v;
    std::vector<double> out = v;
    const long P = head_dim(p) / 2;
    for (long i = 0; i < P; ++i) {
        const auto [a, b] = rope_pair(p.rope_style, i, P);
        const double angle = static_cast<double>(position) * std::pow(kBase, -2.0 * static_cast<double>(i) / static_cast<double>(head_dim(p)));
        const auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
        out[ua] = v[ua] * std::cos(angle) - v[ub] * std::sin(angle);
        out[ub] = v[ua] * std::sin(angle) + v[ub] * std::cos(angle);
    }
    return out;
}

void attend_one_double(const DecodeParams& p, const Run& run, std::size_t b, std::size_t head, long query, const Visible& vis, double* out)
{
    const Tensor &q = run.at("q"), &k = run.at("k"), &v = run.at("v");
    const auto d = static_cast<std::size_t>(head_dim(p)), N = static_cast<std::size_t>(tokens(p)), H = static_cast<std::size_t>(p.heads),
               Hkv = static_cast<std::size_t>(kv_heads(p)), kv = head / (H / Hkv);
    const std::vector<double> qr = rotated_double(p, q, (b * H + head) * N + static_cast<std::size_t>(query), vis.query_position);
    const double slope = p.pe == PeKind::alibi ? alibi_slopes(p.heads, SlopeRule::reference_code)[head] : 0.0;
    std::vector<double> w(vis.tokens.size());
    for (std::size_t s = 0; s < w.size(); ++s) {
        const std::vector<double> kr = rotated_double(p, k, (b * Hkv + kv) * N + static_cast<std::size_t>(vis.tokens[s]), vis.positions[s]);
        double acc = 0.0;
        for (std::size_t c = 0; c < d; ++c) acc += qr[c] * kr[c];
        w[s] = acc / std::sqrt(static_cast<double>(d)) - slope * static_cast<double>(std::labs(vis.query_position - vis.positions[s]));
    }
    softmax_inplace(w.data(), w.size(), SoftmaxKind::safe);
    for (std::size_t c = 0; c < d; ++c) {
        out[c] = 0.0;
        for (std::size_t s = 0; s < w.size(); ++s) out[c] += w[s] * v.values[((b * Hkv + kv) * N + static_cast<std::size_t>(vis.tokens[s])) * d + c];
    }
}

// Rows `first` .. `first + count - 1` of every (batch, head), each query seeing what `rule` gives it.
std::vector<double> rows_double(const DecodeParams& p, const Run& run, long first, long count, PositionRule rule)
{
    const auto B = static_cast<std::size_t>(p.batch), H = static_cast<std::size_t>(p.heads), C = static_cast<std::size_t>(count),
               d = static_cast<std::size_t>(head_dim(p));
    std::vector<double> out(B * H * C * d);
    for (std::size_t r = 0; r < C; ++r) {
        const long n = first + static_cast<long>(r);
        const Visible vis = visible_at(p, n, rule);
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t head = 0; head < H; ++head) attend_one_double(p, run, b, head, n, vis, &out[((b * H + head) * C + r) * d]);
    }
    return out;
}

std::vector<double> steps_double(const DecodeParams& p, const Run& run, PositionRule rule) { return rows_double(p, run, p.prefill, p.steps, rule); }

// The error model's rule for two computations in T: each within r of the exact value, r the
// error the run's own full pass makes (measured against float64), floored at u(T) M.
double step_tol(const DecodeParams& p, const Run& run, const CheckEnv& env, double* size)
{
    const std::vector<double> exact = rows_double(p, run, 0, tokens(p), PositionRule::sinks_original);
    const Tensor& full = run.at("out_full");
    double r = 0.0, M = 0.0;
    for (std::size_t n = 0; n < exact.size(); ++n) r = worse(r, diff_nan_rule(full.values[n], exact[n])), M = std::max(M, std::abs(exact[n]));
    *size = M;
    return kReferenceFactor * std::max(r, unit_roundoff(env.dtype) * M);
}

// --- checks ---

// max |out_steps - expected| over every (batch, head, step), the expected given [B, H, T, d].
double steps_diff(const Run& run, const std::vector<double>& expected)
{
    const Tensor& steps = run.at("out_steps");
    double worst = 0.0;
    for (std::size_t n = 0; n < expected.size(); ++n) worst = worse(worst, diff_nan_rule(steps.values[n], expected[n]));
    return worst;
}

// The full pass's rows P .. P + T - 1, as [B, H, T, d].
std::vector<double> full_rows(const DecodeParams& p, const Run& run)
{
    const Tensor& full = run.at("out_full");
    const auto BH = static_cast<std::size_t>(p.batch * p.heads), N = static_cast<std::size_t>(tokens(p)), T_ = static_cast<std::size_t>(p.steps),
               d = static_cast<std::size_t>(head_dim(p)), P = static_cast<std::size_t>(p.prefill);
    std::vector<double> out(BH * T_ * d);
    for (std::size_t bh = 0; bh < BH; ++bh)
        for (std::size_t t = 0; t < T_; ++t)
            for (std::size_t c = 0; c < d; ++c) out[(bh * T_ + t) * d + c] = full.values[(bh * N + P + t) * d + c];
    return out;
}

Check steps_check(const DecodeParams& p, const Run& run, const CheckEnv& env, std::string claim, const std::vector<double>& expected, std::string metric)
{
    double size = 0.0;
    const double tol = step_tol(p, run, env, &size);
    return at_most(std::move(claim), std::move(metric), steps_diff(run, expected), tol, size);
}

std::optional<Check> check_full_pass(const DecodeParams& p, const Run& run, const CheckEnv& env)
{
    if (p.window > 0) return std::nullopt;
    return steps_check(p, run, env,
                       tr(env, "each of the {} steps through the KV cache gives the full causal pass's row, each new token at its own position",
                          "经过 KV 缓存的 {} 步，每一步都等于完整因果前向的那一行，每个新 token 用它自己的位置", p.steps),
                       full_rows(p, run), "max |out_steps - out_full[P:]|");
}

std::optional<Check> check_ring_buffer(const DecodeParams& p, const Run& run, const CheckEnv& env)
{
    if (p.window == 0 || p.sinks > 0) return std::nullopt;
    return steps_check(p, run, env,
                       tr(env, "a ring buffer of {0} entries, the new token included, equals the full pass with the window mask (mask --kind window --window {0})",
                          "{0} 个槽位的环形缓冲（含新 token）等于加窗口掩码的完整前向（mask --kind window --window {0}）", p.window),
                       full_rows(p, run), "max |out_steps - out_full[P:]|");
}

std::optional<Check> check_sinks(const DecodeParams& p, const Run& run, const CheckEnv& env)
{
    if (p.sinks == 0) return std::nullopt;
    return steps_check(p, run, env,
                       tr(env, "with S = {} sinks and a window of W = {}, each cached key is read at its index in the cache and the query at the last (StreamingLLM)",
                          "S = {} 个 sink 加 W = {} 的窗口时，缓存里每个键按它在缓存中的下标读取，查询用最后一个下标（StreamingLLM）", p.sinks, p.window),
                       steps_double(p, run, PositionRule::correct), "max |out_steps - float64 recomputation|");
}

std::optional<Check> check_positions(const DecodeParams& p, const Run& run, const CheckEnv& env)
{
    const Tensor& positions = run.at("positions");
    const auto S = static_cast<std::size_t>(slots(p)), T_ = static_cast<std::size_t>(p.steps);
    double off = 0.0;
    for (std::size_t t = 0; t < T_; ++t) {
        const Visible vis = visible_at(p, p.prefill + static_cast<long>(t), PositionRule::correct);
        for (std::size_t b = 0; b < static_cast<std::size_t>(p.batch); ++b)
            for (std::size_t s = 0; s < S; ++s)
                off += positions.values[(b * T_ + t) * S + s] != (s < vis.positions.size() ? static_cast<double>(vis.positions[s]) : -1.0);
    }
    return exact_zero(p.sinks > 0 ? tr(env, "slots hold the {} sinks, then the last {} tokens; each is read at its index in the cache (-1: empty)",
                                       "槽位先放 {} 个 sink，再放最后 {} 个 token；每个按它在缓存中的下标读取（-1：空）", p.sinks, p.window)
                                  : tr(env, "slots hold the tokens in order, each read at its own position (-1: empty)", "槽位按顺序放 token，每个用它自己的位置（-1：空）"),
                      tr(env, "slots with another position", "位置不对的槽位数"), off);
}

template <class T>
Typed<DecodeParams> decode_typed()
{
    return {compute_decode<T>,
            {{"positions_follow_cache_rule", {"positions"}, check_positions},
             {"steps_match_full_pass", {"out_steps"}, check_full_pass},
             {"ring_buffer_equals_window_mask", {"out_steps"}, check_ring_buffer},
             {"sinks_read_cache_positions", {"out_steps"}, check_sinks}},
            {}};
}

// --- the catalogue of usual mistakes: the steps with the positions read another way ---

bool positional(const DecodeParams& p) { return p.pe == PeKind::rope || p.pe == PeKind::alibi; }

Tensor steps_with(const DecodeParams& p, const Run& run, PositionRule rule)
{
    const Tensor& t = run.at("out_steps");
    return Tensor{"out_steps", t.axes, Elem::float64, t.shape, steps_double(p, run, rule)};
}

std::vector<Mistake<DecodeParams>> decode_mistakes()
{
    return {{"positions_restart_each_step", "out_steps", "each new token is rotated or biased as position 0: the position ids restart at every step",
             "每个新 token 都按位置 0 旋转或加偏置：位置编号每一步都从 0 重新开始",
             [](const DecodeParams& p, const Run& run) { return positional(p) && p.sinks == 0 ? steps_with(p, run, PositionRule::restart_each_step) : Tensor{}; }},
            {"cache_position_off_by_one", "out_steps", "each new token is placed one position too far: at the cache length + 1",
             "每个新 token 的位置多了 1：放在了缓存长度 + 1 处",
             [](const DecodeParams& p, const Run& run) { return positional(p) && p.sinks == 0 ? steps_with(p, run, PositionRule::off_by_one) : Tensor{}; }},
            {"sink_positions_original", "out_steps", "sinks and window keys are read at their original positions, not at their indices in the cache",
             "sink 和窗口里的键按原始位置读取，而不是按它们在缓存中的下标",
             [](const DecodeParams& p, const Run& run) { return positional(p) && p.sinks > 0 ? steps_with(p, run, PositionRule::sinks_original) : Tensor{}; }}};
}

std::vector<OptionRow<DecodeParams>> decode_options()
{
    using P = DecodeParams;
    return {option<P>("--prefill", "Prompt tokens P, processed at once into the cache", &P::prefill, whole_range(1, 4096)),
            option<P>("--steps", "Decode steps T, one token each", &P::steps, whole_range(1, 4096)),
            option<P>("--pe", "none; sinusoidal: added to x at each token's position; rope: q and k rotated; alibi: a bias on the scores", &P::pe),
            option<P>("--rope-style", "RoPE pairing: interleaved (2i, 2i+1) or half (i, i+d/2)", &P::rope_style),
            option<P>("--heads", "Heads H", &P::heads, whole_range(1, 256)),
            option<P>("--kv-heads", "Key/value heads, dividing H (grouped-query; 1 is multi-query)", &P::kv_heads, whole_range(1, 256)),
            option<P>("--dim", "Model dimension E, a multiple of H (head dimension d = E/H, even with RoPE)", &P::dim, whole_range(1, 4096)),
            option<P>("--batch", "Batch size B", &P::batch, whole_range(1, 64)),
            option<P>("--window", "A ring buffer of W entries, the new token included (0: keep every token)", &P::window, whole_range(0, 4096)),
            option<P>("--sinks", "StreamingLLM: keep the first S tokens besides the window; keys read at their cache indices", &P::sinks,
                      whole_range(0, 4096))};
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
    if (p.sinks > 0 && p.pe == PeKind::sinusoidal) {
        throw InputError("--sinks with --pe sinusoidal: the encoding is added to x before the cache, so a key cannot be re-read at its cache index");
    }
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
    e.set_typed([](auto t) { return decode_typed<typename decltype(t)::type>(); });
    return e;
}

}  // namespace

const Experiment<DecodeParams>& decode_experiment()
{
    static const Experiment<DecodeParams> e = make_decode_experiment();
    return e;
}

Report run_decode(const DecodeParams& p, const RunContext& ctx) { return run_experiment(decode_experiment(), p, ctx); }

std::vector<std::string> decode_command(const DecodeParams& p) { return command_of(decode_experiment(), p); }

}  // namespace attnlab

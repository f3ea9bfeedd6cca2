// `decode`'s rule as a formula, the same attention in float64 from the run's own projections,
// the checks (each claim beside its measurement) and the catalogue of usual mistakes.
#include "attnlab/experiments/decode_internal.hpp"

#include "attnlab/core/error_model.hpp"
#include "attnlab/core/measure.hpp"
#include "attnlab/core/position/rope.hpp"
#include "attnlab/core/softmax.hpp"
#include "attnlab/core/position/alibi.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

namespace attnlab::decode_detail {

Visible visible_at(const DecodeParams& p, std::size_t b, long n, PositionRule rule)
{
    Visible v;
    const long first_window = p.window > 0 ? std::max(p.sinks, n - p.window + 1) : 0, pad = pad_of(p, b);
    for (long t = pad; t <= n; ++t)
        if (t < p.sinks || t >= first_window) v.tokens.push_back(t);
    const bool by_index = p.sinks > 0 && rule != PositionRule::sinks_original;
    auto position_of = [&](long t, std::size_t index) {
        if (by_index) return static_cast<long>(index);
        const long own = rule == PositionRule::left_pad_from_0 ? t : t - pad;
        if (t >= p.prefill && rule == PositionRule::restart_each_step) return 0L;
        if (t >= p.prefill && rule == PositionRule::off_by_one) return own + 1;
        return own;
    };
    for (std::size_t s = 0; s < v.tokens.size(); ++s) v.positions.push_back(position_of(v.tokens[s], s));
    v.query_position = v.positions.empty() ? 0 : v.positions.back();
    return v;
}

std::vector<double> sink_logits(const DecodeParams& p)
{
    std::vector<double> out = number_list(p.sink_logits, "--sink-logits", [](double v) { return std::isfinite(v) && std::abs(v) <= 1e4; },
                                          "a number within +-10000");
    if (out.size() == 1) out.assign(static_cast<std::size_t>(p.heads), out[0]);
    return out;
}

namespace {

// --- the same attention in float64 ---

// q [B, H, N, d], k and v [B, Hkv, N, d]: the run's own, or projected again with the encoding
// added at other positions (a sinusoidal mistake).
struct Projections {
    std::vector<double> q, k, v;
};

Projections from_run(const Run& run) { return {run.at("q").values.to_vector(), run.at("k").values.to_vector(), run.at("v").values.to_vector()}; }

// x [B, N, E] plus the interleaved sinusoidal encoding at `position(b, t)`, times w [E, H d],
// split into heads: [B, H, N, d].
std::vector<double> project(const DecodeParams& p, const Tensor& x, const Tensor& w, long heads, const std::vector<long>& positions)
{
    const auto B = static_cast<std::size_t>(p.batch), N = static_cast<std::size_t>(tokens(p)), E = static_cast<std::size_t>(p.dim),
               H = static_cast<std::size_t>(heads), d = static_cast<std::size_t>(head_dim(p));
    std::vector<double> out(B * H * N * d, 0.0);
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t t = 0; t < N; ++t)
            for (std::size_t e = 0; e < E; ++e) {
                const double angle = static_cast<double>(positions[b * N + t]) * std::pow(kBase, -2.0 * static_cast<double>(e / 2) / static_cast<double>(E));
                const double xe = x.values[(b * N + t) * E + e] + (e % 2 == 0 ? std::sin(angle) : std::cos(angle));
                for (std::size_t o = 0; o < H * d; ++o) out[((b * H + o / d) * N + t) * d + o % d] += xe * w.values[e * H * d + o];
            }
    return out;
}

// The sinusoidal run's projections with the pads counted: token t of sequence b at position t.
Projections counted_from_first_pad(const DecodeParams& p, const Run& run)
{
    const auto B = static_cast<std::size_t>(p.batch), N = static_cast<std::size_t>(tokens(p));
    std::vector<long> positions(B * N);
    for (std::size_t n = 0; n < positions.size(); ++n) positions[n] = static_cast<long>(n % N);
    const Tensor& x = run.at("x");
    return {project(p, x, run.at("w_q"), p.heads, positions), project(p, x, run.at("w_k"), kv_heads(p), positions),
            project(p, x, run.at("w_v"), kv_heads(p), positions)};
}

std::vector<double> rotated(const DecodeParams& p, const std::vector<double>& x, std::size_t row, long position)
{
    const auto d = static_cast<std::size_t>(head_dim(p));
    std::vector<double> v(x.begin() + static_cast<long>(row * d), x.begin() + static_cast<long>((row + 1) * d));
    if (p.pe != PeKind::rope) return v;
    std::vector<double> out = v;
    const long P = head_dim(p) / 2;
    for (long i = 0; i < P; ++i) {
        const auto [a, c] = rope_pair(p.rope_style, i, P);
        const double angle = static_cast<double>(position) * std::pow(kBase, -2.0 * static_cast<double>(i) / static_cast<double>(head_dim(p)));
        const auto ua = static_cast<std::size_t>(a), uc = static_cast<std::size_t>(c);
        out[ua] = v[ua] * std::cos(angle) - v[uc] * std::sin(angle);
        out[uc] = v[ua] * std::sin(angle) + v[uc] * std::cos(angle);
    }
    return out;
}

// The scores of one query against the keys it sees: q.k / sqrt(d), less ALiBi's bias.
std::vector<double> scores_one(const DecodeParams& p, const Projections& x, std::size_t b, std::size_t head, long query, const Visible& vis)
{
    const auto d = static_cast<std::size_t>(head_dim(p)), N = static_cast<std::size_t>(tokens(p)), H = static_cast<std::size_t>(p.heads),
               Hkv = static_cast<std::size_t>(kv_heads(p)), kv = head / (H / Hkv);
    const std::vector<double> q = rotated(p, x.q, (b * H + head) * N + static_cast<std::size_t>(query), vis.query_position);
    const double slope = p.pe == PeKind::alibi ? alibi_slopes(p.heads, SlopeRule::reference_code)[head] : 0.0;
    std::vector<double> w(vis.tokens.size());
    for (std::size_t s = 0; s < w.size(); ++s) {
        const std::vector<double> k = rotated(p, x.k, (b * Hkv + kv) * N + static_cast<std::size_t>(vis.tokens[s]), vis.positions[s]);
        double acc = 0.0;
        for (std::size_t c = 0; c < d; ++c) acc += q[c] * k[c];
        w[s] = acc / std::sqrt(static_cast<double>(d)) - slope * static_cast<double>(std::labs(vis.query_position - vis.positions[s]));
    }
    return w;
}

// One output row; `sinks` (one logit per head, or none) as gpt-oss: a column appended to the
// scores, softmaxed with them, then dropped.
void attend_one(const DecodeParams& p, const Projections& x, std::size_t b, std::size_t head, long query, const Visible& vis,
                const std::vector<double>& sinks, double* out)
{
    const auto d = static_cast<std::size_t>(head_dim(p)), N = static_cast<std::size_t>(tokens(p)), H = static_cast<std::size_t>(p.heads),
               Hkv = static_cast<std::size_t>(kv_heads(p)), kv = head / (H / Hkv);
    std::fill(out, out + d, 0.0);
    if (vis.tokens.empty()) return;  // a pad's own row: every key masked
    std::vector<double> w = scores_one(p, x, b, head, query, vis);
    if (!sinks.empty()) w.push_back(sinks[head]);
    softmax_inplace(w.data(), w.size(), SoftmaxKind::safe);
    for (std::size_t s = 0; s < vis.tokens.size(); ++s)
        for (std::size_t c = 0; c < d; ++c) out[c] += w[s] * x.v[((b * Hkv + kv) * N + static_cast<std::size_t>(vis.tokens[s])) * d + c];
}

// Rows first .. first + count - 1 of every (batch, head), each query seeing what `rule` gives
// it, with these sink logits (the run's own unless a mistake says otherwise).
std::vector<double> rows_with_sinks(const DecodeParams& p, const Projections& x, long first, long count, PositionRule rule,
                                    const std::vector<double>& sinks)
{
    const auto B = static_cast<std::size_t>(p.batch), H = static_cast<std::size_t>(p.heads), C = static_cast<std::size_t>(count),
               d = static_cast<std::size_t>(head_dim(p));
    std::vector<double> out(B * H * C * d);
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t r = 0; r < C; ++r) {
            const long n = first + static_cast<long>(r);
            const Visible vis = visible_at(p, b, n, rule);
            for (std::size_t head = 0; head < H; ++head) attend_one(p, x, b, head, n, vis, sinks, &out[((b * H + head) * C + r) * d]);
        }
    return out;
}

std::vector<double> rows(const DecodeParams& p, const Projections& x, long first, long count, PositionRule rule)
{
    return rows_with_sinks(p, x, first, count, rule, sink_logits(p));
}

std::vector<double> steps(const DecodeParams& p, const Run& run, PositionRule rule) { return rows(p, from_run(run), p.prefill, p.steps, rule); }

// The error model's rule for the steps (docs/check.md, "The error model"): a plain reference
// in T of the same rows (attend_one, as the run computes them, each query reading what `rule`
// gives it), measured against float64, makes r; two computations in T are each within r of the
// exact value, floored at u(T) M. The reference is the rows compared, not the full pass: a
// step reading its keys at cache indices rounds other angles than the full pass does.
double step_tol(const DecodeParams& p, const Run& run, const CheckEnv& env, PositionRule rule, double* size)
{
    const std::vector<double> exact = rows(p, from_run(run), p.prefill, p.steps, rule);
    const std::vector<double> in_t = rows_in(env.dtype, p, run, p.prefill, p.steps, rule);
    double r = 0.0, M = 0.0;
    for (std::size_t n = 0; n < exact.size(); ++n) r = worse(r, diff_nan_rule(in_t[n], exact[n])), M = std::max(M, std::abs(exact[n]));
    *size = M;
    return kReferenceFactor * std::max(r, unit_roundoff(env.dtype) * M);
}

// --- checks ---

// max |out_steps - expected| over every (batch, head, step), the expected given [B, H, T, d].
double steps_diff(const Run& run, const std::vector<double>& expected)
{
    const Tensor& out = run.at("out_steps");
    double worst = 0.0;
    for (std::size_t n = 0; n < expected.size(); ++n) worst = worse(worst, diff_nan_rule(out.values[n], expected[n]));
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

// The largest norm of one row (the last axis) of a tensor: |q_m| of one head at one position.
double max_row_norm(const Tensor& t)
{
    const std::size_t d = t.shape.back();
    double worst = 0.0;
    for (std::size_t r = 0; r * d < t.values.size(); ++r) {
        double sq = 0.0;
        for (std::size_t c = 0; c < d; ++c) sq += t.values[r * d + c] * t.values[r * d + c];
        worst = worse(worst, std::sqrt(sq));
    }
    return worst;
}

// Steps recomputed with positions other than the run's own (shifted by the pads, or the
// cache's indices for the full pass's positions) are the same mathematically; in floating point
// they rotate by other angles, each rounded (error model: u |angle| per rounding, within
// angle_rel_error at positions up to m, theta_0 = 1, so delta <= angle_rel_error(float64, m) m
// for the float64 recomputation). Turning q and k each by up to delta moves a score
// q.k / sqrt(d) by at most 2 delta |q| |k| / sqrt(d); a softmax moves sum_j |w_j| by at most
// twice its largest score change, so an output by 4 delta |q| |k| / sqrt(d) max |v|. ALiBi's
// biases are its slopes times whole distances, the same at any shift: 0 there (sinusoidal PE is
// never held against other positions: the shift check is RoPE's and ALiBi's, and sinks go
// without it).
double other_angles_tol(const DecodeParams& p, const Run& run)
{
    if (p.pe != PeKind::rope) return 0.0;
    const double m = dsize(tokens(p) + p.prefill), delta = angle_rel_error(DType::float64, m) * m;
    return 4.0 * delta * max_row_norm(run.at("q")) * max_row_norm(run.at("k")) / std::sqrt(dsize(head_dim(p))) * max_abs(run.at("v"));
}

// out_steps against `expected`, the steps computed in T by `rule` (the run's own rule unless
// the steps are held to the full pass, whose positions are the tokens' own).
Check steps_check(const DecodeParams& p, const Run& run, const CheckEnv& env, std::string claim, const std::vector<double>& expected, std::string metric,
                  PositionRule rule, double other_angles = 0.0)
{
    double size = 0.0;
    const double tol = step_tol(p, run, env, rule, &size) + other_angles;
    return at_most(std::move(claim), std::move(metric), steps_diff(run, expected), tol, size);
}

std::optional<Check> check_full_pass(const DecodeParams& p, const Run& run, const CheckEnv& env)
{
    if (p.window > 0) return std::nullopt;
    return steps_check(p, run, env,
                       tr(env, "each of the {} steps through the KV cache gives the full causal pass's row, each new token at its own position",
                          "经过 KV 缓存的 {} 步，每一步都等于完整因果前向的那一行，每个新 token 用它自己的位置", p.steps),
                       full_rows(p, run), "max |out_steps - out_full[P:]|", PositionRule::correct);
}

std::optional<Check> check_ring_buffer(const DecodeParams& p, const Run& run, const CheckEnv& env)
{
    if (p.window == 0 || p.sinks > 0) return std::nullopt;
    return steps_check(p, run, env,
                       tr(env, "a ring buffer of {0} entries, the new token included, equals the full pass with the window mask (mask --kind window --window {0})",
                          "{0} 个槽位的环形缓冲（含新 token）等于加窗口掩码的完整前向（mask --kind window --window {0}）", p.window),
                       full_rows(p, run), "max |out_steps - out_full[P:]|", PositionRule::correct);
}

std::optional<Check> check_sinks(const DecodeParams& p, const Run& run, const CheckEnv& env)
{
    if (p.sinks == 0) return std::nullopt;
    return steps_check(p, run, env,
                       tr(env, "with S = {} sinks and a window of W = {}, each cached key is read at its index in the cache and the query at the last (StreamingLLM)",
                          "S = {} 个 sink 加 W = {} 的窗口时，缓存里每个键按它在缓存中的下标读取，查询用最后一个下标（StreamingLLM）", p.sinks, p.window),
                       steps(p, run, PositionRule::correct), "max |out_steps - float64 recomputation|", PositionRule::correct,
                       other_angles_tol(p, run));
}

std::optional<Check> check_left_pad(const DecodeParams& p, const Run& run, const CheckEnv& env)
{
    if (p.left_pad.empty()) return std::nullopt;
    return steps_check(p, run, env,
                       tr(env, "left-padded sequences give their unpadded rows: positions cumsum(mask) - 1, pads masked (Hugging Face's generate)",
                          "左填充的序列给出与不填充时相同的行：位置为 cumsum(mask) - 1，填充被屏蔽（Hugging Face 的 generate）"),
                       steps(p, run, PositionRule::correct), "max |out_steps - unpadded recomputation in float64|", PositionRule::correct);
}

// Under RoPE and ALiBi only differences of positions enter a score, so counting from the
// first pad, a shift by the pad count, changes nothing: the usual mistake is invisible there.
std::optional<Check> check_shift(const DecodeParams& p, const Run& run, const CheckEnv& env)
{
    if (p.left_pad.empty() || (p.pe != PeKind::rope && p.pe != PeKind::alibi)) return std::nullopt;
    return steps_check(p, run, env,
                       tr(env, "under {}, counting positions from the first pad gives the same steps: a uniform shift changes no score",
                          "在 {} 下，从第一个填充开始计位置得到相同的各步输出：整体平移不改变任何得分", name_of(p.pe)),
                       steps(p, run, PositionRule::left_pad_from_0), tr(env, "max |out_steps - steps with positions from the first pad|", "max |out_steps - 位置从第一个填充处起算的步骤|"),
                       PositionRule::correct, other_angles_tol(p, run));
}

// gpt-oss's sinks written another way: the softmax over the keys alone, times 1 - w_sink, the
// share the sink's column takes, e^sink / (e^sink + sum_j e^score_j).
std::vector<double> steps_by_share(const DecodeParams& p, const Run& run)
{
    const Projections x = from_run(run);
    std::vector<double> out = rows_with_sinks(p, x, p.prefill, p.steps, PositionRule::correct, {});
    const std::vector<double> sinks = sink_logits(p);
    const auto H = static_cast<std::size_t>(p.heads), T_ = static_cast<std::size_t>(p.steps), d = static_cast<std::size_t>(head_dim(p));
    for (std::size_t b = 0; b < static_cast<std::size_t>(p.batch); ++b)
        for (std::size_t t = 0; t < T_; ++t) {
            const long n = p.prefill + static_cast<long>(t);
            const Visible vis = visible_at(p, b, n, PositionRule::correct);
            for (std::size_t head = 0; head < H; ++head) {
                const std::vector<double> scores = scores_one(p, x, b, head, n, vis);
                const double top = std::max(sinks[head], *std::max_element(scores.begin(), scores.end()));
                double keys = 0.0;
                for (double v : scores) keys += std::exp(v - top);
                const double keep = keys / (keys + std::exp(sinks[head] - top));
                for (std::size_t c = 0; c < d; ++c) out[((b * H + head) * T_ + t) * d + c] *= keep;
            }
        }
    return out;
}

// The two float64 forms round apart, by about u(float64) M: their gap joins the tolerance as
// the float64 references' own error (the error model's r_R).
std::optional<Check> check_sink_logits(const DecodeParams& p, const Run& run, const CheckEnv& env)
{
    if (p.sink_logits.empty()) return std::nullopt;
    const std::vector<double> by_share = steps_by_share(p, run), concatenated = steps(p, run, PositionRule::correct);
    double forms = 0.0;
    for (std::size_t n = 0; n < by_share.size(); ++n) forms = std::max(forms, std::abs(by_share[n] - concatenated[n]));
    return steps_check(p, run, env,
                       tr(env, "each head's sink logit takes a share of every row and gives back nothing: a step is the softmax over its keys alone times 1 - w_sink (gpt-oss)",
                          "每个头的 sink logit 在每一行分走一份权重、不贡献任何值：每一步等于只在键上做的 softmax 乘以 1 - w_sink（gpt-oss）"),
                       by_share, "max |out_steps - (1 - w_sink) softmax over the keys|", PositionRule::correct, forms);
}

// The position each slot of the cache is read with, by the formula: with a window the slots
// are the cache's entries in order; without one, slot t holds token t. -1: empty or a pad.
std::vector<double> expected_slots(const DecodeParams& p, std::size_t b, long n)
{
    const Visible vis = visible_at(p, b, n, PositionRule::correct);
    std::vector<double> out(static_cast<std::size_t>(slots(p)), -1.0);
    for (std::size_t s = 0; s < vis.tokens.size(); ++s)
        out[p.window > 0 ? s : static_cast<std::size_t>(vis.tokens[s])] = static_cast<double>(vis.positions[s]);
    return out;
}

std::optional<Check> check_positions(const DecodeParams& p, const Run& run, const CheckEnv& env)
{
    const Tensor& positions = run.at("positions");
    const auto S = static_cast<std::size_t>(slots(p)), T_ = static_cast<std::size_t>(p.steps);
    double off = 0.0;
    for (std::size_t b = 0; b < static_cast<std::size_t>(p.batch); ++b)
        for (std::size_t t = 0; t < T_; ++t) {
            const std::vector<double> expected = expected_slots(p, b, p.prefill + static_cast<long>(t));
            for (std::size_t s = 0; s < S; ++s) off += positions.values[(b * T_ + t) * S + s] != expected[s];
        }
    return exact_zero(p.sinks > 0 ? tr(env, "slots hold the S = {} sinks, then the last W = {} tokens; each is read at its index in the cache (-1: empty)",
                                       "槽位先放 S = {} 个 sink，再放最后 W = {} 个 token；每个按它在缓存中的下标读取（-1：空）", p.sinks, p.window)
                                  : tr(env, "slots hold the tokens in order, each read at its own position (-1: empty or a pad)",
                                       "槽位按顺序放 token，每个用它自己的位置（-1：空或填充）"),
                      tr(env, "slots with another position", "位置不对的槽位数"), off);
}

// --- the catalogue of usual mistakes: the steps with the positions read another way ---

bool positional(const DecodeParams& p) { return p.pe == PeKind::rope || p.pe == PeKind::alibi; }

Tensor steps_as(const Run& run, std::vector<double> values)
{
    const Tensor& t = run.at("out_steps");
    return Tensor{"out_steps", t.axes, Elem::float64, t.shape, std::move(values)};
}

Tensor steps_with(const DecodeParams& p, const Run& run, PositionRule rule) { return steps_as(run, steps(p, run, rule)); }

Tensor pads_counted(const DecodeParams& p, const Run& run)
{
    if (p.left_pad.empty() || p.pe == PeKind::none) return Tensor{};
    if (p.pe != PeKind::sinusoidal) return steps_with(p, run, PositionRule::left_pad_from_0);  // the same steps, to rounding
    return steps_as(run, rows(p, counted_from_first_pad(p, run), p.prefill, p.steps, PositionRule::left_pad_from_0));
}

// The steps with the run's sink logits times `factor` (0: none at all); nothing without sinks.
Tensor with_sinks(const DecodeParams& p, const Run& run, double factor)
{
    std::vector<double> sinks = sink_logits(p);
    const bool none = std::all_of(sinks.begin(), sinks.end(), [](double s) { return s == 0.0; });
    if (sinks.empty() || (factor != 0.0 && (factor == 1.0 || none))) return Tensor{};  // the same steps
    if (factor == 0.0) sinks.clear();
    for (double& s : sinks) s *= factor;
    return steps_as(run, rows_with_sinks(p, from_run(run), p.prefill, p.steps, PositionRule::correct, sinks));
}

}  // namespace

std::vector<CheckDef<DecodeParams>> decode_checks()
{
    return {{"positions_follow_cache_rule", {"positions"}, check_positions},
            {"steps_match_full_pass", {"out_steps"}, check_full_pass},
            {"ring_buffer_equals_window_mask", {"out_steps"}, check_ring_buffer},
            {"sinks_read_cache_positions", {"out_steps"}, check_sinks},
            {"left_pad_matches_unpadded", {"out_steps"}, check_left_pad},
            {"uniform_shift_changes_no_score", {"out_steps"}, check_shift},
            {"sink_logits_take_a_share", {"out_steps"}, check_sink_logits}};
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
             [](const DecodeParams& p, const Run& run) { return positional(p) && p.sinks > 0 ? steps_with(p, run, PositionRule::sinks_original) : Tensor{}; }},
            {"left_pad_positions_from_0", "out_steps", "left-padded prompts are counted from the first pad, not from their first real token",
             "左填充的提示从第一个填充开始计位置，而不是从第一个真实 token 开始", pads_counted},
            {"sink_logits_ignored", "out_steps", "the sink logits left out: every row's weights sum to 1 again",
             "漏了 sink logit：每行权重又加起来等于 1", [](const DecodeParams& p, const Run& run) { return with_sinks(p, run, 0.0); }},
            {"sink_logit_scaled", "out_steps", "the sink logits scaled by 1/sqrt(d) with the scores: the scale applied after the column is appended",
             "sink logit 和得分一起乘了 1/sqrt(d)：先拼上那一列再缩放",
             [](const DecodeParams& p, const Run& run) { return with_sinks(p, run, 1.0 / std::sqrt(dsize(head_dim(p)))); }}};
}

}  // namespace attnlab::decode_detail

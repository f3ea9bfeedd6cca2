// `grad`'s checks. Each reads the gradient it judges from the run, so it judges a learner's
// tensor (--against) as it judges the run's own. The float64 passes they start from were made
// once by the compute (GradKept).
#include "attnlab/experiments/grad_internal.hpp"

#include "attnlab/core/error_model.hpp"
#include "attnlab/core/measure.hpp"
#include "attnlab/core/rng.hpp"
#include "attnlab/core/softmax.hpp"

#include <cmath>

namespace attnlab::grad_detail {

namespace {

const GradKept& kept_of(const Run& run) { return resolved_as<GradKept>(run); }

// --- the loss of the block with one tensor moved, in float64 ---

// out [B, H, L, d] = P v, head h reading key/value head h / (H / Hkv); a weight of 0 (a masked
// key) adds nothing and is skipped.
Ten4<double> weights_times_values(const Ten4<double>& weights, const Ten4<double>& v)
{
    const std::size_t B = weights.shape(0), H = weights.shape(1), L = weights.shape(2), S = weights.shape(3), d = v.shape(3);
    const std::size_t group = H / v.shape(1);
    Ten4<double> out = xt::zeros<double>({B, H, L, d});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t i = 0; i < L; ++i) {
                const double* p_i = &weights(b, h, i, 0);
                double* out_i = &out(b, h, i, 0);
                for (std::size_t j = 0; j < S; ++j) {
                    if (p_i[j] == 0.0) continue;
                    const double* v_j = &v(b, h / group, j, 0);
                    for (std::size_t c = 0; c < d; ++c) out_i[c] += p_i[j] * v_j[c];
                }
            }
    return out;
}

// loss = sum(d_out * out_merged) = sum over b, h, i, c of d_out_h * out.
double loss_of(const GradKept& k, const Ten4<double>& out)
{
    const Ten4<double> d_out_h = split_heads(k.in->d_out, k.r.cfg.heads);
    double loss = 0.0;
    for (std::size_t n = 0; n < out.size(); ++n) loss += d_out_h.data()[n] * out.data()[n];
    return loss;
}

template <class C>
C moved(const C& base, const std::vector<double>& delta)
{
    C t = base;
    for (std::size_t n = 0; n < t.size(); ++n) t.data()[n] += delta[n];
    return t;
}

// The loss from the inputs with x, x_kv or a weight moved by delta: the whole block again.
double loss_from_inputs(const GradKept& k, const std::string& of, const std::vector<double>& delta)
{
    BlockInputs<double> in = *k.in;
    if (of == "x") in.x = moved(in.x, delta);
    if (of == "x_kv") in.x_kv = moved(in.x_kv, delta);
    for (auto [name, w] : {std::pair{"w_q", &in.w.w_q}, {"w_k", &in.w.w_k}, {"w_v", &in.w.w_v}})
        if (of == name) *w = moved(*w, delta);
    return loss_of(k, run_block(in.x, in.keys(), in.w, k.r.cfg, Matrices::drop).attn.out);
}

// The loss with q, k, v (before RoPE: rotated again), q_rot or k_rot moved: attention again.
double loss_from_heads(const GradKept& k, const std::string& of, const std::vector<double>& delta)
{
    const BlockResult<double>& f = *k.forward;
    BlockResult<double> res;  // what attention reads, without the forward's scores and weights
    res.q = f.q, res.k = f.k, res.v = f.v, res.bias = f.bias, res.slopes = f.slopes, res.q0 = f.q0, res.scale = f.scale;
    const bool rope = k.r.cfg.pe == PeKind::rope;
    const long positions = block_positions(k.r);
    if (of == "q_rot") res.q = moved(res.q, delta);
    if (of == "k_rot") res.k = moved(res.k, delta);
    if (of == "v") res.v = moved(res.v, delta);
    if (of == "q") res.q = rope ? block_rotate(moved(f.q_unrotated, delta), k.r.cfg, positions, res.q0, Direction::forward) : moved(res.q, delta);
    if (of == "k") res.k = rope ? block_rotate(moved(f.k_unrotated, delta), k.r.cfg, positions, 0, Direction::forward) : moved(res.k, delta);
    return loss_of(k, attention(attention_inputs(res, k.r.cfg), Matrices::drop).out);
}

double perturbed_loss(const GradKept& k, const std::string& of, const std::vector<double>& delta)
{
    const BlockResult<double>& f = *k.forward;
    if (of == "weights") return loss_of(k, weights_times_values(moved(f.attn.weights, delta), f.v));
    if (of == "scores") {
        Ten4<double> weights = moved(f.attn.scores, delta);
        softmax_rows(weights.data(), weights.size() / weights.shape(3), weights.shape(3), k.r.cfg.softmax);
        return loss_of(k, weights_times_values(weights, f.v));
    }
    if (of == "x" || of == "x_kv" || of.rfind("w_", 0) == 0) return loss_from_inputs(k, of, delta);
    return loss_from_heads(k, of, delta);
}

// Central differences along u with step h: (loss(+h u) - loss(-h u)) / 2h.
double central_difference(const GradKept& k, const std::string& of, const std::vector<double>& u, double h)
{
    std::vector<double> plus(u.size()), minus(u.size());
    for (std::size_t n = 0; n < u.size(); ++n) plus[n] = h * u[n], minus[n] = -h * u[n];
    return (perturbed_loss(k, of, plus) - perturbed_loss(k, of, minus)) / (2.0 * h);
}

// The size F of the loss's terms, for its rounding: sum |d_out| (sum_j P_ij |v_jc|), times
// 1 + the largest |score| (an error delta in a score moves a weight by up to delta relative,
// and a score's rounding grows with its size).
double loss_terms(const GradKept& k)
{
    const BlockResult<double>& f = *k.forward;
    Ten4<double> abs_v = xt::abs(f.v);
    const Ten4<double> size = weights_times_values(f.attn.weights, abs_v);
    const Ten4<double> d_out_h = split_heads(k.in->d_out, k.r.cfg.heads);
    double sum = 0.0, s_max = 0.0;
    for (std::size_t n = 0; n < size.size(); ++n) sum += std::abs(d_out_h.data()[n]) * size.data()[n];
    for (double s : f.attn.scores)
        if (std::isfinite(s)) s_max = std::max(s_max, std::abs(s));
    return (1.0 + s_max) * sum;
}

std::size_t name_index(const std::string& grad)
{
    const auto& names = grad_names();
    for (std::size_t n = 0; n < names.size(); ++n)
        if (names[n].grad == grad) return n;
    return names.size();
}

// A seeded direction over the tensor `of`, one stream offset per gradient; 0 where `of` is not
// finite (a masked score stays -inf whatever is added).
std::vector<double> direction(const Tensor& of, const std::string& grad, std::uint64_t seed)
{
    std::vector<double> u(of.size());
    fill_normal(u.data(), u.size(), seed, stream::fd_direction, name_index(grad) << 32);
    for (std::size_t n = 0; n < u.size(); ++n)
        if (!std::isfinite(of.values[n])) u[n] = 0.0;
    return u;
}

// Step of the differences: kFdStep times the tensor's size, and half of it.
constexpr double kFdStep = 1e-4;

// Error model of the check (JAX's check_grads holds a gradient to numerical differences along
// random directions in the same way):
//   measured  |<G, u> - D(h/2)|, G the judged gradient, D the central difference in float64;
//   bound     |D(h) - D(h/2)|                 the truncation error of D(h/2) is c h^2 / 4, and
//                                             D(h) - D(h/2) = 3 c h^2 / 4: three times it;
//           + 4 u64 N F / h                   D(h/2)'s rounding: two losses, each within
//                                             u64 N F (N = 2E + d + 2S + 16 operations along the
//                                             chain: projection, scores, softmax, values), over h/2;
//           + sum_k |u_k| e_k                 G's own rounding, e_k the element tolerance of the
//                                             one error model (core/error_model.hpp) in the run's
//                                             dtype and G's storage;
//           + u64 n sum_k |G_k u_k|           the dot product in float64.
std::optional<Check> check_finite_differences(const std::string& grad, const std::string& of, const Run& run, const CheckEnv& env)
{
    if (!run.has(grad)) return std::nullopt;
    const GradKept& k = kept_of(run);
    const Tensor &judged = run.at(grad), &base = run.at(of);
    const std::vector<double> u = direction(base, grad, env.seed);
    double theta = 0.0;
    for (double v : base.values)
        if (std::isfinite(v)) theta = std::max(theta, std::abs(v));
    const double h = kFdStep * (1.0 + theta);
    const double d_h = central_difference(k, of, u, h), d_half = central_difference(k, of, u, h / 2.0);
    const std::vector<double> ref = grad_tensor(*k.grads, grad, judged.axes, Elem::float64).values.to_vector();
    const DType storage = coarser(precision_of(judged.elem).value_or(env.dtype), env.dtype);
    const Tolerance tol = judging_tolerance({storage, env.dtype}, {run.measured.at("max_abs:" + grad), run.measured.at("error:" + grad)}, 0.0);
    double dot = 0.0, dot_size = 0.0, scale = 0.0, judged_rounding = 0.0;
    for (std::size_t n = 0; n < u.size(); ++n) {
        dot += judged.values[n] * u[n];
        dot_size += std::abs(judged.values[n] * u[n]);
        scale += std::abs(ref[n] * u[n]);
        judged_rounding += std::abs(u[n]) * (tol.rtol * std::abs(ref[n]) + tol.atol);
    }
    const auto& cfg = k.r.cfg;
    const double ops = 2.0 * dsize(k.r.dim) + dsize(k.r.dim / cfg.heads) + 2.0 * dsize(k.r.kv_len) + 16.0;
    const double u64 = unit_roundoff(DType::float64);
    const double bound = std::abs(d_h - d_half) + 4.0 * u64 * ops * loss_terms(k) / h + judged_rounding + u64 * dsize(u.size()) * dot_size;
    return at_most(tr(env, "{} = dloss/d{} (loss = sum(d_out * out_merged)), by central differences in float64",
                      "{} = dloss/d{}（loss = sum(d_out * out_merged)），与 float64 中心差分一致", grad, of),
                   tr(env, "|<{0}, u> - central difference along u|, u seeded, h = {1:.3g}",
                      "|<{0}, u> - 沿 u 的中心差分|，u 带种子，h = {1:.3g}", grad, h / 2.0),
                   diff_nan_rule(dot, d_half), bound, scale);
}

// --- the softmax's Jacobian and the mask ---

// Error model: d_scores_ij = P_ij (d_weights_ij - delta_i) is within u_C (2S + 4) of
// P_ij (|d_weights_ij| + |delta_i|) (delta_i a sum of S products, then a difference, a product
// and the store); the exact row sum is delta_i (1 - sum_j P_ij), and sum_j P_ij is within S
// roundings of 1 when P is stored in T; summing the row adds S roundings of sum |d_scores|,
// and a file's storage one more. All relative to m_i = sum_j P_ij (|d_weights_ij| + |delta_i|).
std::optional<Check> check_rows_sum_to_zero(const AttendParams&, const Run& run, const CheckEnv& env)
{
    const Tensor &ds = run.at("d_scores"), &p = run.at("weights"), &dw = run.at("d_weights");
    const std::size_t S = ds.shape.back(), rows = ds.size() / S;
    double worst = 0.0;
    for (std::size_t r = 0; r < rows; ++r) {
        double sum = 0.0, delta = 0.0, m = 0.0;
        for (std::size_t j = 0; j < S; ++j) delta += p.values[r * S + j] * dw.values[r * S + j];
        for (std::size_t j = 0; j < S; ++j) {
            sum += ds.values[r * S + j];
            m += std::abs(p.values[r * S + j]) * (std::abs(dw.values[r * S + j]) + std::abs(delta));
        }
        worst = worse(worst, m > 0.0 ? std::abs(sum) / m : (sum == 0.0 ? 0.0 : std::numeric_limits<double>::infinity()));
    }
    const double s = dsize(static_cast<long>(S));
    const DType storage = coarser(precision_of(ds.elem).value_or(env.dtype), env.dtype);
    return at_most(tr(env, "each row of d_scores sums to 0: the softmax's Jacobian diag(P) - P P^T has rows summing to 0",
                      "d_scores 每一行之和为 0：softmax 的雅可比 diag(P) - P P^T 每行和为 0"),
                   tr(env, "max over rows of |sum_j d_scores_ij| / sum_j P_ij (|d_weights_ij| + |delta_i|)",
                      "各行 |sum_j d_scores_ij| / sum_j P_ij (|d_weights_ij| + |delta_i|) 的最大值"),
                   worst, accumulate_then_store(env.dtype, 3.0 * s + 4.0, s + 2.0) + unit_roundoff(storage), 1.0);
}

// Whether key j is hidden from query i of sequence b (the head does not matter).
bool hidden(const Resolved& r, std::size_t b, std::size_t i, std::size_t j)
{
    return r.cfg.mask.kind != MaskKind::none && r.cfg.mask.masked(static_cast<long>(b), static_cast<long>(i), static_cast<long>(j));
}

std::optional<Check> check_masked_zero(const AttendParams& p, const Run& run, const CheckEnv& env)
{
    if (p.mask == MaskKind::none) return std::nullopt;
    const Resolved& r = kept_of(run).r;
    const Tensor& ds = run.at("d_scores");
    const std::size_t H = ds.dim(1), L = ds.dim(2), S = ds.dim(3);
    double worst = 0.0;
    for (std::size_t n = 0; n < ds.size(); ++n) {
        const std::size_t j = n % S, i = (n / S) % L, b = n / (S * L * H);
        if (hidden(r, b, i, j)) worst = worse(worst, std::abs(ds.values[n]));
    }
    return exact_zero(tr(env, "a masked key gets exactly zero gradient: P_ij = 0 there, so d_scores_ij = P_ij (...) = 0",
                         "被屏蔽的键梯度恰为 0：该处 P_ij = 0，所以 d_scores_ij = P_ij (...) = 0"),
                      tr(env, "max |d_scores| at masked (query, key) pairs", "被屏蔽 (查询, 键) 处 max |d_scores|"), worst);
}

// --- where no gradient may flow ---

// Under a causal mask no gradient flows from a query to a later key. The backward of the run's
// own weights, with d_out zero on every row past t = (L - 1) / 2: keys past t + q0 are hidden
// from rows <= t (P_ij = 0) and rows past t carry nothing, so their d_k and d_v are exactly 0.
template <class T>
std::optional<Check> check_no_future_gradient(const AttendParams& p, const Run& run, const CheckEnv& env)
{
    const GradKept& kept = kept_of(run);
    const Resolved& r = kept.r;
    if (!r.cfg.mask.has_causal()) return std::nullopt;
    const long t = (r.len - 1) / 2, first_hidden = t + r.cfg.mask.offset() + 1;
    if (first_hidden >= r.kv_len) return std::nullopt;
    const bool rope = p.pe == PeKind::rope;
    Ten3<T> d_out = from_tensor<T, 3>(run.at("d_out"));
    xt::view(d_out, xt::all(), xt::range(t + 1, r.len), xt::all()) = T(0);
    const AttentionGrads<T> g = attention_backward(from_tensor<T, 4>(run.at(rope ? "q_rot" : "q")), from_tensor<T, 4>(run.at(rope ? "k_rot" : "k")),
                                                   from_tensor<T, 4>(run.at("v")), from_tensor<T, 4>(run.at("weights")),
                                                   split_heads(d_out, r.cfg.heads), kept.forward->scale);
    const Ten4<T> d_k = rope ? block_rotate(g.d_k, r.cfg, block_positions(r), 0, Direction::inverse) : g.d_k;
    double worst = 0.0;
    for (const Ten4<T>* grad : {&d_k, &g.d_v}) {
        const auto later = xt::view(*grad, xt::all(), xt::all(), xt::range(first_hidden, r.kv_len), xt::all());
        for (auto v : later) worst = worse(worst, std::abs(static_cast<double>(v)));
    }
    return exact_zero(tr(env, "under the causal mask no gradient flows from a query to a later key: with d_out zero past row {0}, d_k and d_v of every key past {1} are exactly 0",
                         "在因果掩码下，梯度不会从查询流向其后的键：d_out 在第 {0} 行之后为 0 时，第 {1} 个之后每个键的 d_k 与 d_v 恰为 0", t, first_hidden - 1),
                      tr(env, "max |d_k|, |d_v| over keys {}..{}", "键 {}..{} 上的 max |d_k|、|d_v|", first_hidden, r.kv_len - 1), worst);
}

// --- RoPE ---

// |a| + |b| of the pair (a, b) each element of g [.., d] is rotated with.
std::vector<double> pair_sizes(const Ten4<double>& g, RopeStyle style)
{
    const std::size_t d = g.shape(3), pairs = d / 2;
    std::vector<double> size(g.size());
    for (std::size_t row = 0; row < g.size() / d; ++row)
        for (std::size_t i = 0; i < pairs; ++i) {
            const auto [a, b] = rope_pair(style, static_cast<long>(i), static_cast<long>(pairs));
            const double s = std::abs(g.data()[row * d + static_cast<std::size_t>(a)]) + std::abs(g.data()[row * d + static_cast<std::size_t>(b)]);
            size[row * d + static_cast<std::size_t>(a)] = size[row * d + static_cast<std::size_t>(b)] = s;
        }
    return size;
}

// The largest |position| the block rotates by.
double max_position(const Resolved& r)
{
    double m = dsize(block_positions(r) - 1);
    for (long pos : r.cfg.positions) m = std::max(m, std::abs(static_cast<double>(pos)));
    return m;
}

// RoPE's backward is the inverse rotation: q_rot = R(m theta) q, so d_q = R(m theta)^T d_q_rot =
// R(-m theta) d_q_rot, and d_k likewise. Error model, relative to |a| + |b| of the pair of
// d_q_rot an element is made from: two products and a sum stored once, cos and sin each rounded
// once (2 u(T)), the angle m theta_i within angle_rel_error of its size (theta_0 = 1, so at most
// m_max), and a file's storage. Where the values fall among T's subnormals each of the three
// roundings and the store adds up to s (half the subnormal spacing) besides: those 3 s(T) +
// s(storage) are taken off each difference before it is divided (float16's gradients of a
// far key reach 1e-6, where s = 3e-8 is 2 % of a pair).
std::optional<Check> check_rope_inverse(const AttendParams& p, const Run& run, const CheckEnv& env)
{
    if (p.pe != PeKind::rope) return std::nullopt;
    const GradKept& kept = kept_of(run);
    double worst = 0.0;
    DType storage = env.dtype;
    for (const char* grad : {"d_q", "d_k"}) storage = coarser(storage, precision_of(run.at(grad).elem).value_or(env.dtype));
    const double subnormal = 3.0 * subnormal_half_spacing(env.dtype) + subnormal_half_spacing(storage);
    for (auto [grad, rot, first] : {std::tuple{"d_q", "d_q_rot", kept.forward->q0}, {"d_k", "d_k_rot", 0L}}) {
        const Tensor& judged = run.at(grad);
        const Ten4<double> g_rot = from_tensor<double, 4>(run.at(rot));
        const Ten4<double> ref = block_rotate(g_rot, kept.r.cfg, block_positions(kept.r), first, Direction::inverse);
        const std::vector<double> size = pair_sizes(g_rot, p.rope_style);
        for (std::size_t n = 0; n < size.size(); ++n) {
            const double diff = std::max(0.0, diff_nan_rule(judged.values[n], ref.data()[n]) - subnormal);
            worst = worse(worst, size[n] > 0.0 ? diff / size[n] : (diff == 0.0 ? 0.0 : std::numeric_limits<double>::infinity()));
        }
    }
    const double m_max = max_position(kept.r);
    const double tol = accumulate_then_store(env.dtype, 3.0, 1.0) + 2.0 * unit_roundoff(env.dtype) + angle_rel_error(env.dtype, m_max) * m_max +
                       unit_roundoff(storage);
    return at_most(tr(env, "RoPE's backward is the inverse rotation: d_q = R(-m theta) d_q_rot and d_k = R(-m theta) d_k_rot",
                      "RoPE 的反向传播是逆旋转：d_q = R(-m theta) d_q_rot，d_k = R(-m theta) d_k_rot"),
                   tr(env, "max (|d_q - R(-m theta) d_q_rot| - 4 s) (and for k) / (|a| + |b|) of the rotated pair, s the subnormal rounding",
                      "max (|d_q - R(-m theta) d_q_rot| - 4 s)（k 同）/ 所在旋转对的 |a| + |b|，s 为次正规数的舍入"),
                   worst, tol, 1.0);
}

}  // namespace

template <class T>
std::vector<CheckDef<AttendParams>> grad_checks()
{
    std::vector<CheckDef<AttendParams>> out;
    for (const auto& n : grad_names()) {
        out.push_back({n.grad + "_matches_finite_differences", {n.grad},
                       [n](const AttendParams&, const Run& run, const CheckEnv& env) { return check_finite_differences(n.grad, n.of, run, env); }});
    }
    out.push_back({"d_scores_rows_sum_to_zero", {"d_scores"}, check_rows_sum_to_zero});
    out.push_back({"masked_keys_get_zero_gradient", {"d_scores"}, check_masked_zero});
    out.push_back({"no_gradient_from_later_queries", {"weights"}, check_no_future_gradient<T>});
    out.push_back({"rope_backward_is_inverse_rotation", {"d_q", "d_k"}, check_rope_inverse});
    return out;
}

template std::vector<CheckDef<AttendParams>> grad_checks<float>();
template std::vector<CheckDef<AttendParams>> grad_checks<double>();
template std::vector<CheckDef<AttendParams>> grad_checks<f16>();
template std::vector<CheckDef<AttendParams>> grad_checks<bf16>();

}  // namespace attnlab::grad_detail

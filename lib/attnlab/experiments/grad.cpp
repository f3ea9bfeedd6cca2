#include "attnlab/experiments/grad.hpp"
#include "attnlab/experiments/grad_internal.hpp"

#include "attnlab/core/error_model.hpp"
#include "attnlab/core/rng.hpp"
#include "attnlab/experiments/inputs.hpp"

#include <fmt/format.h>

namespace attnlab {

namespace grad_detail {

Resolved resolve_grad(const AttendParams& p)
{
    const Resolved r = attend_detail::resolve(p);
    if (p.softmax == SoftmaxKind::plain) {
        const MaskSpec& m = r.cfg.mask;
        for (long b = 0; m.kind != MaskKind::none && b < r.batch; ++b)
            for (long i = 0; i < r.len; ++i)
                if (m.row_fully_masked(b, i)) {
                    throw InputError(fmt::format("query {} of sequence {} sees no key: under --softmax plain its weights are NaN and so is "
                                                 "every gradient it reaches; give --softmax safe (zeros, as PyTorch 2.5 does)", i, b));
                }
    }
    return r;
}

long block_positions(const Resolved& r) { return std::max(query_position_offset(r.cfg.mask.align, r.len, r.kv_len) + r.len, r.kv_len); }

template <class T>
BlockInputs<T> inputs_of(const Run& run, const Resolved& r)
{
    using attend_detail::x_of;
    return {x_of<T>(run, "x"), r.cross ? x_of<T>(run, "x_kv") : Ten3<T>(), attend_detail::weights_of<T>(run), x_of<T>(run, "d_out")};
}

template <class T>
BlockResult<T> block_forward(const Resolved& r, const BlockInputs<T>& in)
{
    return run_block(in.x, in.keys(), in.w, r.cfg, Matrices::keep);
}

namespace {

// The weights a backward that forgot the mask recomputes: the same scores without it.
template <class T>
Ten4<T> unmasked_weights(const Resolved& r, const BlockResult<T>& f)
{
    BlockConfig open = r.cfg;
    open.mask.kind = MaskKind::none;
    return attention(attention_inputs(f, open), Matrices::keep).weights;
}

// Query and key axes swapped: [B, H, L, S] -> [B, H, S, L].
template <class T>
Ten4<T> swap_query_key(const Ten4<T>& t)
{
    return xt::transpose(t, {0, 1, 3, 2});
}

// d_scores, d_q_rot and d_k_rot, d_v: attention's own passes, with a learner's slip if asked.
template <class T>
AttentionGrads<T> attention_grads(const Resolved& r, const BlockResult<T>& f, const Ten4<T>& d_out_h, Slip slip)
{
    AttentionGrads<T> g;
    g.d_weights = weights_backward(d_out_h, f.v);
    const Ten4<T> forgot_mask = slip == Slip::mask_not_applied ? unmasked_weights(r, f) : Ten4<T>();
    const Ten4<T>& weights = slip == Slip::mask_not_applied ? forgot_mask : f.attn.weights;
    g.d_scores = slip == Slip::no_row_term ? Ten4<T>(weights * g.d_weights) : softmax_backward(weights, g.d_weights);
    const double scale = slip == Slip::scale_forgotten ? 1.0 : f.scale;
    g.d_q = query_backward(g.d_scores, f.k, scale);
    const long kv_heads = r.cfg.kv_heads;
    g.d_k = slip == Slip::d_k_transposed ? key_backward(swap_query_key(g.d_scores), f.q, kv_heads, scale) : key_backward(g.d_scores, f.q, kv_heads, scale);
    g.d_v = value_backward(f.attn.weights, d_out_h, kv_heads);
    return g;
}

}  // namespace

template <class T>
BlockGrads<T> block_backward(const Resolved& r, const BlockInputs<T>& in, const BlockResult<T>& f, Slip slip)
{
    BlockGrads<T> g;
    g.attn = attention_grads(r, f, split_heads(in.d_out, r.cfg.heads), slip);
    // RoPE: q_rot = R q, so dloss/dq = R^T dloss/dq_rot, the rotation by -m theta.
    const Direction back = slip == Slip::rope_same_direction ? Direction::forward : Direction::inverse;
    const bool rope = r.cfg.pe == PeKind::rope;
    g.d_q = rope ? block_rotate(g.attn.d_q, r.cfg, block_positions(r), f.q0, back) : g.attn.d_q;
    g.d_k = rope ? block_rotate(g.attn.d_k, r.cfg, block_positions(r), 0, back) : g.attn.d_k;
    // The projections: Q = X_in W_q, so d_W_q = X_in^T d_Q and d_X_in = d_Q W_q^T. Sinusoidal PE is
    // added to X, so d_X = d_X_in.
    const Ten3<T> d_q = merge_heads(g.d_q), d_k = merge_heads(g.d_k), d_v = merge_heads(g.attn.d_v);
    const bool pe = r.cfg.pe == PeKind::sinusoidal;
    const Ten3<T>& x_in = pe ? f.x_pe : in.x;
    const Ten3<T>& kv_in = pe ? (r.cross ? f.x_kv_pe : f.x_pe) : in.keys();
    g.d_w_q = weight_backward(x_in, d_q);
    g.d_w_k = weight_backward(kv_in, d_k);
    g.d_w_v = weight_backward(kv_in, d_v);
    if (r.cross) {
        g.d_x = input_backward<T>({{&d_q, &in.w.w_q}});
        g.d_x_kv = input_backward<T>({{&d_k, &in.w.w_k}, {&d_v, &in.w.w_v}});
    } else {
        g.d_x = input_backward<T>({{&d_q, &in.w.w_q}, {&d_k, &in.w.w_k}, {&d_v, &in.w.w_v}});
    }
    return g;
}

const std::vector<GradName>& grad_names()
{
    static const std::vector<GradName> names{{"d_weights", "weights"}, {"d_scores", "scores"}, {"d_q_rot", "q_rot"}, {"d_k_rot", "k_rot"},
                                             {"d_q", "q"},             {"d_k", "k"},           {"d_v", "v"},         {"d_x", "x"},
                                             {"d_x_kv", "x_kv"},       {"d_w_q", "w_q"},       {"d_w_k", "w_k"},     {"d_w_v", "w_v"}};
    return names;
}

bool has_grad(const AttendParams& p, const std::string& name)
{
    if (name == "d_q_rot" || name == "d_k_rot") return p.pe == PeKind::rope;
    if (name == "d_x_kv") return p.kv_len.has_value();
    return true;
}

template <class T>
const xt::xtensor<T, 4>* grad4(const BlockGrads<T>& g, const std::string& name)
{
    for (auto [n, t] : {std::pair{"d_weights", &g.attn.d_weights}, {"d_scores", &g.attn.d_scores}, {"d_q_rot", &g.attn.d_q}, {"d_k_rot", &g.attn.d_k},
                        {"d_q", &g.d_q}, {"d_k", &g.d_k}, {"d_v", &g.attn.d_v}})
        if (name == n) return t;
    return nullptr;
}

template <class T>
Tensor grad_tensor(const BlockGrads<T>& g, const std::string& name, const std::vector<std::string>& axes, Elem elem)
{
    if (const auto* t = grad4(g, name)) return to_tensor(name, axes, *t, elem);
    for (auto [n, t] : {std::pair{"d_x", &g.d_x}, {"d_x_kv", &g.d_x_kv}})
        if (name == n) return to_tensor(name, axes, *t, elem);
    for (auto [n, t] : {std::pair{"d_w_q", &g.d_w_q}, {"d_w_k", &g.d_w_k}, {"d_w_v", &g.d_w_v}})
        if (name == n) return to_tensor(name, axes, *t, elem);
    throw std::logic_error("grad_tensor: no gradient " + name);
}

#define ATTNLAB_GRAD_INSTANTIATE(T)                                                                                   \
    template BlockInputs<T> inputs_of<T>(const Run&, const Resolved&);                                               \
    template BlockResult<T> block_forward<T>(const Resolved&, const BlockInputs<T>&);                                \
    template BlockGrads<T> block_backward<T>(const Resolved&, const BlockInputs<T>&, const BlockResult<T>&, Slip); \
    template const xt::xtensor<T, 4>* grad4<T>(const BlockGrads<T>&, const std::string&);                            \
    template Tensor grad_tensor<T>(const BlockGrads<T>&, const std::string&, const std::vector<std::string>&, Elem);
ATTNLAB_GRAD_INSTANTIATE(float)
ATTNLAB_GRAD_INSTANTIATE(double)
ATTNLAB_GRAD_INSTANTIATE(f16)
ATTNLAB_GRAD_INSTANTIATE(bf16)

}  // namespace grad_detail

namespace {

using namespace grad_detail;

const std::vector<std::string> kBPD = {"batch", "pos", "dim"}, kBHPD = {"batch", "head", "pos", "dim"}, kBHQK = {"batch", "head", "query", "key"},
                               kInOut = {"in", "out"};

// The axes of a tensor the run holds, by name (a gradient's are those of what it is the gradient of).
const std::vector<std::string>& axes_of(const std::string& name)
{
    if (name == "x" || name == "x_kv" || name == "x_pe" || name == "d_out" || name == "d_x" || name == "d_x_kv") return kBPD;
    if (name == "scores" || name == "weights" || name == "d_scores" || name == "d_weights") return kBHQK;
    if (name.rfind("w_", 0) == 0 || name.rfind("d_w_", 0) == 0) return kInOut;
    return kBHPD;
}

template <class T>
void add_forward(const AttendParams& p, const BlockInputs<T>& in, BlockResult<T>& f, Run& run)
{
    const Elem elem = elem_of<T>();
    if (!p.positions.empty()) run.add(Tensor{"positions", {"pos"}, Elem::index, {p.positions.size()}, std::vector<double>(p.positions.begin(), p.positions.end())});
    run.add(to_tensor("x", kBPD, in.x, elem));
    if (p.kv_len) run.add(to_tensor("x_kv", kBPD, in.x_kv, elem));
    for (auto [name, w] : {std::pair{"w_q", &in.w.w_q}, {"w_k", &in.w.w_k}, {"w_v", &in.w.w_v}}) run.add(to_tensor(name, kInOut, *w, elem));
    if (p.pe == PeKind::sinusoidal) run.add(to_tensor("x_pe", kBPD, f.x_pe, elem));
    const bool rope = p.pe == PeKind::rope;
    run.add(to_tensor("q", kBHPD, rope ? f.q_unrotated : f.q, elem));
    run.add(to_tensor("k", kBHPD, rope ? f.k_unrotated : f.k, elem));
    if (rope) run.add(to_tensor("q_rot", kBHPD, f.q, elem)), run.add(to_tensor("k_rot", kBHPD, f.k, elem));
    run.add(to_tensor("v", kBHPD, f.v, elem));
    if (p.pe == PeKind::alibi) run.add(to_tensor("bias", {"head", "query", "key"}, f.bias, elem));
    run.add(to_tensor("scores", kBHQK, f.attn.scores, elem));
    run.add(to_tensor("weights", kBHQK, f.attn.weights, elem));
    run.add(to_tensor("out", kBHPD, f.attn.out, elem));
    run.add(to_tensor("d_out", kBPD, in.d_out, elem));
}

// The float64 passes the checks start from, and each gradient's reference error in T.
template <class T>
void keep_float64(const Resolved& r, const BlockGrads<T>& g, Run& run)
{
    auto in = std::make_shared<const BlockInputs<double>>(inputs_of<double>(run, r));
    auto forward = std::make_shared<const BlockResult<double>>(block_forward(r, *in));
    auto grads = std::make_shared<const BlockGrads<double>>(block_backward(r, *in, *forward));
    for (const auto& n : grad_names()) {
        if (!run.has(n.of)) continue;
        const ReferenceError e = measure_reference_error(grad_tensor(g, n.grad, axes_of(n.grad), elem_of<T>()), grad_tensor(*grads, n.grad, axes_of(n.grad), Elem::float64));
        run.measured["max_abs:" + n.grad] = e.max_abs;
        run.measured["error:" + n.grad] = e.error;
    }
    run.keep(GradKept{r, std::move(in), std::move(forward), std::move(grads)});
}

template <class T>
Run compute_grad(const AttendParams& p, const Plan& plan)
{
    const Resolved r = resolve_grad(p);
    const auto B = static_cast<std::size_t>(r.batch), L = static_cast<std::size_t>(r.len), S = static_cast<std::size_t>(r.kv_len),
               E = static_cast<std::size_t>(r.dim);
    const long kv_out = r.cfg.kv_heads * (r.dim / r.cfg.heads);
    BlockInputs<T> in;
    in.x = input_or<T, 3>(plan, "x", [&] { return random_tensor3<T>(B, L, E, plan.seed, stream::x); });
    if (r.cross) in.x_kv = input_or<T, 3>(plan, "x_kv", [&] { return random_tensor3<T>(B, S, E, plan.seed, stream::x_kv); });
    in.w = {input_or<T, 2>(plan, "w_q", [&] { return random_weight<T>(r.dim, r.dim, plan.seed, stream::w_q); }),
            input_or<T, 2>(plan, "w_k", [&] { return random_weight<T>(r.dim, kv_out, plan.seed, stream::w_k); }),
            input_or<T, 2>(plan, "w_v", [&] { return random_weight<T>(r.dim, kv_out, plan.seed, stream::w_v); })};
    in.d_out = input_or<T, 3>(plan, "d_out", [&] { return random_tensor3<T>(B, L, E, plan.seed, stream::d_out); });
    BlockResult<T> f = block_forward(r, in);
    const BlockGrads<T> g = block_backward(r, in, f);
    Run run;
    set_param(run.derived, "scale", f.scale);
    add_forward(p, in, f, run);
    for (const auto& n : grad_names())
        if (has_grad(p, n.grad)) run.add(grad_tensor(g, n.grad, axes_of(n.grad), elem_of<T>()));
    keep_float64(r, g, run);
    return run;
}

template <class T>
Typed<AttendParams> grad_typed()
{
    return {compute_grad<T>, grad_checks<T>(), {}};
}

// --- the catalogue of usual mistakes: the backward in float64 from the run's own inputs, one slip made ---

Tensor with_slip(const Run& run, Slip slip, const std::string& tensor)
{
    const GradKept& kept = resolved_as<GradKept>(run);
    const BlockGrads<double> g = block_backward(kept.r, *kept.in, *kept.forward, slip);
    return grad_tensor(g, tensor, axes_of(tensor), Elem::float64);
}

struct SlipEntry {
    const char* id;
    Slip slip;
    const char* en;
    const char* zh;
    // Whether the slip changes the tensor in this configuration (otherwise it is not catalogued:
    // it would match every right answer).
    std::function<bool(const AttendParams&, const std::string& tensor)> shows;
};

std::vector<SlipEntry> slip_entries()
{
    auto past_scores = [](const std::string& tensor) { return tensor != "d_scores"; };
    return {{"softmax_grad_missing_subtraction", Slip::no_row_term, "d_scores = d_weights * P, without subtracting the row term sum_k P_ik d_weights_ik",
             "d_scores = d_weights * P，漏减了行项 sum_k P_ik d_weights_ik", [](const AttendParams&, const std::string&) { return true; }},
            {"scale_forgotten_in_backward", Slip::scale_forgotten, "d_q and d_k leave out the scale 1/sqrt(d) that the forward pass applied",
             "d_q 与 d_k 漏乘了前向使用的缩放 1/sqrt(d)", [=](const AttendParams&, const std::string& t) { return past_scores(t); }},
            {"d_k_transposed", Slip::d_k_transposed, "d_k = scale d_scores q instead of scale d_scores^T q (the query and key axes swapped)",
             "d_k = scale d_scores q，应为 scale d_scores^T q（查询轴与键轴弄反了）",
             [=](const AttendParams& p, const std::string& t) { return past_scores(t) && attend_detail::resolve(p).kv_len == p.len; }},
            {"mask_not_applied_in_backward", Slip::mask_not_applied, "the backward recomputes the weights without the mask",
             "反向传播重新计算权重时没有应用掩码", [](const AttendParams& p, const std::string&) { return p.mask != MaskKind::none; }},
            {"rope_backward_same_direction", Slip::rope_same_direction, "the gradients of q_rot and k_rot are rotated by +m theta again instead of back by -m theta",
             "q_rot、k_rot 的梯度又按 +m theta 旋转了一次，应按 -m theta 转回", [=](const AttendParams& p, const std::string& t) {
                 return past_scores(t) && p.pe == PeKind::rope;
             }}};
}

std::vector<Mistake<AttendParams>> grad_mistakes()
{
    std::vector<Mistake<AttendParams>> out;
    for (const char* tensor : {"d_scores", "d_x"})
        for (const SlipEntry& s : slip_entries())
            out.push_back({s.id, tensor, s.en, s.zh, [s, tensor = std::string(tensor)](const AttendParams& p, const Run& run) {
                               return s.shows(p, tensor) ? with_slip(run, s.slip, tensor) : Tensor{};
                           }});
    return out;
}

std::vector<TensorDecl<AttendParams>> grad_tensors()
{
    using P = AttendParams;
    auto shape = [](auto f) { return [f](const P& p) { return f(attend_detail::resolve(p)); }; };
    auto bld = shape([](const Resolved& r) { return std::vector<double>{dsize(r.batch), dsize(r.len), dsize(r.dim)}; });
    auto bsd = shape([](const Resolved& r) { return std::vector<double>{dsize(r.batch), dsize(r.kv_len), dsize(r.dim)}; });
    auto ee = shape([](const Resolved& r) { return std::vector<double>{dsize(r.dim), dsize(r.dim)}; });
    auto ekv = shape([](const Resolved& r) { return std::vector<double>{dsize(r.dim), dsize(r.cfg.kv_heads * (r.dim / r.cfg.heads))}; });
    auto q = shape([](const Resolved& r) { return std::vector<double>{dsize(r.batch), dsize(r.cfg.heads), dsize(r.len), dsize(r.dim / r.cfg.heads)}; });
    auto kv = shape([](const Resolved& r) { return std::vector<double>{dsize(r.batch), dsize(r.cfg.kv_heads), dsize(r.kv_len), dsize(r.dim / r.cfg.heads)}; });
    auto bhls = shape([](const Resolved& r) { return std::vector<double>{dsize(r.batch), dsize(r.cfg.heads), dsize(r.len), dsize(r.kv_len)}; });
    auto hls = shape([](const Resolved& r) { return std::vector<double>{dsize(r.cfg.heads), dsize(r.len), dsize(r.kv_len)}; });
    auto rope = [](const P& p) { return p.pe == PeKind::rope; };
    auto cross = [](const P& p) { return p.kv_len.has_value(); };
    std::vector<TensorDecl<P>> out{{"positions", {"pos"}, Need::always, shape([](const Resolved& r) { return std::vector<double>{dsize(r.len)}; }),
                                    [](const P& p) { return !p.positions.empty(); }, {}},
                                   {"x", kBPD, Need::always, bld, {}, {}},
                                   {"x_kv", kBPD, Need::always, bsd, cross, {}},
                                   {"w_q", kInOut, Need::always, ee, {}, {}},
                                   {"w_k", kInOut, Need::always, ekv, {}, {}},
                                   {"w_v", kInOut, Need::always, ekv, {}, {}},
                                   {"x_pe", kBPD, Need::always, bld, [](const P& p) { return p.pe == PeKind::sinusoidal; }, {}},
                                   {"q", kBHPD, Need::always, q, {}, {}},
                                   {"k", kBHPD, Need::always, kv, {}, {}},
                                   {"q_rot", kBHPD, Need::always, q, rope, {}},
                                   {"k_rot", kBHPD, Need::always, kv, rope, {}},
                                   {"v", kBHPD, Need::always, kv, {}, {}},
                                   {"bias", {"head", "query", "key"}, Need::always, hls, [](const P& p) { return p.pe == PeKind::alibi; }, {}},
                                   {"scores", kBHQK, Need::always, bhls, {}, {}},
                                   {"weights", kBHQK, Need::always, bhls, {}, {}},
                                   {"out", kBHPD, Need::always, q, {}, {}},
                                   {"d_out", kBPD, Need::always, bld, {}, {}}};
    // Each gradient has the shape of what it is the gradient of, and applies where that does.
    const std::size_t forward = out.size();
    for (const auto& n : grad_names())
        for (std::size_t t = 0; t < forward; ++t)
            if (out[t].name == n.of) out.push_back({n.grad, out[t].axes, Need::always, out[t].shape, out[t].applies, {}});
    return out;
}

// Random valid parameters for the random tests (small: every gradient is checked by finite
// differences).
AttendParams sample_grad(Rng& rng)
{
    AttendParams p;
    p.len = between(rng, 2, 6), p.heads = between(rng, 1, 2), p.dim = p.heads * 2 * between(rng, 1, 2);
    p.mask = rng.below(2) ? MaskKind::causal : MaskKind::none;
    p.pe = static_cast<PeKind>(rng.below(4));
    return p;
}

Experiment<AttendParams> make_grad_experiment()
{
    Experiment<AttendParams> e;
    e.command = "grad";
    e.summary = "The attention block's backward pass: d_scores, d_q, d_k, d_v, d_x, d_W for an upstream d_out, checked by finite differences";
    e.example = "attnlab grad --len 4 --heads 2 --dim 8 --mask causal --pe rope --show d_scores";
    e.options = attend_detail::attend_options();
    e.derived_params = attend_detail::attend_derived_params;
    e.adopt_inputs = attend_detail::adopt_positions;
    e.main_tensor = "d_scores";
    e.tensors = grad_tensors();
    e.validate = [](const AttendParams& p) { resolve_grad(p); };
    // The float64 forward and backward kept for the checks, and one more backward (in T or
    // float64) alive while a check or a mistake runs: each holds what the run's tensors hold.
    e.scratch_bytes = [](const AttendParams& p, DType dtype) {
        const Resolved r = attend_detail::resolve(p);
        const double B = dsize(r.batch), L = dsize(r.len), S = dsize(r.kv_len), E = dsize(r.dim), H = dsize(p.heads);
        const double kv = B * S * dsize(r.cfg.kv_heads) * dsize(attend_detail::head_dim(p));
        const double one_pass = 2.0 * (B * (L + S) * E + 3.0 * E * E + 3.0 * (B * L * E + 2.0 * kv) + 2.0 * B * H * L * S) + H * L * S;
        return one_pass * (8.0 + 8.0 + detail::elem_bytes(dtype));
    };
    // Plain loops throughout: the forward (projections and attention) and the backward (twice
    // the forward's products) for the run, the float64 reference and each mistake; and the
    // finite differences: four forward passes for each of the twelve gradients.
    e.work = [](const AttendParams& p, const Plan&) {
        const Resolved r = attend_detail::resolve(p);
        const double B = dsize(r.batch), L = dsize(r.len), S = dsize(r.kv_len), E = dsize(r.dim), d = dsize(attend_detail::head_dim(p));
        const double forward = 3.0 * B * (L + S) * E * E + B * dsize(p.heads) * L * S * (2.0 * d + kExpWork);
        return (3.0 * 2.0 + 10.0 * 3.0 + 12.0 * 4.0) * forward;
    };
    e.work_what = [](const AttendParams& p) {
        const Resolved r = attend_detail::resolve(p);
        return fmt::format("the forward and backward passes and their finite differences over [{}, {}, {}, {}] in plain loops", r.batch, p.heads, r.len, r.kv_len);
    };
    e.inputs = {"x", "x_kv", "w_q", "w_k", "w_v", "d_out"};
    e.mistakes = grad_mistakes();
    e.sample = sample_grad;
    e.set_typed([](auto t) { return grad_typed<typename decltype(t)::type>(); });
    return e;
}

}  // namespace

const Experiment<AttendParams>& grad_experiment()
{
    static const Experiment<AttendParams> e = make_grad_experiment();
    return e;
}

Report run_grad(const AttendParams& p, const RunContext& ctx) { return run_experiment(grad_experiment(), p, ctx); }

}  // namespace attnlab

#include "attnlab/experiments/attend.hpp"
#include "attnlab/experiments/attend_internal.hpp"
#include "attnlab/core/error_model.hpp"
#include "attnlab/experiments/averages.hpp"

#include "attnlab/experiments/inputs.hpp"
#include "attnlab/experiments/mask_slips.hpp"
#include "attnlab/core/measure.hpp"
#include "attnlab/core/parallel.hpp"
#include "attnlab/core/rng.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace attnlab {

namespace attend_detail {

// --positions, checked: self-attention with a position scheme, one whole number per token.
std::vector<long> placed_positions(const AttendParams& p)
{
    if (p.positions.empty()) return {};
    if (p.pe == PeKind::none) throw InputError("--positions places the tokens for a position scheme; give --pe rope, alibi or sinusoidal");
    if (p.kv_len) throw InputError("--positions places the tokens of one sequence (self-attention); it does not combine with --kv-len");
    if (static_cast<long>(p.positions.size()) != p.len) {
        throw InputError(fmt::format("--positions gives {} positions for --len {}: one per token", p.positions.size(), p.len));
    }
    for (long m : p.positions)
        if (std::abs(m) > kMaxRopePosition) throw InputError(fmt::format("--positions: {} is past +-2^24, where positions stop being exact in float32", m));
    return p.positions;
}

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
    // q.k is at most a few hundred times d here; a scale past 1e4 sends scores to infinity.
    if (p.scale && !(*p.scale > 0.0 && *p.scale <= 1e4)) {
        throw InputError(fmt::format("--scale must lie in (0, 1e4]; a larger one overflows the scores (got {})", *p.scale));
    }
    if (static_cast<long>(p.lengths.size()) > kMaxBatch) {
        throw InputError(fmt::format("--lengths has {} entries; a batch holds at most {}", p.lengths.size(), kMaxBatch));
    }
    r.len = p.len;
    r.kv_len = p.kv_len.value_or(p.len);
    if (r.kv_len < 1) throw InputError("--kv-len must be at least 1");
    r.cross = p.kv_len.has_value();
    r.dim = p.dim;
    const bool padding = p.mask == MaskKind::padding || p.mask == MaskKind::both;
    if (padding) {
        if (p.lengths.empty()) throw InputError(fmt::format("--mask {} needs --lengths", name_of(p.mask)));
        if (p.batch && *p.batch != static_cast<long>(p.lengths.size())) {
            throw InputError(fmt::format("--batch {} but --lengths gives {} lengths", *p.batch, p.lengths.size()));
        }
        for (long n : p.lengths) {
            if (n < 0 || n > r.kv_len) {
                throw InputError(fmt::format("--lengths must lie in 0..{} (the key length); got {}", r.kv_len, n));
            }
        }
        r.batch = static_cast<long>(p.lengths.size());
    } else {
        if (!p.lengths.empty()) throw InputError(fmt::format("--lengths describes padding; it makes no sense with --mask {}", name_of(p.mask)));
        r.batch = p.batch.value_or(1);
    }
    if (r.batch < 1) throw InputError("--batch must be at least 1");
    if (p.mask == MaskKind::window && (!p.window || *p.window < 1)) throw InputError("--mask window needs --window W >= 1");
    if (p.mask != MaskKind::window && p.window) throw InputError("--window applies to --mask window");
    if (p.window_convention != WindowConvention::keys && !p.window) throw InputError("--window-convention applies to --mask window");
    r.cfg.heads = p.heads;
    r.cfg.kv_heads = kv_heads;
    r.cfg.scale = p.scale;
    r.cfg.pe = p.pe;
    r.cfg.rope_style = p.rope_style;
    r.cfg.softmax = p.softmax;
    r.cfg.threads = p.threads;
    r.cfg.mask.kind = p.mask;
    r.cfg.mask.queries = r.len;
    r.cfg.mask.keys = r.kv_len;
    r.cfg.mask.lengths = p.lengths;
    r.cfg.mask.window = p.window ? window_keys(*p.window, p.window_convention) : 0;
    r.cfg.mask.align = p.align;
    r.cfg.positions = placed_positions(p);
    return r;
}

// Multiply-adds of one query row of a reference pass, over every (batch, head).
double work_per_row(const AttendParams& p)
{
    const Resolved r = resolve(p);
    return dsize(r.batch) * dsize(p.heads) * dsize(r.kv_len) * dsize(head_dim(p)) * 2.0;
}

// The params report the sizes the run used (B from --lengths, S = L, H_kv = H by default).
std::vector<OptionRow<AttendParams>> attend_options()
{
    using P = AttendParams;
    std::vector<OptionRow<P>> rows{
        option<P>("--batch", "Batch size B (default 1, or the number of --lengths)", &P::batch, whole_range(1, kMaxBatch)),
        option<P>("--len", "Query positions L", &P::len, whole_range(1, 1L << 20)),
        option<P>("--heads", "Heads H", &P::heads, whole_range(1, 1024)),
        option<P>("--dim", "Model dimension E, a multiple of H (head dimension d = E/H)", &P::dim, whole_range(1, 1L << 16)),
        option<P>("--kv-len", "Key/value positions S from a second sequence (cross-attention)", &P::kv_len, whole_range(1, 1L << 20)),
        option<P>("--kv-heads", "Key/value heads, dividing H (grouped-query; 1 is multi-query)", &P::kv_heads, whole_range(1, 1024)),
        option<P>("--scale", "Score scale (default 1/sqrt(d))", &P::scale, positive()),
        option<P>("--pe", "sinusoidal: added to X before the projections; rope: rotates q and k after them; "
                          "alibi: a bias on the scores", &P::pe),
        option<P>("--rope-style", "RoPE pairing: interleaved (2i, 2i+1) or half (i, i+d/2)", &P::rope_style),
        option<P>("--mask", "none|causal|padding|both|window, as in `attnlab mask`", &P::mask),
        option<P>("--lengths", "Padding: one length per sequence, e.g. 3,5,2", &P::lengths),
        option<P>("--window", "Window W for --mask window", &P::window),
        option<P>("--window-convention", "keys: W keys (Hugging Face since 2025, Mistral's rotating cache); hf2024: W + 1 keys "
                                         "(Hugging Face's 2024 _make_causal_mask)", &P::window_convention),
        option<P>("--positions", "Each token's position for --pe rope, alibi or sinusoidal (self-attention; any integers, "
                                 "repeats and gaps included; default 0..L-1); sets --len when that is not given", &P::positions,
                  whole_range(-kMaxRopePosition, kMaxRopePosition)),
        option<P>("--align", "Causal triangle when L != S: upper-left (is_causal) or lower-right", &P::align),
        option<P>("--softmax", "plain (NaN on fully masked rows) or safe (zeros)", &P::softmax),
        option<P>("--threads", "Threads of the kernel and the projections (0: every core; the results are the same bits)", &P::threads,
                  whole_range(0, 1024))};
    row_of(rows, "--positions").sets_length_of = "--len";
    row_of(rows, "--positions").reported = [](const P& p) { return list_or_null(p.positions); };
    row_of(rows, "--batch").reported = [](const P& p) { return ParamValue(resolve(p).batch); };
    row_of(rows, "--len").reported = [](const P& p) { return ParamValue(resolve(p).len); };
    row_of(rows, "--dim").reported = [](const P& p) { return ParamValue(resolve(p).dim); };
    row_of(rows, "--kv-len").reported = [](const P& p) { return ParamValue(resolve(p).kv_len); };
    row_of(rows, "--kv-heads").reported = [](const P& p) { return ParamValue(resolve(p).cfg.kv_heads); };
    return rows;
}

ParamList attend_derived_params(const AttendParams& p)
{
    return {{"cross_attention", resolve(p).cross},
            {"head_dim", head_dim(p)},
            {"weight_layout", std::string("[in, out]: Q = X W_q (PyTorch's nn.Linear stores the transpose)")}};
}

// --input positions=FILE is --positions read from a file; the run then holds (and reproduces
// with) the list itself.
void adopt_positions(AttendParams& p, RunContext& ctx)
{
    const auto given = ctx.inputs.find("positions");
    if (given == ctx.inputs.end()) return;
    if (!p.positions.empty()) throw InputError("--positions and --input positions both place the tokens; give one");
    if (given->second.rank() != 1) throw InputError(fmt::format("--input positions: a list of positions [pos], not a tensor of rank {}", given->second.rank()));
    p.positions = whole_positions(given->second);
    if (p.positions.empty()) throw InputError("--input positions: the file holds no position");
    ctx.inputs.erase(given);
}

}  // namespace attend_detail

namespace {

using namespace attend_detail;

// The block's weights, seeded: W [in, out] (PyTorch's nn.Linear stores the transpose).
template <class T>
BlockWeights<T> attend_weights(const Resolved& r, std::uint64_t seed)
{
    const long kv_out = r.cfg.kv_heads * (r.dim / r.cfg.heads);
    return {random_weight<T>(r.dim, r.dim, seed, stream::w_q), random_weight<T>(r.dim, kv_out, seed, stream::w_k),
            random_weight<T>(r.dim, kv_out, seed, stream::w_v)};
}

// Each working copy is released once its tensor is in the run: the peak holds one of them.
template <class T, class Container>
Tensor taken(const char* name, const std::vector<std::string>& axes, Container& c)
{
    Tensor t = to_tensor(name, axes, std::move(c), elem_of<T>());  // float storage adopted, others copied
    c = Container();
    return t;
}

template <class T>
void add_block_tensors(const AttendParams& p, BlockResult<T>& res, const Plan& plan, Run& run)
{
    const auto elem = elem_of<T>();
    const std::vector<std::string> bhld = {"batch", "head", "pos", "dim"}, bhqk = {"batch", "head", "query", "key"};
    if (p.pe == PeKind::sinusoidal) run.add(taken<T>("x_pe", {"batch", "pos", "dim"}, res.x_pe));
    // q and k are always the projections; with RoPE, q_rot and k_rot are what attention uses.
    const bool rope = p.pe == PeKind::rope;
    run.add(taken<T>("q", bhld, rope ? res.q_unrotated : res.q));
    run.add(taken<T>("k", bhld, rope ? res.k_unrotated : res.k));
    if (rope) {
        run.add(taken<T>("q_rot", bhld, res.q));
        run.add(taken<T>("k_rot", bhld, res.k));
    }
    run.add(taken<T>("v", bhld, res.v));
    if (p.pe == PeKind::alibi) run.add(taken<T>("bias", {"head", "query", "key"}, res.bias));
    if (plan.wants("mask")) {
        const Resolved& r = resolved_as<Resolved>(run);
        run.add(additive_mask_tensor<T>(r.cfg.mask, r.batch));
    }
    if (plan.wants("scores")) run.add(taken<T>("scores", bhqk, res.attn.scores));
    if (plan.wants("weights")) run.add(taken<T>("weights", bhqk, res.attn.weights));
    if (plan.wants("out_merged")) run.add(to_tensor("out_merged", {"batch", "pos", "dim"}, merge_heads(res.attn.out), elem));
    run.add(taken<T>("out", bhld, res.attn.out));
}

// --input q=, k=, v= replace what attention is given (a stand-alone attention function is
// checked on them, the projections bypassed). With RoPE or sinusoidal PE the projections'
// output is not what attention uses, so there they are refused.
template <class T>
bool use_given_qkv(const AttendParams& p, const Plan& plan, BlockResult<T>& res)
{
    const bool given = plan.input("q") || plan.input("k") || plan.input("v");
    if (!given) return false;
    if (p.pe == PeKind::rope || p.pe == PeKind::sinusoidal) {
        throw InputError(fmt::format("--input q, k or v: with --pe {} attention does not use the projections' output; use --pe none or alibi", name_of(p.pe)));
    }
    res.q = input_or<T, 4>(plan, "q", [&] { return res.q; });
    res.k = input_or<T, 4>(plan, "k", [&] { return res.k; });
    res.v = input_or<T, 4>(plan, "v", [&] { return res.v; });
    return true;
}

template <class T>
Run compute_attend(const AttendParams& p, const Plan& plan)
{
    const Resolved r = resolve(p);
    const auto B = static_cast<std::size_t>(r.batch), L = static_cast<std::size_t>(r.len),
               S = static_cast<std::size_t>(r.kv_len), E = static_cast<std::size_t>(r.dim);
    Run run;
    run.keep(r);
    Ten3<T> x = input_or<T, 3>(plan, "x", [&] { return random_tensor3<T>(B, L, E, plan.seed, stream::x); });
    const Ten3<T> x_kv_own = r.cross ? input_or<T, 3>(plan, "x_kv", [&] { return random_tensor3<T>(B, S, E, plan.seed, stream::x_kv); }) : Ten3<T>();
    const Ten3<T>& x_kv = r.cross ? x_kv_own : x;  // self-attention: no copy of x
    const BlockWeights<T> drawn = attend_weights<T>(r, plan.seed);
    const BlockWeights<T> w{input_or<T, 2>(plan, "w_q", [&] { return drawn.w_q; }), input_or<T, 2>(plan, "w_k", [&] { return drawn.w_k; }),
                            input_or<T, 2>(plan, "w_v", [&] { return drawn.w_v; })};
    const Matrices keep = plan.wants("scores") || plan.wants("weights") ? Matrices::keep : Matrices::drop;
    // Without kept weights, the kernel forms the sampled rows' weights too and measures their sums.
    BlockConfig cfg = r.cfg;
    if (keep == Matrices::drop) cfg.probes = sampled_rows(r.len, work_per_row(p));
    BlockResult<T> res = prepare_block(x, x_kv, w, cfg);
    if (use_given_qkv(p, plan, res)) set_param(run.derived, "qkv_given", true);
    res.attn = attention(attention_inputs(res, cfg), keep, std::nullopt);
    set_param(run.derived, "scale", res.scale);
    run.measured["max_row_sum_error"] = res.attn.stats.max_row_sum_error;
    run.measured["max_masked_weight"] = res.attn.stats.max_masked_weight;
    run.measured["nan_weights"] = static_cast<double>(res.attn.stats.nan_weights);
    // Pipeline order, so the text reads as the data flows.
    if (!p.positions.empty()) run.add(Tensor{"positions", {"pos"}, Elem::index, {L}, std::vector<double>(p.positions.begin(), p.positions.end())});
    if (r.cross) run.add(to_tensor("x_kv", {"batch", "pos", "dim"}, x_kv, elem_of<T>()));
    run.add(taken<T>("x", {"batch", "pos", "dim"}, x));  // last: x_kv reads x until here
    run.add(to_tensor("w_q", {"in", "out"}, w.w_q, elem_of<T>()));
    run.add(to_tensor("w_k", {"in", "out"}, w.w_k, elem_of<T>()));
    run.add(to_tensor("w_v", {"in", "out"}, w.w_v, elem_of<T>()));
    add_block_tensors(p, res, plan, run);
    return run;
}

template <class T>
Typed<AttendParams> attend_typed()
{
    return {compute_attend<T>, attend_checks<T>(), attend_notes()};
}

// --- the catalogue of usual mistakes ---

// The block recomputed in float64 from the run's own x and weights, with one thing changed.
// What the variant does besides changing the configuration.
enum class Slip {
    none,
    weights_transposed,    // nn.Linear's [out, in] used as [in, out]
    softmax_over_queries,  // softmax along the query axis
};
struct AttendVariant {
    std::function<void(BlockConfig&, const AttendParams&)> config;
    Slip slip = Slip::none;
};

// The block in float64 as the run computed it: from its x and weights, or, where the run was
// given q, k and v (--input), from those, the projections bypassed as they were.
BlockResult<double> block_as_run(const Run& run, const BlockWeights<double>& w, const BlockConfig& cfg, bool cross, Matrices keep)
{
    const Ten3<double> x = x_of<double>(run, "x"), x_kv = cross ? x_of<double>(run, "x_kv") : x;
    BlockResult<double> res = prepare_block(x, x_kv, w, cfg);
    if (find_param(run.derived, "qkv_given") != nullptr) {
        res.q = from_tensor<double, 4>(run.at("q"));
        res.k = from_tensor<double, 4>(run.at("k"));
        res.v = from_tensor<double, 4>(run.at("v"));
    }
    res.attn = attention(attention_inputs(res, cfg), keep, std::nullopt);
    return res;
}

// out [B, H, L, d] = w v, each head reading its group's values.
Ten4<double> weighted_values(const Ten4<double>& w, const Ten4<double>& v)
{
    const std::size_t B = w.shape(0), H = w.shape(1), L = w.shape(2), S = w.shape(3), d = v.shape(3);
    Ten4<double> out = xt::zeros<double>({B, H, L, d});
    const std::size_t group = H / v.shape(1);
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t i = 0; i < L; ++i)
                for (std::size_t j = 0; j < S; ++j)
                    for (std::size_t c = 0; c < d; ++c) out(b, h, i, c) += w(b, h, i, j) * v(b, h / group, j, c);
    return out;
}

// The weights with the softmax taken over queries instead of keys.
Ten4<double> query_softmax_weights(const BlockResult<double>& res)
{
    Ten4<double> w = res.attn.scores;
    const std::size_t BH = w.shape(0) * w.shape(1), L = w.shape(2), S = w.shape(3);
    std::vector<double> column(L);
    for (std::size_t bh = 0; bh < BH; ++bh)
        for (std::size_t j = 0; j < S; ++j) {
            for (std::size_t i = 0; i < L; ++i) column[i] = w.data()[(bh * L + i) * S + j];
            softmax_inplace(column.data(), L, SoftmaxKind::plain);
            for (std::size_t i = 0; i < L; ++i) w.data()[(bh * L + i) * S + j] = column[i];
        }
    return w;
}

// The tensor a learner's mistake would give, from its weights [B, H, L, S] and the block.
Tensor attend_tensor_from(const std::string& tensor, const Ten4<double>& w, const Ten4<double>& v)
{
    if (tensor == "weights") return to_tensor("weights", {"batch", "head", "query", "key"}, w, Elem::float64);
    const Ten4<double> out = weighted_values(w, v);
    if (tensor == "out") return to_tensor("out", {"batch", "head", "pos", "dim"}, out, Elem::float64);
    return to_tensor("out_merged", {"batch", "pos", "dim"}, merge_heads(out), Elem::float64);
}

Tensor attend_variant(const AttendParams& p, const Run& run, const AttendVariant& v, const std::string& tensor)
{
    Resolved r = resolve(p);
    if (v.config) v.config(r.cfg, p);
    BlockWeights<double> w = weights_of<double>(run);
    if (v.slip == Slip::weights_transposed) {
        // x W^T does not even fit the shapes; with q, k, v given there are no projections to slip
        if (w.w_k.shape(0) != w.w_k.shape(1) || find_param(run.derived, "qkv_given") != nullptr) return Tensor{};
        w = {xt::transpose(w.w_q), xt::transpose(w.w_k), xt::transpose(w.w_v)};
    }
    const bool over_queries = v.slip == Slip::softmax_over_queries;
    const BlockResult<double> res = block_as_run(run, w, r.cfg, r.cross, over_queries || tensor == "weights" ? Matrices::keep : Matrices::drop);
    if (over_queries) return attend_tensor_from(tensor, query_softmax_weights(res), res.v);
    if (tensor == "weights") return attend_tensor_from(tensor, res.attn.weights, res.v);
    if (tensor == "out") return to_tensor("out", {"batch", "head", "pos", "dim"}, res.attn.out, Elem::float64);
    return to_tensor("out_merged", {"batch", "pos", "dim"}, merge_heads(res.attn.out), Elem::float64);
}

// A mask slip of experiments/mask_slips.hpp: the block run without its mask, then the slip's
// rule of hidden keys applied to those scores (ALiBi's bias and the scale already in); on the
// mask, the slip's own mask.
Tensor attend_slip(const AttendParams& p, const Run& run, MaskSlip slip, const std::string& tensor)
{
    const Resolved r = resolve(p);
    const MaskSpec& m = r.cfg.mask;
    const auto hide = slip_rule(slip, m, p.softmax);
    if (!hide) return Tensor{};
    if (tensor == "mask") return run.find("mask") ? additive_hiding(run.at("mask"), *hide, m.fill) : Tensor{};
    BlockConfig open = r.cfg;
    open.mask.kind = MaskKind::none;
    const BlockResult<double> res = block_as_run(run, weights_of<double>(run), open, r.cross, Matrices::keep);
    const Tensor raw = to_tensor("scores", {"batch", "head", "query", "key"}, res.attn.scores, Elem::float64);
    if (tensor == "scores") return Tensor{"scores", raw.axes, Elem::float64, raw.shape, slip_scores(slip, raw, res.attn.scores.shape(1), *hide, m.fill)};
    const std::vector<double> w = slip_weights(slip, raw, res.attn.scores.shape(1), *hide, m.fill, slip_softmax(slip, p.softmax));
    Ten4<double> weights = res.attn.scores;
    std::copy(w.begin(), w.end(), weights.begin());
    return attend_tensor_from(tensor, weights, res.v);
}

std::vector<Mistake<AttendParams>> attend_mistakes()
{
    std::vector<Mistake<AttendParams>> out;
    for (const char* tensor : {"out_merged", "out", "weights"}) {
        auto variant = [tensor](AttendVariant v) {
            return [v, tensor](const AttendParams& p, const Run& run) { return attend_variant(p, run, v, tensor); };
        };
        out.push_back({"linear_weight_transposed", tensor, "the weights are used transposed: nn.Linear's [out, in] taken as [in, out] (x W^T)",
                       "权重被转置使用了：把 nn.Linear 的 [out, in] 当成了 [in, out]（x W^T）", variant({{}, Slip::weights_transposed})});
        out.push_back({"scale_sqrt_E", tensor, "scores scaled by 1/sqrt(E), the model dimension, instead of 1/sqrt(d) per head",
                       "得分按 1/sqrt(E)（模型维度）缩放，应为每个头的 1/sqrt(d)",
                       variant({[](BlockConfig& c, const AttendParams& q) { c.scale = 1.0 / std::sqrt(dsize(q.dim)); }})});
        out.push_back({"no_scale", tensor, "scores not scaled at all (no 1/sqrt(d))", "得分完全没有缩放（缺少 1/sqrt(d)）",
                       variant({[](BlockConfig& c, const AttendParams&) { c.scale = 1.0; }})});
        out.push_back({"softmax_over_queries", tensor, "the softmax runs over the queries (dim=-2) instead of the keys",
                       "softmax 沿查询轴（dim=-2）计算，应沿键轴", variant({{}, Slip::softmax_over_queries})});
        out.push_back({"mask_ignored", tensor, "the mask is not applied", "没有应用掩码",
                       variant({[](BlockConfig& c, const AttendParams&) { c.mask.kind = MaskKind::none; }})});
        for (const SlipInfo& slip : mask_slips()) {
            out.push_back({slip.id, tensor, slip.en, slip.zh,
                           [s = slip.slip, tensor](const AttendParams& p, const Run& run) { return attend_slip(p, run, s, tensor); }});
        }
    }
    // the same slips on the mask (those that hide other keys) and on the scores (those that change them)
    for (const SlipInfo& slip : mask_slips()) {
        for (const char* tensor : {"mask", "scores"}) {
            if (std::string(tensor) == "mask" ? hides_other_keys(slip.slip) : changes_scores(slip.slip))
                out.push_back({slip.id, tensor, slip.en, slip.zh,
                               [s = slip.slip, tensor](const AttendParams& p, const Run& run) { return attend_slip(p, run, s, tensor); }});
        }
    }
    return out;
}

std::vector<TensorDecl<AttendParams>> attend_tensors()
{
    auto shape = [](auto f) { return [f](const AttendParams& p) { return f(resolve(p)); }; };
    auto bld = shape([](const Resolved& r) { return std::vector<double>{dsize(r.batch), dsize(r.len), dsize(r.dim)}; });
    auto ee = shape([](const Resolved& r) { return std::vector<double>{dsize(r.dim), dsize(r.dim)}; });
    auto ekv = shape([](const Resolved& r) { return std::vector<double>{dsize(r.dim), dsize(r.cfg.kv_heads * (r.dim / r.cfg.heads))}; });
    auto q = shape([](const Resolved& r) { return std::vector<double>{dsize(r.batch), dsize(r.cfg.heads), dsize(r.len), dsize(r.dim / r.cfg.heads)}; });
    auto kv = shape([](const Resolved& r) { return std::vector<double>{dsize(r.batch), dsize(r.cfg.kv_heads), dsize(r.kv_len), dsize(r.dim / r.cfg.heads)}; });
    auto bhls = shape([](const Resolved& r) { return std::vector<double>{dsize(r.batch), dsize(r.cfg.heads), dsize(r.len), dsize(r.kv_len)}; });
    auto hls = shape([](const Resolved& r) { return std::vector<double>{dsize(r.cfg.heads), dsize(r.len), dsize(r.kv_len)}; });
    const std::vector<std::string> bpd = {"batch", "pos", "dim"}, bhpd = {"batch", "head", "pos", "dim"},
                                   bhqk = {"batch", "head", "query", "key"};
    return {{"positions", {"pos"}, Need::always, shape([](const Resolved& r) { return std::vector<double>{dsize(r.len)}; }),
             [](const AttendParams& p) { return !p.positions.empty(); }, {}},
            {"x", bpd, Need::always, bld, {}, {}},
            {"x_kv", bpd, Need::always, shape([](const Resolved& r) { return std::vector<double>{dsize(r.batch), dsize(r.kv_len), dsize(r.dim)}; }),
             [](const AttendParams& p) { return p.kv_len.has_value(); }, {}},
            {"x_pe", bpd, Need::always, bld, [](const AttendParams& p) { return p.pe == PeKind::sinusoidal; }, {}},
            {"w_q", {"in", "out"}, Need::always, ee, {}, {}},
            {"w_k", {"in", "out"}, Need::always, ekv, {}, {}},
            {"w_v", {"in", "out"}, Need::always, ekv, {}, {}},
            {"q", bhpd, Need::always, q, {}, {}},
            {"k", bhpd, Need::always, kv, {}, {}},
            {"q_rot", bhpd, Need::always, q, [](const AttendParams& p) { return p.pe == PeKind::rope; }, {}},
            {"k_rot", bhpd, Need::always, kv, [](const AttendParams& p) { return p.pe == PeKind::rope; }, {}},
            {"v", bhpd, Need::always, kv, {}, {}},
            {"bias", {"head", "query", "key"}, Need::always, hls, [](const AttendParams& p) { return p.pe == PeKind::alibi; }, {}},
            {"mask", {"query", "key"}, Need::on_demand,
             shape([](const Resolved& r) {  // [L, S], or [B, 1, L, S] once padding makes it differ per sequence
                 if (!r.cfg.mask.has_padding()) return std::vector<double>{dsize(r.len), dsize(r.kv_len)};
                 return std::vector<double>{dsize(r.batch), 1.0, dsize(r.len), dsize(r.kv_len)};
             }),
             [](const AttendParams& p) { return p.mask != MaskKind::none; }, {"batch", "head", "query", "key"}},
            {"scores", bhqk, Need::on_demand, bhls, {}, {}},
            {"weights", bhqk, Need::on_demand, bhls, {}, {}},
            {"out", bhpd, Need::always, q, {}, {}},
            {"out_merged", bpd, Need::on_demand, bld, {}, {}}};
}

// Random valid parameters for the random tests: every mask, padding lengths down to 0, either
// softmax, every position scheme.
AttendParams sample_attend(Rng& rng)
{
    AttendParams p;
    p.len = between(rng, 2, 8), p.heads = between(rng, 1, 3), p.dim = p.heads * 2 * between(rng, 1, 3);
    p.kv_heads = divisor_of(rng, p.heads);
    p.mask = std::array{MaskKind::none, MaskKind::causal, MaskKind::padding, MaskKind::both, MaskKind::window}[rng.below(5)];
    if (p.mask == MaskKind::padding || p.mask == MaskKind::both) p.lengths = sample_lengths(rng, p.len);
    else p.batch = between(rng, 1, 2);
    if (p.mask == MaskKind::window) p.window = between(rng, 1, 6);
    p.softmax = rng.below(2) ? SoftmaxKind::safe : SoftmaxKind::plain;
    p.pe = static_cast<PeKind>(rng.below(4));
    p.rope_style = rng.below(2) ? RopeStyle::half : RopeStyle::interleaved;
    p.threads = static_cast<unsigned>(between(rng, 1, 2));
    // tokens at their own positions: repeats, gaps, negatives
    if (p.pe != PeKind::none && p.mask == MaskKind::none && rng.below(10) < 3)
        for (long t = 0; t < p.len; ++t) p.positions.push_back(between(rng, -50, 500));
    return p;
}

Experiment<AttendParams> make_attend_experiment()
{
    Experiment<AttendParams> e;
    e.command = "attend";
    e.summary = "The attention block: X -> Q, K, V -> scores -> weights -> out, with PE, RoPE or ALiBi and masks";
    e.example = "attnlab attend --len 5 --heads 2 --dim 8 --mask causal --pe rope --show weights,out_merged";
    e.options = attend_options();
    e.derived_params = attend_derived_params;
    e.adopt_inputs = adopt_positions;
    e.main_tensor = "out_merged";
    e.tensors = attend_tensors();
    e.validate = [](const AttendParams& p) { resolve(p); };
    e.moves_tensors = true;
    // The largest working set beside the run's tensors: the block run again (on X changed for
    // the causal check; twice for the cross-positions check, both alive together) with its
    // copy of X; in float64 in a 16-bit run, whose check against float64 holds one. A block
    // holds q, k, v (and their rotations), out, X with PE and the PE table, ALiBi's bias; and
    // the kernel's own memory.
    e.scratch_bytes = [](const AttendParams& p, DType dtype) {
        const Resolved r = resolve(p);
        const double B = dsize(r.batch), L = dsize(r.len), S = dsize(r.kv_len), E = dsize(r.dim), H = dsize(p.heads);
        const double q = B * L * E, kv = B * S * dsize(r.cfg.kv_heads) * dsize(head_dim(p)), x = q + (r.cross ? B * S * E : 0.0);
        const double block = (q + 2.0 * kv) * (p.pe == PeKind::rope ? 2.0 : 1.0) + q + (p.pe == PeKind::sinusoidal ? x + L * E : 0.0) +
                             (p.pe == PeKind::alibi ? H * L * S : 0.0);
        const double runs = cross_positions_checked(p, r) ? 2.0 : 1.0;
        const double kernel = kernel_scratch_bytes(static_cast<std::size_t>(r.kv_len), static_cast<std::size_t>(head_dim(p)), p.threads);
        return (runs * block + x) * (is_16bit(dtype) ? 8.0 : detail::elem_bytes(dtype)) + kernel;
    };
    // The projections (the run, a check's second run, the cross-positions check's two more)
    // and attention (q.k, exp, w.v) over the tiles the kernel computes, once per run and half
    // again to keep the scores and weights; the budgeted reference rows. The 16-bit types run
    // the attention reference, every tile, not the kernel (their projections are BLAS).
    e.work = [](const AttendParams& p, const Plan& plan) {
        const Resolved r = resolve(p);
        const double B = dsize(r.batch), L = dsize(r.len), S = dsize(r.kv_len), E = dsize(r.dim), d = dsize(head_dim(p));
        const double runs = cross_positions_checked(p, r) ? 3.0 : 1.0, keep = plan.wants("scores") || plan.wants("weights") ? 0.5 : 0.0;
        const double projections = (runs + 1.0) * 3.0 * B * (L + S) * E * E;
        const double share = is_16bit(plan.dtype) ? 1.0 : kernel_tile_share(r.cfg.mask, r.batch);
        const double attention = (runs + keep) * share * B * dsize(p.heads) * L * S * (2.0 * d + kExpWork);
        return projections / kKernelSpeedup + (is_16bit(plan.dtype) ? attention : attention / kKernelSpeedup) + 3.0 * kCheckBudget;
    };
    e.work_what = [](const AttendParams& p) {
        const Resolved r = resolve(p);
        return fmt::format("attention over [{}, {}, {}, {}] with d = {}", r.batch, p.heads, r.len, r.kv_len, head_dim(p));
    };
    e.inputs = {"x", "x_kv", "w_q", "w_k", "w_v", "q", "k", "v"};
    e.mistakes = attend_mistakes();
    e.sample = sample_attend;
    e.set_typed([](auto t) { return attend_typed<typename decltype(t)::type>(); });
    return e;
}

}  // namespace

const Experiment<AttendParams>& attend_experiment()
{
    static const Experiment<AttendParams> e = make_attend_experiment();
    return e;
}

Report run_attend(const AttendParams& p, const RunContext& ctx) { return run_experiment(attend_experiment(), p, ctx); }

std::vector<TensorInfo> attend_tensor_infos() { return tensor_infos(attend_experiment()); }

std::vector<std::string> attend_command(const AttendParams& p) { return command_of(attend_experiment(), p); }

}  // namespace attnlab

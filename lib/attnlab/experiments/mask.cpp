#include "attnlab/experiments/mask.hpp"
#include "attnlab/experiments/mask_internal.hpp"
#include "attnlab/experiments/mask_slips.hpp"

#include "attnlab/core/error_model.hpp"
#include "attnlab/core/half.hpp"

#include "attnlab/experiments/inputs.hpp"
#include "attnlab/core/measure.hpp"
#include "attnlab/core/rng.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace attnlab {

double parse_fill(const std::string& text)
{
    if (text == "-inf") return -std::numeric_limits<double>::infinity();
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || end == nullptr || *end != '\0' || std::isnan(v) || v > 0 ||
        (std::isinf(v) && v > 0)) {
        throw InputError(fmt::format(
            "--fill must be -inf, -1e9 or another number <= 0 (got '{}')", text));
    }
    return v;
}

MaskSpec mask_spec(const MaskParams& p)
{
    MaskSpec m;
    m.kind = p.kind;
    const std::string kind = name_of(p.kind);
    if (p.kind == MaskKind::none) throw InputError("--kind none builds no mask; choose causal, padding, both or window");
    const bool padding = p.kind == MaskKind::padding || p.kind == MaskKind::both;
    if (padding && p.lengths.empty()) {
        throw InputError(fmt::format("--kind {} needs --lengths (one length per sequence, e.g. 3,5,2)", kind));
    }
    if (!padding && !p.lengths.empty()) {
        throw InputError(fmt::format("--lengths describes padding; it makes no sense with --kind {}", kind));
    }
    if (padding && p.batch) {
        throw InputError("--batch is the number of --lengths with padding; give one or the other");
    }
    if (p.kind == MaskKind::window && !p.window) throw InputError("--kind window needs --window W");
    if (p.kind != MaskKind::window && p.window) {
        throw InputError(fmt::format("--window applies to --kind window, not --kind {}", kind));
    }
    if (p.window && *p.window < 1) throw InputError(fmt::format("--window must be at least 1 (got {})", *p.window));
    if (p.window_convention != WindowConvention::keys && !p.window) throw InputError("--window-convention applies to --kind window");
    if (p.kind == MaskKind::padding && (p.diagonal || p.align)) {
        throw InputError("--diagonal and --align shape the causal triangle; --kind padding has none");
    }
    if (static_cast<long>(p.lengths.size()) > kMaxBatch) {
        throw InputError(fmt::format("--lengths has {} entries; a batch holds at most {}", p.lengths.size(), kMaxBatch));
    }
    for (long len : p.lengths) {
        if (len < 0) throw InputError(fmt::format("--lengths must not be negative (got {})", len));
    }
    const long longest = p.lengths.empty() ? 0 : *std::max_element(p.lengths.begin(), p.lengths.end());
    if (p.len && *p.len < 1) throw InputError(fmt::format("--len must be at least 1 (got {})", *p.len));
    m.queries = p.len.value_or(p.lengths.empty() ? 5 : std::max(longest, 1L));
    m.keys = p.kv_len.value_or(m.queries);
    if (m.keys < 1) throw InputError(fmt::format("--kv-len must be at least 1 (got {})", m.keys));
    if (longest > m.keys) {
        throw InputError(fmt::format("--lengths has {} but there are only {} key positions (--len/--kv-len)",
                                     longest, m.keys));
    }
    m.lengths = p.lengths;
    m.window = p.window ? window_keys(*p.window, p.window_convention) : 0;
    m.diagonal = p.diagonal.value_or(1);
    m.align = p.align.value_or(Align::upper_left);
    m.fill = parse_fill(p.fill);
    if (p.dk < 1) throw InputError(fmt::format("--dk must be at least 1 (got {})", p.dk));
    return m;
}


namespace {

using namespace mask_detail;


// scores = q k^T / sqrt(d_k) with q [B, L, dk], k [B, S, dk] seeded normal.
template <class T>
Ten3<T> random_scores(std::size_t B, std::size_t L, std::size_t S, long dk, std::uint64_t seed)
{
    const auto D = static_cast<std::size_t>(dk);
    Ten3<T> q = xt::zeros<T>({B, L, D}), k = xt::zeros<T>({B, S, D});
    fill_normal(q.data(), q.size(), seed, stream::q);
    fill_normal(k.data(), k.size(), seed, stream::k);
    return scaled_scores(q, k, 1.0 / std::sqrt(static_cast<double>(dk)));
}

// The wrong way: scores * (0/1 mask) instead of scores + mask, and the mass it leaks.
// The other reading of "multiply": softmax(scores) times the 0/1 mask, each row then divided
// by what it kept, so that it sums to 1 again (a fully masked row keeps nothing: 0/0 = NaN,
// as the -inf mask gives).
template <class T>
Ten3<T> multiply_after_softmax(const Ten3<T>& scores, const MaskSpec& m)
{
    Ten3<T> w = scores;
    softmax_rows(w.data(), w.shape(0) * w.shape(1), w.shape(2), SoftmaxKind::plain);
    for (std::size_t b = 0; b < w.shape(0); ++b)
        for (long i = 0; i < m.queries; ++i) {
            T kept(0);
            for (long j = 0; j < m.keys; ++j) {
                if (m.masked(static_cast<long>(b), i, j)) w(b, i, j) = T(0);
                kept += w(b, i, j);
            }
            for (long j = 0; j < m.keys; ++j) w(b, i, j) /= kept;
        }
    return w;
}

template <class T>
void compute_multiplied(const Ten3<T>& scores, const MaskSpec& m, Run& run)
{
    Ten3<T> mult = scores;
    for (std::size_t b = 0; b < mult.shape(0); ++b)
        for (long i = 0; i < m.queries; ++i)
            for (long j = 0; j < m.keys; ++j)
                if (m.masked(static_cast<long>(b), i, j)) mult(b, i, j) = T(0);
    run.add(to_tensor("multiplied_scores", {"batch", "query", "key"}, mult, elem_of<T>()));
    softmax_rows(mult.data(), mult.shape(0) * mult.shape(1), mult.shape(2), SoftmaxKind::plain);
    run.add(to_tensor("multiplied_weights", {"batch", "query", "key"}, mult, elem_of<T>()));
    Mat<T> leak = xt::zeros<T>({mult.shape(0), mult.shape(1)});
    for (std::size_t b = 0; b < mult.shape(0); ++b)
        for (long i = 0; i < m.queries; ++i)
            for (long j = 0; j < m.keys; ++j)
                if (m.masked(static_cast<long>(b), i, j)) leak(b, i) += mult(b, i, j);
    run.add(to_tensor("leak", {"batch", "query"}, leak, elem_of<T>()));
    run.add(to_tensor("renormalised_weights", {"batch", "query", "key"}, multiply_after_softmax(scores, m), elem_of<T>()));
}

bool both_alignments_shown(const MaskSpec& m)
{
    return (m.offset() != 0 || m.queries != m.keys) && (m.kind == MaskKind::causal || m.kind == MaskKind::window);
}

template <class T>
Run compute_mask(const MaskParams& p, const Plan& plan)
{
    const MaskSpec m = mask_spec(p);
    const long B = batch_of(p, m);
    const auto elem = elem_of<T>();
    Run run;
    run.keep(m);
    run.add(additive_mask_tensor<T>(m, B));
    const Ten3<T> scores = input_or<T, 3>(plan, "scores", [&] {
        return random_scores<T>(static_cast<std::size_t>(B), static_cast<std::size_t>(m.queries), static_cast<std::size_t>(m.keys), p.dk,
                                plan.seed);
    });
    run.add(to_tensor("scores", {"batch", "query", "key"}, scores, elem));
    if (plan.wants("masked_scores")) {
        Ten3<T> ms = scores;
        for (long b = 0; b < B; ++b) xt::view(ms, b, xt::all(), xt::all()) += additive_mask<T>(m, b);
        run.add(to_tensor("masked_scores", {"batch", "query", "key"}, ms, elem));
    }
    run.add(to_tensor("weights", {"batch", "query", "key"}, masked_softmax_additive(scores, m, p.softmax), elem));
    if (m.has_padding()) {
        run.add(to_tensor("key_padding_mask", {"batch", "key"}, key_padding_mask(m), Elem::boolean));
        // scaled_dot_product_attention broadcasts a boolean attn_mask over heads and queries
        // as [batch, 1, 1, key]; key_padding_mask is nn.MultiheadAttention's [batch, key].
        const auto amb = attn_mask_bool(m);
        run.add(to_tensor("attn_mask_bool", {"batch", "head", "query", "key"},
                          xt::view(amb, xt::all(), xt::newaxis(), xt::newaxis(), xt::all()), Elem::boolean));
        // What "Attention 的两个补丁" §5.3's reading ("True = masked") does: key_padding_mask
        // handed to scaled_dot_product_attention, where True means "may attend".
        run.add(to_tensor("weights_bool_inverted", {"batch", "query", "key"},
                          masked_softmax_attn_bool(scores, key_padding_mask(m), p.softmax), elem));
    }
    // attn_mask_bool is the padding alone; Hugging Face's sdpa_mask carries the triangle too.
    if (m.kind == MaskKind::both) run.add(to_tensor("sdpa_mask_bool", {"batch", "head", "query", "key"}, sdpa_mask_bool(m, B), Elem::boolean));
    if (both_alignments_shown(m)) {
        MaskSpec ul = m, lr = m;
        ul.align = Align::upper_left;
        lr.align = Align::lower_right;
        run.add(to_tensor("mask_upper_left", {"query", "key"}, additive_mask<T>(ul, 0), elem));
        run.add(to_tensor("mask_lower_right", {"query", "key"}, additive_mask<T>(lr, 0), elem));
    }
    if (p.multiply) compute_multiplied(scores, m, run);
    return run;
}

template <class T>
Typed<MaskParams> mask_typed()
{
    return {compute_mask<T>, mask_checks<T>(), mask_notes<T>()};
}

std::vector<TensorDecl<MaskParams>> mask_tensors()
{
    auto bls = [](const MaskParams& p) {
        const MaskSpec m = mask_spec(p);
        return std::vector<double>{dsize(batch_of(p, m)), dsize(m.queries), dsize(m.keys)};
    };
    auto ls = [](const MaskParams& p) {
        const MaskSpec m = mask_spec(p);
        return std::vector<double>{dsize(m.queries), dsize(m.keys)};
    };
    auto bs = [](const MaskParams& p) {
        const MaskSpec m = mask_spec(p);
        return std::vector<double>{dsize(batch_of(p, m)), dsize(m.keys)};
    };
    auto mask_shape = [](const MaskParams& p) {  // [L, S], or [B, 1, L, S] once padding makes it differ per sequence
        const MaskSpec m = mask_spec(p);
        if (!m.has_padding()) return std::vector<double>{dsize(m.queries), dsize(m.keys)};
        return std::vector<double>{dsize(batch_of(p, m)), 1.0, dsize(m.queries), dsize(m.keys)};
    };
    auto padding = [](const MaskParams& p) { return mask_spec(p).has_padding(); };
    auto aligned = [](const MaskParams& p) { return both_alignments_shown(mask_spec(p)); };
    auto multiply = [](const MaskParams& p) { return p.multiply; };
    const std::vector<std::string> bqk = {"batch", "query", "key"}, qk = {"query", "key"};
    return {{"mask", qk, Need::always, mask_shape, {}, {"batch", "head", "query", "key"}},
            {"scores", bqk, Need::always, bls, {}, {}},
            {"masked_scores", bqk, Need::on_demand, bls, {}, {}},
            {"weights", bqk, Need::always, bls, {}, {}},
            {"key_padding_mask", {"batch", "key"}, Need::always, bs, padding, {}},
            {"attn_mask_bool", {"batch", "head", "query", "key"}, Need::always,
             [](const MaskParams& p) {
                 const MaskSpec m = mask_spec(p);
                 return std::vector<double>{dsize(batch_of(p, m)), 1.0, 1.0, dsize(m.keys)};
             },
             padding, {}},
            {"weights_bool_inverted", bqk, Need::always, bls, padding, {}},
            {"sdpa_mask_bool", {"batch", "head", "query", "key"}, Need::always,
             [](const MaskParams& p) {
                 const MaskSpec m = mask_spec(p);
                 return std::vector<double>{dsize(batch_of(p, m)), 1.0, dsize(m.queries), dsize(m.keys)};
             },
             [](const MaskParams& p) { return mask_spec(p).kind == MaskKind::both; }, {}},
            {"mask_upper_left", qk, Need::always, ls, aligned, {}},
            {"mask_lower_right", qk, Need::always, ls, aligned, {}},
            {"multiplied_scores", bqk, Need::always, bls, multiply, {}},
            {"multiplied_weights", bqk, Need::always, bls, multiply, {}},
            {"renormalised_weights", bqk, Need::always, bls, multiply, {}},
            {"leak", {"batch", "query"}, Need::always,
             [](const MaskParams& p) {
                 const MaskSpec m = mask_spec(p);
                 return std::vector<double>{dsize(batch_of(p, m)), dsize(m.queries)};
             },
             multiply, {}}};
}

// --- the catalogue of usual mistakes ---

// The mask built from the params with one thing changed.
Tensor mask_with(const MaskParams& p, const std::function<void(MaskSpec&)>& change)
{
    MaskSpec m = mask_spec(p);
    change(m);
    return additive_mask_tensor<double>(m, batch_of(p, mask_spec(p)));
}

// A 0/1 tensor with its zeros and ones swapped.
Tensor complement(const Tensor& t)
{
    Tensor out = t;
    out.values.transform([](double v) { return v != 0.0 ? 0.0 : 1.0; });
    return out;
}

std::vector<Mistake<MaskParams>> mask_mistakes_own()
{
    return {{"fill_minus_1e9", "mask", "hidden positions hold -1e9 instead of -inf", "被屏蔽的位置填了 -1e9，而不是 -inf",
             [](const MaskParams& p, const Run&) {  // a slip from -inf only: with --fill -1e9 it is the answer
                 return std::isinf(mask_spec(p).fill) ? mask_with(p, [](MaskSpec& m) { m.fill = -1e9; }) : Tensor{};
             }},
            {"bool_inverted", "key_padding_mask", "the boolean convention is inverted: True marks the positions that may be attended",
             "布尔约定反了：True 标记的是可以关注的位置", [](const MaskParams&, const Run& run) { return complement(run.at("key_padding_mask")); }},
            {"padding_one_late", "key_padding_mask", "padding starts one position late: True where j > lengths[b] instead of j >= lengths[b]",
             "填充晚了一个位置：在 j > lengths[b] 处为 True，应为 j >= lengths[b]",
             [](const MaskParams& p, const Run& run) {
                 Tensor t = run.at("key_padding_mask");
                 const std::size_t S = t.shape.back();
                 for (std::size_t b = 0; b < p.lengths.size() && b < t.shape.front(); ++b)
                     for (std::size_t j = 0; j < S; ++j) t.values[b * S + j] = static_cast<long>(j) > p.lengths[b] ? 1.0 : 0.0;
                 return t;
             }},
            {"mask_ignored", "weights", "the mask was not applied: every key keeps its weight", "没有应用掩码：每个键都保留了权重",
             [](const MaskParams&, const Run& run) {
                 Ten3<double> s = from_tensor<double, 3>(run.at("scores"));
                 softmax_rows(s.data(), s.shape(0) * s.shape(1), s.shape(2), SoftmaxKind::plain);
                 return to_tensor("weights", {"batch", "query", "key"}, s, Elem::float64);
             }},
            {"bool_inverted", "attn_mask_bool",
             "the boolean convention is inverted: True marks the masked positions (scaled_dot_product_attention's True means may attend)",
             "布尔约定反了：True 标记的是被屏蔽的位置（scaled_dot_product_attention 中 True 表示可以关注）",
             [](const MaskParams&, const Run& run) { return complement(run.at("attn_mask_bool")); }}};
}

// A slip of experiments/mask_slips.hpp on one tensor: the mask, the masked scores or the
// weights; a slip the params give no meaning builds nothing.
Mistake<MaskParams> slip_on(const SlipInfo& s, const std::string& tensor)
{
    return {s.id, tensor, s.en, s.zh, [slip = s.slip, tensor](const MaskParams& p, const Run& run) {
                const MaskSpec m = mask_spec(p);
                const auto hide = slip_rule(slip, m, p.softmax);
                if (!hide) return Tensor{};
                if (tensor == "mask") return additive_hiding(run.at("mask"), *hide, m.fill);
                const Tensor& scores = run.at("scores");
                return Tensor{tensor, scores.axes, Elem::float64, scores.shape,
                              tensor == "weights" ? slip_weights(slip, scores, 1, *hide, m.fill, slip_softmax(slip, p.softmax))
                                                  : slip_scores(slip, scores, 1, *hide, m.fill)};
            }};
}

// Every slip on the weights; those that hide other keys on the mask too, and those that change
// the scores on the masked scores.
void add_slips(std::vector<Mistake<MaskParams>>& out)
{
    for (const SlipInfo& s : mask_slips()) {
        if (hides_other_keys(s.slip)) out.push_back(slip_on(s, "mask"));
        if (changes_scores(s.slip)) out.push_back(slip_on(s, "masked_scores"));
        out.push_back(slip_on(s, "weights"));
    }
}

std::vector<Mistake<MaskParams>> mask_mistakes()
{
    std::vector<Mistake<MaskParams>> out = mask_mistakes_own();
    add_slips(out);
    return out;
}

// The params report the values the run used: --len, --kv-len, --align, --diagonal and --batch
// resolved from their defaults.
std::vector<OptionRow<MaskParams>> mask_options()
{
    using P = MaskParams;
    std::vector<OptionRow<P>> rows{
        option<P>("--kind", "causal: the decoder's triangle; padding: hide keys past each length; both: "
                            "the two combined; window: causal within the last W keys", &P::kind),
        option<P>("--len", "Query positions L (default 5, or the longest of --lengths)", &P::len, whole_range(1, 1L << 20)),
        option<P>("--kv-len", "Key positions S when they differ from L (cache, cross-attention)", &P::kv_len, whole_range(1, 1L << 20)),
        option<P>("--align", "Where the triangle sits when L != S: upper-left (is_causal) or lower-right "
                             "(decoding after cached keys); default upper-left", &P::align),
        option<P>("--diagonal", "torch.triu's diagonal: keys j - i >= k are hidden (default 1; 0 also hides the diagonal)",
                  &P::diagonal, whole_range(-(1L << 20), 1L << 20)),
        option<P>("--window", "Window W for --kind window: query i sees keys i-W+1..i (see --window-convention)", &P::window),
        option<P>("--window-convention", "keys: W keys, i-W+1..i (Hugging Face since 2025, Mistral's rotating cache, "
                                         "FlashAttention); hf2024: W + 1 keys, i-W..i (Hugging Face's 2024 _make_causal_mask)",
                  &P::window_convention),
        option<P>("--batch", "Sequences in the batch for causal and window (default 1)", &P::batch, whole_range(1, kMaxBatch)),
        option<P>("--lengths", "Padding: one length per sequence, e.g. 3,5,2", &P::lengths),
        option<P>("--fill", "Value at hidden positions: -inf, -1e9 or another number <= 0", &P::fill),
        option<P>("--dk", "d_k of the random q and k; scores are q k^T / sqrt(d_k)", &P::dk, whole_range(1, 1L << 16)),
        option<P>("--multiply",
                  "Also multiply by the 0/1 mask: the scores before softmax (the wrong way, and the mass it leaks) "
                  "and the weights after it, renormalised (the same weights as adding)",
                  &P::multiply),
        option<P>("--softmax", "plain: a fully masked row becomes NaN (PyTorch's softmax); safe: zeros "
                               "(scaled_dot_product_attention since PyTorch 2.5)", &P::softmax)};
    auto report = [&rows](const char* flag, std::function<ParamValue(const P&, const MaskSpec&)> value) {
        row_of(rows, flag).reported = [value](const P& p) { return value(p, mask_spec(p)); };
    };
    report("--len", [](const P&, const MaskSpec& m) { return ParamValue(m.queries); });
    report("--kv-len", [](const P&, const MaskSpec& m) { return ParamValue(m.keys); });
    report("--align", [](const P&, const MaskSpec& m) { return ParamValue(name_of(m.align)); });
    report("--diagonal", [](const P&, const MaskSpec& m) { return ParamValue(m.diagonal); });
    report("--window", [](const P& p, const MaskSpec& m) { return m.kind == MaskKind::window ? ParamValue(*p.window) : ParamValue(); });
    report("--batch", [](const P& p, const MaskSpec& m) { return ParamValue(batch_of(p, m)); });
    report("--lengths", [](const P&, const MaskSpec& m) { return ParamValue(m.lengths); });
    return rows;
}

// Random valid parameters for the random tests: padding too, lengths down to 0, diagonals
// and alignments that leave a row no key (fully masked rows), windows, more keys than
// queries, under either softmax, so that every mask slip has a configuration that shows it.
MaskParams sample_mask(Rng& rng)
{
    MaskParams p;
    p.len = between(rng, 2, 8);
    p.kind = std::array{MaskKind::causal, MaskKind::padding, MaskKind::both, MaskKind::window}[rng.below(4)];
    if (p.kind == MaskKind::padding || p.kind == MaskKind::both) p.lengths = sample_lengths(rng, *p.len);
    if (p.kind == MaskKind::window) p.window = between(rng, 1, 6);
    if ((p.kind == MaskKind::causal || p.kind == MaskKind::window) && rng.below(10) < 3) p.batch = between(rng, 1, 3);
    p.softmax = rng.below(2) ? SoftmaxKind::safe : SoftmaxKind::plain;
    p.dk = between(rng, 1, 16);
    // a finite fill (one that leaks weight, one that does not) and the multiplied mask, together too
    if (rng.below(10) < 3) p.fill = std::array{"-1e9", "-1.79", "-30"}[rng.below(3)];
    p.multiply = rng.below(10) < 3;
    if (p.kind == MaskKind::padding) return p;
    if (rng.below(10) < 4) p.diagonal = between(rng, -3, 4);
    if (rng.below(10) < 3) p.kv_len = between(rng, *p.len, 14), p.align = rng.below(2) ? Align::lower_right : Align::upper_left;
    return p;
}

Experiment<MaskParams> make_mask_experiment()
{
    Experiment<MaskParams> e;
    e.command = "mask";
    e.summary = "Causal, padding and sliding-window masks: exact zeros, the two boolean conventions, fully masked rows";
    e.example = "attnlab mask --kind both --lengths 3,5,2 --show mask,weights";
    e.options = mask_options();
    e.main_tensor = "mask";
    e.tensors = mask_tensors();
    e.validate = [](const MaskParams& p) {
        const MaskSpec m = mask_spec(p);
        if (batch_of(p, m) < 1) throw InputError(fmt::format("--batch must be at least 1 (got {})", batch_of(p, m)));
    };
    // Working copies of [B, L, S] in the checks and notes (perturbed scores, the other
    // conventions' weights, the fills of the note), and the random q and k.
    e.scratch_bytes = [](const MaskParams& p, DType dtype) {
        const double elem = detail::elem_bytes(dtype);
        const MaskSpec m = mask_spec(p);
        const double B = dsize(batch_of(p, m));
        return B * (8.0 * dsize(m.queries) * dsize(m.keys) + dsize(m.queries + m.keys) * dsize(p.dk)) * elem;
    };
    // q k^T over d_k, the softmaxes of the checks and the note, and the normals of q and k
    // (twelve uniforms each).
    e.work = [](const MaskParams& p, const Plan&) {
        const MaskSpec m = mask_spec(p);
        const double B = dsize(batch_of(p, m)), cells = B * dsize(m.queries) * dsize(m.keys);
        return cells * (dsize(p.dk) + 8.0 * kExpWork) + B * dsize(m.queries + m.keys) * dsize(p.dk) * 24.0;
    };
    e.work_what = [](const MaskParams& p) {
        const MaskSpec m = mask_spec(p);
        return fmt::format("scores [{}, {}, {}] over d_k = {}", batch_of(p, m), m.queries, m.keys, p.dk);
    };
    e.inputs = {"scores"};
    e.mistakes = mask_mistakes();
    e.sample = sample_mask;
    e.set_typed([](auto t) { return mask_typed<typename decltype(t)::type>(); });
    return e;
}

}  // namespace

const Experiment<MaskParams>& mask_experiment()
{
    static const Experiment<MaskParams> e = make_mask_experiment();
    return e;
}

Report run_mask(const MaskParams& p, const RunContext& ctx) { return run_experiment(mask_experiment(), p, ctx); }

std::vector<TensorInfo> mask_tensor_infos() { return tensor_infos(mask_experiment()); }

std::vector<std::string> mask_command(const MaskParams& p) { return command_of(mask_experiment(), p); }

}  // namespace attnlab

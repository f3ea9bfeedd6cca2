#include "attnlab/experiments/pe.hpp"
#include "attnlab/experiments/pe_internal.hpp"

#include "attnlab/experiments/precision.hpp"
#include "attnlab/experiments/inputs.hpp"
#include "attnlab/core/error_model.hpp"
#include "attnlab/core/measure.hpp"
#include "attnlab/core/rng.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <cmath>

namespace attnlab {

void validate(const PeParams& p)
{
    if (p.len < 1) throw InputError(fmt::format("--len must be at least 1 (got {})", p.len));
    if (p.dim < 2) throw InputError(fmt::format("--dim must be at least 2 (got {})", p.dim));
    if (p.dim % 2 != 0 && p.layout != PeLayout::concat) {
        throw InputError(fmt::format("--dim must be even with --layout interleaved (got {}): sin and cos fill pairs; --layout concat pads "
                                     "an odd D with a zero column, as fairseq and tensor2tensor do", p.dim));
    }
    // w_i = base^(-2i/D) falls only for a base above 1, and the base must survive float32.
    if (!(p.base > 1.0) || !(p.base <= static_cast<double>(std::numeric_limits<float>::max()))) {
        throw InputError(fmt::format("--base must lie in (1, 3.4e38], so that the frequencies fall (got {})", p.base));
    }
    // m (base/m)^(-e_i) falls only while the base (tensor2tensor's max_timescale) is above m.
    if (!(p.min_timescale > 0.0) || !(p.min_timescale < p.base)) {
        throw InputError(fmt::format("--min-timescale must lie in (0, --base), so that the frequencies fall (got {} with --base {})",
                                     p.min_timescale, p.base));
    }
    if (p.max_len != 0 && p.len > p.max_len) {
        throw InputError(fmt::format(
            "input length exceeds the precomputed max-len (--len {} > --max-len {})", p.len,
            p.max_len));
    }
    if (p.shift < 1 || p.shift >= std::max(p.len, 2L)) {
        throw InputError(
            fmt::format("--shift must be between 1 and len-1 (got {} with --len {})", p.shift, p.len));
    }
    if (p.embed && p.batch < 1) {
        throw InputError(fmt::format("--batch must be at least 1 (got {})", p.batch));
    }
}

namespace {

using namespace pe_detail;

// --- compute: PE as the articles' module builds it, plus the embedding when asked ---

template <class T>
void compute_embedding(const PeParams& p, const Mat<T>& table, const Mat<T>& pe, const Plan& plan, Run& run)
{
    // X: [B, L, D] seeded normal (or --input x); H = s*X + PE with PE broadcast as [1, L, D].
    const auto B = static_cast<std::size_t>(p.batch), L = static_cast<std::size_t>(p.len),
               D = static_cast<std::size_t>(p.dim);
    const Ten3<T> x = input_or<T, 3>(plan, "x", [&] {
        Ten3<T> drawn = xt::zeros<T>({B, L, D});
        fill_normal(drawn.data(), drawn.size(), plan.seed, stream::x);
        return drawn;
    });
    // s X is one op, rounded in T (a 16-bit tensor times a Python float multiplies in float32).
    const Compute<T> s = p.scale_embed ? std::sqrt(static_cast<Compute<T>>(p.dim)) : Compute<T>(1);
    Ten3<T> sx = x;
    for (auto& v : sx) v = static_cast<T>(s * static_cast<Compute<T>>(v));
    Ten3<T> h = sx + xt::view(pe, xt::newaxis(), xt::all(), xt::all());
    run.add(to_tensor("x", {"batch", "pos", "dim"}, x, elem_of<T>()));
    run.add(to_tensor("h", {"batch", "pos", "dim"}, h, elem_of<T>()));
    if (p.len >= 2 && p.batch <= p.max_len) {
        // The slicing bug: a [max_len, 1, D] table sliced as pe[:x.size(0)] on batch-first
        // input takes B rows instead of L, so sequence b gets PE(b) at every position.
        Ten3<T> h_bug = sx;
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t i = 0; i < L; ++i)
                for (std::size_t j = 0; j < D; ++j) h_bug(b, i, j) += table(b, j);
        run.add(to_tensor("h_sliced_by_batch", {"batch", "pos", "dim"}, h_bug, elem_of<T>()));
    }
}

template <class T>
Run compute_pe(const PeParams& p, const Plan& plan)
{
    // base^(2i/D) in T (the pow method, and the checks that compare both methods) needs the
    // base itself in T: 500000 is inf in float16 (largest 65504), and every frequency with it.
    if (!std::isfinite(static_cast<double>(static_cast<T>(p.base)))) {
        throw InputError(fmt::format("--base {} does not fit {} (largest {}); choose a smaller base or another --dtype", p.base,
                                     name_of(plan.dtype), static_cast<double>(std::numeric_limits<T>::max())));
    }
    // The pow method raises base/m in T, as the exp-log one takes its log.
    if (!std::isfinite(static_cast<double>(static_cast<T>(p.base / p.min_timescale)))) {
        throw InputError(fmt::format("--base / --min-timescale = {} does not fit {} (largest {}); choose a larger --min-timescale or another --dtype",
                                     p.base / p.min_timescale, name_of(plan.dtype), static_cast<double>(std::numeric_limits<T>::max())));
    }
    Run run;
    const Vec<T> freq = frequencies_of<T>(p, p.freq_method);
    // As the articles' module: precompute max-len rows once, then slice pe[:L].
    const Mat<T> table = table_rows<T>(p, freq, p.max_len);
    const Mat<T> pe = xt::view(table, xt::range(0, p.len), xt::all());
    run.add(to_tensor("pe", {"pos", "dim"}, pe, elem_of<T>()));
    run.add(to_tensor("freq", {"pair"}, freq, elem_of<T>()));
    if (plan.wants("angle_error")) run.add(to_tensor("angle_error", {"pos"}, pe_angle_errors(p, freq), Elem::float64));
    if (plan.wants("wavelength")) {
        run.add(to_tensor("wavelength", {"pair"}, T(2) * static_cast<T>(M_PI) / freq, elem_of<T>()));
    }
    if (p.embed) {
        compute_embedding(p, table, pe, plan, run);
    }
    return run;
}

template <class T>
Typed<PeParams> pe_typed()
{
    return {compute_pe<T>, pe_checks<T>(), pe_notes<T>()};
}

std::vector<TensorDecl<PeParams>> pe_tensors()
{
    auto embed = [](const PeParams& p) { return p.embed; };
    auto bsd = [](const PeParams& p) { return std::vector<double>{dsize(p.batch), dsize(p.len), dsize(p.dim)}; };
    auto pairs = [](const PeParams& p) { return std::vector<double>{dsize(p.dim / 2)}; };
    return {
        {"pe", {"pos", "dim"}, Need::always, [](const PeParams& p) { return std::vector<double>{dsize(p.len), dsize(p.dim)}; }, {}, {}},
        {"freq", {"pair"}, Need::always, pairs, {}, {}},
        {"wavelength", {"pair"}, Need::on_demand, pairs, {}, {}},
        {"x", {"batch", "pos", "dim"}, Need::always, bsd, embed, {}},
        {"h", {"batch", "pos", "dim"}, Need::always, bsd, embed, {}},
        {"h_sliced_by_batch", {"batch", "pos", "dim"}, Need::always, bsd,
         [](const PeParams& p) { return p.embed && p.len >= 2 && p.batch <= p.max_len; }, {}},
        {"angle_error", {"pos"}, Need::on_demand, [](const PeParams& p) { return std::vector<double>{dsize(p.len)}; }, {}, {}},
    };
}

// --- the catalogue of usual mistakes ---

// A sinusoidal table as a learner might build it, in float64, from the run's own rule
// (rule_of: frequencies, min_timescale, start_index, an odd D's zero column) built wrong one
// way: the paper exponent's factor (factor i / D for 2i / D), the first position one late, the
// layout ([sin | cos] halves with the paper's w_i, sin and cos swapped, transposed).
struct PeVariant {
    enum class Layout { as_asked, halves, sin_cos_swapped, transposed };
    double factor = 2.0;
    long first = 0;
    Layout layout = Layout::as_asked;
};

Tensor pe_variant(const PeParams& p, PeVariant v)
{
    using L = PeVariant::Layout;
    const long P = p.dim / 2;
    Mat<double> pe = xt::zeros<double>({static_cast<std::size_t>(p.len), static_cast<std::size_t>(p.dim)});
    PeFreqRule rule = rule_of(p);
    if (v.layout == L::halves) rule.frequencies = PeFrequencies::paper;
    // the factor 2 is the paper exponent's; t2t's i / (P - 1) has none to lose
    const double denom = rule.frequencies == PeFrequencies::t2t ? dsize(std::max(P - 1, 1L)) : dsize(p.dim) * 2.0 / v.factor;
    const double m = p.min_timescale;
    for (long pos = 0; pos < p.len; ++pos)
        for (long i = 0; i < P; ++i) {
            const double numerator = rule.frequencies == PeFrequencies::t2t ? dsize(i) : 2.0 * dsize(i);
            const double angle = dsize(p.start_index + pos + v.first) * m * std::pow(p.base / m, -numerator / denom);
            const bool halves = v.layout == L::halves || p.layout == PeLayout::concat, swapped = v.layout == L::sin_cos_swapped;
            const auto s = static_cast<std::size_t>(halves ? i : 2 * i), c = static_cast<std::size_t>(halves ? P + i : 2 * i + 1);
            pe(pos, swapped ? c : s) = std::sin(angle);
            pe(pos, swapped ? s : c) = std::cos(angle);
        }
    if (v.layout == L::transposed) return to_tensor("pe", {"dim", "pos"}, xt::transpose(pe), Elem::float64);
    return to_tensor("pe", {"pos", "dim"}, pe, Elem::float64);
}

Tensor renamed(Tensor t, const std::string& name)
{
    t.name = name;
    return t;
}

// h = s x + PE, from the run's own x and table, in float64.
Tensor embedded_with(const PeParams& p, const Run& run, double s)
{
    Tensor h = renamed(run.at("x"), "h");
    const Tensor& pe = run.at("pe");
    const std::size_t LD = static_cast<std::size_t>(p.len * p.dim);
    for (std::size_t n = 0; n < h.values.size(); ++n) h.values[n] = s * h.values[n] + pe.values[n % LD];
    h.elem = Elem::float64;
    return h;
}

std::vector<Mistake<PeParams>> pe_mistakes()
{
    auto variant = [](PeVariant v) { return [v](const PeParams& p, const Run&) { return pe_variant(p, v); }; };
    return {{"sin_cos_swapped", "pe", "sin and cos are swapped: cos sits where sin belongs", "sin 与 cos 放反了：cos 放在了 sin 的位置",
             variant({2.0, 0, PeVariant::Layout::sin_cos_swapped})},
            {"missing_factor_2", "pe", "the exponent lacks its factor 2: w_i = base^(-i/D) instead of base^(-2i/D)",
             "指数少了因子 2：写成了 w_i = base^(-i/D)，应为 base^(-2i/D)", variant({1.0, 0, PeVariant::Layout::as_asked})},
            {"positions_from_1", "pe", "positions are counted from 1: row 0 holds PE(1)", "位置从 1 开始计：第 0 行是 PE(1)",
             variant({2.0, 1, PeVariant::Layout::as_asked})},
            {"concat_halves", "pe", "sin block then cos block ([sin | cos]) with the paper's w_i, not interleaved pairs",
             "先 sin 块再 cos 块（[sin | cos]），用论文的 w_i，而不是交错成对", variant({2.0, 0, PeVariant::Layout::halves})},
            {"transposed", "pe", "saved as [dim, pos] instead of [pos, dim]", "保存成了 [dim, pos]，应为 [pos, dim]",
             variant({2.0, 0, PeVariant::Layout::transposed})},
            {"sliced_by_batch", "h", "the table is sliced by the batch size, pe[:x.size(0)], so sequence b gets PE(b) at every position",
             "表按批大小切片了（pe[:x.size(0)]），于是序列 b 的每个位置都加上了 PE(b)",
             [](const PeParams&, const Run& run) { return run.has("h_sliced_by_batch") ? renamed(run.at("h_sliced_by_batch"), "h") : Tensor{}; }},
            {"pe_not_added", "h", "the encoding is not added: x is returned unchanged", "没有加上位置编码：原样返回了 x",
             [](const PeParams&, const Run& run) { return renamed(run.at("x"), "h"); }},
            {"embedding_scaled", "h", "x is scaled by sqrt(D) before PE is added, which this module does not do",
             "加 PE 之前把 x 乘了 sqrt(D)，而这个模块不这样做",
             [](const PeParams& p, const Run& run) { return p.scale_embed ? Tensor{} : embedded_with(p, run, std::sqrt(dsize(p.dim))); }}};
}

std::vector<OptionRow<PeParams>> pe_options()
{
    using P = PeParams;
    return {option<P>("--len", "Positions L", &P::len, whole_range(1, 1L << 24)),
            option<P>("--dim", "Encoding dimension D (even; odd with --layout concat: a zero last column, as fairseq and tensor2tensor pad it)",
                      &P::dim, whole_range(2, 1L << 24)),
            option<P>("--base", "Base of the frequencies w_i = base^(-2i/D) (tensor2tensor's max_timescale)", &P::base, positive()),
            option<P>("--layout", "interleaved: sin/cos alternate (the paper); concat: [sin | cos] halves, "
                                  "w_i = base^(-i/(D/2-1)) (tensor2tensor, fairseq)", &P::layout),
            option<P>("--frequencies", "paper: w_i = base^(-2i/D); t2t: base^(-i/max(D/2-1, 1)) (default: interleaved paper, concat t2t; "
                                       "concat with paper is the [sin | cos] table of the paper's frequencies)",
                      &P::frequencies),
            option<P>("--min-timescale", "tensor2tensor's min_timescale m: w_i = m (base/m)^(-e_i), as its code multiplies by m (default 1)",
                      &P::min_timescale, positive()),
            option<P>("--start-index", "tensor2tensor's start_index: row r is position start_index + r", &P::start_index, whole_range(0, 1L << 24)),
            option<P>("--max-len", "Precompute this many rows and slice the first L, as the articles' module (0: L)", &P::max_len,
                      whole_range(0, 1L << 24)),
            option<P>("--freq-method", "exp-log: exp(2i * -ln(base)/D); pow: 1/base^(2i/D)", &P::freq_method),
            option<P>("--embed", "Also build a random embedding X [batch, pos, dim] and H = X + PE", &P::embed),
            option<P>("--batch", "Batch size B of X, with --embed", &P::batch, whole_range(1, 1L << 20)),
            option<P>("--scale-embed", "H = sqrt(D)*X + PE, as the original Transformer", &P::scale_embed),
            option<P>("--shift", "Offset k of the relative-shift check", &P::shift, whole_range(1, 1L << 24))};
}

// Random valid parameters for the random tests.
PeParams sample_pe(Rng& rng)
{
    PeParams p;
    p.len = between(rng, 2, 40), p.dim = 2 * between(rng, 1, 16), p.layout = rng.below(2) ? PeLayout::concat : PeLayout::interleaved;
    p.freq_method = rng.below(2) ? FreqMethod::pow : FreqMethod::exp_log;
    p.base = std::array{100.0, 10000.0, 50000.0}[rng.below(3)], p.shift = between(rng, 1, p.len - 1);
    if (rng.below(10) < 3) p.embed = true, p.batch = between(rng, 1, 3), p.scale_embed = rng.below(2) == 1;
    if (rng.below(10) < 3) p.frequencies = rng.below(2) ? PeFrequencies::t2t : PeFrequencies::paper;
    if (rng.below(10) < 2) p.min_timescale = rng.below(2) ? 2.0 : 10.0;  // base/m then fits wherever the base does
    if (rng.below(10) < 2) p.start_index = between(rng, 1, 100);
    if (p.layout == PeLayout::concat && rng.below(10) < 3) p.dim += 1;  // an odd D, padded
    return p;
}

Experiment<PeParams> make_pe_experiment()
{
    Experiment<PeParams> e;
    e.command = "pe";
    e.summary = "Sinusoidal positional encoding: the table, its frequencies, and why relative shifts are linear";
    e.example = "attnlab pe --len 50 --dim 16 --format csv > pe.csv";
    e.main_tensor = "pe";
    e.options = pe_options();
    e.tensors = pe_tensors();
    e.resolve = [](const PeParams& given) {
        PeParams p = given;
        if (p.max_len == 0) p.max_len = p.len;
        return p;
    };
    e.validate = [](const PeParams& p) { validate(p); };
    // The precomputed table, the directly computed one and the other layout's, in T.
    e.scratch_bytes = [](const PeParams& p, DType dtype) {
        return (2.0 * dsize(p.max_len) + 3.0 * dsize(p.len)) * dsize(p.dim) * detail::elem_bytes(dtype);
    };
    // Tables (sin and cos at about 20 each), the two budgeted all-pairs checks, the embedding.
    e.work = [](const PeParams& p, const Plan&) {
        const double LD = dsize(p.len) * dsize(p.dim), pairs = std::min(1073741824.0, dsize(p.len) * LD / 2.0);
        return 40.0 * (dsize(p.max_len) * dsize(p.dim) + 3.0 * LD) + 2.0 * pairs + 40.0 * dsize(p.batch) * LD;
    };
    e.work_what = [](const PeParams& p) { return fmt::format("pe [{}, {}] and its pair checks", p.len, p.dim); };
    e.inputs = {"x"};
    e.mistakes = pe_mistakes();
    e.sample = sample_pe;
    // A correct table computed another way (pow instead of exp-log, float32 angles) differs
    // by the rounding of the angle pos * w_i, which grows with the position.
    e.against_atol = [](const PeParams& p, const std::string& tensor, double eps, const Tensor& expected) {
        return tensor == "pe" ? 4.0 * eps * (4.0 * dsize(p.len) + 8.0) : 64.0 * eps * (1.0 + max_abs(expected));
    };
    e.set_typed([](auto t) { return pe_typed<typename decltype(t)::type>(); });
    return e;
}

}  // namespace

const Experiment<PeParams>& pe_experiment()
{
    static const Experiment<PeParams> e = make_pe_experiment();
    return e;
}

Report run_pe(const PeParams& p, const RunContext& ctx) { return run_experiment(pe_experiment(), p, ctx); }

std::vector<TensorInfo> pe_tensor_infos() { return tensor_infos(pe_experiment()); }

std::vector<std::string> pe_command(const PeParams& p) { return command_of(pe_experiment(), p); }

}  // namespace attnlab

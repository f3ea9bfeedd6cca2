#include "attnlab/experiments/rope.hpp"
#include "attnlab/experiments/rope_internal.hpp"

#include "attnlab/experiments/precision.hpp"
#include "attnlab/experiments/inputs.hpp"
#include "attnlab/core/error_model.hpp"
#include "attnlab/core/measure.hpp"
#include "attnlab/core/rng.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace attnlab {

namespace {

using namespace rope_detail;

// A longrope factor list ("1.0,1.02,1.1"): positive numbers, or a usage error naming the item.
std::vector<double> factor_list(const std::string& text, const char* flag)
{
    return number_list(text, flag, [](double v) { return v > 0.0 && std::isfinite(v); }, "a positive number");
}

void validate(const RopeParams& p)
{
    if (p.len < 1) throw InputError(fmt::format("--len must be at least 1 (got {})", p.len));
    if (!p.positions.empty() && static_cast<long>(p.positions.size()) != p.len) {
        throw InputError(fmt::format("--positions gives {} positions for --len {}: one per token", p.positions.size(), p.len));
    }
    for (long m : p.positions)
        if (std::abs(m) > kMaxRopePosition) throw InputError(fmt::format("--positions: {} is past +-2^24, where positions stop being exact in float32", m));
    if (p.dim < 2 || p.dim % 2 != 0) {
        throw InputError(fmt::format("--dim must be even and at least 2 (got {}): RoPE rotates pairs", p.dim));
    }
    if (p.heads < 1 || p.batch < 1) throw InputError("--heads and --batch must be at least 1");
    // theta_i = base^(-2i/r) falls only for a base above 1, and the base must survive float32.
    if (!(p.base > 1.0) || !(p.base <= static_cast<double>(std::numeric_limits<float>::max()))) {
        throw InputError(fmt::format("--base must lie in (1, 3.4e38], so that the frequencies fall (got {})", p.base));
    }
    const long r = p.rotary_dim.value_or(p.dim);
    if (r < 2 || r % 2 != 0 || r > p.dim) {
        throw InputError(fmt::format("--rotary-dim must be even, at least 2 and at most --dim {} (got {})", p.dim, r));
    }
    const auto& s = p.scaling;
    const std::string method = name_of(s.method);
    const bool yarn_only = s.yarn_no_truncate || s.mscale || s.mscale_all_dim;
    if (yarn_only && s.method != RopeScaling::yarn) throw InputError("--no-yarn-truncate, --mscale and --mscale-all-dim apply to --scaling yarn");
    if (s.mscale.has_value() != s.mscale_all_dim.has_value()) throw InputError("--mscale and --mscale-all-dim go together (HF uses them only as a pair)");
    const bool factors = !p.short_factor.empty() || !p.long_factor.empty();
    if (factors != (s.method == RopeScaling::longrope)) throw InputError("--scaling longrope takes --short-factor and --long-factor, and only it does");
    for (const auto& [given, flag] : {std::pair{&s.short_factor, "--short-factor"}, std::pair{&s.long_factor, "--long-factor"}})
        if (factors && static_cast<long>(given->size()) != r / 2) {
            throw InputError(fmt::format("{} gives {} factors; longrope takes one per rotated pair, {}", flag, given->size(), r / 2));
        }
    if (p.dynamic_length != DynamicLength::positions && s.method != RopeScaling::dynamic) {
        throw InputError("--dynamic-length applies to --scaling dynamic");
    }
    if (s.ntk_alpha.has_value() != (s.method == RopeScaling::linear_ntk)) {
        throw InputError("--scaling linear+ntk takes --ntk-alpha, and only it does");
    }
    if (s.ntk_alpha && !(*s.ntk_alpha >= 1.0 && std::isfinite(*s.ntk_alpha))) {
        throw InputError(fmt::format("--ntk-alpha must be at least 1 (got {})", *s.ntk_alpha));
    }
    if (s.method == RopeScaling::none) {
        if (s.factor || s.original_len) {
            throw InputError("--factor and --original-len apply to a --scaling method (linear, ntk, dynamic, yarn, llama3, longrope, linear+ntk)");
        }
        return;
    }
    if (!s.factor) throw InputError(fmt::format("--scaling {} needs --factor", method));
    if (!(*s.factor >= 1.0) || !std::isfinite(*s.factor)) {
        throw InputError(fmt::format("--factor must be at least 1 for --scaling {} (got {})", method, *s.factor));
    }
    const bool needs_l0 = s.method == RopeScaling::dynamic || s.method == RopeScaling::yarn ||
                          s.method == RopeScaling::llama3 || s.method == RopeScaling::longrope;
    if (needs_l0 && !s.original_len) {
        throw InputError(fmt::format("--scaling {} needs --original-len (the context the model was trained on)", method));
    }
    if (s.original_len && *s.original_len < 1) {
        throw InputError(fmt::format("--original-len must be at least 1 (got {})", *s.original_len));
    }
    if ((s.method == RopeScaling::ntk || s.method == RopeScaling::dynamic || s.method == RopeScaling::linear_ntk) && r < 4) {
        throw InputError(fmt::format("--scaling {} raises the base to r/(r-2): it needs a rotary dimension of at least 4", method));
    }
    if (s.method == RopeScaling::yarn && !(s.beta_fast > s.beta_slow && s.beta_slow > 0.0)) {
        throw InputError(fmt::format("--beta-fast must exceed --beta-slow and both be positive (got {} and {})",
                                     s.beta_fast, s.beta_slow));
    }
    if (s.attention_factor && !(*s.attention_factor > 0.0)) {
        throw InputError("--attention-factor must be positive");
    }
    if (s.method == RopeScaling::llama3 && !(s.high_freq_factor > s.low_freq_factor && s.low_freq_factor > 0.0)) {
        throw InputError(fmt::format("--high-freq-factor must exceed --low-freq-factor and both be positive (got {} and {})",
                                     s.high_freq_factor, s.low_freq_factor));
    }
}

// The articles' example: d = 4, 5 positions, one head, one sequence.
RopeParams resolve(const RopeParams& given)
{
    RopeParams p = given;
    // longrope's lists as numbers (validate, which runs next, holds them to one per pair)
    p.scaling.short_factor = factor_list(p.short_factor, "--short-factor");
    p.scaling.long_factor = factor_list(p.long_factor, "--long-factor");
    if (p.example) {
        p.len = 5;
        p.dim = 4;
        p.heads = 1;
        p.batch = 1;
        p.rotary_dim.reset();
    }
    return p;
}

template <class T>
Tensor theta_tensor(const char* name, const std::vector<double>& theta)
{
    Vec<T> t = xt::zeros<T>({theta.size()});
    for (std::size_t i = 0; i < theta.size(); ++i) t(i) = static_cast<T>(theta[i]);
    return to_tensor(name, {"pair"}, t, elem_of<T>());
}

// Inputs: seeded q, k, or the articles' example (every query and key (1, 0, 1, 0)).
template <class T>
std::pair<Ten4<T>, Ten4<T>> rope_inputs(const RopeParams& p, std::uint64_t seed)
{
    const auto B = static_cast<std::size_t>(p.batch), H = static_cast<std::size_t>(p.heads),
               L = static_cast<std::size_t>(p.len), d = static_cast<std::size_t>(p.dim);
    Ten4<T> q = xt::zeros<T>({B, H, L, d}), k = xt::zeros<T>({B, H, L, d});
    if (p.example) {
        for (std::size_t m = 0; m < L; ++m) q(0, 0, m, 0) = q(0, 0, m, 2) = k(0, 0, m, 0) = k(0, 0, m, 2) = T(1);
    } else {
        fill_normal(q.data(), q.size(), seed, stream::q);
        fill_normal(k.data(), k.size(), seed, stream::k);
    }
    return {q, k};
}

// The same q and k placed at every position: dots[m][n] = q_m . k_n.
template <class T>
Mat<T> dots_of(const RopeParams& p, const RopeCache<T>& cache, const Tensor& q, const Tensor& k)
{
    const auto q0 = first_vector<T>(q), k0 = first_vector<T>(k);
    const auto L = static_cast<std::size_t>(p.len);
    Mat<T> dots = xt::zeros<T>({L, L});
    std::vector<std::vector<T>> ks;
    for (long n = 0; n < p.len; ++n) ks.push_back(rotated_at(p, cache, k0, n));
    for (long m = 0; m < p.len; ++m) {
        const auto qm = rotated_at(p, cache, q0, m);
        for (long n = 0; n < p.len; ++n) dots(m, n) = static_cast<T>(dot(qm, ks[static_cast<std::size_t>(n)]));
    }
    return dots;
}

// Each token's position: --input positions, else --positions, else 0..L-1.
std::vector<long> token_positions(const RopeParams& p, const Plan& plan)
{
    std::vector<long> out;
    if (const Tensor* given = plan.input("positions")) return whole_positions(*given);
    if (!p.positions.empty()) return p.positions;
    for (long m = 0; m < p.len; ++m) out.push_back(m);
    return out;
}

template <class T>
Run compute_rope(const RopeParams& p, const Plan& plan)
{
    Run run;
    const auto elem = elem_of<T>();
    const RopeFrequencies freq = freq_of<T>(p);
    run.keep(freq);
    set_param(run.derived, "attention_factor", freq.attention_factor);
    const std::vector<long> positions = token_positions(p, plan);
    const RopeCache<T> cache = rope_cache_at<T>(positions, freq.theta);
    run.add(Tensor{"positions", {"pos"}, Elem::index, {positions.size()}, std::vector<double>(positions.begin(), positions.end())});
    const auto [q_drawn, k_drawn] = rope_inputs<T>(p, plan.seed);
    const Ten4<T> q = input_or<T, 4>(plan, "q", [&] { return q_drawn; }), k = input_or<T, 4>(plan, "k", [&] { return k_drawn; });
    run.add(theta_tensor<T>("theta", freq.theta));
    if (p.scaling.method != RopeScaling::none) run.add(theta_tensor<T>("theta_unscaled", freq.theta_unscaled));
    if (plan.wants("cache")) {
        Ten3<T> c = xt::zeros<T>({static_cast<std::size_t>(p.len), freq.theta.size(), std::size_t{2}});
        xt::view(c, xt::all(), xt::all(), 0) = cache.cos;
        xt::view(c, xt::all(), xt::all(), 1) = cache.sin;
        run.add(to_tensor("cache", {"pos", "pair", "cos_sin"}, c, elem));
    }
    const std::vector<std::string> bhld = {"batch", "head", "pos", "dim"};
    run.add(to_tensor("q", bhld, q, elem));
    run.add(to_tensor("k", bhld, k, elem));
    run.add(to_tensor("q_rot", bhld, rope_apply(q, cache, rotary(p), p.style), elem));
    run.add(to_tensor("k_rot", bhld, rope_apply(k, cache, rotary(p), p.style), elem));
    if (scales_cos_sin(p.scaling)) {
        // What Hugging Face's apply_rotary_pos_emb returns under YaRN and LongRoPE: cos and sin are
        // multiplied by the attention factor first, so the output is the factor times the
        // rotation. q_rot and k_rot stay the pure rotation.
        const T f = static_cast<T>(freq.attention_factor);
        const RopeCache<T> scaled{cache.cos * f, cache.sin * f};
        run.add(to_tensor("q_rot_scaled", bhld, rope_apply(q, scaled, rotary(p), p.style), elem));
        run.add(to_tensor("k_rot_scaled", bhld, rope_apply(k, scaled, rotary(p), p.style), elem));
    }
    if (plan.wants("dots")) run.add(to_tensor("dots", {"query", "key"}, dots_of(p, cache, run.at("q"), run.at("k")), elem));
    if (plan.wants("decay")) {
        const auto decay = rope_decay(freq.theta, p.len);
        run.add(Tensor{"decay", {"distance"}, Elem::float64, {decay.size()}, decay});
    }
    run.add(to_tensor("angle_error", {"pos"}, angle_errors<T>(p, freq.theta), Elem::float64));
    return run;
}

// --- checks ---

// Rows of [B, H, L, d]: the vectors, each of d.
template <class T>
Typed<RopeParams> rope_typed()
{
    return {compute_rope<T>, rope_checks<T>(), rope_notes<T>()};
}

std::vector<TensorDecl<RopeParams>> rope_tensors()
{
    auto pairs = [](const RopeParams& p) { return std::vector<double>{dsize(rotary(p) / 2)}; };
    auto bhld = [](const RopeParams& p) { return std::vector<double>{dsize(p.batch), dsize(p.heads), dsize(p.len), dsize(p.dim)}; };
    auto len = [](const RopeParams& p) { return std::vector<double>{dsize(p.len)}; };
    const std::vector<std::string> axes = {"batch", "head", "pos", "dim"};
    return {{"positions", {"pos"}, Need::always, len, {}, {}},
            {"theta", {"pair"}, Need::always, pairs, {}, {}},
            {"theta_unscaled", {"pair"}, Need::always, pairs, [](const RopeParams& p) { return p.scaling.method != RopeScaling::none; }, {}},
            {"cache", {"pos", "pair", "cos_sin"}, Need::on_demand,
             [](const RopeParams& p) { return std::vector<double>{dsize(p.len), dsize(rotary(p) / 2), 2.0}; }, {}, {}},
            {"q", axes, Need::always, bhld, {}, {}},
            {"k", axes, Need::always, bhld, {}, {}},
            {"q_rot", axes, Need::always, bhld, {}, {}},
            {"k_rot", axes, Need::always, bhld, {}, {}},
            {"q_rot_scaled", axes, Need::always, bhld, [](const RopeParams& p) { return scales_cos_sin(p.scaling); }, {}},
            {"k_rot_scaled", axes, Need::always, bhld, [](const RopeParams& p) { return scales_cos_sin(p.scaling); }, {}},
            {"dots", {"query", "key"}, Need::on_demand, [](const RopeParams& p) { return std::vector<double>{dsize(p.len), dsize(p.len)}; }, {}, {}},
            {"decay", {"distance"}, Need::on_demand, len, {}, {}},
            {"angle_error", {"pos"}, Need::always, len, {}, {}}};
}

// --- the catalogue of usual mistakes ---

// The run's q (or k) rotated as a learner might: another pairing or direction, theta with the
// exponent's factor 2 missing, positions counted from 1.
struct RopeVariant {
    std::string input = "q";
    std::optional<RopeStyle> style;
    Direction dir = Direction::forward;
    double factor = 2.0;
    long first = 0;
};

Ten4<double> rope_variant(const RopeParams& p, const Run& run, const RopeVariant& v)
{
    const long r = rotary(p);
    std::vector<double> theta = freq_of<double>(p).theta;
    if (v.factor != 2.0)
        for (std::size_t i = 0; i < theta.size(); ++i) theta[i] = std::pow(p.base, -v.factor * dsize(static_cast<long>(i)) / dsize(r));
    std::vector<long> positions = positions_of(run);
    for (long& m : positions) m += v.first;
    const RopeCache<double> cache = rope_cache_at<double>(positions, theta);
    return rope_apply(from_tensor<double, 4>(run.at(v.input)), cache, r, v.style.value_or(p.style), v.dir, 0);
}

std::vector<Mistake<RopeParams>> rope_mistakes()
{
    std::vector<Mistake<RopeParams>> out;
    const std::vector<std::string> axes = {"batch", "head", "pos", "dim"};
    for (const char* tensor : {"q_rot", "k_rot"}) {
        const std::string input = std::string(tensor, 1);
        auto variant = [input, axes](RopeVariant v) {
            v.input = input;
            return [v, axes](const RopeParams& p, const Run& run) { return to_tensor("rot", axes, rope_variant(p, run, v), Elem::float64); };
        };
        out.push_back({"pairing_interleaved", tensor, "pairs (2i, 2i+1) where (i, i + d/2) was asked for (rotate_half)",
                       "按 (2i, 2i+1) 配对，而要求的是 (i, i + d/2)（rotate_half）", variant({"", RopeStyle::interleaved})});
        out.push_back({"pairing_half", tensor, "pairs (i, i + d/2) where (2i, 2i+1) was asked for", "按 (i, i + d/2) 配对，而要求的是 (2i, 2i+1)",
                       variant({"", RopeStyle::half})});
        out.push_back({"rotation_reversed", tensor, "rotated by -m theta: the sine's sign is flipped", "旋转了 -m theta：sin 的符号反了",
                       variant({"", std::nullopt, Direction::inverse})});
        out.push_back({"missing_factor_2", tensor, "theta_i = base^(-i/d) instead of base^(-2i/d)", "theta_i 写成了 base^(-i/d)，应为 base^(-2i/d)",
                       variant({"", std::nullopt, Direction::forward, 1.0})});
        out.push_back({"positions_from_1", tensor, "positions are counted from 1: position 0 is rotated by theta",
                       "位置从 1 开始计：位置 0 也被旋转了 theta", variant({"", std::nullopt, Direction::forward, 2.0, 1})});
        out.push_back({"heads_and_positions_swapped", tensor, "saved as [batch, pos, head, dim] instead of [batch, head, pos, dim]",
                       "保存成了 [batch, pos, head, dim]，应为 [batch, head, pos, dim]", [tensor](const RopeParams&, const Run& run) {
                           return to_tensor("rot", {"batch", "pos", "head", "dim"},
                                            xt::transpose(from_tensor<double, 4>(run.at(tensor)), {0, 2, 1, 3}), Elem::float64);
                       }});
    }
    // A mistake equal to the request itself (the pairing asked for) never matches a wrong answer.
    return out;
}

std::vector<OptionRow<RopeParams>> rope_options()
{
    using P = RopeParams;
    auto scaling = [](auto member) { return [member](P& p) -> auto& { return p.scaling.*member; }; };
    using S = RopeScalingParams;
    std::vector<OptionRow<P>> rows{
        option<P>("--example", "The articles' example: d = 4, 5 positions, every query (1, 0, 1, 0)", &P::example),
        option<P>("--len", "Positions L", &P::len, whole_range(1, 1L << 22)),
        option<P>("--dim", "Per-head dimension d (even)", &P::dim, whole_range(2, 1L << 16)),
        option<P>("--heads", "Heads H", &P::heads, whole_range(1, 1024)),
        option<P>("--batch", "Batch size B", &P::batch, whole_range(1, 1024)),
        option<P>("--base", "Base of theta_i = base^(-2i/r)", &P::base, positive()),
        option<P>("--style", "interleaved: pairs (2i, 2i+1) (RoFormer, GPT-J, the articles); half: (i, i+r/2) "
                             "(rotate_half: GPT-NeoX, Llama, Hugging Face)", &P::style),
        option<P>("--rotary-dim", "Rotate only the first r dimensions (even; default d)", &P::rotary_dim, whole_range(2, 1L << 16)),
        option<P>("--scaling", "Context extension: none|linear|ntk|dynamic|yarn|llama3|longrope|linear+ntk", scaling(&S::method)),
        option<P>("--factor", "Scaling factor s (>= 1), for every method but none", scaling(&S::factor), positive()),
        option<P>("--ntk-alpha", "linear+ntk: base * alpha^(r/(r-2)) beside theta / s (llama.cpp's --rope-freq-base and --rope-freq-scale 1/s)",
                  scaling(&S::ntk_alpha), positive()),
        option<P>("--original-len", "Context L0 the model was trained on (dynamic, yarn, llama3)", scaling(&S::original_len)),
        option<P>("--beta-fast", "yarn: pairs turning more often than this over L0 keep theta", scaling(&S::beta_fast), positive()),
        option<P>("--beta-slow", "yarn: pairs turning less often than this are interpolated", scaling(&S::beta_slow), positive()),
        option<P>("--attention-factor", "yarn: override 0.1 ln(s) + 1", scaling(&S::attention_factor), positive()),
        option<P>("--no-yarn-truncate", "yarn: keep the ramp's ends where they fall, not rounded to whole pairs (HF's truncate=False)",
                  scaling(&S::yarn_no_truncate)),
        option<P>("--mscale", "yarn (DeepSeek): attention factor mscale(s, M) / mscale(s, --mscale-all-dim), mscale(s, m) = 0.1 m ln(s) + 1",
                  scaling(&S::mscale), positive()),
        option<P>("--mscale-all-dim", "yarn (DeepSeek): the divisor's m, with --mscale", scaling(&S::mscale_all_dim), positive()),
        option<P>("--short-factor", "longrope: r/2 comma-separated factors dividing theta up to L0 (Phi-3's short_factor)", &P::short_factor),
        option<P>("--long-factor", "longrope: r/2 comma-separated factors dividing theta past L0, the length max(position) + 1", &P::long_factor),
        option<P>("--low-freq-factor", "llama3: wavelengths above L0/this are divided by s", scaling(&S::low_freq_factor), positive()),
        option<P>("--high-freq-factor", "llama3: wavelengths below L0/this keep theta", scaling(&S::high_freq_factor), positive()),
        option<P>("--dynamic-length", "dynamic: the length L the base is scaled for: positions: max(--positions) + 1 "
                                      "(Hugging Face's dynamic_rope_update); len: --len", &P::dynamic_length),
        option<P>("--positions", "Each token's position, comma-separated (any integers, repeats and gaps included; "
                                 "default 0..L-1); sets --len when that is not given", &P::positions,
                  whole_range(-kMaxRopePosition, kMaxRopePosition))};
    row_of(rows, "--example").excludes = {"--len", "--dim", "--heads", "--batch", "--rotary-dim", "--positions"};
    row_of(rows, "--rotary-dim").reported = [](const P& p) { return ParamValue(rotary(p)); };
    row_of(rows, "--positions").sets_length_of = "--len";
    row_of(rows, "--positions").reported = [](const P& p) { return list_or_null(p.positions); };
    return rows;
}

// Random valid parameters for the random tests: token positions with repeats, gaps and
// negatives half the time.
RopeParams sample_rope(Rng& rng)
{
    RopeParams p;
    p.len = between(rng, 2, 24), p.dim = 2 * between(rng, 1, 8), p.heads = between(rng, 1, 3), p.batch = between(rng, 1, 2);
    p.style = rng.below(2) ? RopeStyle::half : RopeStyle::interleaved;
    p.base = rng.below(2) ? 500000.0 : 10000.0;
    if (rng.below(10) < 3) p.rotary_dim = 2 * between(rng, 1, p.dim / 2);
    if (rng.below(2))
        for (long t = 0; t < p.len; ++t) p.positions.push_back(between(rng, -5, 40));
    auto& s = p.scaling;
    s.method = std::array{RopeScaling::none, RopeScaling::linear, RopeScaling::ntk, RopeScaling::dynamic, RopeScaling::yarn,
                          RopeScaling::llama3, RopeScaling::linear_ntk}[rng.below(7)];
    if (s.method == RopeScaling::none) return p;
    if (rotary(p) < 4 && (s.method == RopeScaling::ntk || s.method == RopeScaling::dynamic || s.method == RopeScaling::linear_ntk)) {
        s.method = RopeScaling::linear;  // the base's exponent r/(r-2) needs r >= 4
    }
    s.factor = std::array{2.0, 4.0, 8.0, 32.0}[rng.below(4)];
    s.original_len = std::array{16L, 64L, 2048L}[rng.below(3)];
    if (s.method == RopeScaling::linear_ntk) s.ntk_alpha = std::array{1.0, 2.0, 8.0}[rng.below(3)];
    return p;
}

Experiment<RopeParams> make_rope_experiment()
{
    Experiment<RopeParams> e;
    e.command = "rope";
    e.summary = "Rotary position embedding: both pairings, scaling methods, and q_m.k_n depending on m - n alone";
    e.example = "attnlab rope --len 64 --dim 16 --format csv --tensor dots";
    e.main_tensor = "q_rot";
    e.options = rope_options();
    e.tensors = rope_tensors();
    e.resolve = resolve;
    e.validate = validate;
    // The checks' working copies: the inverse rotation and q_rot as T, the caches.
    e.scratch_bytes = [](const RopeParams& p, DType dtype) {
        const double elem = detail::elem_bytes(dtype);
        return (2.0 * dsize(p.batch) * dsize(p.heads) * dsize(p.dim) + 4.0 * dsize(rotary(p))) * dsize(p.len) * elem;
    };
    // The rotations and their checks, the sampled all-pairs dots (several times, over the
    // positions sampled_positions takes: every one up to 1024, then 512), dots [L, L]
    // when it is asked for, and the KV-compression fold over fold_positions.
    e.work = [](const RopeParams& p, const Plan& plan) {
        const double L = dsize(p.len), d = dsize(p.dim), NP = static_cast<double>(sampled_positions(p.len).size());
        return dsize(p.batch) * dsize(p.heads) * L * d * 60.0 + 4.0 * NP * NP * d * 4.0 +
               (plan.wants("dots") ? L * L * d * 2.0 : 0.0) + (plan.wants("decay") ? L * dsize(rotary(p)) * 10.0 : 0.0) +
               L * dsize(rotary(p)) * 40.0 + 3.0 * std::pow(static_cast<double>(fold_positions(p.len).size()), 2.0) * d;
    };
    e.work_what = [](const RopeParams& p) { return fmt::format("q, k [{}, {}, {}, {}] and dots [{}, {}]", p.batch, p.heads, p.len, p.dim, p.len, p.len); };
    e.inputs = {"q", "k", "positions"};
    e.mistakes = rope_mistakes();
    e.sample = sample_rope;
    e.set_typed([](auto t) { return rope_typed<typename decltype(t)::type>(); });
    return e;
}

}  // namespace

const Experiment<RopeParams>& rope_experiment()
{
    static const Experiment<RopeParams> e = make_rope_experiment();
    return e;
}

Report run_rope(const RopeParams& p, const RunContext& ctx) { return run_experiment(rope_experiment(), p, ctx); }

std::vector<TensorInfo> rope_tensor_infos() { return tensor_infos(rope_experiment()); }

std::vector<std::string> rope_command(const RopeParams& p) { return command_of(rope_experiment(), p); }

}  // namespace attnlab

#include "attnlab/experiments/rerotate.hpp"

#include "attnlab/core/error_model.hpp"
#include "attnlab/core/half.hpp"
#include "attnlab/core/measure.hpp"
#include "attnlab/core/position/rope.hpp"
#include "attnlab/core/rng.hpp"
#include "attnlab/core/xt.hpp"
#include "attnlab/experiments/inputs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace attnlab {

namespace {

using Rr = RerotateParams;

// Keys at positions 0 .. L-1 rotated by `rotate(m)` each, in T, with the pairing `style`.
template <class T>
Ten4<T> rotated_by(const Rr& p, const Ten4<T>& x, const std::vector<double>& theta, RopeStyle style, long (*rotate)(const Rr&, long))
{
    std::vector<long> angles(static_cast<std::size_t>(p.len));
    for (long m = 0; m < p.len; ++m) angles[static_cast<std::size_t>(m)] = rotate(p, m);
    return rope_apply(x, rope_cache_at<T>(angles, theta), p.dim, style);
}

long at_position(const Rr&, long m) { return m; }
long at_new_position(const Rr& p, long m) { return m + p.shift; }
long by_shift(const Rr& p, long) { return p.shift; }
long by_minus_shift(const Rr& p, long) { return -p.shift; }

template <class T>
Run compute_rerotate(const Rr& p, const Plan& plan)
{
    const auto B = static_cast<std::size_t>(p.batch), H = static_cast<std::size_t>(p.heads), L = static_cast<std::size_t>(p.len),
               d = static_cast<std::size_t>(p.dim);
    const Ten4<T> k = input_or<T, 4>(plan, "k", [&] {  // the stream rope's k is drawn from
        Ten4<T> drawn = xt::zeros<T>({B, H, L, d});
        fill_normal(drawn.data(), drawn.size(), plan.seed, stream::k);
        return drawn;
    });
    const std::vector<double> theta = rope_frequencies<T>(p.dim, p.base, {}, p.len).theta;
    const Ten4<T> k_rot = rotated_by(p, k, theta, p.style, at_position);
    Run run;
    std::vector<double> positions(L);
    for (std::size_t m = 0; m < L; ++m) positions[m] = static_cast<double>(m);
    run.add(Tensor{"positions", {"pos"}, Elem::index, {L}, std::move(positions)});
    Vec<T> th = xt::zeros<T>({theta.size()});
    for (std::size_t i = 0; i < theta.size(); ++i) th(i) = static_cast<T>(theta[i]);
    run.add(to_tensor("theta", {"pair"}, th, elem_of<T>()));
    const std::vector<std::string> bhld = {"batch", "head", "pos", "dim"};
    run.add(to_tensor("k", bhld, k, elem_of<T>()));
    run.add(to_tensor("k_rot", bhld, k_rot, elem_of<T>()));
    run.add(to_tensor("k_rerotated", bhld, rotated_by(p, k_rot, theta, p.style, by_shift), elem_of<T>()));
    run.add(to_tensor("k_rot_shifted", bhld, rotated_by(p, k, theta, p.style, at_new_position), elem_of<T>()));
    return run;
}

// --- checks ---

// The farthest any angle reaches, in positions: m, Δ and m + Δ.
double reach(const Rr& p) { return dsize(std::max({p.len - 1, std::labs(p.shift), std::labs(p.len - 1 + p.shift)})); }

// Error model (docs/check.md): a rotation in T of a pair of norm |k_i| by an angle a theta_i
// computed in T is off by |k_i| (angle_rel_error |a| theta_i + 6u): the angle's own error, and
// three roundings and a stored cos or sin. k_rerotated takes two rotations (by m, then by Δ),
// k_rot_shifted one (by m + Δ); rotations keep norms, so the errors add:
// |k_i| (e (m + |Δ| + |m + Δ|) theta_i + 18u), e the angle's relative error up to the reach.
double rerotation_tol(const Rr& p, const Run& run, const CheckEnv& env)
{
    const Tensor &k = run.at("k"), &theta = run.at("theta");
    const long P = p.dim / 2;
    const double e = angle_rel_error(env.dtype, reach(p)), u = unit_roundoff(env.dtype);
    double tol = 0.0;
    const auto d = static_cast<std::size_t>(p.dim), L = static_cast<std::size_t>(p.len);
    for (std::size_t row = 0; row * d < k.size(); ++row) {
        const auto m = static_cast<long>(row % L);
        const double angles = dsize(m) + dsize(std::labs(p.shift)) + dsize(std::labs(m + p.shift));
        for (long i = 0; i < P; ++i) {
            const auto [a, b] = rope_pair(p.style, i, P);
            const double norm = std::hypot(k.values[row * d + static_cast<std::size_t>(a)], k.values[row * d + static_cast<std::size_t>(b)]);
            tol = std::max(tol, norm * (e * angles * theta.values[static_cast<std::size_t>(i)] + 18.0 * u));
        }
    }
    return tol;
}

std::optional<Check> check_rerotation(const Rr& p, const Run& run, const CheckEnv& env)
{
    return at_most(tr(env, "a cached key rotated once more by Δ = {} is the key rotated at its new position: R(Δ) R(m) k = R(m + Δ) k",
                      "缓存里的键再转 Δ = {}，等于原来的键在新位置上旋转：R(Δ) R(m) k = R(m + Δ) k", p.shift),
                   "max |k_rerotated - k_rot_shifted|", max_abs_diff(run.at("k_rerotated"), run.at("k_rot_shifted")), rerotation_tol(p, run, env),
                   max_abs(run.at("k")));
}

// Moved without the rotation, the cache still holds the keys of the old positions. How far
// they are from the new ones depends on Δ theta_i modulo 2 pi: a demonstration.
std::optional<Check> check_unmoved(const Rr& p, const Run& run, const CheckEnv& env)
{
    if (p.shift == 0) return std::nullopt;
    return demonstration(tr(env, "a cache moved without rotating its keys reads them at their old positions: k_rot differs from k_rot_shifted (more than 100x rounding)",
                            "缓存移动了位置却没有再旋转键，读到的仍是旧位置的键：k_rot 与 k_rot_shifted 不同（超过舍入的 100 倍）"),
                         "max |k_rot - k_rot_shifted|", max_abs_diff(run.at("k_rot"), run.at("k_rot_shifted")), 100.0 * rerotation_tol(p, run, env), Compare::gt);
}

template <class T>
Typed<Rr> rerotate_typed()
{
    return {compute_rerotate<T>,
            {{"rerotation_equals_rotation_at_new_position", {"k", "theta", "k_rerotated", "k_rot_shifted"}, check_rerotation},
             {"unmoved_cache_reads_old_positions", {"k", "theta", "k_rot", "k_rot_shifted"}, check_unmoved}},
            {}};
}

// --- the catalogue of usual mistakes: k_rerotated built another way, in float64 ---

Tensor rerotated_as(const Rr& p, const Run& run, RopeStyle second_style, long (*second)(const Rr&, long))
{
    const Ten4<double> k = from_tensor<double, 4>(run.at("k"));
    const std::vector<double> theta = rope_frequencies<double>(p.dim, p.base, {}, p.len).theta;
    const Ten4<double> k_rot = rotated_by(p, k, theta, p.style, at_position);
    return to_tensor("k_rerotated", {"batch", "head", "pos", "dim"}, rotated_by(p, k_rot, theta, second_style, second), Elem::float64);
}

RopeStyle other(RopeStyle s) { return s == RopeStyle::half ? RopeStyle::interleaved : RopeStyle::half; }

std::vector<Mistake<Rr>> rerotate_mistakes()
{
    return {{"rotated_at_new_position", "k_rerotated", "the cached (already rotated) keys rotated at their new position m + Δ: R(m + Δ) R(m) k = R(2m + Δ) k",
             "把缓存里（已旋转过的）键按新位置 m + Δ 再转一次：R(m + Δ) R(m) k = R(2m + Δ) k",
             [](const Rr& p, const Run& run) { return p.len > 1 ? rerotated_as(p, run, p.style, at_new_position) : Tensor{}; }},
            {"rotated_backwards", "k_rerotated", "the cache rotated by -Δ: the keys land at m - Δ", "缓存按 -Δ 旋转：键落到 m - Δ 的位置",
             [](const Rr& p, const Run& run) { return p.shift != 0 ? rerotated_as(p, run, p.style, by_minus_shift) : Tensor{}; }},
            {"other_pairing", "k_rerotated", "the re-rotation pairs the dimensions the other way (interleaved against half, llama.cpp's NORM against NEOX)",
             "再旋转时用了另一种配对方式（interleaved 与 half 混用，即 llama.cpp 的 NORM 与 NEOX）",
             [](const Rr& p, const Run& run) { return p.shift != 0 && p.dim > 2 ? rerotated_as(p, run, other(p.style), by_shift) : Tensor{}; }},
            {"not_rerotated", "k_rerotated", "the cache moved without rotating its keys: they keep the angles of their old positions",
             "缓存移动了，键却没有再旋转：它们保留旧位置的角度",
             [](const Rr& p, const Run& run) {
                 if (p.shift == 0) return Tensor{};
                 Tensor t = run.at("k_rot");
                 t.name = "k_rerotated";
                 return t;
             }}};
}

std::vector<OptionRow<Rr>> rerotate_options()
{
    using P = Rr;
    return {option<P>("--len", "Cached keys L, at positions 0 .. L-1", &P::len, whole_range(1, 1L << 20)),
            option<P>("--dim", "Per-head dimension d (even)", &P::dim, whole_range(2, 1L << 16)),
            option<P>("--heads", "Heads H", &P::heads, whole_range(1, 1024)),
            option<P>("--batch", "Batch size B", &P::batch, whole_range(1, 1024)),
            option<P>("--shift", "Δ: every cached key moves from position m to m + Δ (negative after an eviction)", &P::shift,
                      whole_range(-(1L << 22), 1L << 22)),
            option<P>("--base", "Base of theta_i = base^(-2i/d)", &P::base, positive()),
            option<P>("--style", "interleaved: pairs (2i, 2i+1) (RoFormer, GPT-J, the articles); half: (i, i+d/2) "
                                 "(rotate_half: GPT-NeoX, Llama, Hugging Face)",
                      &P::style)};
}

void validate_rerotate(const Rr& p)
{
    if (p.dim % 2 != 0) throw InputError(fmt::format("--dim must be even: RoPE rotates pairs (got {})", p.dim));
    if (!(p.base > 1.0)) throw InputError(fmt::format("--base must be above 1 (got {})", p.base));
}

// Random valid parameters for the random tests.
Rr sample_rerotate(Rng& rng)
{
    Rr p;
    p.len = between(rng, 1, 12), p.dim = 2 * between(rng, 1, 8), p.heads = between(rng, 1, 3), p.batch = between(rng, 1, 2);
    p.shift = between(rng, -12, 12), p.style = rng.below(2) ? RopeStyle::half : RopeStyle::interleaved;
    p.base = rng.below(2) ? 10000.0 : 500000.0;
    return p;
}

Experiment<Rr> make_rerotate_experiment()
{
    Experiment<Rr> e;
    e.command = "rerotate";
    e.summary = "Moving a RoPE key cache: a cached key rotated once more by Δ is the key at m + Δ (llama.cpp's context shift, Hugging Face's SinkCache)";
    e.example = "attnlab rerotate --len 6 --shift -2 --show k_rerotated,k_rot_shifted";
    e.options = rerotate_options();
    e.main_tensor = "k_rerotated";
    auto bhld = [](const Rr& p) { return std::vector<double>{dsize(p.batch), dsize(p.heads), dsize(p.len), dsize(p.dim)}; };
    const std::vector<std::string> axes = {"batch", "head", "pos", "dim"};
    e.tensors = {{"positions", {"pos"}, Need::always, [](const Rr& p) { return std::vector<double>{dsize(p.len)}; }, {}, {}},
                 {"theta", {"pair"}, Need::always, [](const Rr& p) { return std::vector<double>{dsize(p.dim / 2)}; }, {}, {}},
                 {"k", axes, Need::always, bhld, {}, {}},
                 {"k_rot", axes, Need::always, bhld, {}, {}},
                 {"k_rerotated", axes, Need::always, bhld, {}, {}},
                 {"k_rot_shifted", axes, Need::always, bhld, {}, {}}};
    e.validate = validate_rerotate;
    // Three rotations of every key (each pair four products and two sums), their caches' sin
    // and cos, and the checks' passes.
    e.work = [](const Rr& p, const Plan&) { return dsize(p.batch) * dsize(p.heads) * dsize(p.len) * dsize(p.dim) * 20.0; };
    e.work_what = [](const Rr& p) { return fmt::format("{} keys of {} dimensions", p.batch * p.heads * p.len, p.dim); };
    e.inputs = {"k"};
    e.mistakes = rerotate_mistakes();
    e.sample = sample_rerotate;
    e.set_typed([](auto t) { return rerotate_typed<typename decltype(t)::type>(); });
    return e;
}

}  // namespace

const Experiment<RerotateParams>& rerotate_experiment()
{
    static const Experiment<RerotateParams> e = make_rerotate_experiment();
    return e;
}

Report run_rerotate(const RerotateParams& p, const RunContext& ctx) { return run_experiment(rerotate_experiment(), p, ctx); }

std::vector<std::string> rerotate_command(const RerotateParams& p) { return command_of(rerotate_experiment(), p); }

}  // namespace attnlab

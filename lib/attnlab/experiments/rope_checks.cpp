// `rope`'s checks and notes: each claim beside the measurement that judges it.
#include "attnlab/experiments/rope_internal.hpp"

#include "attnlab/core/error_model.hpp"
#include "attnlab/core/measure.hpp"
#include "attnlab/core/rng.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace attnlab::rope_detail {

namespace {

std::size_t vectors_of(const Tensor& x) { return x.size() / x.shape.back(); }

std::optional<Check> check_pos0(const RopeParams& p, const Run& run, const CheckEnv& env)
{
    const Tensor& q = run.at("q");
    const Tensor& q_rot = run.at("q_rot");
    const std::size_t d = q.shape.back(), L = static_cast<std::size_t>(p.len);
    const std::vector<long> positions = positions_of(run);
    if (std::find(positions.begin(), positions.end(), 0L) == positions.end()) return std::nullopt;
    double worst = 0.0;
    for (std::size_t row = 0; row < vectors_of(q); ++row)  // the tokens at position 0, of every (batch, head)
        if (positions[row % L] == 0)
            for (std::size_t j = 0; j < d; ++j) worst = worse(worst, diff_nan_rule(q_rot.values[row * d + j], q.values[row * d + j]));
    return exact_zero(tr(env, "position 0 is left unchanged (cos 0 = 1, sin 0 = 0)", "位置 0 保持不变（cos 0 = 1，sin 0 = 0）"), "max |q_rot[pos 0] - q[pos 0]|", worst);
}

std::optional<Check> check_norm(const RopeParams&, const Run& run, const CheckEnv& env)
{
    const Tensor& q = run.at("q");
    const Tensor& q_rot = run.at("q_rot");
    const std::size_t d = q.shape.back();
    double worst = 0.0;
    for (std::size_t row = 0; row < vectors_of(q); ++row) {
        double n_in = 0.0, n_out = 0.0;
        for (std::size_t j = 0; j < d; ++j) {
            n_in += q.values[row * d + j] * q.values[row * d + j];
            n_out += q_rot.values[row * d + j] * q_rot.values[row * d + j];
        }
        if (n_in > 0.0 || std::isnan(n_out)) worst = worse(worst, std::abs(std::sqrt(n_out) - std::sqrt(n_in)) / std::sqrt(n_in));
    }
    return at_most(tr(env, "every vector's norm is preserved", "每个向量的范数保持不变"), "max | |q_rot| - |q| | / |q|", worst, 8.0 * env.eps, 1.0);
}

std::optional<Check> check_passthrough(const RopeParams& p, const Run& run, const CheckEnv& env)
{
    if (rotary(p) >= p.dim) return std::nullopt;
    const Tensor& q = run.at("q");
    const Tensor& q_rot = run.at("q_rot");
    const std::size_t d = q.shape.back();
    double worst = 0.0;
    for (std::size_t row = 0; row < vectors_of(q); ++row)
        for (std::size_t j = static_cast<std::size_t>(rotary(p)); j < d; ++j)
            worst = worse(worst, diff_nan_rule(q_rot.values[row * d + j], q.values[row * d + j]));
    return exact_zero(tr(env, "dimensions {}..{} pass through unrotated", "第 {}..{} 维原样通过、不旋转", rotary(p), p.dim - 1),
                      tr(env, "max |q_rot - q| there", "这些维上的 max |q_rot - q|"), worst);
}

template <class T>
std::optional<Check> check_orthogonal(const RopeParams& p, const Run& run, const CheckEnv& env)
{
    const RopeCache<T> cache = rope_cache<T>(p.len, theta_of(run));
    double worst = 0.0;
    for (std::size_t i = 0; i < cache.cos.size(); ++i) {
        const double c = cache.cos.data()[i], s = cache.sin.data()[i];
        worst = worse(worst, std::abs(c * c + s * s - 1.0));
    }
    return at_most(tr(env, "each 2x2 block rotation is orthogonal", "每个 2x2 分块旋转都是正交的"), "max |cos^2 + sin^2 - 1|", worst, 4.0 * env.eps, 1.0);
}

std::string pair_scope(const RopeParams& p, const CheckEnv& env)
{
    const std::size_t NP = sampled_positions(p.len).size();
    return NP == static_cast<std::size_t>(p.len) ? tr(env, "over all pairs", "全部位置对") : tr(env, "over {} sampled positions", "抽样的 {} 个位置", NP);
}

double theta_max(const std::vector<double>& theta)
{
    return theta.empty() ? 0.0 : *std::max_element(theta.begin(), theta.end());
}

template <class T>
std::optional<Check> check_composes(const RopeParams& p, const Run& run, const CheckEnv& env)
{
    // R(m)^T R(n) = R(n - m): cos(n-m) = c_m c_n + s_m s_n, sin(n-m) = c_m s_n - s_m c_n.
    const RopeCache<T> cache = rope_cache<T>(p.len, theta_of(run));
    const auto positions = sampled_positions(p.len);
    double worst = 0.0;
    for (long m : positions)
        for (long n : positions) {
            const long delta = std::abs(n - m);
            const double sign = n >= m ? 1.0 : -1.0;
            for (std::size_t i = 0; i < cache.cos.shape(1); ++i) {
                const double cm = cache.cos(m, i), sm = cache.sin(m, i), cn = cache.cos(n, i), sn = cache.sin(n, i);
                const double cd = cache.cos(delta, i), sd = sign * static_cast<double>(cache.sin(delta, i));
                worst = worse(worse(worst, std::abs(cm * cn + sm * sn - cd)), std::abs(cm * sn - sm * cn - sd));
            }
        }
    // Each cached angle m theta is off by a m theta (a: the angle's relative error), so the
    // left side rotates by n - m plus at most a (m + n) theta, the right by a |n - m| theta:
    // together a 2 max(m, n) theta <= 2 a (L-1) theta_max. Each stored cos and sin adds u,
    // each side two of them, and the float64 products nothing that counts: 6u.
    const double tol = 2.0 * angle_rel_error(env.dtype, dsize(p.len - 1)) * dsize(p.len - 1) * theta_max(theta_of(run)) + 6.0 * unit_roundoff(env.dtype);
    return at_most(tr(env, "R(m)^T R(n) = R(n - m) for all m, n", "对所有 m, n，R(m)^T R(n) = R(n - m)"), tr(env, "max element error, {}", "最大元素误差，{}", pair_scope(p, env)), worst,
                   tol, 1.0);
}

// Bound on |q_m.k_n - q^T R(n-m) k|: the cached angles m theta_i and n theta_i are off by
// a m theta_i and a n theta_i (a: the angle's relative error), which moves pair i's product
// by at most |q_i| |k_i| a (m + n) theta_i <= |q_i| |k_i| a 2(L-1) theta_i. Each rotated
// element takes three roundings and a stored cos or sin, about 6u |pair|, in each of the two
// vectors, and the float64 dot nothing that counts: 16u |q_i| |k_i| with room. Pass-through
// dimensions add the rounding of their products.
template <class T>
double dot_tolerance(const RopeParams& p, const std::vector<double>& theta, const std::vector<T>& q0, const std::vector<T>& k0,
                     const CheckEnv& env)
{
    const long P = rotary(p) / 2;
    const double reach = 2.0 * dsize(p.len - 1), a = angle_rel_error(env.dtype, dsize(p.len - 1)), u = unit_roundoff(env.dtype);
    double tol = 0.0;
    for (long i = 0; i < P; ++i) {
        const auto [ia, ib] = rope_pair(p.style, i, P);
        const double nq = std::hypot(static_cast<double>(q0[ia]), static_cast<double>(q0[ib]));
        const double nk = std::hypot(static_cast<double>(k0[ia]), static_cast<double>(k0[ib]));
        tol += nq * nk * (a * reach * theta[static_cast<std::size_t>(i)] + 16.0 * u);
    }
    for (long j = rotary(p); j < p.dim; ++j) tol += std::abs(static_cast<double>(q0[j]) * k0[j]) * 4.0 * env.eps;
    return tol;
}

// The size of a score q_m . k_n: at most |q||k| (rotation keeps the norms).
template <class T>
double dot_scale(const std::vector<T>& q0, const std::vector<T>& k0)
{
    return std::sqrt(dot(q0, q0) * dot(k0, k0));
}

// q^T R(delta) k with the angle delta * theta_i taken exactly (in double).
template <class T>
double relative_rotation_dot(const RopeParams& p, const std::vector<double>& theta, const std::vector<T>& q0, const std::vector<T>& k0,
                             double delta)
{
    const long P = rotary(p) / 2;
    double ref = 0.0;
    for (long i = 0; i < P; ++i) {
        const auto [ia, ib] = rope_pair(p.style, i, P);
        const double ang = delta * theta[static_cast<std::size_t>(i)];
        const double c = std::cos(ang), s = std::sin(ang);
        const double x0 = q0[ia], x1 = q0[ib], y0 = k0[ia], y1 = k0[ib];
        ref += x0 * (y0 * c - y1 * s) + x1 * (y0 * s + y1 * c);
    }
    for (long j = rotary(p); j < p.dim; ++j) ref += static_cast<double>(q0[j]) * k0[j];
    return ref;
}

// dots[a][b] = q_m . k_n for the sampled positions m = positions[a], n = positions[b].
template <class T>
Mat<double> sampled_dots(const RopeParams& p, const std::vector<double>& theta, const std::vector<T>& q0, const std::vector<T>& k0,
                         const std::vector<long>& positions)
{
    const RopeCache<T> cache = rope_cache<T>(p.len, theta);
    const std::size_t NP = positions.size();
    std::vector<std::vector<T>> qs, ks;
    for (long m : positions) qs.push_back(rotated_at(p, cache, q0, m)), ks.push_back(rotated_at(p, cache, k0, m));
    Mat<double> dots = xt::zeros<double>({NP, NP});
    for (std::size_t a = 0; a < NP; ++a)
        for (std::size_t b = 0; b < NP; ++b) dots(a, b) = dot(qs[a], ks[b]);
    return dots;
}

template <class T>
std::optional<Check> check_dot_relative(const RopeParams& p, const Run& run, const CheckEnv& env)
{
    const auto q0 = first_vector<T>(run.at("q")), k0 = first_vector<T>(run.at("k"));
    const auto positions = sampled_positions(p.len);
    const Mat<double> dots = sampled_dots(p, theta_of(run), q0, k0, positions);
    double worst = 0.0;
    for (std::size_t a = 0; a < positions.size(); ++a)
        for (std::size_t b = 0; b < positions.size(); ++b) {
            const double ref = relative_rotation_dot(p, theta_of(run), q0, k0, static_cast<double>(positions[b] - positions[a]));
            worst = worse(worst, std::abs(dots(a, b) - ref));
        }
    return at_most(tr(env, "q_m . k_n = q^T R(n - m) k for all m, n", "对所有 m, n，q_m . k_n = q^T R(n - m) k"), fmt::format("max |q_m.k_n - q^T R(n-m) k|, {}", pair_scope(p, env)),
                   worst, dot_tolerance(p, theta_of(run), q0, k0, env), dot_scale(q0, k0));
}

// "Attention 的两个补丁" 学习重点 writes the score as q_m^T R((m-n)θ) k_n; its §3.1 derives
// R((n-m)θ), the rotation q_m . k_n = q^T R(m)^T R(n) k carries. The two differ in sign of the
// angle, so for q and k that are not mirror images they give different scores. What it means,
// the score depends on the offset alone with §3.1's sign, is the intended figure.
template <class T>
std::optional<Check> check_relative_sign(const RopeParams& p, const Run& run, const CheckEnv& env)
{
    const auto q0 = first_vector<T>(run.at("q")), k0 = first_vector<T>(run.at("k"));
    const auto positions = sampled_positions(p.len);
    const Mat<double> dots = sampled_dots(p, theta_of(run), q0, k0, positions);
    double as_written = 0.0, as_derived = 0.0;
    for (std::size_t a = 0; a < positions.size(); ++a)
        for (std::size_t b = 0; b < positions.size(); ++b) {
            const auto offset = static_cast<double>(positions[b] - positions[a]);
            as_written = worse(as_written, std::abs(dots(a, b) - relative_rotation_dot(p, theta_of(run), q0, k0, -offset)));
            as_derived = worse(as_derived, std::abs(dots(a, b) - relative_rotation_dot(p, theta_of(run), q0, k0, offset)));
        }
    const double tol = dot_tolerance(p, theta_of(run), q0, k0, env);
    const Check words = article_claim_numeric(tr(env, "q_m . k_n = q^T R((m - n) theta) k, as the learning points write it", "q_m . k_n = q^T R((m - n) theta) k，如学习重点所写"),
                                              fmt::format("max |q_m.k_n - q^T R(m-n) k|, {}", pair_scope(p, env)), as_written, tol, dot_scale(q0, k0));
    return meaning(quoting(words, "q_m^T R((m-n)θ) k_n",
                           tr(env, "the score depends on the relative position alone, with the angle (n - m) theta that §3.1 derives",
                              "得分只取决于相对位置，角度是 §3.1 推出的 (n - m) theta")),
                   "max |q_m.k_n - q^T R(n-m) k|", as_derived, tol);
}

// Relative position only: for each offset, the spread of q_m . k_{m+offset} over m.
template <class T>
std::optional<Check> check_relative_only(const RopeParams& p, const Run& run, const CheckEnv& env)
{
    const auto q0 = first_vector<T>(run.at("q")), k0 = first_vector<T>(run.at("k"));
    const auto positions = sampled_positions(p.len);
    const Mat<double> dots = sampled_dots(p, theta_of(run), q0, k0, positions);
    std::map<long, std::pair<double, double>> by_offset;
    for (std::size_t a = 0; a < positions.size(); ++a)
        for (std::size_t b = 0; b < positions.size(); ++b) {
            auto [it, fresh] = by_offset.try_emplace(positions[b] - positions[a], dots(a, b), dots(a, b));
            it->second.first = std::min(it->second.first, dots(a, b));
            it->second.second = std::max(it->second.second, dots(a, b));
        }
    double worst = 0.0;
    for (const auto& [offset, range] : by_offset) worst = worse(worst, range.second - range.first);
    const std::string under =
        p.scaling.method == RopeScaling::none ? "" : tr(env, " (under {} scaling)", "（{} 缩放下）", name_of(p.scaling.method));
    return at_most(tr(env, "q_m . k_n depends on m - n alone{}", "q_m . k_n 只取决于 m - n{}", under),
                   tr(env, "max over offsets of the spread over m", "各偏移上随 m 变化幅度的最大值"), worst,
                   2.0 * dot_tolerance(p, theta_of(run), q0, k0, env), dot_scale(q0, k0));
}

// interleaved and half: the same rotation up to a fixed permutation of dimensions.
template <class T>
std::optional<Check> check_styles(const RopeParams& p, const Run& run, const CheckEnv& env)
{
    const RopeCache<T> cache = rope_cache_at<T>(positions_of(run), theta_of(run));
    const auto perm = half_to_interleaved(p.dim, rotary(p));
    const Tensor& q = run.at("q");
    const auto d = static_cast<std::size_t>(p.dim), L = static_cast<std::size_t>(p.len), P = cache.cos.shape(1);
    double worst = 0.0, max_in = 0.0;
    std::vector<T> x_half(d), x_int(d), out_half(d), out_int(d);
    for (std::size_t row = 0; row < vectors_of(q); ++row) {
        const std::size_t m = row % L;
        for (std::size_t j = 0; j < d; ++j) x_half[j] = static_cast<T>(q.values[row * d + j]);
        for (std::size_t j = 0; j < d; ++j) x_int[j] = x_half[static_cast<std::size_t>(perm[j])];
        rope_rotate(x_half.data(), out_half.data(), p.dim, rotary(p), cache.cos.data() + m * P, cache.sin.data() + m * P, RopeStyle::half, Direction::forward);
        rope_rotate(x_int.data(), out_int.data(), p.dim, rotary(p), cache.cos.data() + m * P, cache.sin.data() + m * P, RopeStyle::interleaved, Direction::forward);
        for (std::size_t j = 0; j < d; ++j) {
            worst = worse(worst, diff_nan_rule(out_int[j], out_half[static_cast<std::size_t>(perm[j])]));
            max_in = worse(max_in, std::abs(static_cast<double>(x_half[j])));
        }
    }
    return at_most(tr(env, "interleaved and half pairing are the same rotation up to a fixed permutation of the dimensions",
                      "交错配对与半分配对是同一个旋转，只差一个固定的维度置换"),
                   "max |rot_interleaved(Px) - P rot_half(x)|", worst, 2.0 * env.eps * max_in, max_in);
}

// Complex form: (x_a + i x_b) e^{i m theta_i}, as torch.view_as_complex implementations do.
template <class T>
std::optional<Check> check_complex(const RopeParams& p, const Run& run, const CheckEnv& env)
{
    const RopeCache<T> cache = rope_cache_at<T>(positions_of(run), theta_of(run));
    const Tensor& q = run.at("q");
    const Tensor& q_rot = run.at("q_rot");
    const auto d = static_cast<std::size_t>(p.dim), L = static_cast<std::size_t>(p.len);
    const long P = rotary(p) / 2;
    double worst = 0.0, max_in = 0.0;
    for (std::size_t row = 0; row < vectors_of(q); ++row)
        for (long i = 0; i < P; ++i) {
            const auto [a, b] = rope_pair(p.style, i, P);
            const std::complex<T> z(static_cast<T>(q.values[row * d + a]), static_cast<T>(q.values[row * d + b]));
            const std::complex<T> w = z * std::complex<T>(cache.cos(row % L, i), cache.sin(row % L, i));
            worst = worse(worse(worst, diff_nan_rule(w.real(), q_rot.values[row * d + a])), diff_nan_rule(w.imag(), q_rot.values[row * d + b]));
            max_in = worse(max_in, std::abs(static_cast<double>(z.real())) + std::abs(static_cast<double>(z.imag())));
        }
    return at_most(tr(env, "the rotation equals multiplying x_a + i x_b by e^{{i m theta}}", "旋转等于把 x_a + i x_b 乘以 e^{{i m theta}}"), "max |rotation - complex product|", worst,
                   2.0 * env.eps * max_in, max_in);
}

template <class T>
std::optional<Check> check_inverse(const RopeParams& p, const Run& run, const CheckEnv& env)
{
    const RopeCache<T> cache = rope_cache_at<T>(positions_of(run), theta_of(run));
    const Ten4<T> back = rope_apply(from_tensor<T, 4>(run.at("q_rot")), cache, rotary(p), p.style, Direction::inverse);
    const Tensor& q = run.at("q");
    return at_most(tr(env, "rotating back by -m theta restores the input (the inverse is the transpose)",
                      "按 -m theta 转回去即恢复输入（逆就是转置）"), "max |R(m)^T R(m) q - q|",
                   q.values.visit([&](const auto* qv) { return max_abs_diff(back.data(), qv, q.size()); }), 8.0 * env.eps * max_abs(q), max_abs(q));
}

std::optional<Check> check_angle_growth(const RopeParams&, const Run& run, const CheckEnv& env)
{
    return angle_error_growth(run.at("angle_error"), env);
}

template <class T>
std::optional<Check> check_angles(const RopeParams& p, const Run& run, const CheckEnv& env)
{
    // theta_i in T is off by up to about (ln(base) * 2i/r + ln(factor) + 4) eps relative
    // (the exponent's rounding is multiplied into the power), and the product m*theta_i
    // adds half an eps: the bound, pair by pair, at the largest position.
    const auto theta = theta_of(run);
    double tol = 0.0;
    for (std::size_t i = 0; i < theta.size(); ++i) {
        const double rel = std::abs(std::log(p.base)) * 2.0 * static_cast<double>(i) / dsize(rotary(p)) +
                           std::log(p.scaling.factor.value_or(1.0)) + 4.0;
        tol = std::max(tol, env.eps * dsize(p.len - 1) * theta[i] * (rel + 0.5));
    }
    AngleWorst worst;
    angle_errors<T>(p, theta_of(run), &worst);
    return at_most(tr(env, "angles m*theta in {} stay within their rounding bound up to position {}",
                      "{} 下的角度 m*theta 直到位置 {} 都在舍入误差界之内", name_of(env.dtype), p.len - 1),
                   "max |m*theta (dtype) - m*theta (exact)| in radians", worst.error, tol + 4.0 * env.eps, M_PI);
}

// YaRN: the factor times the rotation on both sides multiplies the rotated dimensions' part
// of every score by factor^2; pass-through dimensions (partial rotary) are not scaled, as in
// Hugging Face, which concatenates them back unchanged.
// Error model: a rotated element q_a cos + q_b sin takes up to 5 roundings (cos or sin, f cos,
// two products, the sum), each relative to |q_a cos| + |q_b sin| <= sqrt(2) |pair|, not to the
// element itself, which can cancel to near 0 (measuring against sum |q_j k_j| failed on valid
// input for that reason). Four such tensors enter q.k scaled - f^2 q.k, so the difference is
// at most 4 * 5u * sqrt(2) * sqrt(2) f^2 sum over pairs |q_pair||k_pair| <= 40u f^2 |q_r||k_r|
// (Cauchy-Schwarz over pairs; rotation keeps the norms). The figure is the difference over
// f^2 |q_r||k_r| plus the pass-through part sum |q_j k_j|; the bound is 40u = 20 eps.
std::optional<Check> check_yarn_factor(const RopeParams& p, const Run& run, const CheckEnv& env)
{
    if (!scales_cos_sin(p.scaling)) return std::nullopt;
    const double f2 = std::pow(param_number(run.derived, "attention_factor"), 2.0);
    const Tensor &q = run.at("q_rot"), &k = run.at("k_rot"), &qs = run.at("q_rot_scaled"), &ks = run.at("k_rot_scaled");
    const std::size_t d = q.shape.back(), r = static_cast<std::size_t>(rotary(p));
    double worst = 0.0;
    for (long m : sampled_positions(p.len))
        for (long n : sampled_positions(p.len)) {
            double dot_s = 0.0, expected = 0.0, q_norm2 = 0.0, k_norm2 = 0.0, pass = 0.0;
            for (std::size_t j = 0; j < d; ++j) {
                const std::size_t a = static_cast<std::size_t>(m) * d + j, b = static_cast<std::size_t>(n) * d + j;
                const double factor = j < r ? f2 : 1.0;
                dot_s += qs.values[a] * ks.values[b];
                expected += factor * q.values[a] * k.values[b];
                if (j < r) q_norm2 += q.values[a] * q.values[a], k_norm2 += k.values[b] * k.values[b];
                else pass += std::abs(q.values[a] * k.values[b]);
            }
            const double scale = f2 * std::sqrt(q_norm2 * k_norm2) + pass;
            worst = worse(worst, scale > 0.0 ? std::abs(dot_s - expected) / scale : std::abs(dot_s));
        }
    return at_most(tr(env,
                      "{}'s scaled rotation (Hugging Face's output) multiplies the rotated part of q_m . k_n by the "
                      "attention factor squared ({:.6g})",
                      "{} 的缩放旋转（Hugging Face 的输出）把 q_m . k_n 中旋转部分乘以注意力因子的平方（{:.6g}）",
                      p.scaling.method == RopeScaling::yarn ? "YaRN" : "LongRoPE", f2),
                   "max |q_m.k_n scaled - expected| / (f^2 |q_r||k_r| + pass-through sum |q_j k_j|), batch 0 head 0", worst, 20.0 * env.eps, 1.0);
}

// Columns j of the [n, d] rows (batch 0, head 0) at the sampled indices, as d vectors of n.
std::vector<std::vector<double>> sampled_columns(const Tensor& x, const std::vector<long>& rows)
{
    const std::size_t d = x.shape.back();
    std::vector<std::vector<double>> cols(d, std::vector<double>(rows.size()));
    for (std::size_t a = 0; a < rows.size(); ++a)
        for (std::size_t j = 0; j < d; ++j) cols[j][a] = x.values[static_cast<std::size_t>(rows[a]) * d + j];
    return cols;
}

// "Attention 的两个补丁" §3.3 (后果 3) and the §4.3 table: RoPE is "compatible with Linear
// Attention / KV Cache" compression, being applied to Q and K directly. Low-rank KV compression
// (DeepSeek-V2, §2.1.3) caches a position-free latent and folds the key's up-projection into
// the query's, which needs every score to be q_m^T A k_n for one position-free A. With RoPE the
// score is q_m^T R(n - m) k_n: the figure is what the best such A (least squares over the
// positions, batch 0 head 0) leaves of the score table S, relative to S. It takes up to
// kFoldPositions of the sampled positions, evenly spread, and needs twice d of them, or a d x d
// matrix could fit any table.
// Error model: a foldable S (no rotation between positions) is fitted exactly, so what is left
// is S's rounding, projected: each rotated element is off by up to 5u of its pair's norm
// (check_yarn_factor), so ||dS||_F <= 20 eps ||Q||_F ||K||_F; the fit itself, in double, adds
// 8 (n + d) eps(float64) of ||S||_F.
std::optional<Check> check_rope_absorbs(const RopeParams& p, const Run& run, const CheckEnv& env)
{
    const std::vector<long> rows = fold_positions(p.len);
    const Tensor &q = run.at("q"), &k = run.at("k"), &qr = run.at("q_rot"), &kr = run.at("k_rot");
    const std::size_t n = rows.size(), d = q.shape.back();
    if (n < 2 * d) return std::nullopt;
    const auto qc = sampled_columns(qr, rows), kc = sampled_columns(kr, rows);
    std::vector<double> S(n * n, 0.0);
    for (std::size_t j = 0; j < d; ++j)
        for (std::size_t a = 0; a < n; ++a)
            for (std::size_t b = 0; b < n; ++b) S[a * n + b] += qc[j][a] * kc[j][b];
    double s2 = 0.0, q2 = 0.0, k2 = 0.0;
    for (double v : S) s2 += v * v;
    for (std::size_t j = 0; j < d; ++j) q2 += dot(qc[j], qc[j]), k2 += dot(kc[j], kc[j]);
    if (s2 == 0.0 || !std::isfinite(s2)) return std::nullopt;  // nothing to fold (non-finite rotations fail the invariants)
    const double left = outside_span(S, n, orthonormal_span(sampled_columns(q, rows)), orthonormal_span(sampled_columns(k, rows)));
    const double tol = 20.0 * env.eps * std::sqrt(q2 * k2 / s2) + 8.0 * dsize(n + d) * std::numeric_limits<double>::epsilon();
    return quoting(article_claim_numeric(tr(env,
                                            "RoPE suits KV-cache compression (§3.3 后果 3): every score q_m . k_n is "
                                            "q_m^T A k_n for one position-free A, so the key's projection folds into the query's",
                                            "RoPE 适合 KV Cache 压缩（§3.3 后果 3）：每个得分 q_m . k_n 都是 q_m^T A k_n，A 与位置无关，"
                                            "于是键的投影可以并入查询的投影"),
                                         tr(env, "||S - q A k^T||_F / ||S||_F for the best position-free A, {} positions, batch 0 head 0",
                                            "最佳位置无关 A 下的 ||S - q A k^T||_F / ||S||_F，{} 个位置，batch 0 head 0", n),
                                         left / std::sqrt(s2), tol, 1.0),
                   "在 Q/K 维度变化的场景（如…KV Cache 压缩）…RoPE…更灵活",
                   tr(env,
                      "where Q and K are compressed to a low rank, RoPE fits better than an added PE; plain KV caching does work with RoPE "
                      "(decode shows it), and §4.3's linear-attention compatibility is RoFormer's own claim, not judged here",
                      "在 Q/K 被压缩为低秩的场景里，RoPE 比加在输入上的位置编码更合适；普通的 KV Cache 确实可以配合 RoPE（decode 展示了这一点），"
                      "§4.3 所说与线性注意力兼容是 RoFormer 自己的说法，这里不作判定"));
}

// "Attention 的两个补丁" FAQ Q17: trained at base 10000, Dynamic NTK "uses base 200000 at
// L = 8192 and 800000 at L = 32768". The article gives no factor s and no training length L0
// (it names Llama-2, trained on 4096). Hugging Face's formula, base * (s L / L0 - (s - 1))^(r/(r-2)),
// with this run's rotary dimension r and L0, is fitted over every s >= 1: the figure is the best
// fit, so that no choice of s the article left open is held against it.
struct Q17Fit {
    double error = 0.0;  // max |formula / FAQ - 1| over the two lengths
    double base_8192 = 0.0, base_32768 = 0.0;
};

Q17Fit q17_fit(const RopeParams& p, double s)
{
    RopeScalingParams scaling = p.scaling;
    scaling.factor = s;
    Q17Fit fit;
    fit.base_8192 = rope_frequencies<double>(rotary(p), 10000.0, scaling, 8192).base_used;
    fit.base_32768 = rope_frequencies<double>(rotary(p), 10000.0, scaling, 32768).base_used;
    fit.error = std::max(std::abs(fit.base_8192 / 200000.0 - 1.0), std::abs(fit.base_32768 / 800000.0 - 1.0));
    return fit;
}

// The s >= 1 minimising the error. Each length's error falls to 0 and then grows as s grows,
// so their maximum has one minimum: a ternary search over log s in [1, 10^6] finds it.
double q17_best_factor(const RopeParams& p)
{
    double lo = 0.0, hi = std::log(1e6);
    for (int step = 0; step < 200; ++step) {
        const double a = lo + (hi - lo) / 3.0, b = hi - (hi - lo) / 3.0;
        if (q17_fit(p, std::exp(a)).error <= q17_fit(p, std::exp(b)).error) hi = b;
        else lo = a;
    }
    return std::exp((lo + hi) / 2.0);
}

// The FAQ's bases are examples ("例如") written to one significant figure, so a formula base
// within kExampleTolerance of each is the example a reader would accept (200000 stands for
// 150000 to 250000). The fit is made for the run's training length L0 and for the lengths of
// Llama (2048) and Llama 2 (4096), the models Dynamic NTK was first applied to: the figure
// is the best of them, and the row shows each.
constexpr double kExampleTolerance = 0.25;

std::optional<Check> check_faq_q17(const RopeParams& p, const Run&, const CheckEnv& env)
{
    if (p.scaling.method != RopeScaling::dynamic) return std::nullopt;
    std::vector<long> lengths = {2048, 4096};
    const long own_len = p.scaling.original_len.value_or(0);
    if (std::find(lengths.begin(), lengths.end(), own_len) == lengths.end()) lengths.insert(lengths.begin(), own_len);
    double best = std::numeric_limits<double>::infinity();
    std::vector<std::string> fits;
    for (const long L0 : lengths) {
        RopeParams at = p;
        at.scaling.original_len = L0;
        const double s = q17_best_factor(at);
        const Q17Fit fit = q17_fit(at, s);
        best = std::min(best, fit.error);
        fits.push_back(tr(env, "L0 = {}: {:.2g} (s = {:.3g}: {:.0f}, {:.0f})", "L0 = {}：{:.2g}（s = {:.3g}：{:.0f}，{:.0f}）", L0, fit.error, s,
                          fit.base_8192, fit.base_32768));
    }
    const Check words = article_claim(tr(env, "Dynamic NTK turns base 10000 into 200000 at L = 8192 and 800000 at L = 32768 (FAQ Q17)",
                                         "Dynamic NTK 在 L = 8192 时把 base 10000 变成 200000，L = 32768 时变成 800000（FAQ Q17）"),
                                      tr(env,
                                         "min over L0 and every factor s >= 1 of max |formula / FAQ - 1| at r = {} ({}); held to 0.25, "
                                         "the FAQ's example figures having one significant digit",
                                         "对 L0 和所有 s >= 1 取 max |公式 / FAQ - 1| 的最小值，r = {}（{}）；FAQ 的例子只有一位有效数字，按 0.25 评判",
                                         rotary(p), fmt::join(fits, tr(env, "; ", "；"))),
                                      best, kExampleTolerance);
    return quoting(words, "L=8192 时用 base=200000",
                   tr(env, "Hugging Face's dynamic formula, for some training length and factor, gives bases of about these sizes",
                      "按 Hugging Face 的 dynamic 公式，取某个训练长度和缩放因子，得到的 base 大约就是这两个数"));
}

}  // namespace

template <class T>
std::vector<CheckDef<RopeParams>> rope_checks()
{
    return {{"pos0_unchanged", {"q", "q_rot"}, check_pos0},
            {"norm_preserved", {"q", "q_rot"}, check_norm},
            {"partial_passthrough", {"q", "q_rot"}, check_passthrough},
            {"blocks_orthogonal", {}, check_orthogonal<T>},
            {"rotation_composes", {}, check_composes<T>},
            {"dot_equals_relative_rotation", {"q", "k"}, check_dot_relative<T>},
            {"relative_position_only", {"q", "k"}, check_relative_only<T>},
            {"rope_relative_sign", {"q", "k"}, check_relative_sign<T>},
            {"styles_are_permutations", {"q"}, check_styles<T>},
            {"complex_form", {"q", "q_rot"}, check_complex<T>},
            {"inverse_restores", {"q", "q_rot"}, check_inverse<T>},
            {"angle_precision", {}, check_angles<T>},
            {"angle_error_grows", {"angle_error"}, check_angle_growth},
            {"yarn_scores_scale_by_factor_squared", {"q_rot", "k_rot", "q_rot_scaled", "k_rot_scaled"}, check_yarn_factor},
            {"faq_q17_dynamic_ntk_bases", {}, check_faq_q17},
            {"rope_absorbs_into_kv_compression", {"q", "k", "q_rot", "k_rot"}, check_rope_absorbs}};
}

namespace {

// --- notes ---

template <class T>
std::optional<std::string> note_angles(const RopeParams& p, const Run& run, const CheckEnv& env)
{
    AngleWorst worst;
    angle_errors<T>(p, theta_of(run), &worst);
    return tr(env, "largest angle error in {}: {:.3g} rad ({:.3g} degrees) at position {}, pair {}",
              "{} 下最大的角度误差：{:.3g} 弧度（{:.3g} 度），位于位置 {}、第 {} 对", name_of(env.dtype), worst.error,
              worst.error * 180.0 / static_cast<double>(kPi), worst.pos, worst.pair);
}

template <class T>
std::optional<std::string> note_scaling(const RopeParams& p, const Run& run, const CheckEnv& env)
{
    if (p.scaling.method == RopeScaling::none) return std::nullopt;
    const RopeFrequencies& f = resolved_as<RopeFrequencies>(run);
    return tr(env, "{} scaling: base used {:.6g}, attention factor {:.6g}{}", "{} 缩放：实际 base {:.6g}，注意力因子 {:.6g}{}",
              name_of(p.scaling.method), f.base_used, f.attention_factor,
              f.attention_factor == 1.0 ? std::string()
                                        : tr(env,
                                             " (Hugging Face multiplies cos and sin by it, so scores scale by its square: "
                                             "q_rot_scaled and k_rot_scaled; q_rot and k_rot are the pure rotation)",
                                             "（Hugging Face 把 cos 和 sin 乘以它，得分因此乘以它的平方：见 q_rot_scaled 与 k_rot_scaled；"
                                             "q_rot 与 k_rot 是纯旋转）"));
}

std::optional<std::string> note_example(const RopeParams& p, const Run&, const CheckEnv& env)
{
    if (!p.example) return std::nullopt;
    return p.style == RopeStyle::interleaved
               ? tr(env,
                    "example: every query and key is (1, 0, 1, 0); with theta = (1, 0.01) and pairs (0, 1), (2, 3), "
                    "q_rot at position m is (cos m, sin m, cos 0.01m, sin 0.01m)",
                    "示例：每个查询和键都是 (1, 0, 1, 0)；theta = (1, 0.01)，配对 (0, 1), (2, 3)，"
                    "位置 m 处的 q_rot 是 (cos m, sin m, cos 0.01m, sin 0.01m)")
               : tr(env,
                    "example: every query and key is (1, 0, 1, 0); with theta = (1, 0.01) and pairs (0, 2), (1, 3), "
                    "q_rot at position m is (cos m - sin m, 0, sin m + cos m, 0)",
                    "示例：每个查询和键都是 (1, 0, 1, 0)；theta = (1, 0.01)，配对 (0, 2), (1, 3)，"
                    "位置 m 处的 q_rot 是 (cos m - sin m, 0, sin m + cos m, 0)");
}

}  // namespace

template <class T>
std::vector<NoteFn<RopeParams>> rope_notes()
{
    return {note_angles<T>, note_scaling<T>, note_example};
}

#define ATTNLAB_ROPE_CHECKS(T)                                   \
    template std::vector<CheckDef<RopeParams>> rope_checks<T>(); \
    template std::vector<NoteFn<RopeParams>> rope_notes<T>();
ATTNLAB_ROPE_CHECKS(float)
ATTNLAB_ROPE_CHECKS(double)
ATTNLAB_ROPE_CHECKS(f16)
ATTNLAB_ROPE_CHECKS(bf16)

}  // namespace attnlab::rope_detail

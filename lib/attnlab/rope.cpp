#include "attnlab/rope.hpp"

#include "attnlab/measure.hpp"
#include "attnlab/rng.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <map>

namespace attnlab {

namespace {

constexpr long double kPi = 3.141592653589793238462643383279502884L;

// The frequency formulas once, for any floating type F (T for the computation, long double
// for the exact reference), so the two can differ only in rounding.
template <class F>
std::vector<F> frequencies_in(long r, double base_in, const RopeScalingParams& s, long len, F* attention_factor,
                              F* base_used)
{
    const long P = r / 2;
    const F two_i_over_r_step = F(2);
    F base = static_cast<F>(base_in);
    const F factor = static_cast<F>(s.factor.value_or(1.0));
    const F L0 = static_cast<F>(s.original_len.value_or(1));
    const F exponent = static_cast<F>(r) / static_cast<F>(r - 2);  // r/(r-2), ntk and dynamic
    if (s.method == RopeScaling::ntk) {
        base = base * std::pow(factor, exponent);
    } else if (s.method == RopeScaling::dynamic) {
        // HF _compute_dynamic_ntk_parameters: seq_len = max(L, L0).
        const F seq = std::max(static_cast<F>(len), L0);
        base = base * std::pow(factor * seq / L0 - (factor - F(1)), exponent);
    }
    *base_used = base;
    *attention_factor = F(1);
    // theta_i = 1 / base^(2i/r), as 1.0 / (base ** (arange(0, r, 2).float() / r)).
    std::vector<F> theta(static_cast<std::size_t>(P));
    for (long i = 0; i < P; ++i) {
        theta[static_cast<std::size_t>(i)] =
            F(1) / std::pow(base, two_i_over_r_step * static_cast<F>(i) / static_cast<F>(r));
    }
    switch (s.method) {
    case RopeScaling::none:
    case RopeScaling::ntk:
    case RopeScaling::dynamic: break;
    case RopeScaling::linear:
        for (auto& t : theta) t = t / factor;
        break;
    case RopeScaling::yarn: {
        // HF _compute_yarn_parameters (= llama.cpp's ggml_rope_yarn_corr_dims and ramp):
        // pairs that turn more than beta_fast times over L0 keep theta (extrapolation),
        // pairs that turn fewer than beta_slow times are interpolated (theta / factor),
        // a linear ramp over the pair index in between.
        auto correction_dim = [&](F rotations) {
            return static_cast<F>(r) * std::log(L0 / (rotations * F(2) * static_cast<F>(kPi))) /
                   (F(2) * std::log(base));
        };
        F low = std::floor(correction_dim(static_cast<F>(s.beta_fast)));
        F high = std::ceil(correction_dim(static_cast<F>(s.beta_slow)));
        low = std::max(low, F(0));
        high = std::min(high, static_cast<F>(r - 1));
        if (low == high) high += F(0.001);
        for (long i = 0; i < P; ++i) {
            auto& t = theta[static_cast<std::size_t>(i)];
            const F ramp = std::clamp((static_cast<F>(i) - low) / (high - low), F(0), F(1));
            const F extrapolation = F(1) - ramp;
            const F interpolated = t / factor;
            t = interpolated * (F(1) - extrapolation) + t * extrapolation;
        }
        *attention_factor = s.attention_factor
                                ? static_cast<F>(*s.attention_factor)
                                : (factor <= F(1) ? F(1) : F(0.1) * std::log(factor) + F(1));
        break;
    }
    case RopeScaling::llama3: {
        // HF _compute_llama3_parameters (Meta's apply_scaling for Llama 3.1).
        const F low_freq_wavelen = L0 / static_cast<F>(s.low_freq_factor);
        const F high_freq_wavelen = L0 / static_cast<F>(s.high_freq_factor);
        for (auto& t : theta) {
            const F wavelen = F(2) * static_cast<F>(kPi) / t;
            if (wavelen > low_freq_wavelen) {
                t = t / factor;
            } else if (!(wavelen < high_freq_wavelen)) {
                const F smooth = (L0 / wavelen - static_cast<F>(s.low_freq_factor)) /
                                 static_cast<F>(s.high_freq_factor - s.low_freq_factor);
                t = (F(1) - smooth) * t / factor + smooth * t;
            }
        }
        break;
    }
    }
    return theta;
}

}  // namespace

template <class T>
RopeFrequencies rope_frequencies(long rotary_dim, double base, const RopeScalingParams& s, long len)
{
    RopeFrequencies f;
    T attention = 1, base_used = 0;
    const auto theta = frequencies_in<T>(rotary_dim, base, s, len, &attention, &base_used);
    RopeScalingParams none;
    T unused_a = 1, unused_b = 0;
    const auto plain = frequencies_in<T>(rotary_dim, base, none, len, &unused_a, &unused_b);
    f.theta.assign(theta.begin(), theta.end());
    f.theta_unscaled.assign(plain.begin(), plain.end());
    f.attention_factor = static_cast<double>(attention);
    f.base_used = static_cast<double>(base_used);
    return f;
}

std::vector<long double> rope_frequencies_exact(long rotary_dim, double base, const RopeScalingParams& s, long len)
{
    long double a = 1, b = 0;
    return frequencies_in<long double>(rotary_dim, base, s, len, &a, &b);
}

template <class T>
RopeCache<T> rope_cache(long len, const std::vector<double>& theta)
{
    const auto L = static_cast<std::size_t>(len), P = theta.size();
    RopeCache<T> c{xt::zeros<T>({L, P}), xt::zeros<T>({L, P})};
    for (std::size_t m = 0; m < L; ++m)
        for (std::size_t i = 0; i < P; ++i) {
            const T angle = static_cast<T>(m) * static_cast<T>(theta[i]);  // m * theta_i, in T
            c.cos(m, i) = std::cos(angle);
            c.sin(m, i) = std::sin(angle);
        }
    return c;
}

template <class T>
void rope_rotate(const T* x, T* out, long d, long r, const T* cos_m, const T* sin_m, RopeStyle style, bool inverse)
{
    const long P = r / 2;
    for (long i = 0; i < P; ++i) {
        // the pair (a, b): (2i, 2i+1) interleaved, (i, i + r/2) half
        const auto [a, b] = rope_pair(style, i, P);
        const T c = cos_m[i];
        const T s = inverse ? -sin_m[i] : sin_m[i];
        const T xa = x[a], xb = x[b];
        out[a] = xa * c - xb * s;
        out[b] = xa * s + xb * c;
    }
    for (long j = r; j < d; ++j) out[j] = x[j];  // partial rotary: the rest passes through
}

template <class T>
Ten4<T> rope_apply(const Ten4<T>& x, const RopeCache<T>& cache, long rotary_dim, RopeStyle style, bool inverse)
{
    Ten4<T> out = xt::zeros<T>(x.shape());
    const std::size_t L = x.shape(2), d = x.shape(3), rows = x.shape(0) * x.shape(1);
    for (std::size_t row = 0; row < rows; ++row)
        for (std::size_t m = 0; m < L; ++m) {
            const std::size_t off = (row * L + m) * d;
            rope_rotate(x.data() + off, out.data() + off, static_cast<long>(d), rotary_dim,
                        cache.cos.data() + m * cache.cos.shape(1), cache.sin.data() + m * cache.sin.shape(1),
                        style, inverse);
        }
    return out;
}

std::vector<long> half_to_interleaved(long d, long r)
{
    std::vector<long> perm(static_cast<std::size_t>(d));
    const long P = r / 2;
    for (long i = 0; i < P; ++i) {
        perm[static_cast<std::size_t>(2 * i)] = i;
        perm[static_cast<std::size_t>(2 * i + 1)] = i + P;
    }
    for (long j = r; j < d; ++j) perm[static_cast<std::size_t>(j)] = j;
    return perm;
}

std::vector<double> rope_decay(const std::vector<double>& theta, long n)
{
    const std::size_t P = theta.size();
    std::vector<double> out(static_cast<std::size_t>(n));
    for (long dist = 0; dist < n; ++dist) {
        std::complex<double> partial = 0.0;  // S_j = sum_{k<j} e^{i dist theta_k}
        double total = 0.0;
        for (std::size_t k = 0; k < P; ++k) {
            partial += std::polar(1.0, static_cast<double>(dist) * theta[k]);
            total += std::abs(partial);
        }
        out[static_cast<std::size_t>(dist)] = P == 0 ? 0.0 : total / static_cast<double>(P);
    }
    return out;
}

double toeplitz_spread(const Mat<double>& dots)
{
    const long L = static_cast<long>(dots.shape(0));
    double worst = 0.0;
    for (long delta = -(L - 1); delta <= L - 1; ++delta) {
        double lo = std::numeric_limits<double>::infinity(), hi = -lo;
        for (long m = std::max(0L, -delta); m < L && m + delta < L; ++m) {
            lo = std::min(lo, dots(m, m + delta));
            hi = std::max(hi, dots(m, m + delta));
        }
        worst = std::max(worst, hi - lo);
    }
    return worst;
}

namespace {

void validate(const RopeParams& p)
{
    if (p.example_conflict) {
        throw InputError("--example fixes d = 4, 5 positions, one head and one sequence; drop --len, --dim, "
                         "--heads, --batch and --rotary-dim");
    }
    if (p.len < 1) throw InputError(fmt::format("--len must be at least 1 (got {})", p.len));
    if (p.dim < 2 || p.dim % 2 != 0) {
        throw InputError(fmt::format("--dim must be even and at least 2 (got {}): RoPE rotates pairs", p.dim));
    }
    if (p.heads < 1 || p.batch < 1) throw InputError("--heads and --batch must be at least 1");
    if (!(p.base > 0.0) || !std::isfinite(p.base) || p.base == 1.0) {
        throw InputError(fmt::format("--base must be a positive number other than 1 (got {})", p.base));
    }
    const long r = p.rotary_dim.value_or(p.dim);
    if (r < 2 || r % 2 != 0 || r > p.dim) {
        throw InputError(fmt::format("--rotary-dim must be even, at least 2 and at most --dim {} (got {})", p.dim, r));
    }
    const auto& s = p.scaling;
    const std::string method = name_of(s.method);
    if (s.method == RopeScaling::none) {
        if (s.factor || s.original_len) {
            throw InputError("--factor and --original-len apply to a --scaling method (linear, ntk, dynamic, yarn, llama3)");
        }
        return;
    }
    if (!s.factor) throw InputError(fmt::format("--scaling {} needs --factor", method));
    if (!(*s.factor >= 1.0) || !std::isfinite(*s.factor)) {
        throw InputError(fmt::format("--factor must be at least 1 for --scaling {} (got {})", method, *s.factor));
    }
    const bool needs_l0 = s.method == RopeScaling::dynamic || s.method == RopeScaling::yarn ||
                          s.method == RopeScaling::llama3;
    if (needs_l0 && !s.original_len) {
        throw InputError(fmt::format("--scaling {} needs --original-len (the context the model was trained on)", method));
    }
    if (s.original_len && *s.original_len < 1) {
        throw InputError(fmt::format("--original-len must be at least 1 (got {})", *s.original_len));
    }
    if ((s.method == RopeScaling::ntk || s.method == RopeScaling::dynamic) && r < 4) {
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

// Positions the all-pairs checks visit: all of them up to 1024, else the first 128, the last
// 128 and 256 spread evenly between (so both ends of a long context are always measured).
std::vector<long> check_positions(long len)
{
    std::vector<long> pos;
    if (len <= 1024) {
        for (long m = 0; m < len; ++m) pos.push_back(m);
        return pos;
    }
    for (long m = 0; m < 128; ++m) pos.push_back(m);
    for (long k = 1; k <= 256; ++k) pos.push_back(128 + k * (len - 256) / 257);
    for (long m = len - 128; m < len; ++m) pos.push_back(m);
    std::sort(pos.begin(), pos.end());
    pos.erase(std::unique(pos.begin(), pos.end()), pos.end());
    return pos;
}

template <class T>
Report run_rope_typed(const RopeParams& p_in, const RunContext& ctx)
{
    RopeParams p = p_in;
    if (p.example) {
        p.len = 5;
        p.dim = 4;
        p.heads = 1;
        p.batch = 1;
        p.rotary_dim.reset();
    }
    const long r = p.rotary_dim.value_or(p.dim);
    const long P = r / 2;
    const auto B = static_cast<std::size_t>(p.batch), H = static_cast<std::size_t>(p.heads),
               L = static_cast<std::size_t>(p.len), d = static_cast<std::size_t>(p.dim);

    Recorder rec("rope", "q_rot", ctx);
    auto& par = rec.params();
    par["len"] = p.len;
    par["dim"] = p.dim;
    par["heads"] = p.heads;
    par["batch"] = p.batch;
    par["base"] = p.base;
    par["style"] = name_of(p.style);
    par["rotary_dim"] = r;
    par["scaling"] = name_of(p.scaling.method);
    par["factor"] = p.scaling.factor ? nlohmann::ordered_json(*p.scaling.factor) : nullptr;
    par["original_len"] = p.scaling.original_len ? nlohmann::ordered_json(*p.scaling.original_len) : nullptr;
    if (p.scaling.method == RopeScaling::yarn) {
        par["beta_fast"] = p.scaling.beta_fast;
        par["beta_slow"] = p.scaling.beta_slow;
    }
    if (p.scaling.method == RopeScaling::llama3) {
        par["low_freq_factor"] = p.scaling.low_freq_factor;
        par["high_freq_factor"] = p.scaling.high_freq_factor;
    }
    par["example"] = p.example;

    // Memory: the four [B, H, L, d] tensors, the cache, and dots [L, L] when it is asked for.
    const double elem = sizeof(T) + sizeof(double);
    const double qk = static_cast<double>(B * H) * static_cast<double>(L) * static_cast<double>(d);
    double bytes = 5.0 * qk * elem + 4.0 * static_cast<double>(L) * static_cast<double>(P) * elem;
    const bool want_dots = rec.wants("dots");
    if (want_dots) bytes += static_cast<double>(L) * static_cast<double>(L) * 2.0 * elem;
    require_memory(bytes, ctx,
                   want_dots ? fmt::format("dots [{}, {}] among them; --show can leave it out", L, L)
                             : fmt::format("q, k and their rotations [{}, {}, {}, {}]", B, H, L, d));

    const Elem E = elem_of<T>();
    const double eps = eps_of(ctx.dtype);
    const RopeFrequencies freq = rope_frequencies<T>(r, p.base, p.scaling, p.len);
    par["attention_factor"] = freq.attention_factor;
    const RopeCache<T> cache = rope_cache<T>(p.len, freq.theta);
    double theta_max = 0.0;
    for (double t : freq.theta) theta_max = std::max(theta_max, t);
    // Rounding bound of an angle m * theta_i in T at the largest position, in radians.
    const double angle_slack = eps * static_cast<double>(L > 0 ? L - 1 : 0) * theta_max;

    // Inputs: seeded q, k, or the articles' example (every query and key (1, 0, 1, 0)).
    Ten4<T> q = xt::zeros<T>({B, H, L, d}), k = xt::zeros<T>({B, H, L, d});
    if (p.example) {
        for (std::size_t m = 0; m < L; ++m) {
            q(0, 0, m, 0) = 1, q(0, 0, m, 2) = 1;
            k(0, 0, m, 0) = 1, k(0, 0, m, 2) = 1;
        }
    } else {
        Rng rq(ctx.seed, stream::q), rk(ctx.seed, stream::k);
        for (auto& v : q) v = static_cast<T>(rq.normal());
        for (auto& v : k) v = static_cast<T>(rk.normal());
    }
    const Ten4<T> q_rot = rope_apply(q, cache, r, p.style);
    const Ten4<T> k_rot = rope_apply(k, cache, r, p.style);

    {
        Vec<T> theta_t = xt::zeros<T>({static_cast<std::size_t>(P)});
        for (long i = 0; i < P; ++i) theta_t(i) = static_cast<T>(freq.theta[static_cast<std::size_t>(i)]);
        rec.tensor("theta", {"pair"}, theta_t, E);
        if (p.scaling.method != RopeScaling::none) {
            Vec<T> un = xt::zeros<T>({static_cast<std::size_t>(P)});
            for (long i = 0; i < P; ++i) un(i) = static_cast<T>(freq.theta_unscaled[static_cast<std::size_t>(i)]);
            rec.tensor("theta_unscaled", {"pair"}, un, E);
        }
    }
    if (rec.wants("cache")) {
        Ten3<T> c = xt::zeros<T>({L, static_cast<std::size_t>(P), std::size_t{2}});
        xt::view(c, xt::all(), xt::all(), 0) = cache.cos;
        xt::view(c, xt::all(), xt::all(), 1) = cache.sin;
        rec.tensor("cache", {"pos", "pair", "cos_sin"}, c, E);
    }
    rec.tensor("q", {"batch", "head", "pos", "dim"}, q, E);
    rec.tensor("k", {"batch", "head", "pos", "dim"}, k, E);
    rec.tensor("q_rot", {"batch", "head", "pos", "dim"}, q_rot, E);
    rec.tensor("k_rot", {"batch", "head", "pos", "dim"}, k_rot, E);

    // The same q and k (the first token's) placed at every position: dots[m][n] = q_m . k_n.
    const std::vector<long> positions = check_positions(p.len);
    const std::size_t NP = positions.size();
    const std::string pair_scope = NP == L ? "over all pairs" : fmt::format("over {} sampled positions", NP);
    Mat<double> dots_sampled = xt::zeros<double>({NP, NP});
    std::vector<T> q0(d), k0(d);
    for (std::size_t j = 0; j < d; ++j) q0[j] = q(0, 0, 0, j), k0[j] = k(0, 0, 0, j);
    auto rotated_at = [&](const std::vector<T>& x, long m) {
        std::vector<T> out(d);
        rope_rotate(x.data(), out.data(), p.dim, r, cache.cos.data() + m * P, cache.sin.data() + m * P, p.style, false);
        return out;
    };
    auto dot = [&](const std::vector<T>& a, const std::vector<T>& b) {
        double s = 0.0;
        for (std::size_t j = 0; j < d; ++j) s += static_cast<double>(a[j]) * static_cast<double>(b[j]);
        return s;
    };
    {
        std::vector<std::vector<T>> qs, ks;
        for (long m : positions) qs.push_back(rotated_at(q0, m)), ks.push_back(rotated_at(k0, m));
        for (std::size_t a = 0; a < NP; ++a)
            for (std::size_t b = 0; b < NP; ++b) dots_sampled(a, b) = dot(qs[a], ks[b]);
    }
    if (want_dots) {
        Mat<T> dots = xt::zeros<T>({L, L});
        std::vector<std::vector<T>> ks;
        for (long n = 0; n < p.len; ++n) ks.push_back(rotated_at(k0, n));
        for (long m = 0; m < p.len; ++m) {
            const auto qm = rotated_at(q0, m);
            for (long n = 0; n < p.len; ++n) dots(m, n) = static_cast<T>(dot(qm, ks[static_cast<std::size_t>(n)]));
        }
        rec.tensor("dots", {"query_pos", "key_pos"}, dots, E);
    }
    if (rec.wants("decay")) {
        const auto decay = rope_decay(freq.theta, p.len);
        Vec<double> dv = xt::zeros<double>({L});
        for (std::size_t i = 0; i < L; ++i) dv(i) = decay[i];
        rec.tensor("decay", {"distance"}, dv, Elem::float64);
    }

    // Angle precision: m * theta_i rounded in T against the exact product in long double.
    const auto theta_exact = rope_frequencies_exact(r, p.base, p.scaling, p.len);
    double angle_err = 0.0;
    long worst_pos = 0, worst_pair = 0;
    Vec<double> angle_error = xt::zeros<double>({L});
    for (long m = 0; m < p.len; ++m) {
        double row_worst = 0.0;
        for (long i = 0; i < P; ++i) {
            const T angle = static_cast<T>(m) * static_cast<T>(freq.theta[static_cast<std::size_t>(i)]);
            const long double exact = static_cast<long double>(m) * theta_exact[static_cast<std::size_t>(i)];
            const double e = static_cast<double>(std::abs(static_cast<long double>(angle) - exact));
            row_worst = std::max(row_worst, e);
            if (e > angle_err) angle_err = e, worst_pos = m, worst_pair = i;
        }
        angle_error(m) = row_worst;
    }
    rec.tensor("angle_error", {"pos"}, angle_error, Elem::float64);

    // --- checks ---
    {
        double pos0 = 0.0;
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t j = 0; j < d; ++j)
                    pos0 = std::max(pos0, std::abs(static_cast<double>(q_rot(b, h, 0, j)) - static_cast<double>(q(b, h, 0, j))));
        rec.check({"pos0_unchanged", "position 0 is left unchanged (cos 0 = 1, sin 0 = 0)",
                   "max |q_rot[pos 0] - q[pos 0]|", pos0, 0.0, Compare::le, Role::invariant, TolKind::fixed});
    }
    {
        double worst = 0.0;
        for (std::size_t row = 0; row < B * H * L; ++row) {
            double n_in = 0.0, n_out = 0.0;
            for (std::size_t j = 0; j < d; ++j) {
                n_in += static_cast<double>(q.data()[row * d + j]) * static_cast<double>(q.data()[row * d + j]);
                n_out += static_cast<double>(q_rot.data()[row * d + j]) * static_cast<double>(q_rot.data()[row * d + j]);
            }
            if (n_in > 0.0) worst = std::max(worst, std::abs(std::sqrt(n_out) - std::sqrt(n_in)) / std::sqrt(n_in));
        }
        rec.check({"norm_preserved", "every vector's norm is preserved", "max | |q_rot| - |q| | / |q|", worst, 8.0 * eps});
    }
    if (r < p.dim) {
        double worst = 0.0;
        for (std::size_t row = 0; row < B * H * L; ++row)
            for (std::size_t j = static_cast<std::size_t>(r); j < d; ++j)
                worst = std::max(worst, std::abs(static_cast<double>(q_rot.data()[row * d + j]) -
                                                 static_cast<double>(q.data()[row * d + j])));
        rec.check({"partial_passthrough", fmt::format("dimensions {}..{} pass through unrotated", r, p.dim - 1),
                   "max |q_rot - q| there", worst, 0.0, Compare::le, Role::invariant, TolKind::fixed});
    }
    {
        double worst = 0.0;
        for (std::size_t i = 0; i < cache.cos.size(); ++i) {
            const double c = cache.cos.data()[i], s = cache.sin.data()[i];
            worst = std::max(worst, std::abs(c * c + s * s - 1.0));
        }
        rec.check({"blocks_orthogonal", "each 2x2 block rotation is orthogonal", "max |cos^2 + sin^2 - 1|", worst, 4.0 * eps});
    }
    {
        // R(m)^T R(n) = R(n - m): cos(n-m) = c_m c_n + s_m s_n, sin(n-m) = c_m s_n - s_m c_n.
        double worst = 0.0;
        for (long m : positions)
            for (long n : positions) {
                const long delta = std::abs(n - m);
                const double sign = n >= m ? 1.0 : -1.0;
                for (long i = 0; i < P; ++i) {
                    const double cm = cache.cos(m, i), sm = cache.sin(m, i), cn = cache.cos(n, i), sn = cache.sin(n, i);
                    const double cd = cache.cos(delta, i), sd = sign * static_cast<double>(cache.sin(delta, i));
                    worst = std::max({worst, std::abs(cm * cn + sm * sn - cd), std::abs(cm * sn - sm * cn - sd)});
                }
            }
        rec.check({"rotation_composes", "R(m)^T R(n) = R(n - m) for all m, n",
                   fmt::format("max element error, {}", pair_scope),
                   worst, 4.0 * angle_slack + 8.0 * eps});
    }
    // Bound on |q_m.k_n - q^T R(n-m) k|: rounding m*theta_i moves pair i's angle by at most
    // eps/2 * m * theta_i (and n's likewise), which moves that pair's product by at most
    // |q_i| |k_i| times the angle error; cos, sin and the products add a few eps more. Taken
    // with a factor 2 to spare, pair by pair.
    double dot_tol = 0.0;
    {
        const double reach = 2.0 * static_cast<double>(L > 0 ? L - 1 : 0);
        for (long i = 0; i < P; ++i) {
            const auto [a, b] = rope_pair(p.style, i, P);
            const double nq = std::hypot(static_cast<double>(q0[a]), static_cast<double>(q0[b]));
            const double nk = std::hypot(static_cast<double>(k0[a]), static_cast<double>(k0[b]));
            dot_tol += nq * nk * eps * (reach * freq.theta[static_cast<std::size_t>(i)] + 8.0);
        }
        for (long j = r; j < p.dim; ++j) dot_tol += std::abs(static_cast<double>(q0[j]) * k0[j]) * 4.0 * eps;
    }
    {
        // q_m . k_n against q^T R(n - m) k with the angle (n - m) theta_i taken exactly.
        double worst = 0.0;
        for (std::size_t a = 0; a < NP; ++a)
            for (std::size_t b = 0; b < NP; ++b) {
                const double delta = static_cast<double>(positions[b] - positions[a]);
                double ref = 0.0;
                for (long i = 0; i < P; ++i) {
                    const auto [ia, ib] = rope_pair(p.style, i, P);
                    const double ang = delta * freq.theta[static_cast<std::size_t>(i)];
                    const double c = std::cos(ang), s = std::sin(ang);
                    const double x0 = q0[ia], x1 = q0[ib], y0 = k0[ia], y1 = k0[ib];
                    ref += x0 * (y0 * c - y1 * s) + x1 * (y0 * s + y1 * c);
                }
                for (long j = r; j < p.dim; ++j) ref += static_cast<double>(q0[j]) * k0[j];
                worst = std::max(worst, std::abs(dots_sampled(a, b) - ref));
            }
        rec.check({"dot_equals_relative_rotation", "q_m . k_n = q^T R(n - m) k for all m, n",
                   fmt::format("max |q_m.k_n - q^T R(n-m) k|, {}", pair_scope),
                   worst, dot_tol});
    }
    {
        // Relative position only: for each offset, the spread of q_m . k_{m+offset} over m.
        double worst = 0.0;
        std::map<long, std::pair<double, double>> by_offset;
        for (std::size_t a = 0; a < NP; ++a)
            for (std::size_t b = 0; b < NP; ++b) {
                auto [it, fresh] = by_offset.try_emplace(positions[b] - positions[a], dots_sampled(a, b), dots_sampled(a, b));
                if (!fresh) {
                    it->second.first = std::min(it->second.first, dots_sampled(a, b));
                    it->second.second = std::max(it->second.second, dots_sampled(a, b));
                }
            }
        for (const auto& [offset, range] : by_offset) worst = std::max(worst, range.second - range.first);
        rec.check({"relative_position_only",
                   fmt::format("q_m . k_n depends on m - n alone{}",
                               p.scaling.method == RopeScaling::none ? "" : fmt::format(" (under {} scaling)", name_of(p.scaling.method))),
                   "max over offsets of the spread over m", worst, 2.0 * dot_tol});
    }
    {
        // interleaved and half: the same rotation up to a fixed permutation of dimensions.
        const auto perm = half_to_interleaved(p.dim, r);
        double worst = 0.0, max_abs = 0.0;
        std::vector<T> x_half(d), x_int(d), out_half(d), out_int(d);
        for (std::size_t row = 0; row < B * H * L; ++row) {
            const std::size_t m = row % L;
            for (std::size_t j = 0; j < d; ++j) x_half[j] = q.data()[row * d + j];
            for (std::size_t j = 0; j < d; ++j) x_int[j] = x_half[static_cast<std::size_t>(perm[j])];
            rope_rotate(x_half.data(), out_half.data(), p.dim, r, cache.cos.data() + m * P, cache.sin.data() + m * P, RopeStyle::half, false);
            rope_rotate(x_int.data(), out_int.data(), p.dim, r, cache.cos.data() + m * P, cache.sin.data() + m * P, RopeStyle::interleaved, false);
            for (std::size_t j = 0; j < d; ++j) {
                worst = std::max(worst, std::abs(static_cast<double>(out_int[j]) - static_cast<double>(out_half[static_cast<std::size_t>(perm[j])])));
                max_abs = std::max(max_abs, std::abs(static_cast<double>(x_half[j])));
            }
        }
        rec.check({"styles_are_permutations",
                   "interleaved and half pairing are the same rotation up to a fixed permutation of the dimensions",
                   "max |rot_interleaved(Px) - P rot_half(x)|", worst, 2.0 * eps * max_abs});
    }
    {
        // Complex form: (x_a + i x_b) e^{i m theta_i}, as torch.view_as_complex implementations do.
        double worst = 0.0, max_abs = 0.0;
        for (std::size_t row = 0; row < B * H * L; ++row) {
            const std::size_t m = row % L;
            for (long i = 0; i < P; ++i) {
                const auto [a, b] = rope_pair(p.style, i, P);
                const std::complex<T> z(q.data()[row * d + a], q.data()[row * d + b]);
                const std::complex<T> w = z * std::complex<T>(cache.cos(m, i), cache.sin(m, i));
                worst = std::max({worst, std::abs(static_cast<double>(w.real()) - static_cast<double>(q_rot.data()[row * d + a])),
                                  std::abs(static_cast<double>(w.imag()) - static_cast<double>(q_rot.data()[row * d + b]))});
                max_abs = std::max(max_abs, std::abs(static_cast<double>(z.real())) + std::abs(static_cast<double>(z.imag())));
            }
        }
        rec.check({"complex_form", "the rotation equals multiplying x_a + i x_b by e^{i m theta}",
                   "max |rotation - complex product|", worst, 2.0 * eps * max_abs});
    }
    {
        const Ten4<T> back = rope_apply(q_rot, cache, r, p.style, /*inverse=*/true);
        const double max_q = max_abs(q);
        rec.check({"inverse_restores", "rotating back by -m theta restores the input (the inverse is the transpose)",
                   "max |R(m)^T R(m) q - q|", max_abs_diff(back, q), 8.0 * eps * max_q});
    }
    {
        // theta_i in T is off by up to about (ln(base) * 2i/r + ln(factor) + 4) eps relative
        // (the exponent's rounding is multiplied into the power), and the product m*theta_i
        // adds half an eps: the bound, pair by pair, at the largest position.
        double tol = 0.0;
        const double m_max = static_cast<double>(L > 0 ? L - 1 : 0);
        for (long i = 0; i < P; ++i) {
            const double rel = std::abs(std::log(p.base)) * 2.0 * static_cast<double>(i) / static_cast<double>(r) +
                               std::log(p.scaling.factor.value_or(1.0)) + 4.0;
            tol = std::max(tol, eps * m_max * freq.theta[static_cast<std::size_t>(i)] * (rel + 0.5));
        }
        tol += 4.0 * eps;
        rec.check({"angle_precision",
                   fmt::format("angles m*theta in {} stay within their rounding bound up to position {}", name_of(ctx.dtype), L - 1),
                   "max |m*theta (dtype) - m*theta (exact)| in radians", angle_err, tol});
        rec.note(fmt::format("largest angle error in {}: {:.3g} rad ({:.3g} degrees) at position {}, pair {}",
                             name_of(ctx.dtype), angle_err, angle_err * 180.0 / static_cast<double>(kPi), worst_pos, worst_pair));
    }
    if (p.scaling.method != RopeScaling::none) {
        rec.note(fmt::format("{} scaling: base used {:.6g}, attention factor {:.6g}{}", name_of(p.scaling.method),
                             freq.base_used, freq.attention_factor,
                             freq.attention_factor != 1.0 ? " (Hugging Face multiplies cos and sin by it, so scores scale by its square; the rotation shown here leaves it out)" : ""));
    }
    if (p.example) {
        rec.note(p.style == RopeStyle::interleaved
                     ? "example: every query and key is (1, 0, 1, 0); with theta = (1, 0.01) and pairs (0, 1), (2, 3), "
                       "q_rot at position m is (cos m, sin m, cos 0.01m, sin 0.01m)"
                     : "example: every query and key is (1, 0, 1, 0); with theta = (1, 0.01) and pairs (0, 2), (1, 3), "
                       "q_rot at position m is (cos m - sin m, 0, sin m + cos m, 0)");
    }
    return rec.finish();
}

}  // namespace

Report run_rope(const RopeParams& p, const RunContext& ctx)
{
    validate(p);
    return ctx.dtype == DType::float32 ? run_rope_typed<float>(p, ctx) : run_rope_typed<double>(p, ctx);
}

#define ATTNLAB_ROPE_INSTANTIATE(T)                                                                 \
    template RopeFrequencies rope_frequencies<T>(long, double, const RopeScalingParams&, long);    \
    template RopeCache<T> rope_cache<T>(long, const std::vector<double>&);                          \
    template void rope_rotate<T>(const T*, T*, long, long, const T*, const T*, RopeStyle, bool);    \
    template Ten4<T> rope_apply<T>(const Ten4<T>&, const RopeCache<T>&, long, RopeStyle, bool);
ATTNLAB_ROPE_INSTANTIATE(float)
ATTNLAB_ROPE_INSTANTIATE(double)

}  // namespace attnlab

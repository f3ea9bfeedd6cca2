#include "attnlab/core/position/rope.hpp"

#include "attnlab/core/narrow.hpp"
#include "attnlab/core/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <complex>

namespace attnlab {

namespace {

// YaRN's ramp over theta and its attention factor (HF _compute_yarn_parameters).
template <class F>
void yarn_theta(std::vector<F>& theta, long r, F base, F factor, F L0, const RopeScalingParams& s, F* attention_factor)
{
    const long P = r / 2;
    // HF _compute_yarn_parameters (= llama.cpp's ggml_rope_yarn_corr_dims and ramp):
    // pairs that turn more than beta_fast times over L0 keep theta (extrapolation),
    // pairs that turn fewer than beta_slow times are interpolated (theta / factor),
    // a linear ramp over the pair index in between.
    auto correction_dim = [&](F rotations) {
        return static_cast<F>(r) * std::log(L0 / (rotations * F(2) * static_cast<F>(kPi))) /
               (F(2) * std::log(base));
    };
    // truncate (HF's default, and llama.cpp's): the ramp's ends rounded out to whole pairs
    F low = correction_dim(static_cast<F>(s.beta_fast));
    F high = correction_dim(static_cast<F>(s.beta_slow));
    if (!s.yarn_no_truncate) low = std::floor(low), high = std::ceil(high);
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
    auto mscale = [&](double m) { return factor <= F(1) ? F(1) : F(0.1) * static_cast<F>(m) * std::log(factor) + F(1); };
    const bool deepseek = s.mscale && s.mscale_all_dim && *s.mscale != 0.0 && *s.mscale_all_dim != 0.0;
    *attention_factor = s.attention_factor ? static_cast<F>(*s.attention_factor)
                        : deepseek         ? mscale(*s.mscale) / mscale(*s.mscale_all_dim)
                                           : mscale(1.0);
}

// Llama 3.1's blend of theta and theta/factor by wavelength (HF _compute_llama3_parameters).
template <class F>
void llama3_theta(std::vector<F>& theta, F factor, F L0, const RopeScalingParams& s)
{
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
}

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
    } else if (s.method == RopeScaling::linear_ntk) {
        base = base * std::pow(static_cast<F>(s.ntk_alpha.value_or(1.0)), exponent);
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
    case RopeScaling::linear_ntk:
        for (auto& t : theta) t = t / factor;
        break;
    case RopeScaling::yarn:
        yarn_theta(theta, r, base, factor, L0, s, attention_factor);
        break;
    case RopeScaling::longrope: {
        // HF _compute_longrope_parameters: the short factors up to L0, the long ones past it
        // (the length is max(position) + 1, as its dynamic update takes it).
        const auto& ext = static_cast<F>(len) > L0 ? s.long_factor : s.short_factor;
        for (long i = 0; i < P; ++i) theta[static_cast<std::size_t>(i)] /= static_cast<F>(ext[static_cast<std::size_t>(i)]);
        *attention_factor = s.attention_factor ? static_cast<F>(*s.attention_factor)
                            : factor > F(1)    ? std::sqrt(F(1) + std::log(factor) / std::log(L0))
                                               : F(1);
        break;
    }
    case RopeScaling::llama3:
        llama3_theta(theta, factor, L0, s);
        break;
    }
    return theta;
}

}  // namespace

template <class T>
RopeFrequencies rope_frequencies(long rotary_dim, double base, const RopeScalingParams& s, long len)
{
    // Computed in T, or in float32 for the 16-bit types and rounded when stored (the
    // inv_freq buffer of a model cast with .half()).
    using F = Compute<T>;
    RopeFrequencies f;
    F attention = 1, base_used = 0;
    const auto theta = frequencies_in<F>(rotary_dim, base, s, len, &attention, &base_used);
    RopeScalingParams none;
    F unused_a = 1, unused_b = 0;
    const auto plain = frequencies_in<F>(rotary_dim, base, none, len, &unused_a, &unused_b);
    for (F t : theta) f.theta.push_back(static_cast<double>(static_cast<T>(t)));
    for (F t : plain) f.theta_unscaled.push_back(static_cast<double>(static_cast<T>(t)));
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
RopeCache<T> rope_cache_at(const std::vector<long>& positions, const std::vector<double>& theta)
{
    const std::size_t L = positions.size(), P = theta.size();
    RopeCache<T> c{xt::zeros<T>({L, P}), xt::zeros<T>({L, P})};
    for (std::size_t t = 0; t < L; ++t)
        for (std::size_t i = 0; i < P; ++i) {
            const T angle = static_cast<T>(positions[t]) * static_cast<T>(theta[i]);  // m * theta_i, in T
            c.cos(t, i) = std::cos(angle);
            c.sin(t, i) = std::sin(angle);
        }
    return c;
}

template <class T>
RopeCache<T> rope_cache(long len, const std::vector<double>& theta)
{
    std::vector<long> positions(static_cast<std::size_t>(len));
    for (long m = 0; m < len; ++m) positions[static_cast<std::size_t>(m)] = m;
    return rope_cache_at<T>(positions, theta);
}

template <class T>
void rope_rotate(const T* x, T* out, long d, long r, const T* cos_m, const T* sin_m, RopeStyle style, Direction dir)
{
    const long P = r / 2;
    for (long i = 0; i < P; ++i) {
        // the pair (a, b): (2i, 2i+1) interleaved, (i, i + r/2) half
        const auto [a, b] = rope_pair(style, i, P);
        const T c = cos_m[i];
        const T s = dir == Direction::inverse ? -sin_m[i] : sin_m[i];
        const T xa = x[a], xb = x[b];
        out[a] = xa * c - xb * s;
        out[b] = xa * s + xb * c;
    }
    for (long j = r; j < d; ++j) out[j] = x[j];  // partial rotary: the rest passes through
}

template <class T>
Ten4<T> rope_apply(const Ten4<T>& x, const RopeCache<T>& cache, long rotary_dim, RopeStyle style, Direction dir,
                   long first_position)
{
    Ten4<T> out = xt::zeros<T>(x.shape());
    const std::size_t L = x.shape(2), d = x.shape(3), rows = x.shape(0) * x.shape(1);
    const std::size_t P = cache.cos.shape(1), m0 = static_cast<std::size_t>(first_position);
    if (m0 + L > cache.cos.shape(0)) throw std::logic_error("rope_apply: the cache has too few positions");
    for (std::size_t row = 0; row < rows; ++row)
        for (std::size_t m = 0; m < L; ++m) {
            const std::size_t off = (row * L + m) * d;
            rope_rotate(x.data() + off, out.data() + off, static_cast<long>(d), rotary_dim, cache.cos.data() + (m0 + m) * P,
                        cache.sin.data() + (m0 + m) * P, style, dir);
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

#define ATTNLAB_ROPE_INSTANTIATE(T)                                                                     \
    template RopeFrequencies rope_frequencies<T>(long, double, const RopeScalingParams&, long);        \
    template RopeCache<T> rope_cache<T>(long, const std::vector<double>&);                              \
    template RopeCache<T> rope_cache_at<T>(const std::vector<long>&, const std::vector<double>&);       \
    template void rope_rotate<T>(const T*, T*, long, long, const T*, const T*, RopeStyle, Direction);   \
    template Ten4<T> rope_apply<T>(const Ten4<T>&, const RopeCache<T>&, long, RopeStyle, Direction, long);
ATTNLAB_ROPE_INSTANTIATE(float)
ATTNLAB_ROPE_INSTANTIATE(double)
ATTNLAB_ROPE_INSTANTIATE(f16)
ATTNLAB_ROPE_INSTANTIATE(bf16)

std::vector<long> whole_positions(const Tensor& given)
{
    std::vector<long> out;
    for (double m : given.values) {
        if (m != std::floor(m) || std::abs(m) > static_cast<double>(kMaxRopePosition)) {
            throw InputError(fmt::format("--input positions: {} is not a whole number within +-2^24", m));
        }
        out.push_back(static_cast<long>(m));
    }
    return out;
}

}  // namespace attnlab

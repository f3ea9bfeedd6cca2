#include "attnlab/core/position/sinusoidal.hpp"

#include "attnlab/core/error_model.hpp"
#include "attnlab/core/measure.hpp"
#include "attnlab/core/narrow.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnlab {

namespace {

// The exponent of w_i = base^(-numerator / denominator): paper (2i, D), t2t (i, max(P-1, 1)).
double exponent_denominator(long dim, PeFrequencies f)
{
    const long pairs = dim / 2;
    return f == PeFrequencies::paper ? static_cast<double>(dim) : static_cast<double>(std::max(pairs - 1, 1L));
}
double exponent_numerator(long i, PeFrequencies f)
{
    return f == PeFrequencies::paper ? 2.0 * static_cast<double>(i) : static_cast<double>(i);
}

// Column of pair i's sine and cosine in a table of the given layout.
std::size_t sin_col(long i, long pairs, PeLayout layout)
{
    (void)pairs;
    return static_cast<std::size_t>(layout == PeLayout::interleaved ? 2 * i : i);
}
std::size_t cos_col(long i, long pairs, PeLayout layout)
{
    return static_cast<std::size_t>(layout == PeLayout::interleaved ? 2 * i + 1 : pairs + i);
}

}  // namespace

template <class T>
Vec<T> pe_frequencies(long dim, double base, const PeFreqRule& rule, FreqMethod method)
{
    const long pairs = dim / 2;
    const T denom = static_cast<T>(exponent_denominator(dim, rule.frequencies));
    Vec<T> freq = xt::zeros<T>({static_cast<std::size_t>(pairs)});
    // Computed in T throughout, as PyTorch computes in the tensor's dtype; with m = 1 the
    // factor m and the ratio base/m are exact, so the usual rules are computed as before.
    const T m = static_cast<T>(rule.min_timescale), ratio = static_cast<T>(base / rule.min_timescale);
    const T neg_log_ratio_over_denom = static_cast<T>(-std::log(base / rule.min_timescale) / static_cast<double>(denom));
    for (long i = 0; i < pairs; ++i) {
        const T num = static_cast<T>(exponent_numerator(i, rule.frequencies));
        if (method == FreqMethod::exp_log) {
            freq(i) = m * std::exp(num * neg_log_ratio_over_denom);
        } else {
            freq(i) = m / std::pow(ratio, num / denom);
        }
    }
    return freq;
}

std::vector<long double> pe_frequencies_reference(long dim, double base, const PeFreqRule& rule)
{
    const long pairs = dim / 2;
    const long double denom = exponent_denominator(dim, rule.frequencies), m = rule.min_timescale;
    std::vector<long double> ref(static_cast<std::size_t>(pairs));
    for (long i = 0; i < pairs; ++i) {
        ref[static_cast<std::size_t>(i)] = m * std::pow(static_cast<long double>(base) / m, -static_cast<long double>(exponent_numerator(i, rule.frequencies)) / denom);
    }
    return ref;
}

template <class T>
Mat<T> sinusoidal_rows(const std::vector<long>& positions, const Vec<T>& freq, PeLayout layout)
{
    const long pairs = static_cast<long>(freq.size());
    Mat<T> pe = xt::zeros<T>({positions.size(), static_cast<std::size_t>(2 * pairs)});
    for (std::size_t t = 0; t < positions.size(); ++t) {
        for (long i = 0; i < pairs; ++i) {
            const T angle = static_cast<T>(positions[t]) * freq(i);  // pos * w_i, rounded in T
            pe(t, sin_col(i, pairs, layout)) = std::sin(angle);
            pe(t, cos_col(i, pairs, layout)) = std::cos(angle);
        }
    }
    return pe;
}

template <class T>
Mat<T> sinusoidal_table(long len, const Vec<T>& freq, PeLayout layout)
{
    std::vector<long> positions(static_cast<std::size_t>(len));
    std::iota(positions.begin(), positions.end(), 0L);
    return sinusoidal_rows<T>(positions, freq, layout);
}

double row0_error(const Tensor& pe, PeLayout layout)
{
    const long pairs = static_cast<long>(pe.dim(1) / 2);
    double err = 0.0;
    for (long i = 0; i < pairs; ++i) {
        err = worse(err, std::abs(pe.at(0, sin_col(i, pairs, layout)) - 0.0));
        err = worse(err, std::abs(pe.at(0, cos_col(i, pairs, layout)) - 1.0));
    }
    return err;
}

double shift_error(const Tensor& pe, const Tensor& freq, PeLayout layout, long k)
{
    const long len = static_cast<long>(pe.dim(0));
    const long pairs = static_cast<long>(freq.size());
    double err = 0.0;
    for (long i = 0; i < pairs; ++i) {
        // M(k) for pair i: [sin(a+b); cos(a+b)] = [[cos b, sin b], [-sin b, cos b]] [sin a; cos a]
        // with b = k*w_i. It is built from k alone, never from p.
        const double b = static_cast<double>(k) * freq.values[static_cast<std::size_t>(i)];
        const double cb = std::cos(b), sb = std::sin(b);
        const std::size_t cs = sin_col(i, pairs, layout), cc = cos_col(i, pairs, layout);
        for (long p = 0; p + k < len; ++p) {
            const double s_p = pe.at(p, cs), c_p = pe.at(p, cc);
            err = worse(err, std::abs(cb * s_p + sb * c_p - pe.at(p + k, cs)));
            err = worse(err, std::abs(-sb * s_p + cb * c_p - pe.at(p + k, cc)));
        }
    }
    return err;
}

std::size_t pair_offset_budget(long len, long dim)
{
    const double budget = 1073741824.0;  // 2^30
    const double per_offset = static_cast<double>(len) * static_cast<double>(dim);
    const double k = std::floor(budget / per_offset);
    return static_cast<std::size_t>(std::clamp(k, 1.0, std::max(1.0, static_cast<double>(len - 1))));
}

double min_pair_distance(const Tensor& pe, std::size_t max_offset)
{
    const std::size_t len = pe.dim(0), dim = pe.dim(1);
    double smallest = std::numeric_limits<double>::infinity();
    for (std::size_t k = 1; k < len && k <= max_offset; ++k)
        for (std::size_t p = 0; p + k < len; ++p) {
            const std::size_t a = p * dim, b = a + k * dim;
            double dist2 = 0.0;
            for (std::size_t j = 0; j < dim; ++j) dist2 += (pe.values[a + j] - pe.values[b + j]) * (pe.values[a + j] - pe.values[b + j]);
            if (std::isnan(dist2)) return dist2;  // NaN never passes
            smallest = std::min(smallest, std::sqrt(dist2));
        }
    return smallest;
}

double max_dot_spread(const Tensor& pe, std::size_t max_offset)
{
    const std::size_t len = pe.dim(0), dim = pe.dim(1);
    double worst = 0.0;
    for (std::size_t k = 1; k < len && k <= max_offset; ++k) {
        double lo = std::numeric_limits<double>::infinity(), hi = -lo;
        for (std::size_t p = 0; p + k < len; ++p) {
            const std::size_t a = p * dim, b = a + k * dim;
            double dot = 0.0;
            for (std::size_t j = 0; j < dim; ++j) dot += pe.values[a + j] * pe.values[b + j];
            if (std::isnan(dot)) return dot;
            lo = std::min(lo, dot);
            hi = std::max(hi, dot);
        }
        worst = worse(worst, hi - lo);
    }
    return worst;
}

// Each pair i adds cos(k w_i + d_(p+k) - d_p) to the dot of rows p and p+k, off by at most
// a (2p+k) w_i from the angles (a the angle's relative error, d_p its error at p) and 4u from
// the two stored elements of each row; the float64 sum adds P u(float64) per term. A spread
// over p is the difference of two such dots: 2 sum_i (a (2(L-1) - k) w_i + 4u), taken at
// k = 1, the largest.
double dot_spread_bound(DType dtype, long len, const Tensor& freq)
{
    double sum_freq = 0.0;
    for (double w : freq.values) sum_freq += w;
    const double pairs = static_cast<double>(freq.size()), u = unit_roundoff(dtype);
    return 2.0 * (angle_rel_error(dtype, static_cast<double>(len - 1)) * static_cast<double>(2 * len - 3) * sum_freq + 4.0 * u * pairs) +
           4.0 * pairs * pairs * unit_roundoff(DType::float64);
}

double max_freq_ratio(const Tensor& freq)
{
    double worst = 0.0;
    for (std::size_t i = 0; i + 1 < freq.size(); ++i) worst = worse(worst, freq.values[i + 1] / freq.values[i]);
    return worst;
}

template <class T>
double max_rel_error(const Vec<T>& freq, const std::vector<long double>& ref)
{
    long double worst = 0.0L;
    for (std::size_t i = 0; i < freq.size(); ++i) {
        const long double rel = std::abs(static_cast<long double>(freq(i)) - ref[i]) / ref[i];
        if (std::isnan(rel)) return std::numeric_limits<double>::quiet_NaN();
        worst = std::max(worst, rel);
    }
    return static_cast<double>(worst);
}

template <class T>
Mat<T> other_layout_reordered(long len, long dim, double base, PeLayout layout, FreqMethod m)
{
    const PeLayout other = layout == PeLayout::interleaved ? PeLayout::concat : PeLayout::interleaved;
    const Mat<T> theirs = sinusoidal_table<T>(len, pe_frequencies<T>(dim, base, other, m), other);
    const long pairs = dim / 2;
    Mat<T> out = xt::zeros<T>(theirs.shape());
    for (long pos = 0; pos < len; ++pos) {
        for (long i = 0; i < pairs; ++i) {
            out(pos, sin_col(i, pairs, layout)) = theirs(pos, sin_col(i, pairs, other));
            out(pos, cos_col(i, pairs, layout)) = theirs(pos, cos_col(i, pairs, other));
        }
    }
    return out;
}

#define ATTNLAB_PE_INSTANTIATE(T)                                                        \
    template Vec<T> pe_frequencies<T>(long, double, const PeFreqRule&, FreqMethod);      \
    template Mat<T> sinusoidal_table<T>(long, const Vec<T>&, PeLayout);                  \
    template Mat<T> sinusoidal_rows<T>(const std::vector<long>&, const Vec<T>&, PeLayout); \
    template double max_rel_error<T>(const Vec<T>&, const std::vector<long double>&);    \
    template Mat<T> other_layout_reordered<T>(long, long, double, PeLayout, FreqMethod);
ATTNLAB_PE_INSTANTIATE(float)
ATTNLAB_PE_INSTANTIATE(double)
ATTNLAB_PE_INSTANTIATE(f16)
ATTNLAB_PE_INSTANTIATE(bf16)

}  // namespace attnlab

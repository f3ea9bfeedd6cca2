#include "attnlab/core/position/alibi.hpp"

#include "attnlab/core/narrow.hpp"

#include <cmath>
#include <cstdlib>
#include <limits>

namespace attnlab {

namespace {

bool is_power_of_two(long n) { return n > 0 && (n & (n - 1)) == 0; }

std::vector<double> power_of_two_slopes(long n)
{
    // m_h = 2^(-8(h+1)/n): the geometric sequence starting at and with ratio 2^(-8/n).
    std::vector<double> s;
    for (long h = 0; h < n; ++h) s.push_back(std::exp2(-8.0 * static_cast<double>(h + 1) / static_cast<double>(n)));
    return s;
}

}  // namespace

bool alibi_slopes_geometric(long heads, SlopeRule rule) { return rule == SlopeRule::paper_text || is_power_of_two(heads); }

std::vector<double> alibi_slopes(long heads, SlopeRule rule)
{
    if (alibi_slopes_geometric(heads, rule)) return power_of_two_slopes(heads);
    // Not a power of two (the paper's get_slopes): the c = 2^floor(log2 H) slopes, then the
    // slopes of 2c at even indices, as many as are missing. They interleave between the
    // first ones instead of extending the sequence below 2^-8.
    long c = 1;
    while (c * 2 <= heads) c *= 2;
    std::vector<double> s = power_of_two_slopes(c);
    const std::vector<double> twice = alibi_slopes(2 * c, SlopeRule::reference_code);
    for (long k = 0; k < heads - c; ++k) s.push_back(twice[static_cast<std::size_t>(2 * k)]);
    return s;
}

template <class T>
Ten3<T> alibi_bias(const std::vector<double>& slopes, long queries, long keys, AlibiVariant v, long first_query)
{
    const auto H = slopes.size();
    Ten3<T> bias = xt::zeros<T>({H, static_cast<std::size_t>(queries), static_cast<std::size_t>(keys)});
    for (std::size_t h = 0; h < H; ++h) {
        const T m = static_cast<T>(slopes[h]);
        for (long i = 0; i < queries; ++i)
            for (long j = 0; j < keys; ++j) {
                const long pos = first_query + i;  // the query's position
                if (v == AlibiVariant::causal && j > pos) {
                    bias(h, i, j) = -std::numeric_limits<T>::infinity();  // the causal mask
                } else {
                    const long distance = v == AlibiVariant::causal ? pos - j : std::abs(pos - j);
                    bias(h, i, j) = distance == 0 ? T(0) : -m * static_cast<T>(distance);  // no -0
                }
            }
    }
    return bias;
}

template <class T>
Ten3<T> alibi_bias_at(const std::vector<double>& slopes, const std::vector<long>& positions)
{
    const auto H = slopes.size(), L = positions.size();
    Ten3<T> bias = xt::zeros<T>({H, L, L});
    for (std::size_t h = 0; h < H; ++h)
        for (std::size_t i = 0; i < L; ++i)
            for (std::size_t j = 0; j < L; ++j) {
                const long distance = std::abs(positions[i] - positions[j]);
                bias(h, i, j) = distance == 0 ? T(0) : -static_cast<T>(slopes[h]) * static_cast<T>(distance);  // as alibi_bias
            }
    return bias;
}

template <class T>
Ten3<T> alibi_bias_key_only(const std::vector<double>& slopes, long len)
{
    const auto H = slopes.size(), L = static_cast<std::size_t>(len);
    Ten3<T> bias = xt::zeros<T>({H, L, L});
    for (std::size_t h = 0; h < H; ++h)
        for (std::size_t i = 0; i < L; ++i)
            for (std::size_t j = 0; j < L; ++j)
                bias(h, i, j) = j > i ? -std::numeric_limits<T>::infinity()
                                      : static_cast<T>(slopes[h]) * static_cast<T>(j);
    return bias;
}

std::vector<double> paper_text_slopes(long heads)
{
    const double ratio = std::exp2(-8.0 / static_cast<double>(heads));
    std::vector<double> s{ratio};
    while (static_cast<long>(s.size()) < heads) s.push_back(s.back() * ratio);
    return s;
}

#define ATTNLAB_ALIBI_INSTANTIATE(T)                                                              \
    template Ten3<T> alibi_bias<T>(const std::vector<double>&, long, long, AlibiVariant, long); \
    template Ten3<T> alibi_bias_key_only<T>(const std::vector<double>&, long);                \
    template Ten3<T> alibi_bias_at<T>(const std::vector<double>&, const std::vector<long>&);
ATTNLAB_ALIBI_INSTANTIATE(float)
ATTNLAB_ALIBI_INSTANTIATE(double)
ATTNLAB_ALIBI_INSTANTIATE(f16)
ATTNLAB_ALIBI_INSTANTIATE(bf16)

}  // namespace attnlab

#include "attnlab/core/rng.hpp"

#include <stdexcept>

namespace attnlab {

namespace {

constexpr std::uint64_t kMultiplier = 6364136223846793005ULL;

// XSH-RR: the output of one old state.
std::uint32_t output_of(std::uint64_t old)
{
    const auto xorshifted = static_cast<std::uint32_t>(((old >> 18u) ^ old) >> 27u);
    const auto rot = static_cast<std::uint32_t>(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((32u - rot) & 31u));
}

}  // namespace

Rng::Rng(std::uint64_t seed, std::uint64_t stream) : state_(0), inc_((stream << 1u) | 1u)
{
    next_u32();
    state_ += seed;
    next_u32();
}

std::uint32_t Rng::next_u32()
{
    const std::uint64_t old = state_;
    state_ = old * kMultiplier + inc_;
    return output_of(old);
}

void Rng::advance(std::uint64_t steps)
{
    // Brown, "Random number generation with arbitrary strides" (1994), as pcg32_advance_r.
    std::uint64_t mult = kMultiplier, plus = inc_, acc_mult = 1, acc_plus = 0;
    for (; steps > 0; steps >>= 1u) {
        if (steps & 1u) {
            acc_mult *= mult;
            acc_plus = acc_plus * mult + plus;
        }
        plus = (mult + 1) * plus;
        mult *= mult;
    }
    state_ = acc_mult * state_ + acc_plus;
}

double Rng::uniform()
{
    return static_cast<double>(next_u32() >> 8u) * (1.0 / 16777216.0);
}

double Rng::normal()
{
    double sum = 0.0;
    for (int i = 0; i < 12; ++i) sum += uniform();
    return sum - 6.0;
}


void Rng::normals(double* out, std::size_t n)
{
    // Lane i holds the state of output base + i; four steps are state * m4 + c4.
    const std::uint64_t m4 = kMultiplier * kMultiplier * kMultiplier * kMultiplier;
    const std::uint64_t c4 = ((inc_ * kMultiplier + inc_) * kMultiplier + inc_) * kMultiplier + inc_;
    std::uint64_t lane[4] = {state_, 0, 0, 0};
    for (int i = 1; i < 4; ++i) lane[i] = lane[i - 1] * kMultiplier + inc_;
    for (std::size_t k = 0; k < n; ++k) {
        std::uint32_t sum = 0;  // 12 values below 2^24: exact, as the double sum of normal()
        for (int round = 0; round < 3; ++round)
            for (auto& s : lane) {
                sum += output_of(s) >> 8u;
                s = s * m4 + c4;
            }
        out[k] = static_cast<double>(sum) * (1.0 / 16777216.0) - 6.0;
    }
    state_ = lane[0];
}

std::uint32_t Rng::below(std::uint32_t n)
{
    if (n == 0) throw std::invalid_argument("Rng::below(0)");
    // Lemire, "Fast random integer generation in an interval" (2019), algorithm 5.
    std::uint64_t m = std::uint64_t{next_u32()} * n;
    auto low = static_cast<std::uint32_t>(m);
    if (low < n) {
        const std::uint32_t threshold = (0u - n) % n;
        while (low < threshold) {
            m = std::uint64_t{next_u32()} * n;
            low = static_cast<std::uint32_t>(m);
        }
    }
    return static_cast<std::uint32_t>(m >> 32u);
}

std::vector<std::size_t> Rng::permutation(std::size_t n)
{
    std::vector<std::size_t> p(n);
    for (std::size_t i = 0; i < n; ++i) p[i] = i;
    for (std::size_t i = n; i > 1; --i) {
        const std::size_t j = below(static_cast<std::uint32_t>(i));
        std::swap(p[i - 1], p[j]);
    }
    return p;
}

}  // namespace attnlab

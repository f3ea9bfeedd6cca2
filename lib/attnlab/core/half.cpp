#include "attnlab/core/half.hpp"

#include <cmath>
#include <cstring>

namespace attnlab {

namespace {

std::uint32_t bits_of(float x)
{
    std::uint32_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
}

float float_of(std::uint32_t b)
{
    float x;
    std::memcpy(&x, &b, sizeof x);
    return x;
}

}  // namespace

std::uint16_t half_bits(float x)
{
    const std::uint32_t b = bits_of(x);
    const auto sign = static_cast<std::uint16_t>((b >> 16) & 0x8000u);
    const std::uint32_t abs = b & 0x7FFFFFFFu;
    if (abs > 0x7F800000u) return static_cast<std::uint16_t>(sign | 0x7E00u);   // NaN: quiet
    if (abs >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // >= 65520: inf
    if (abs < 0x38800000u) {  // below 2^-14: a subnormal (or 0), in units of 2^-24, ties to even
        const float scaled = float_of(abs) * 16777216.0f;  // exact: a power of two
        return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(std::nearbyint(scaled)));
    }
    // Normal: drop 13 mantissa bits, rounding to nearest even; a carry may reach the exponent.
    const std::uint32_t rebased = abs - 0x38000000u;  // exponent bias 127 -> 15
    const std::uint32_t rounded = rebased + 0x0FFFu + ((rebased >> 13) & 1u);
    return static_cast<std::uint16_t>(sign | (rounded >> 13));
}

float from_half_bits(std::uint16_t h)
{
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16, exp = (h >> 10) & 0x1Fu, man = h & 0x3FFu;
    if (exp == 0x1F) return float_of(sign | 0x7F800000u | (man << 13));  // inf or NaN
    if (exp == 0) {                                                       // zero or subnormal: man * 2^-24
        const float v = static_cast<float>(man) / 16777216.0f;
        return sign ? -v : v;
    }
    return float_of(sign | ((exp + 112u) << 23) | (man << 13));
}

std::uint16_t bfloat16_bits(float x)
{
    const std::uint32_t b = bits_of(x);
    if ((b & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((b >> 16) | 0x0040u);  // NaN: quiet
    return static_cast<std::uint16_t>((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16);
}

float from_bfloat16_bits(std::uint16_t b) { return float_of(static_cast<std::uint32_t>(b) << 16); }

double round_to_half(double x) { return from_half_bits(half_bits(static_cast<float>(x))); }
double round_to_bfloat16(double x) { return from_bfloat16_bits(bfloat16_bits(static_cast<float>(x))); }

double round_to_dtype(double x, DType dtype)
{
    switch (dtype) {
    case DType::float32: return static_cast<float>(x);
    case DType::float16: return round_to_half(x);
    case DType::bfloat16: return round_to_bfloat16(x);
    case DType::float64: break;
    }
    return x;
}

}  // namespace attnlab

// float16 and bfloat16 conversions against PyTorch's .half() and .bfloat16()
// (data/fixtures/precision_conversions.npy), and against values worked out by hand.
#include "attnlab/core/half.hpp"

#include <doctest/doctest.h>
#include <xtensor/xnpy.hpp>

#include <cmath>
#include <string>

using namespace attnlab;

namespace {

// The same double, NaN equal to NaN and -0 told from +0.
bool same(double a, double b)
{
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return a == b && std::signbit(a) == std::signbit(b);
}

}  // namespace

TEST_CASE("half and bfloat16: PyTorch's rounding, from float64 and from float32")
{
    const auto t = xt::load_npy<double>(std::string(ATTNLAB_DATA_DIR) + "/fixtures/precision_conversions.npy");
    REQUIRE(t.shape(0) == 5);
    REQUIRE(t.shape(1) >= 40);
    for (std::size_t c = 0; c < t.shape(1); ++c) {
        const double x = t(0, c);
        CAPTURE(x);
        CHECK(same(round_to_half(x), t(1, c)));
        CHECK(same(round_to_bfloat16(x), t(2, c)));
        const float xf = static_cast<float>(x);
        CHECK(same(from_half_bits(half_bits(xf)), t(3, c)));
        CHECK(same(from_bfloat16_bits(bfloat16_bits(xf)), t(4, c)));
    }
}

TEST_CASE("half and bfloat16: values worked out by hand")
{
    CHECK(round_to_half(-1e9) == -INFINITY);          // the articles' -1e9 fill: -inf in float16
    CHECK(round_to_bfloat16(-1e9) == -998244352.0);   // 0xCE6E in bfloat16: -2^29 * 1.859375
    CHECK(round_to_bfloat16(257.0) == 256.0);         // 8 bits: 257 ties to even, down
    CHECK(round_to_bfloat16(259.0) == 260.0);         // and 259 ties up to even
    CHECK(round_to_half(65519.0) == 65504.0);         // the largest float16
    CHECK(round_to_half(65520.0) == INFINITY);        // the tie at the top rounds to inf
    CHECK(round_to_half(std::ldexp(1.0, -25)) == 0.0);  // half the smallest subnormal: to even, 0
    CHECK(round_to_half(3 * std::ldexp(1.0, -25)) == std::ldexp(1.0, -23));
    CHECK(half_bits(1.0f) == 0x3C00);
    CHECK(half_bits(-2.0f) == 0xC000);
    CHECK(half_bits(NAN) == 0x7E00);
    CHECK(bfloat16_bits(1.0f) == 0x3F80);
    CHECK(from_half_bits(0x0001) == std::ldexp(1.0f, -24));
    CHECK(from_half_bits(0x7BFF) == 65504.0f);
    CHECK(std::isnan(from_bfloat16_bits(0x7FC0)));
    // every float16 value survives a round trip through float
    for (unsigned h = 0; h < 0x10000; ++h) {
        const auto bits = static_cast<std::uint16_t>(h);
        const float f = from_half_bits(bits);
        if (!std::isnan(f)) CHECK(half_bits(f) == bits);
    }
}

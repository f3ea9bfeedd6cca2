#include "attnlab/core/rng.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

using attnlab::Rng;

TEST_CASE("PCG32 matches the reference generator's published output (pcg32-demo, seed 42, stream 54)")
{
    Rng rng(42, 54);
    const std::uint32_t expected[] = {0xa15c02b7u, 0x7b47f409u, 0xba1d3330u,
                                      0x83d2f293u, 0xbfa4784bu, 0xcbed606eu};
    for (std::uint32_t e : expected) CHECK(rng.next_u32() == e);
}

TEST_CASE("normal() is the exact Irwin-Hall sum, documented for seed 0 stream 1")
{
    // Worked out independently with Python integers: sum of 12 (u32 >> 8) / 2^24, minus 6.
    Rng rng(0, 1);
    CHECK(rng.normal() == -1.870103657245636);
    CHECK(rng.normal() == 1.158375859260559);
    CHECK(rng.normal() == -0.19059640169143677);
    CHECK(rng.normal() == 2.140682876110077);
}

TEST_CASE("normal() has mean 0 and variance 1 over many draws")
{
    Rng rng(7, 3);
    double sum = 0, sum2 = 0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) {
        const double x = rng.normal();
        sum += x;
        sum2 += x * x;
    }
    CHECK(sum / n == doctest::Approx(0.0).epsilon(0.01).scale(1.0));
    CHECK(sum2 / n == doctest::Approx(1.0).epsilon(0.01));
}

TEST_CASE("streams are independent and seeds reproduce")
{
    Rng a(5, 1), b(5, 2), c(5, 1);
    const auto x = a.next_u32();
    CHECK(x != b.next_u32());
    CHECK(x == c.next_u32());
}

TEST_CASE("below(n) stays in range and permutation() is a permutation")
{
    Rng rng(1, 9);
    for (int i = 0; i < 1000; ++i) CHECK(rng.below(7) < 7u);
    auto p = rng.permutation(50);
    std::sort(p.begin(), p.end());
    for (std::size_t i = 0; i < p.size(); ++i) CHECK(p[i] == i);
    CHECK_THROWS(rng.below(0));
}

TEST_CASE("normals(n) gives the values and the final state of n normal() calls")
{
    // Blocks of 32 take the eight-lane path where the processor has it; the rest is scalar.
    for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{31}, std::size_t{32}, std::size_t{33},
                                std::size_t{1000}, std::size_t{100003}}) {
        CAPTURE(n);
        Rng batched(9, 4), stepped(9, 4);
        std::vector<double> values(n);
        batched.normals(values.data(), n);
        std::size_t differ = 0;
        for (double v : values) differ += v != stepped.normal();
        CHECK(differ == 0);
        CHECK(batched.next_u32() == stepped.next_u32());  // the same state after
    }
    // A batch after single draws continues the one sequence.
    Rng mixed(9, 4), stepped(9, 4);
    mixed.next_u32();
    stepped.next_u32();
    double v[3];
    mixed.normals(v, 3);
    for (double x : v) CHECK(x == stepped.normal());
    std::vector<double> w(70);
    mixed.normals(w.data(), w.size());
    std::size_t differ = 0;
    for (double x : w) differ += x != stepped.normal();
    CHECK(differ == 0);
    CHECK(mixed.next_u32() == stepped.next_u32());
}

TEST_CASE("fill_normal from an offset continues the stream there, and scales in double before rounding")
{
    const std::size_t n = 70000;
    std::vector<double> whole(n + 100);
    attnlab::fill_normal(whole.data(), whole.size(), 5, 3);
    std::vector<double> tail(n);
    attnlab::fill_normal(tail.data(), n, 5, 3, 100);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < n; ++i) differ += tail[i] != whole[100 + i];
    CHECK(differ == 0);
    std::vector<float> scaled(n);
    attnlab::fill_normal(scaled.data(), n, 5, 3, 100, 0.125 / 3.0);
    differ = 0;
    for (std::size_t i = 0; i < n; ++i) differ += scaled[i] != static_cast<float>(whole[100 + i] * (0.125 / 3.0));
    CHECK(differ == 0);
    CHECK(scaled[7] != static_cast<float>(whole[100 + 7]));  // the scale is applied
}

TEST_CASE("advance(k) lands where k outputs do, and a chunked parallel fill equals one sequential draw")
{
    for (const std::uint64_t k : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{12}, std::uint64_t{786431}, std::uint64_t{786432}}) {
        CAPTURE(k);
        Rng walked(7, 3), jumped(7, 3);
        for (std::uint64_t i = 0; i < k; ++i) walked.next_u32();
        jumped.advance(k);
        for (int i = 0; i < 4; ++i) CHECK(walked.next_u32() == jumped.next_u32());
    }
    // Past one chunk (65536 normals) and not a multiple of it: the chunks meet without a seam.
    const std::size_t n = 3 * 65536 + 1234;
    std::vector<double> filled(n);
    attnlab::fill_normal(filled.data(), n, 5, attnlab::stream::x);
    Rng one(5, attnlab::stream::x);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < n; ++i) differ += filled[i] != one.normal();
    CHECK(differ == 0);
}

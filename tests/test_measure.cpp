// The measurement library: each figure against a hand-worked value, and the one NaN rule on
// broken input.
#include "attnlab/core/measure.hpp"
#include "attnlab/core/rng.hpp"
#include "attnlab/experiments/averages.hpp"
#include "attnlab/core/xt.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

using namespace attnlab;

namespace {

const double kNaN = std::nan("");

Tensor matrix(std::size_t rows, std::size_t cols, std::vector<double> values)
{
    return Tensor{"m", {"query", "key"}, Elem::float64, {rows, cols}, std::move(values)};
}

}  // namespace

TEST_CASE("tensor values: float storage reads as the exact doubles, writes round to float, and widens on demand")
{
    const Tensor narrow = to_tensor("t", {"i"}, Vec<float>{0.1f, -2.5f, 1e-30f}, Elem::float32);
    const Tensor wide = to_tensor("t", {"i"}, Vec<double>{0.1, -2.5, 1e-30}, Elem::float64);
    REQUIRE(narrow.values.narrow());
    CHECK_FALSE(wide.values.narrow());
    CHECK(narrow.values[0] == static_cast<double>(0.1f));  // the float itself, not 0.1
    CHECK(narrow.values[0] != 0.1);
    CHECK(wide.values[0] == 0.1);
    CHECK(narrow.values.to_vector() == std::vector<double>{static_cast<double>(0.1f), -2.5, static_cast<double>(1e-30f)});
    CHECK(narrow.values.slice(1, 3) == std::vector<double>{-2.5, static_cast<double>(1e-30f)});
    CHECK(narrow.values != wide.values);  // 0.1f is not 0.1
    Tensor copy = narrow;
    copy.values[1] = 1.0 / 3.0;  // stored as the float nearest 1/3
    CHECK(copy.values[1] == static_cast<double>(1.0f / 3.0f));
    copy.values[1] += 1.0;
    CHECK(copy.values[1] == static_cast<double>(static_cast<float>(static_cast<double>(1.0f / 3.0f) + 1.0)));
    CHECK(narrow.values[1] == -2.5);  // a copy is its own storage
    copy.values.transform([](double v) { return -v; });
    CHECK(copy.values[0] == -static_cast<double>(0.1f));
    std::vector<double>& w = copy.values.wide();  // widened exactly, then written in double
    CHECK_FALSE(copy.values.narrow());
    CHECK(w[0] == -static_cast<double>(0.1f));
    w[0] = 0.1;
    CHECK(copy.values[0] == 0.1);
    // The measurements read either storage.
    CHECK(max_abs(narrow) == 2.5);
    CHECK(max_abs_diff(narrow, wide) == doctest::Approx(std::abs(0.1 - static_cast<double>(0.1f))).epsilon(1e-9));
    CHECK(max_abs_diff(narrow, wide) > 0.0);
}

TEST_CASE("tensor values: a float container moved in is adopted without a copy, and copies own their storage")
{
    Vec<float> c = {1.5f, 2.5f, 3.5f};
    const float* before = c.data();
    Tensor t = to_tensor("t", {"i"}, std::move(c), Elem::float32);
    CHECK(t.values.visit([](const auto* p) { return static_cast<const void*>(p); }) == static_cast<const void*>(before));
    CHECK(t.values.to_vector() == std::vector<double>{1.5, 2.5, 3.5});
    Tensor copy = t;
    copy.values[0] = 9.0;
    CHECK(t.values[0] == 1.5);  // the copy wrote its own storage
    CHECK(copy.values[0] == 9.0);
    t.values.push_back(4.25);  // an adopted storage grows as a vector of its own
    CHECK(t.values.size() == 4);
    CHECK(t.values.to_vector() == std::vector<double>{1.5, 2.5, 3.5, 4.25});
    CHECK(t.values.narrow());
    Tensor moved = std::move(copy);
    CHECK(moved.values.to_vector() == std::vector<double>{9.0, 2.5, 3.5});
    // A float64 tensor of a float container is stored as doubles.
    Vec<float> d = {0.1f};
    CHECK_FALSE(to_tensor("d", {"i"}, std::move(d), Elem::float64).values.narrow());
}

TEST_CASE("the NaN rule: NaN = NaN, NaN against a number is infinitely far, equal infinities are equal")
{
    CHECK(diff_nan_rule(kNaN, kNaN) == 0.0);
    CHECK(diff_nan_rule(kNaN, 1.0) == kInf);
    CHECK(diff_nan_rule(1.0, kNaN) == kInf);
    CHECK(diff_nan_rule(-kInf, -kInf) == 0.0);
    CHECK(diff_nan_rule(kInf, -kInf) == kInf);
    CHECK(diff_nan_rule(1.0, 3.5) == 2.5);
    const std::vector<double> a = {1, kNaN, -kInf}, b = {1, kNaN, -kInf}, c = {1, 2, -kInf};
    CHECK(max_abs_diff(a, b) == 0.0);
    CHECK(max_abs_diff(a, c) == kInf);
    CHECK(max_abs_diff(c, std::vector<double>{1.5, 2, -kInf}) == 0.5);
}

TEST_CASE("worse() keeps a NaN that std::max would drop")
{
    CHECK(std::max(0.0, kNaN) == 0.0);  // the trap
    CHECK(std::isnan(worse(0.0, kNaN)));
    CHECK(std::isnan(worse(kNaN, 5.0)));
    CHECK(worse(1.0, 2.0) == 2.0);
    CHECK(std::isnan(max_abs(std::vector<double>{1, kNaN, 2})));
    CHECK(max_abs(std::vector<double>{1, -3, 2}) == 3.0);
    CHECK(count_nan(std::vector<double>{kNaN, 1, kNaN}.data(), 3) == 2);
}

TEST_CASE("spread by offset: 0 when entries depend on positions[i] - positions[j] alone, the spread when not")
{
    // tokens at 3, 3, 10: cells (0,1), (1,0), (0,0), (1,1), (2,2) share offset 0, (0,2) and (1,2) share -7
    const std::vector<long> at = {3, 3, 10};
    Tensor t = matrix(3, 3, {0, 0, -7, 0, 0, -7, 7, 7, 0});
    CHECK(max_spread_by_offset(t, at) == 0.0);
    CHECK(max_diagonal_spread(t) == 7.0);  // as 0, 1, 2 the same matrix is not Toeplitz
    t.values[5] = -6.5;                     // (1, 2): -6.5 beside (0, 2)'s -7
    CHECK(max_spread_by_offset(t, at) == 0.5);
    t.values[1] = kNaN;
    CHECK(std::isnan(max_spread_by_offset(t, at)));
}

TEST_CASE("diagonal spread: 0 for a Toeplitz matrix, the spread for a broken one, and the NaN rule")
{
    // [[0, -1, -2], [-1, 0, -1], [-2, -1, 0]]: symmetric ALiBi with m = 1
    Tensor t = matrix(3, 3, {0, -1, -2, -1, 0, -1, -2, -1, 0});
    CHECK(max_diagonal_spread(t) == 0.0);
    t.values[4] = -0.25;  // the main diagonal: 0, -0.25, 0
    CHECK(max_diagonal_spread(t) == 0.25);
    // a causal bias: whole diagonals of -inf are equal; one -inf among finite values is not
    Tensor causal = matrix(2, 2, {0, -kInf, -1, 0});
    CHECK(max_diagonal_spread(causal) == 0.0);
    causal.values[3] = -kInf;
    CHECK(max_diagonal_spread(causal) == kInf);
    causal.values[2] = kNaN;
    CHECK(std::isnan(max_diagonal_spread(causal)));
}

TEST_CASE("row sums and masked weights, with rows skipped and NaN kept")
{
    Tensor w = matrix(2, 3, {0.5, 0.5, 0.0, 0.2, 0.2, 0.2});
    CHECK(max_row_sum_error(w, nullptr) == doctest::Approx(0.4));
    CHECK(max_row_sum_error(w, [](std::size_t, std::size_t i) { return i == 1; }) == 0.0);
    auto future = [](std::size_t, std::size_t i, std::size_t j) { return j > i; };
    CHECK(max_masked_weight(w, future) == 0.5);  // row 0 key 1
    w.values[1] = 0.0;
    w.values[2] = kNaN;
    CHECK(std::isnan(max_masked_weight(w, future)));
    CHECK(std::isnan(max_row_sum_error(w, nullptr)));
}

TEST_CASE("row sampling says which rows it looked at")
{
    CHECK(sampled_rows(50, 1e9).size() == 1);  // short: every row, whatever the cost
    // The budget is 2^26 multiply-adds: 1024 rows of 2^16 fit, one more row does not.
    CHECK(sampled_rows(1024, 65536.0).size() == 1);
    CHECK(sampled_rows(1025, 65536.0).size() == 3);
    // floor(2^26 / (3 * 10^6)) = 22 rows per range; 32 at most.
    const auto rows = sampled_rows(4096, 1e6);
    REQUIRE(rows.size() == 3);
    CHECK(rows_description(rows, 4096, Lang::en) == "over rows 0..21, 2048..2069, 4074..4095");
    CHECK(rows_description(sampled_rows(4096, 1e5), 4096, Lang::en) == "over rows 0..31, 2048..2079, 4064..4095");
    // Short enough that the middle rows from len / 2 would reach the last ones: they end where
    // the last begin.
    CHECK(rows_description(sampled_rows(100, 1e9), 100, Lang::en) == "over rows 0..0, 50..50, 99..99");
    CHECK(rows_description(sampled_rows(100, 680000.0), 100, Lang::en) == "over rows 0..31, 36..67, 68..99");
    CHECK(rows_description(sampled_rows(100, 1e6), 100, Lang::en) == "over rows 0..21, 50..71, 78..99");
    CHECK(rows_description(sampled_rows(10, 1.0), 10, Lang::en) == "over all rows");
    CHECK(rows_description(sampled_rows(10, 1.0), 10, Lang::zh) == "全部行");
    CHECK(rows_description(rows, 4096, Lang::zh) == "第 0..21, 2048..2069, 4074..4095 行");
    CHECK(sampled_positions(1024).size() == 1024);
    const auto pos = sampled_positions(100000);
    CHECK(pos.size() == 512);
    CHECK(pos.front() == 0);
    CHECK(pos.back() == 99999);
}

TEST_CASE("orthonormal_span drops dependent vectors, and outside_span is the least-squares residual (hand values)")
{
    const auto basis = orthonormal_span({{1.0, 1.0, 0.0}, {2.0, 2.0, 0.0}, {0.0, 1.0, 0.0}});
    REQUIRE(basis.size() == 2);  // (2, 2, 0) adds nothing
    const double r = 1.0 / std::sqrt(2.0);
    CHECK(basis[0][0] == doctest::Approx(r));
    CHECK(basis[0][1] == doctest::Approx(r));
    CHECK(basis[1][0] == doctest::Approx(-r));
    CHECK(basis[1][1] == doctest::Approx(r));
    CHECK(basis[1][2] == 0.0);
    // S = [[1, 2], [3, 4]]: fitted on e_0 (x) e_0 only S(0, 0) is kept, sqrt(2^2 + 3^2 + 4^2) is left
    const std::vector<double> S = {1.0, 2.0, 3.0, 4.0};
    CHECK(outside_span(S, 2, {{1.0, 0.0}}, {{1.0, 0.0}}) == doctest::Approx(std::sqrt(29.0)));
    CHECK(outside_span(S, 2, {{1.0, 0.0}, {0.0, 1.0}}, {{1.0, 0.0}}) == doctest::Approx(std::sqrt(20.0)));  // column 1 left
    CHECK(outside_span(S, 2, {{1.0, 0.0}, {0.0, 1.0}}, {{r, r}, {-r, r}}) < 1e-14);  // full spans fit anything
    // the constant fit: on (1, 1)/sqrt 2 both sides, the mean 2.5 is kept everywhere
    CHECK(outside_span(S, 2, {{r, r}}, {{r, r}}) == doctest::Approx(std::sqrt(2.25 + 0.25 + 0.25 + 2.25)));
}

TEST_CASE("interval extremes: the one-pass queues give the scan's smallest and largest values, NaNs passed over")
{
    Rng rng(7, 0);
    std::vector<double> col(200);
    for (double& x : col) x = rng.normal();
    col[17] = kNaN, col[120] = kNaN;
    // monotone ends, as every mask's rows: causal (0, i + 1), a window, padding, empty rows
    std::vector<std::pair<long, long>> causal, window, padded, back_and_forth;
    for (long i = 0; i < 200; ++i) {
        causal.push_back({0, i + 1});
        window.push_back({std::max(0L, i - 9), i + 1});
        padded.push_back({0, std::min(i + 1, 150L)});
        back_and_forth.push_back({(i * 37) % 150, (i * 37) % 150 + 1 + i % 40});
    }
    window[0] = {0, 0};  // an empty row
    const auto scan = [&](long first, long last) {
        Extremes e;
        for (long j = first; j < last; ++j) e.lo = std::min(e.lo, col[static_cast<std::size_t>(j)]), e.hi = std::max(e.hi, col[static_cast<std::size_t>(j)]);
        return e;
    };
    for (const auto* spans : {&causal, &window, &padded, &back_and_forth}) {
        const std::vector<Extremes> got = interval_extremes(col, *spans);
        REQUIRE(got.size() == spans->size());
        for (std::size_t i = 0; i < got.size(); ++i) {
            const Extremes want = scan((*spans)[i].first, (*spans)[i].second);
            CHECK(got[i].lo == want.lo);
            CHECK(got[i].hi == want.hi);
        }
    }
    // hand-worked: [3, -1, 4, 1, 5] over [0, 2), [1, 4), [2, 5), [5, 5)
    const std::vector<Extremes> small = interval_extremes({3, -1, 4, 1, 5}, {{0, 2}, {1, 4}, {2, 5}, {5, 5}});
    CHECK(small[0].lo == -1);
    CHECK(small[0].hi == 3);
    CHECK(small[1].lo == -1);
    CHECK(small[1].hi == 4);
    CHECK(small[2].lo == 1);
    CHECK(small[2].hi == 5);
    CHECK(small[3].lo == kInf);
    CHECK(small[3].hi == -kInf);
}

#include "attnlab/core/measure.hpp"
#include "attnlab/experiments/pe.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>
#include <xtensor/xnpy.hpp>

#include <cmath>
#include <string>

using namespace attnlab;

namespace {

template <class T, class B>
double max_diff(const Mat<T>& a, const B& b)
{
    REQUIRE(a.shape(0) == b.shape(0));
    REQUIRE(a.shape(1) == b.shape(1));
    double worst = 0;
    for (std::size_t i = 0; i < a.shape(0); ++i)
        for (std::size_t j = 0; j < a.shape(1); ++j)
            worst = worse(worst, diff_nan_rule(double(a(i, j)), double(b(i, j))));
    return worst;
}

}  // namespace

TEST_CASE("interleaved frequencies and table against hand-computed values (D=4, base 10000)")
{
    // w_0 = 10000^0 = 1, w_1 = 10000^(-2/4) = 0.01.
    const auto freq = pe_frequencies<double>(4, 10000.0, PeLayout::interleaved, FreqMethod::exp_log);
    CHECK(freq(0) == 1.0);
    CHECK(freq(1) == doctest::Approx(0.01).epsilon(1e-14));
    const auto pe = sinusoidal_table<double>(3, freq, PeLayout::interleaved);
    // pos 1: sin 1, cos 1, sin 0.01, cos 0.01;  pos 2: sin 2, cos 2, sin 0.02, cos 0.02.
    CHECK(pe(1, 0) == doctest::Approx(0.8414709848078965));
    CHECK(pe(1, 1) == doctest::Approx(0.5403023058681398));
    CHECK(pe(1, 2) == doctest::Approx(0.009999833334166664));
    CHECK(pe(1, 3) == doctest::Approx(0.9999500004166653));
    CHECK(pe(2, 0) == doctest::Approx(0.9092974268256817));
    CHECK(pe(2, 1) == doctest::Approx(-0.4161468365471424));
    CHECK(pe(2, 2) == doctest::Approx(0.01999866669333308));
    CHECK(pe(2, 3) == doctest::Approx(0.9998000066665778));
}

TEST_CASE("concat frequencies use the exponent i/(D/2-1) (D=6: 1, 0.01, 0.0001)")
{
    const auto freq = pe_frequencies<double>(6, 10000.0, PeLayout::concat, FreqMethod::pow);
    CHECK(freq(0) == 1.0);
    CHECK(freq(1) == doctest::Approx(0.01).epsilon(1e-14));
    CHECK(freq(2) == doctest::Approx(0.0001).epsilon(1e-14));
    const auto pe = sinusoidal_table<double>(2, freq, PeLayout::concat);
    CHECK(pe(1, 0) == doctest::Approx(std::sin(1.0)));   // sin half first
    CHECK(pe(1, 2) == doctest::Approx(std::sin(1e-4)));
    CHECK(pe(1, 3) == doctest::Approx(std::cos(1.0)));   // then the cos half
}

TEST_CASE("tensor2tensor's rule with min_timescale m, w_i = m (base/m)^(-i/(P-1)), and the paper's frequencies on either layout")
{
    // D = 4, base (max_timescale) 8, m = 2: P - 1 = 1, so w = 2 (8/2)^0, 2 (8/2)^-1 = 2, 0.5
    for (FreqMethod method : {FreqMethod::exp_log, FreqMethod::pow}) {
        const auto freq = pe_frequencies<double>(4, 8.0, PeFreqRule{PeFrequencies::t2t, 2.0}, method);
        CHECK(freq(0) == doctest::Approx(2.0).epsilon(1e-15));
        CHECK(freq(1) == doctest::Approx(0.5).epsilon(1e-15));
    }
    const auto ref = pe_frequencies_reference(4, 8.0, PeFreqRule{PeFrequencies::t2t, 2.0});
    CHECK(static_cast<double>(ref[1]) == doctest::Approx(0.5).epsilon(1e-18));
    // the paper's w_i = base^(-2i/D) whatever the layout: D = 4 gives 1, 0.01
    const auto paper = pe_frequencies<double>(4, 10000.0, PeFreqRule{PeFrequencies::paper, 1.0}, FreqMethod::pow);
    CHECK(paper(1) == doctest::Approx(0.01).epsilon(1e-14));
    // m = 1 computes the layouts' own rules bit for bit
    for (FreqMethod method : {FreqMethod::exp_log, FreqMethod::pow}) {
        const auto a = pe_frequencies<float>(12, 10000.0, PeLayout::concat, method);
        const auto b = pe_frequencies<float>(12, 10000.0, PeFreqRule{PeFrequencies::t2t, 1.0}, method);
        for (std::size_t i = 0; i < a.size(); ++i) CHECK(a(i) == b(i));
    }
}

TEST_CASE("tables match PyTorch reference fixtures (data/make_fixtures.py)")
{
    const std::string dir = std::string(ATTNLAB_DATA_DIR) + "/fixtures/";
    struct Case { const char* file; PeLayout layout; FreqMethod method; };
    const Case cases[] = {{"pe_interleaved_exp_log", PeLayout::interleaved, FreqMethod::exp_log},
                          {"pe_interleaved_pow", PeLayout::interleaved, FreqMethod::pow},
                          {"pe_concat_exp_log", PeLayout::concat, FreqMethod::exp_log}};
    for (const auto& c : cases) {
        CAPTURE(c.file);
        const auto ref32 = xt::load_npy<float>(dir + c.file + "_float32.npy");
        const auto ours32 = sinusoidal_table<float>(64, pe_frequencies<float>(16, 10000, c.layout, c.method), c.layout);
        // Different sin/cos implementations (PyTorch's vectorised ones, libm here) may differ
        // in the last bit or two; angles reach 63 rad, where one float32 ulp is 3.8e-6.
        CHECK(max_diff(ours32, ref32) <= 4e-6);
        const auto ref64 = xt::load_npy<double>(dir + c.file + "_float64.npy");
        const auto ours64 = sinusoidal_table<double>(64, pe_frequencies<double>(16, 10000, c.layout, c.method), c.layout);
        CHECK(max_diff(ours64, ref64) <= 1e-13);
    }
}

// The table in a 16-bit type against the articles' module run op by op in it with PyTorch.
template <class T>
double max_diff_16bit(const std::string& file)
{
    const auto ref = xt::load_npy<double>(std::string(ATTNLAB_DATA_DIR) + "/fixtures/" + file + ".npy");
    const auto ours = sinusoidal_table<T>(300, pe_frequencies<T>(16, 10000, PeLayout::interleaved, FreqMethod::exp_log), PeLayout::interleaved);
    const Mat<double> got = xt::cast<double>(ours);
    return max_diff(got, ref);
}

TEST_CASE("float16 and bfloat16 tables match PyTorch's, position 257 collides with 256 in bfloat16")
{
    CHECK(max_diff_16bit<f16>("pe_interleaved_exp_log_float16") == 0.0);
    CHECK(max_diff_16bit<bf16>("pe_interleaved_exp_log_bfloat16") == 0.0);
    const auto bf = sinusoidal_table<bf16>(300, pe_frequencies<bf16>(16, 10000, PeLayout::interleaved, FreqMethod::exp_log), PeLayout::interleaved);
    auto row = [&](std::size_t pos) { return std::vector<float>(bf.data() + pos * 16, bf.data() + pos * 16 + 16); };
    CHECK(row(257) == row(256));  // arange(300) in bfloat16 holds 256 at index 257
    CHECK(row(255) != row(256));
}

TEST_CASE("each measurement is zero on a correct table and non-zero on a broken one")
{
    const auto freq_x = pe_frequencies<double>(8, 10000.0, PeLayout::interleaved, FreqMethod::exp_log);
    const Tensor freq = tt(freq_x);
    const Tensor pe = tt(sinusoidal_table<double>(16, freq_x, PeLayout::interleaved));
    CHECK(row0_error(pe, PeLayout::interleaved) == 0.0);
    CHECK(shift_error(pe, freq, PeLayout::interleaved, 3) < 1e-13);
    CHECK(max_dot_spread(pe, 15) < 1e-12);
    CHECK(min_pair_distance(pe, 15) > 0.1);
    CHECK(max_freq_ratio(freq) < 1.0);

    // The classic slip: the table read as [sin | cos] though it was built interleaved.
    CHECK(row0_error(pe, PeLayout::concat) == 1.0);
    CHECK(shift_error(pe, freq, PeLayout::concat, 1) > 0.1);

    // An absolute-position offset added to one row breaks linearity and offset-only dots.
    Tensor broken = pe;
    broken.values[5 * 8 + 0] += 0.01;
    CHECK(shift_error(broken, freq, PeLayout::interleaved, 1) >= 0.0099);
    CHECK(max_dot_spread(broken, 15) > 0.001);

    // Two equal rows are caught.
    std::copy(broken.values.wide().begin() + 6 * 8, broken.values.wide().begin() + 7 * 8, broken.values.wide().begin() + 7 * 8);
    CHECK(min_pair_distance(broken, 15) == 0.0);

    // A value outside [-1, 1] (a table scaled by mistake) is caught by the bound.
    Tensor scaled = pe;
    for (double& v : scaled.values.wide()) v *= 1.5;
    CHECK(max_abs(scaled) > 1.0);
    CHECK(max_abs(pe) <= 1.0);

    // Rising frequencies are caught.
    Tensor rising = freq;
    std::swap(rising.values.wide()[1], rising.values.wide()[2]);
    CHECK(max_freq_ratio(rising) > 1.0);

    // NaN anywhere never passes: each measurement returns NaN (or the distance-based ones NaN).
    Tensor with_nan = pe;
    with_nan.values[3 * 8 + 2] = std::nan("");
    CHECK(std::isnan(shift_error(with_nan, freq, PeLayout::interleaved, 1)));
    CHECK(std::isnan(max_dot_spread(with_nan, 15)));
    CHECK(std::isnan(min_pair_distance(with_nan, 15)));
    CHECK(std::isnan(max_abs(with_nan)));
    with_nan.values[1] = std::nan("");
    CHECK(std::isnan(row0_error(with_nan, PeLayout::interleaved)));
}

TEST_CASE("the all-pairs checks cover every pair for usual sizes and stay bounded for huge ones")
{
    CHECK(pair_offset_budget(8, 8) == 7);
    CHECK(pair_offset_budget(4096, 64) == 4095);
    CHECK(pair_offset_budget(4096, 512) == 512);        // 2^30 / (4096 * 512)
    CHECK(pair_offset_budget(1L << 24, 1L << 10) == 1);  // never zero
    // Offsets beyond the budget are not looked at: a duplicate 10 apart goes unseen at k <= 5.
    const auto freq = pe_frequencies<double>(8, 10000.0, PeLayout::interleaved, FreqMethod::exp_log);
    Tensor pe = tt(sinusoidal_table<double>(16, freq, PeLayout::interleaved));
    std::copy(pe.values.wide().begin() + 2 * 8, pe.values.wide().begin() + 3 * 8, pe.values.wide().begin() + 12 * 8);
    CHECK(min_pair_distance(pe, 5) > 0.0);
    CHECK(min_pair_distance(pe, 10) == 0.0);
}

TEST_CASE("run_pe: the log-space claim is measured: at D = 512 in float32 pow is the more accurate")
{
    RunContext ctx;
    PeParams p;
    p.len = 2;
    p.dim = 512;
    const Check c = find_check(run_pe(p, ctx), "log_space_more_accurate");
    CHECK(c.role == Role::article);
    CHECK(c.measured > 1.0);
    CHECK_FALSE(c.passed());
}

TEST_CASE("frequency error of both methods against the long double reference")
{
    const auto ref = pe_frequencies_reference(512, 10000.0, PeLayout::interleaved);
    const double e_exp = max_rel_error(pe_frequencies<float>(512, 10000.0, PeLayout::interleaved, FreqMethod::exp_log), ref);
    const double e_pow = max_rel_error(pe_frequencies<float>(512, 10000.0, PeLayout::interleaved, FreqMethod::pow), ref);
    CHECK(e_exp > 0.0);
    CHECK(e_pow > 0.0);
    const double bound = 1.1920929e-7 * (2 * std::log(10000.0) + 4);
    CHECK(e_exp <= bound);
    CHECK(e_pow <= bound);
    // A wrong exponent (D/2 instead of D) is far outside the bound.
    const auto wrong = pe_frequencies<float>(256, 10000.0, PeLayout::interleaved, FreqMethod::pow);
    auto first256 = Vec<float>(xt::view(wrong, xt::range(0, 128)));
    std::vector<long double> ref128(ref.begin(), ref.begin() + 128);
    CHECK(max_rel_error(first256, ref128) > 0.5);
}

TEST_CASE("run_pe: all invariants pass by default in both dtypes and layouts")
{
    for (DType dt : {DType::float32, DType::float64}) {
        for (PeLayout layout : {PeLayout::interleaved, PeLayout::concat}) {
            RunContext ctx;
            ctx.dtype = dt;
            PeParams p;
            p.len = 200;
            p.dim = 32;
            p.layout = layout;
            p.max_len = 500;
            p.embed = true;
            p.batch = 2;
            p.scale_embed = true;
            const Report r = run_pe(p, ctx);
            CAPTURE(name_of(dt));
            CAPTURE(name_of(layout));
            check_invariants_hold(r, {"row0_exact", "values_bounded", "rows_distinct", "freq_falling", "relative_shift_linear",
                                      "dot_depends_on_offset", "slice_matches_direct", "freq_exp_log_accuracy",
                                      "freq_pow_accuracy", "log_space_more_accurate", "layouts_not_a_permutation",
                                      "embed_broadcast", "slicing_bug_loses_position", "unsliced_table_shape_error",
                                      "max_wavelength_is_base", "base_sets_highest_frequency_period", "angle_error_grows"});
            CHECK(r.passed());
            CHECK(r.find("pe")->shape[0] == 200);
            CHECK(r.find("h")->shape[0] == 2);
        }
    }
}

TEST_CASE("run_pe: the layouts differ by more than a permutation and the D=4 figure is 1 - cos")
{
    RunContext ctx;
    ctx.dtype = DType::float64;
    PeParams p;
    p.len = 8;
    p.dim = 4;
    const Report r = run_pe(p, ctx);
    // interleaved D=4 uses w = (1, 0.01); concat uses (1, 1e-4): the second pair differs.
    const Check c = find_check(r, "layouts_not_a_permutation");
    CHECK(c.passed());
    double expected = 0;
    for (int pos = 0; pos < 8; ++pos) {
        expected = std::max(expected, std::abs(std::sin(pos * 0.01) - std::sin(pos * 1e-4)));
        expected = std::max(expected, std::abs(std::cos(pos * 0.01) - std::cos(pos * 1e-4)));
    }
    CHECK(c.measured == doctest::Approx(expected).epsilon(1e-12));
}

TEST_CASE("run_pe: --tol 0 makes the float32 shift check fail (the figure is not zero)")
{
    RunContext ctx;
    ctx.tol = 0.0;
    PeParams p;
    p.len = 64;
    p.dim = 16;
    const Report r = run_pe(p, ctx);
    CHECK_FALSE(find_check(r, "relative_shift_linear").passed());
    CHECK_FALSE(r.passed());
}

TEST_CASE("run_pe: input errors")
{
    RunContext ctx;
    PeParams p;
    p.dim = 7;
    CHECK_THROWS_WITH_AS(run_pe(p, ctx), doctest::Contains("--dim must be even"), InputError);
    p.dim = 8;
    p.len = 10;
    p.max_len = 8;
    CHECK_THROWS_WITH_AS(run_pe(p, ctx),
                         "input length exceeds the precomputed max-len (--len 10 > --max-len 8)",
                         InputError);
    p.max_len = 0;
    p.len = 1 << 20;
    p.dim = 1 << 12;
    CHECK_THROWS_WITH_AS(run_pe(p, ctx), doctest::Contains("above the memory budget"), InputError);
}

TEST_CASE("run_pe: §2.1's longest wavelength is the base only where 2 pi base^((D-2)/D) happens to be: D = 10")
{
    PeParams p;
    p.dim = 10;  // 2 pi 10000^(8/10) = 9958: within 1% of 10000
    CHECK(find_check(run_pe(p, RunContext{}), "max_wavelength_is_base").passed());
    p.dim = 8;  // 2 pi 10000^(6/8) = 6283
    const Check c = find_check(run_pe(p, RunContext{}), "max_wavelength_is_base");
    CHECK_FALSE(c.passed());
    CHECK(c.measured == doctest::Approx(10000.0 / (2.0 * M_PI * std::pow(10000.0, 0.75))).epsilon(1e-5));
    // the articles' D = 512: the longest wavelength is 2 pi 10000^(510/512) = 60611, 6.06 times the base
    p.dim = 512;
    const Check big = find_check(run_pe(p, RunContext{}), "max_wavelength_is_base");
    CHECK_FALSE(big.passed());
    CHECK(big.measured == doctest::Approx(2.0 * M_PI * std::pow(10000.0, 510.0 / 512.0) / 10000.0).epsilon(1e-6));
    CHECK(big.measured == doctest::Approx(6.0611).epsilon(1e-4));
    CHECK(big.metric.find("the claim leaves out 2 pi and the exponent (D-2)/D") != std::string::npos);
    // D = 2 with base 2 pi: the one case where the base is the longest wavelength exactly
    p.dim = 2;
    p.base = 2.0 * M_PI;
    CHECK(find_check(run_pe(p, RunContext{}), "max_wavelength_is_base").passed());
}

TEST_CASE("run_pe: FAQ Q6's 'the base sets the highest-frequency period' is refuted: it is 2 pi for every base")
{
    PeParams p;
    p.dim = 512;
    const Check c = find_check(run_pe(p, RunContext{}), "base_sets_highest_frequency_period");
    CHECK(c.role == Role::article);
    CHECK_FALSE(c.passed());
    CHECK(c.measured == 0.0);
    // the lowest-frequency period is what moves: 2 pi base^(510/512) from base 100 to 500000
    CHECK(c.metric.find(fmt::format("{:.4g}..{:.4g}", 2.0 * M_PI * std::pow(100.0, 510.0 / 512.0),
                                    2.0 * M_PI * std::pow(500000.0, 510.0 / 512.0))) != std::string::npos);
    CHECK(c.metric.find("it is 6.283 for each") != std::string::npos);
    p.dim = 2;  // one pair: nothing to compare
    for (const Check& other : run_pe(p, RunContext{}).checks) CHECK(other.name != "base_sets_highest_frequency_period");
}

TEST_CASE("run_pe: the unsliced table goes wrong exactly when L != max_len: a shape error, or with L = 1 a silent broadcast")
{
    PeParams p;
    p.embed = true;
    p.max_len = 20;
    const Check error = find_check(run_pe(p, RunContext{}), "unsliced_table_shape_error");
    CHECK(error.passed());
    CHECK(error.measured == 1.0);
    CHECK(error.claim.find("here a shape error") != std::string::npos);
    p.len = 1;  // [B, 1, D] + [1, max_len, D] broadcasts to [B, max_len, D] without an error
    p.batch = 2;
    const Check silent = find_check(run_pe(p, RunContext{}), "unsliced_table_shape_error");
    CHECK(silent.passed());
    CHECK(silent.measured == 2.0);
    CHECK(silent.claim.find("a silent broadcast to [2, 20, 8]") != std::string::npos);
    p.len = 8;
    p.batch = 1;
    p.max_len = 0;  // L = max_len: x + self.pe broadcasts, the bug does not show
    const Check c = find_check(run_pe(p, RunContext{}), "unsliced_table_shape_error");
    CHECK(c.role == Role::demonstration);
    CHECK_FALSE(c.passed());
}

// The tiled attention kernel held to the plain-loop reference at the block edges, its results
// bit-identical whatever the thread count or the rows asked for; its exp against std::exp
// with the documented error bound; the BLAS projection against its plain loop; the mask's
// visible interval against masked(); the probe rows' sums, the in-place head projections and
// the views of a run's tensors.
#include "attnlab/core/attention.hpp"
#include "attnlab/core/blas.hpp"
#include "attnlab/core/error_model.hpp"
#include "attnlab/core/fast_exp.hpp"
#include "attnlab/core/isa.hpp"
#include "attnlab/core/microkernel.hpp"
#include "attnlab/core/rng.hpp"
#include "attnlab/core/position/alibi.hpp"
#include "attnlab/experiments/bench.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <vector>

using namespace attnlab;

namespace {

template <class T>
Ten4<T> random4(std::size_t a, std::size_t b, std::size_t c, std::size_t d, std::uint64_t stream)
{
    Ten4<T> t = xt::zeros<T>({a, b, c, d});
    fill_normal(t.data(), t.size(), 11, stream);
    return t;
}

// The targets with fused multiply-adds (isa.hpp): they give the same bits as each other, and
// the others the same as each other.
bool fused(Isa isa) { return isa == Isa::avx2 || isa == Isa::avx512; }

// f(isa) under each target the CPU has, the kernels running it, named in any failure.
template <class F>
void on_every_target(F f)
{
    for (const Isa isa : cpu_isas()) {
        INFO(name_of(isa));
        const IsaScope scope(isa);
        f(isa);
    }
}

struct EdgeCase {
    std::size_t L, S;
    MaskKind kind;
    Align align;
    double fill;
    SoftmaxKind softmax;
    bool alibi;
    std::size_t d = 4;  // 64 and 128 take the kernel's own float32 products
};

template <class T>
void check_edge(const EdgeCase& c, double tol)
{
    CAPTURE(c.L);
    CAPTURE(c.S);
    CAPTURE(name_of(c.kind));
    CAPTURE(name_of(c.align));
    CAPTURE(c.fill);
    CAPTURE(name_of(c.softmax));
    CAPTURE(c.alibi);
    CAPTURE(c.d);
    const auto q = random4<T>(2, 2, c.L, c.d, 1), k = random4<T>(2, 1, c.S, c.d, 2), v = random4<T>(2, 1, c.S, c.d, 3);
    MaskSpec m;
    m.kind = c.kind;
    m.queries = static_cast<long>(c.L);
    m.keys = static_cast<long>(c.S);
    std::vector<long> lengths{static_cast<long>(c.S), static_cast<long>(c.S) / 2};  // half the second sequence padded
    m.lengths.swap(lengths);
    m.window = 37;
    m.align = c.align;
    m.fill = c.fill;
    const std::vector<double> slopes = alibi_slopes(2, SlopeRule::reference_code);
    AttentionInputs<T> in;
    in.q = &q, in.k = &k, in.v = &v, in.mask = &m, in.scale = 0.35, in.softmax = c.softmax;
    if (c.alibi) in.alibi_slopes = &slopes, in.alibi_q0 = 3;
    const auto ref = attention_reference(in, RowRange{0, static_cast<long>(c.L)});
    const auto main = attention(in, Matrices::keep);
    CHECK(max_abs_diff(main.out, ref.out) <= tol);
    CHECK(max_abs_diff(main.weights, ref.weights) <= tol);
    CHECK(max_abs_diff(main.scores, ref.scores) <= tol * 100.0);
    // Without the matrices the output is the same bits.
    CHECK(max_abs_diff(attention(in, Matrices::drop).out, main.out) == 0.0);
}

}  // namespace

TEST_CASE("kernel: equals the reference at the block edges, for every mask, fill, softmax and ALiBi, on every target")
{
    on_every_target([](Isa) {
        // d = 128: two panels of columns in p v; q k^T over k = 128
        for (std::size_t S : {kBlockK - 1, kBlockK + 64})
            for (MaskKind kind : {MaskKind::none, MaskKind::causal, MaskKind::window})
                check_edge<float>({kBlockQ + 1, S, kind, Align::upper_left, -INFINITY, SoftmaxKind::plain, true, 128}, 2e-5);
    });
}

TEST_CASE("kernel: the float32 panel product equals its plain loop for every row count and remainder, on every target")
{
    const std::size_t k = 37, lda = 41, ldb = 70, ldc = 66;
    std::vector<float> A(13 * lda), B(k * ldb), C0(13 * ldc);
    fill_normal(A.data(), A.size(), 3, 1);
    fill_normal(B.data(), B.size(), 3, 2);
    fill_normal(C0.data(), C0.size(), 3, 3);
    const std::vector<Isa> isas = cpu_isas();
    REQUIRE(isas.back() == Isa::scalar);
    for (const Isa isa : isas)
        for (std::size_t n = 0; n <= 13; ++n)
            for (bool accumulate : {false, true}) {
                CAPTURE(name_of(isa));
                CAPTURE(n);
                CAPTURE(accumulate);
                std::vector<float> fast = C0, plain = C0, twin = C0, active = C0;
                panel64_on(isa, n, k, A.data(), lda, B.data(), ldb, fast.data(), ldc, accumulate);
                panel64_reference(n, k, A.data(), lda, B.data(), ldb, plain.data(), ldc, accumulate);
                double worst = 0.0;
                for (std::size_t i = 0; i < fast.size(); ++i) worst = std::max(worst, std::abs(double(fast[i]) - double(plain[i])));
                CHECK(worst <= 1e-5);
                for (std::size_t r = 0; r < 13; ++r)  // columns past 64 and rows past n untouched
                    for (std::size_t c = 0; c < ldc; ++c)
                        if (r >= n || c >= kPanelWidth) CHECK(fast[r * ldc + c] == C0[r * ldc + c]);
                if (n == 7) {  // a row's bits do not depend on where it sits in a panel
                    std::vector<float> alone = C0;
                    panel64_on(isa, 1, k, A.data() + 6 * lda, lda, B.data(), ldb, alone.data() + 6 * ldc, ldc, accumulate);
                    for (std::size_t c = 0; c < kPanelWidth; ++c) CHECK(alone[6 * ldc + c] == fast[6 * ldc + c]);
                }
                // avx2 gives avx512's bits, sse4 scalar's; and panel64 runs the active target.
                const Isa other = fused(isa) ? isas.front() : Isa::scalar;
                panel64_on(other, n, k, A.data(), lda, B.data(), ldb, twin.data(), ldc, accumulate);
                if (fused(other) == fused(isa)) CHECK(fast == twin);
                const IsaScope scope(isa);
                panel64(n, k, A.data(), lda, B.data(), ldb, active.data(), ldc, accumulate);
                CHECK(fast == active);
            }
}

TEST_CASE("kernel: the key tile's transposition in registers equals its plain loop bit for bit, on every target")
{
    on_every_target([&](Isa) {
        for (const auto& [nk, d] : {std::pair<std::size_t, std::size_t>{64, 16}, {256, 64}, {64, 128}, {192, 32}}) {
            CAPTURE(nk);
            CAPTURE(d);
            std::vector<float> k(nk * d), fast(nk * d, -1.0f), plain(nk * d, -2.0f);
            fill_normal(k.data(), k.size(), 5, 1);
            transpose_scaled(nk, d, 0.125f, k.data(), fast.data());
            transpose_scaled_reference(nk, d, 0.125f, k.data(), plain.data());
            CHECK(fast == plain);
            CHECK(plain[3 * 64 + 5] == 0.125f * k[5 * d + 3]);  // row c of a panel is column c of k
            // key 64 p + j, column c, sits in panel p at row c, column j
            CHECK(plain[(nk / 64 - 1) * d * 64 + (d - 1) * 64 + 63] == 0.125f * k[(nk - 1) * d + d - 1]);
            transpose_scaled(nk, d, 1.0f / 3.0f, k.data(), fast.data());
            transpose_scaled_reference(nk, d, 1.0f / 3.0f, k.data(), plain.data());
            CHECK(fast == plain);
        }
    });
}

TEST_CASE("kernel: fully masked rows are NaN under the plain softmax and zero under the safe one")
{
    const auto q = random4<double>(1, 1, 3, 4, 1), k = random4<double>(1, 1, 300, 4, 2), v = k;
    MaskSpec m;
    m.kind = MaskKind::causal;
    m.queries = 3;
    m.keys = 300;
    m.diagonal = -1;  // rows 0 and 1 see nothing (j < i - 1)
    AttentionInputs<double> in;
    in.q = &q, in.k = &k, in.v = &v, in.mask = &m;
    const auto plain = attention(in, Matrices::drop);
    CHECK(std::isnan(plain.out(0, 0, 0, 0)));
    CHECK(plain.stats.nan_weights == 600);
    CHECK(std::isnan(plain.stats.max_masked_weight));
    CHECK(std::isnan(plain.stats.max_row_sum_error));  // not measured without kept weights
    in.softmax = SoftmaxKind::safe;
    const auto safe = attention(in, Matrices::keep);
    CHECK(safe.out(0, 0, 0, 0) == 0.0);
    CHECK(safe.stats.nan_weights == 0);
    CHECK(safe.stats.max_masked_weight == 0.0);
    CHECK(safe.stats.max_row_sum_error < 1e-14);
    CHECK(safe.out(0, 0, 1, 0) == 0.0);
    CHECK(safe.out(0, 0, 2, 0) == doctest::Approx(attention_reference(in, RowRange{2, 3}).out(0, 0, 0, 0)).epsilon(1e-12));
}

TEST_CASE("kernel: the same bits for any thread count and any row range, on every target")
{
    const std::size_t L = 3 * kBlockQ + 17;
    on_every_target([&](Isa) {
        for (const std::size_t d : {std::size_t{16}, std::size_t{64}}) {  // 64: the kernel's own p v product
            CAPTURE(d);
            const auto q = random4<float>(1, 3, L, d, 1), k = random4<float>(1, 3, L, d, 2), v = random4<float>(1, 3, L, d, 3);
            MaskSpec m;
            m.kind = MaskKind::causal;
            m.queries = m.keys = static_cast<long>(L);
            AttentionInputs<float> in;
            in.q = &q, in.k = &k, in.v = &v, in.mask = &m, in.scale = 0.25;
            in.threads = 1;
            const auto one = attention(in, Matrices::drop);
            for (unsigned threads : {2u, 3u, 7u}) {
                in.threads = threads;
                CHECK(max_abs_diff(attention(in, Matrices::drop).out, one.out) == 0.0);
            }
            for (const RowRange rr : {RowRange{0, 1}, RowRange{static_cast<long>(kBlockQ) - 3, static_cast<long>(kBlockQ) + 3}, RowRange{static_cast<long>(L) - 5, static_cast<long>(L)}}) {
                const auto part = attention(in, Matrices::drop, rr);
                double worst = 0.0;
                for (std::size_t h = 0; h < 3; ++h)
                    for (long i = rr.begin; i < rr.end; ++i)
                        for (std::size_t c = 0; c < d; ++c)
                            worst = std::max(worst, std::abs(double(part.out(0, h, static_cast<std::size_t>(i - rr.begin), c)) - double(one.out(0, h, i, c))));
                CHECK(worst == 0.0);
                CHECK(part.out.shape(2) == static_cast<std::size_t>(rr.end - rr.begin));  // the range's rows only
                CHECK(max_abs_diff_rows(part.out, one.out.data(), L, rr) == 0.0);
            }
        }
    });
}

TEST_CASE("kernel: the targets with FMA give the same bits as each other, and those without the same as each other")
{
    const std::size_t L = kBlockQ + 40, d = 64;
    const auto q = random4<float>(1, 2, L, d, 1), k = random4<float>(1, 2, L, d, 2), v = random4<float>(1, 2, L, d, 3);
    MaskSpec m;
    m.kind = MaskKind::causal;
    m.queries = m.keys = static_cast<long>(L);
    AttentionInputs<float> in;
    in.q = &q, in.k = &k, in.v = &v, in.mask = &m, in.scale = 0.125;
    std::vector<float> x(300);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = -0.37f * static_cast<float>(i % 97) - 0.001f * static_cast<float>(i);
    std::map<bool, Ten4<float>> out;
    std::map<bool, std::vector<float>> exps;
    std::map<bool, float> sums;
    on_every_target([&](Isa isa) {
        const Ten4<float> o = attention(in, Matrices::drop).out;
        std::vector<float> e = x;
        const float sum = exp_shifted_sum(e.data(), e.size(), 0.5f);
        if (out.count(fused(isa)) == 0) {
            out[fused(isa)] = o, exps[fused(isa)] = e, sums[fused(isa)] = sum;
            return;
        }
        CHECK(max_abs_diff(o, out[fused(isa)]) == 0.0);
        CHECK(e == exps[fused(isa)]);
        CHECK(sum == sums[fused(isa)]);
    });
    // The two groups differ (by rounding only): fused products are not the others' bits.
    if (out.size() == 2) {
        CHECK(max_abs_diff(out[true], out[false]) > 0.0);
        CHECK(max_abs_diff(out[true], out[false]) <= 1e-5);
    }
}

TEST_CASE("kernel: a call after another of the same shape reads its own keys, not the scratch the last one kept")
{
    const std::size_t L = kBlockK + 64, d = 64;  // float32, d = 64: the kernel's own products and kept key tiles
    // One head: the last call's thread ends on the head this one starts with.
    const auto q = random4<float>(1, 1, L, d, 1), k1 = random4<float>(1, 1, L, d, 2), k2 = random4<float>(1, 1, L, d, 4),
               v = random4<float>(1, 1, L, d, 3);
    AttentionInputs<float> first, second;
    first.q = second.q = &q, first.v = second.v = &v, first.scale = second.scale = 0.125;
    first.k = &k1, second.k = &k2;
    const auto ref1 = attention_reference(first, RowRange{0, static_cast<long>(L)}).out, ref2 = attention_reference(second, RowRange{0, static_cast<long>(L)}).out;
    // The bound attend's check holds the kernel to: S + d operations, rounded at most 4 times,
    // on the scale of the values.
    const double tol = accumulate_then_store(DType::float32, double(L + d), 4.0) * (double(xt::amax(xt::abs(v))()) + 1.0);
    REQUIRE(max_abs_diff(ref1, ref2) > 10.0 * tol);  // reading the other call's keys would fail
    for (unsigned threads : {1u, 2u}) {
        CAPTURE(threads);
        first.threads = second.threads = threads;
        // Each call leaves its key tiles in the kept scratch for the next.
        for (const AttentionInputs<float>* in : {&first, &second, &first, &second})
            CHECK(max_abs_diff(attention(*in, Matrices::drop).out, in == &first ? ref1 : ref2) <= tol);
    }
}

TEST_CASE("kernel: ALiBi computed tile by tile equals the stored bias tensor")
{
    const auto q = random4<double>(1, 4, 70, 8, 1), k = random4<double>(1, 4, 90, 8, 2), v = random4<double>(1, 4, 90, 8, 3);
    const std::vector<double> slopes = alibi_slopes(4, SlopeRule::reference_code);
    const Ten3<double> bias = alibi_bias<double>(slopes, 70, 90, AlibiVariant::symmetric, 20);
    AttentionInputs<double> stored, computed;
    stored.q = computed.q = &q, stored.k = computed.k = &k, stored.v = computed.v = &v;
    stored.head_bias = &bias;
    computed.alibi_slopes = &slopes, computed.alibi_q0 = 20;
    CHECK(max_abs_diff(attention(stored, Matrices::keep).scores, attention(computed, Matrices::keep).scores) == 0.0);
}

namespace {
void exp_within_bound()
{
    std::vector<float> xf;
    for (double x = -87.3; x <= 0.0; x += 1.3e-4) xf.push_back(static_cast<float>(x));
    std::vector<float> yf = xf;
    exp_inplace(yf.data(), yf.size());
    double worst_f = 0.0;
    for (std::size_t i = 0; i < xf.size(); ++i) {
        const double e = std::exp(static_cast<double>(xf[i]));
        worst_f = std::max(worst_f, std::abs(static_cast<double>(yf[i]) - e) / e);
    }
    CHECK(worst_f <= 2.4e-7);  // 4 ulp of float
    std::vector<double> xd;
    for (double x = -708.0; x <= 0.0; x += 7.7e-4) xd.push_back(x);
    std::vector<double> yd = xd;
    exp_inplace(yd.data(), yd.size());
    double worst_d = 0.0;
    for (std::size_t i = 0; i < xd.size(); ++i) {
        const long double e = std::exp(static_cast<long double>(xd[i]));
        worst_d = std::max(worst_d, static_cast<double>(std::fabs(static_cast<long double>(yd[i]) - e) / e));
    }
    CHECK(worst_d <= 8.9e-16);  // 4 ulp of double
    float special[] = {-INFINITY, NAN, -100.0f, 0.0f};
    exp_inplace(special, 4);
    CHECK(special[0] == 0.0f);
    CHECK(std::isnan(special[1]));
    CHECK(special[2] == 0.0f);  // below the normal range: 0
    CHECK(special[3] == 1.0f);
    // The end of the normal range: 0 below -87.68, a rounded subnormal up to -87.3, each within
    // 1.2e-38 of exp; in the double form, 0 below -708.
    std::vector<float> edge;
    for (double x = -90.0; x < -87.3; x += 1e-3) edge.push_back(static_cast<float>(x));
    std::vector<float> edge_y = edge;
    exp_inplace(edge_y.data(), edge_y.size());
    double worst_abs = 0.0;
    for (std::size_t i = 0; i < edge.size(); ++i) {
        worst_abs = std::max(worst_abs, std::abs(static_cast<double>(edge_y[i]) - std::exp(static_cast<double>(edge[i]))));
        if (edge[i] < -87.69f) CHECK(edge_y[i] == 0.0f);
    }
    CHECK(worst_abs <= 1.2e-38);
    float near[] = {-87.5f};
    exp_inplace(near, 1);
    CHECK(near[0] > 0.0f);
    double below[] = {-708.5, -1e300};
    exp_inplace(below, 2);
    CHECK(below[0] == 0.0);
    CHECK(below[1] == 0.0);
}
}  // namespace

TEST_CASE("fast exp: within its documented bound of std::exp over the softmax's domain, on every target")
{
    on_every_target([](Isa) { exp_within_bound(); });
}

namespace {
void row_steps()
{
    std::vector<double> row = {0.5, -1.0, NAN, 2.0, -INFINITY};
    for (int i = 0; i < 40; ++i) row.push_back(-0.01 * i);
    CHECK(row_max(row.data(), row.size(), -INFINITY) == 2.0);  // NaN ignored
    CHECK(row_max(row.data(), 2, 7.0) == 7.0);
    std::vector<double> p = {0.0, -1.0, -INFINITY};
    const double sum = exp_shifted_sum(p.data(), p.size(), 1.0);
    CHECK(p[0] == doctest::Approx(std::exp(-1.0)).epsilon(1e-15));
    CHECK(p[1] == doctest::Approx(std::exp(-2.0)).epsilon(1e-15));
    CHECK(p[2] == 0.0);
    CHECK(sum == doctest::Approx(std::exp(-1.0) + std::exp(-2.0)).epsilon(1e-15));
}
}  // namespace

TEST_CASE("fast exp: the row steps of the streaming softmax, on every target")
{
    on_every_target([](Isa) { row_steps(); });
}

namespace {
void row_step_bits()
{
    // Every length up to three blocks and a tail, over values that reach both ends of the
    // reduction, -88's clamp, -inf and NaN.
    std::vector<float> values = {0.0f, -0.0f, -1e-7f, -0.3465736f, -0.3465737f, -1.0f, -20.5f, -87.3f, -87.68f, -87.9f, -88.0f,
                                 -88.5f, -1e30f, -INFINITY, NAN};
    for (int i = 0; i < 40; ++i) values.push_back(-0.731f * static_cast<float>(i));
    for (std::size_t n = 0; n <= 53; ++n) {
        CAPTURE(n);
        std::vector<float> x(n), want(n);
        for (std::size_t i = 0; i < n; ++i) x[i] = values[(i * 7) % values.size()] + 0.25f;
        for (std::size_t i = 0; i < n; ++i) want[i] = x[i] - 0.25f;
        exp_inplace(want.data(), n);
        float lanes[16] = {}, tail = 0.0f;
        const std::size_t whole = n / 16 * 16;
        for (std::size_t i = 0; i < n; ++i) (i < whole ? lanes[i % 16] : tail) += want[i];
        float want_sum = 0.0f;
        for (const float lane : lanes) want_sum += lane;
        want_sum += tail;
        const float sum = exp_shifted_sum(x.data(), n, 0.25f);
        for (std::size_t i = 0; i < n; ++i) {
            CAPTURE(i);
            CHECK((std::isnan(x[i]) ? std::isnan(want[i]) : std::memcmp(&x[i], &want[i], sizeof(float)) == 0));
        }
        CHECK((std::isnan(sum) ? std::isnan(want_sum) : std::memcmp(&sum, &want_sum, sizeof(float)) == 0));
    }
}
}  // namespace

TEST_CASE("fast exp: the float32 row step equals exp_inplace of x - shift and its sixteen-lane sum, bit for bit, on every target")
{
    on_every_target([](Isa) { row_step_bits(); });
}

TEST_CASE("blas: a small product is the plain sum in order, worked by hand, in each layout, beta as BLAS reads it")
{
    // A = [[1, 2], [3, 4]], B = [[5, 6], [7, 8]]: A B = [[19, 22], [43, 50]], A B^T = [[17, 23], [39, 53]],
    // A^T B = [[26, 30], [38, 44]].
    const double A[] = {1, 2, 3, 4}, B[] = {5, 6, 7, 8};
    const double nan = std::numeric_limits<double>::quiet_NaN();
    double C[] = {nan, nan, nan, nan};
    blas::gemm_nn(2, 2, 2, 1.0, A, 2, B, 2, 0.0, C, 2);  // beta 0: C is not read, NaN and all
    CHECK(std::vector<double>(C, C + 4) == std::vector<double>{19, 22, 43, 50});
    blas::gemm_nt(2, 2, 2, 2.0, A, 2, B, 2, 1.0, C, 2);  // C = 2 A B^T + C
    CHECK(std::vector<double>(C, C + 4) == std::vector<double>{53, 68, 121, 156});
    float Cf[4] = {};
    const float Af[] = {1, 2, 3, 4}, Bf[] = {5, 6, 7, 8};
    blas::gemm_tn(2, 2, 2, 1.0f, Af, 2, Bf, 2, 0.0f, Cf, 2);
    CHECK(std::vector<float>(Cf, Cf + 4) == std::vector<float>{26, 30, 38, 44});
    // In order, one product and one sum each: 1 + 2^-24 + 2^-24 in float32 is 1 (each sum
    // rounds back), where a pairwise or fused order would keep 2^-23.
    const float ones[] = {1.0f, 0x1p-24f, 0x1p-24f}, unit[] = {1.0f, 1.0f, 1.0f};
    float dot = 0.0f;
    blas::gemm_nt(1, 1, 3, 1.0f, ones, 3, unit, 3, 0.0f, &dot, 1);
    CHECK(dot == 1.0f);
}

TEST_CASE("blas: above 2^16 multiply-adds the product is OpenBLAS's, within the error model of the plain sum")
{
    // [64, 33] x [33, 32] = 67584 multiply-adds: just past the plain loops; rows 0..1 of it
    // (2112, below) are the plain sum in order.
    const std::size_t M = 64, N = 32, K = 33;
    std::vector<double> a(M * K), b(K * N), big(M * N), small(2 * N);
    fill_normal(a.data(), a.size(), 7, 1);
    fill_normal(b.data(), b.size(), 7, 2);
    blas::gemm_nn(M, N, K, 1.0, a.data(), K, b.data(), N, 0.0, big.data(), N);
    blas::gemm_nn(2, N, K, 1.0, a.data(), K, b.data(), N, 0.0, small.data(), N);
    for (std::size_t j = 0; j < 2 * N; ++j) {
        double bound = 0.0;  // n u sum |terms| (docs/check.md, "The error model"), for each
        for (std::size_t k = 0; k < K; ++k) bound += std::abs(a[j / N * K + k] * b[k * N + j % N]);
        CHECK(std::abs(big[j] - small[j]) <= 2.0 * dsize(K) * unit_roundoff(DType::float64) * bound);
    }
}

TEST_CASE("projection: the BLAS blocks equal the plain loop, whatever the threads")
{
    Ten3<double> x = xt::zeros<double>({std::size_t{2}, std::size_t{300}, std::size_t{24}});
    Mat<double> w = xt::zeros<double>({std::size_t{24}, std::size_t{40}});
    fill_normal(x.data(), x.size(), 5, 1);
    fill_normal(w.data(), w.size(), 5, 2);
    const auto ref = project_reference(x, w);
    CHECK(max_abs_diff(project(x, w, 1), ref) <= 1e-13);
    CHECK(max_abs_diff(project(x, w, 3), project(x, w, 1)) == 0.0);
}

TEST_CASE("projection: each head written in place equals the projection split into heads")
{
    Ten3<float> x = xt::zeros<float>({std::size_t{2}, std::size_t{1300}, std::size_t{24}});  // two row blocks per head
    Mat<float> w = xt::zeros<float>({std::size_t{24}, std::size_t{24}});
    fill_normal(x.data(), x.size(), 5, 1);
    fill_normal(w.data(), w.size(), 5, 2);
    const Ten4<float> ref = split_heads(project_reference(x, w), 3);
    const Ten4<float> heads = project_heads(x, w, 3, 1);
    REQUIRE(heads.shape() == ref.shape());
    CHECK(max_abs_diff(heads, ref) <= 1e-5);
    CHECK(max_abs_diff(project_heads(x, w, 3, 2), heads) == 0.0);  // fixed blocks: the same bits
    // A head out of place is caught: heads 0 and 1 swapped.
    Ten4<float> swapped = heads;
    xt::view(swapped, xt::all(), 0) = xt::view(heads, xt::all(), 1);
    CHECK(max_abs_diff(swapped, ref) > 0.1);
}

TEST_CASE("kernel: probe rows measure the row sums of the weights the kept matrices hold")
{
    const auto q = random4<float>(1, 2, 600, 16, 1), k = random4<float>(1, 2, 600, 16, 2), v = random4<float>(1, 2, 600, 16, 3);
    MaskSpec m;
    m.kind = MaskKind::causal, m.queries = 600, m.keys = 600;
    AttentionInputs<float> in;
    in.q = &q, in.k = &k, in.v = &v, in.mask = &m, in.scale = 0.9;
    const std::vector<RowRange> probes = {{0, 5}, {297, 303}, {590, 600}};
    in.probes = &probes;
    const auto probed = attention(in, Matrices::drop);
    double kept = 0.0;
    for (const auto& rr : probes) kept = worse(kept, attention(in, Matrices::keep, rr).stats.max_row_sum_error);
    CHECK(probed.stats.max_row_sum_error > 0.0);  // float32 sums are not exactly 1
    CHECK(probed.stats.max_row_sum_error == kept);
    // The output is the same bits with or without probes.
    AttentionInputs<float> plain = in;
    plain.probes = nullptr;
    const auto unprobed = attention(plain, Matrices::drop);
    CHECK(max_abs_diff(unprobed.out, probed.out) == 0.0);
    CHECK(std::isnan(unprobed.stats.max_row_sum_error));  // nothing measured: no check passes
    // No probe row in the range asked for: nothing measured either.
    CHECK(std::isnan(attention(in, Matrices::drop, RowRange{100, 120}).stats.max_row_sum_error));
}

TEST_CASE("kernel: probe rows whose scores are too many to keep are scored again, to the same figure")
{
    // A whole block of 256 probe rows over 4500 keys is past the 2^20 scores a work item keeps;
    // the 10 rows of the last block are not.
    const std::size_t L = 4500;
    const auto q = random4<float>(1, 1, L, 4, 1), k = random4<float>(1, 1, L, 4, 2), v = random4<float>(1, 1, L, 4, 3);
    for (const MaskKind kind : {MaskKind::none, MaskKind::causal}) {
        MaskSpec m;
        m.kind = kind, m.queries = static_cast<long>(L), m.keys = static_cast<long>(L);
        AttentionInputs<float> in;
        in.q = &q, in.k = &k, in.v = &v, in.mask = &m, in.scale = 3.0;
        for (const std::vector<RowRange>& probes : {std::vector<RowRange>{{256, 512}}, std::vector<RowRange>{{4490, 4500}}}) {
            in.probes = &probes;
            const double probed = attention(in, Matrices::drop).stats.max_row_sum_error;
            CHECK(probed > 0.0);
            CHECK(probed == attention(in, Matrices::keep, probes[0]).stats.max_row_sum_error);
        }
    }
}

TEST_CASE("attention inputs: a view reads a tensor's storage in place, or a copy in another type")
{
    const auto q = random4<float>(1, 2, 3, 4, 1);
    const Tensor t = to_tensor("q", {"batch", "head", "pos", "dim"}, q, Elem::float32);
    REQUIRE(t.values.narrow());
    Ten4<float> owned;
    const View<float, 4> same = view_of(t, owned);
    CHECK(owned.size() == 0);  // no copy
    CHECK(same.data() == t.values.visit([](const auto* p) { return static_cast<const void*>(p); }));
    CHECK(same(0, 1, 2, 3) == q(0, 1, 2, 3));
    CHECK(same.shape() == std::array<std::size_t, 4>{1, 2, 3, 4});
    Ten4<double> wide;
    const View<double, 4> converted = view_of(t, wide);
    CHECK(wide.size() == 24);  // float storage read as double: converted once
    CHECK(converted(0, 1, 2, 3) == static_cast<double>(q(0, 1, 2, 3)));
    CHECK_FALSE(View<float, 3>(nullptr));
}

TEST_CASE("kernel: the share of score tiles it computes, worked out by hand for each mask")
{
    // Blocks of 256 queries and tiles of 512 keys. Causal, L = S = 1024: blocks 0 and 1 see
    // tile 0, blocks 2 and 3 tiles 0 and 1: 6 block-tiles of 256 x 512 over 1024 x 1024.
    MaskSpec causal{MaskKind::causal, 1024, 1024, {}, 0, 1, Align::upper_left, -std::numeric_limits<double>::infinity()};
    CHECK(kernel_tile_share(causal, 1) == 0.75);
    // Without a mask, or with a finite fill (nothing is skipped): every tile.
    MaskSpec none = causal;
    none.kind = MaskKind::none;
    CHECK(kernel_tile_share(none, 1) == 1.0);
    MaskSpec finite = causal;
    finite.fill = -1e9;
    CHECK(kernel_tile_share(finite, 1) == 1.0);
    // A window of 1 at L = S = 2048: each of the 8 blocks sees its own diagonal tile, 8 of 32.
    MaskSpec window = causal;
    window.kind = MaskKind::window, window.window = 1, window.queries = window.keys = 2048;
    CHECK(kernel_tile_share(window, 1) == 0.25);
    // Padding, lengths 512 and 0 at L = S = 1024: sequence 0 sees tile 0 from its 4 blocks (4
    // of 8), sequence 1 nothing: 4 of 16.
    MaskSpec padding = causal;
    padding.kind = MaskKind::padding, padding.lengths = {512, 0};
    CHECK(kernel_tile_share(padding, 2) == 0.25);
    // 256 queries, 2048 keys: upper-left, the block sees keys 0..255 (1 tile of 4); lower-right,
    // after 1792 cached keys, keys 0..2047 (all 4).
    MaskSpec upper = causal;
    upper.queries = 256, upper.keys = 2048;
    CHECK(kernel_tile_share(upper, 1) == 0.25);
    MaskSpec lower = upper;
    lower.align = Align::lower_right;
    CHECK(kernel_tile_share(lower, 1) == 1.0);
}

TEST_CASE("mask: the visible interval of each row is exactly the keys masked() leaves")
{
    for (MaskKind kind : {MaskKind::none, MaskKind::causal, MaskKind::padding, MaskKind::both, MaskKind::window})
        for (Align align : {Align::upper_left, Align::lower_right})
            for (long diagonal : {-2L, 0L, 1L, 3L})
                for (long L : {1L, 4L, 9L})
                    for (long S : {1L, 5L, 9L}) {
                        MaskSpec m;
                        m.kind = kind, m.align = align, m.diagonal = diagonal, m.queries = L, m.keys = S, m.window = 3;
                        std::vector<long> lengths{S, S / 2, 0};  // swapped in: GCC 12 warns wrongly on = {...}
                        m.lengths.swap(lengths);
                        for (long b = 0; b < 3; ++b)
                            for (long i = 0; i < L; ++i) {
                                const auto [lo, hi] = m.visible_range(b, i);
                                for (long j = 0; j < S; ++j) {
                                    CAPTURE(name_of(kind));
                                    CAPTURE(diagonal);
                                    CAPTURE(i);
                                    CAPTURE(j);
                                    CHECK(m.masked(b, i, j) == (j < lo || j >= hi));
                                }
                            }
                    }
}

TEST_CASE("bench: each check fails on the figure that breaks it")
{
    BenchParams p;
    p.len = 64, p.heads = 2, p.head_dim = 8, p.repeat = 1;
    RunContext ctx;
    Run good;
    good.measured = {{"max_abs_err", 1e-7}, {"tol", 1e-5}, {"out_scale", 3.0}, {"thread_diff", 0.0}, {"fraction", 0.7}};
    const auto passed = [&](const Run& run, const std::string& name) {
        for (const auto& c : check_run(bench_experiment(), p, run, ctx))
            if (c.name == name) return c.passed();
        FAIL("no check " << name);
        return false;
    };
    CHECK(passed(good, "kernel_matches_reference"));
    CHECK(passed(good, "threads_bit_identical"));
    CHECK(passed(good, "kernel_vs_gemm"));
    Run bad = good;
    bad.measured["max_abs_err"] = 1e-3;
    CHECK_FALSE(passed(bad, "kernel_matches_reference"));
    bad.measured["max_abs_err"] = NAN;
    CHECK_FALSE(passed(bad, "kernel_matches_reference"));
    bad = good;
    bad.measured["thread_diff"] = 1e-30;
    CHECK_FALSE(passed(bad, "threads_bit_identical"));
    bad = good;
    bad.measured["fraction"] = 0.5;
    CHECK_FALSE(passed(bad, "kernel_vs_gemm"));  // a demonstration: shown, never counted
    Report r;
    r.checks = check_run(bench_experiment(), p, bad, ctx);
    CHECK(r.passed());
}

TEST_CASE("bench: a small run holds the kernel to the reference and reports its measurements")
{
    BenchParams p;
    p.len = 300, p.heads = 4, p.kv_heads = 2, p.head_dim = 16, p.repeat = 1;
    RunContext ctx;
    const Report r = run_bench(p, ctx);
    CHECK(r.passed());
    for (const char* key : {"seconds", "gflops", "sgemm_gflops", "fraction_of_sgemm", "max_abs_err_vs_reference", "peak_bytes", "threads", "blas"})
        CHECK(find_param(r.measurements, key) != nullptr);
    // Useful work of the causal half: 2 * (300 * 301 / 2) * 16 * 4 * 2 flops.
    CHECK(param_number(r.params, "useful_gflop") == doctest::Approx(2.0 * 300.0 * 301.0 / 2.0 * 16.0 * 4.0 * 2.0 / 1e9));
}

TEST_CASE("ATTNLAB_ISA: a target is refused when it is no target or the CPU lacks it, in one line that names what the CPU has")
{
    const std::vector<Isa> avx2_machine = {Isa::avx2, Isa::sse4, Isa::scalar};
    CHECK(isa_request_problem(nullptr, avx2_machine).empty());  // unset: the best
    CHECK(isa_request_problem("avx2", avx2_machine).empty());
    CHECK(isa_request_problem("scalar", avx2_machine).empty());
    CHECK(isa_request_problem("avx512", avx2_machine) == "ATTNLAB_ISA: this CPU cannot run avx512; it has avx2, sse4, scalar");
    CHECK(isa_request_problem("AVX2", avx2_machine) ==
          "ATTNLAB_ISA: 'AVX2' is no target; targets: scalar, sse4, avx2, avx512 (this CPU has avx2, sse4, scalar)");
    CHECK(isa_request_problem("", {Isa::scalar}).rfind("ATTNLAB_ISA: '' is no target", 0) == 0);
    // This CPU's list: best first, scalar last, each one it has.
    const std::vector<Isa> here = cpu_isas();
    REQUIRE(!here.empty());
    CHECK(here.back() == Isa::scalar);
    for (const Isa isa : here) CHECK(cpu_has(isa));
    CHECK(std::is_sorted(here.rbegin(), here.rend()));
    const Isa before = active_isa();
    {
        const IsaScope scope(Isa::scalar);
        CHECK(active_isa() == Isa::scalar);
    }
    CHECK(active_isa() == before);
}

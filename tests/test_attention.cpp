#include "attnlab/core/position/alibi.hpp"
#include "attnlab/experiments/attend.hpp"
#include "attnlab/model/block.hpp"
#include "attnlab/experiments/pe.hpp"
#include "attnlab/core/attention.hpp"
#include "attnlab/experiments/permute.hpp"
#include "attnlab/core/rng.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace attnlab;

namespace {

Ten4<double> random4(std::size_t a, std::size_t b, std::size_t c, std::size_t d, std::uint64_t stream)
{
    Rng rng(3, stream);
    Ten4<double> t = xt::zeros<double>({a, b, c, d});
    for (auto& v : t) v = rng.normal();
    return t;
}

}  // namespace

TEST_CASE("attention against a hand-computed 2x2 case")
{
    // q = k = [[1], [0]], v = [[1], [3]], scale 1: row 0 weights (e, 1)/(e+1), row 1 (1/2, 1/2).
    Ten4<double> q = xt::zeros<double>({std::size_t{1}, std::size_t{1}, std::size_t{2}, std::size_t{1}});
    Ten4<double> v = q;
    q(0, 0, 0, 0) = 1;
    v(0, 0, 0, 0) = 1, v(0, 0, 1, 0) = 3;
    AttentionInputs<double> in;
    in.q = &q, in.k = &q, in.v = &v;
    const auto res = attention(in, Matrices::keep);
    const double e = std::exp(1.0);
    CHECK(res.weights(0, 0, 0, 0) == doctest::Approx(e / (e + 1)));
    CHECK(res.out(0, 0, 0, 0) == doctest::Approx((e + 3) / (e + 1)));
    CHECK(res.out(0, 0, 1, 0) == doctest::Approx(2.0));
    // causal: row 0 sees only key 0, so it copies v_0
    MaskSpec m;
    m.kind = MaskKind::causal;
    m.queries = m.keys = 2;
    in.mask = &m;
    CHECK(attention(in, Matrices::drop).out(0, 0, 0, 0) == 1.0);
}

TEST_CASE("main implementation equals the reference on every option combination")
{
    const auto q = random4(2, 4, 5, 3, 1);
    for (std::size_t hkv : {std::size_t{4}, std::size_t{2}, std::size_t{1}})
        for (std::size_t S : {std::size_t{5}, std::size_t{7}, std::size_t{3}})
            for (MaskKind kind : {MaskKind::none, MaskKind::causal, MaskKind::padding, MaskKind::both, MaskKind::window})
                for (double fill : {-std::numeric_limits<double>::infinity(), -1e9})
                    for (bool bias : {false, true})
                        for (SoftmaxKind sm : {SoftmaxKind::plain, SoftmaxKind::safe})
                            for (Align al : {Align::upper_left, Align::lower_right}) {
                                const auto k = random4(2, hkv, S, 3, 2), v = random4(2, hkv, S, 3, 3);
                                MaskSpec m;
                                m.kind = kind;
                                m.queries = 5;
                                m.keys = static_cast<long>(S);
                                m.lengths = {static_cast<long>(S), 1};
                                m.window = 2;
                                m.fill = fill;
                                m.align = al;
                                Ten3<double> hb = xt::zeros<double>({std::size_t{4}, std::size_t{5}, S});
                                for (std::size_t i = 0; i < hb.size(); ++i) hb.data()[i] = -0.1 * static_cast<double>(i % 7);
                                AttentionInputs<double> in;
                                in.q = &q, in.k = &k, in.v = &v, in.mask = &m, in.scale = 0.6, in.softmax = sm;
                                in.head_bias = bias ? &hb : nullptr;
                                CAPTURE(hkv);
                                CAPTURE(S);
                                CAPTURE(name_of(kind));
                                CAPTURE(fill);
                                CAPTURE(bias);
                                CAPTURE(name_of(sm));
                                CAPTURE(name_of(al));
                                const auto main = attention(in, Matrices::keep);
                                const auto ref = attention_reference(in, RowRange{0, 5});
                                CHECK(max_abs_diff(main.out, ref.out) <= 1e-12);
                                CHECK(max_abs_diff(main.weights, ref.weights) <= 1e-12);
                                // a row range alone gives the same rows
                                const auto part = attention_reference(in, RowRange{2, 4});
                                for (std::size_t c = 0; c < 3; ++c) CHECK(part.out(1, 3, 0, c) == doctest::Approx(ref.out(1, 3, 2, c)));
                            }
}

TEST_CASE("grouped-query attention: query heads of one group share keys and values")
{
    auto q = random4(1, 4, 3, 2, 1);
    xt::view(q, 0, 1, xt::all(), xt::all()) = xt::view(q, 0, 0, xt::all(), xt::all());  // heads 0 and 1 equal
    xt::view(q, 0, 2, xt::all(), xt::all()) = xt::view(q, 0, 0, xt::all(), xt::all());  // head 2 too, other group
    const auto k = random4(1, 2, 3, 2, 2), v = random4(1, 2, 3, 2, 3);
    AttentionInputs<double> in;
    in.q = &q, in.k = &k, in.v = &v;
    const auto r = attention(in, Matrices::drop);
    CHECK(r.out(0, 1, 2, 1) == r.out(0, 0, 2, 1));  // same group (kv head 0)
    CHECK(r.out(0, 2, 2, 1) != r.out(0, 0, 2, 1));  // other group (kv head 1)
}

TEST_CASE("projection with W [in, out], split and merge of heads")
{
    Ten3<double> x = {{{1, 2}}};                 // [1, 1, 2]
    Mat<double> w = {{1, 0, 2}, {0, 1, 3}};      // [2, 3]
    const auto y = project(x, w);
    CHECK(y(0, 0, 0) == 1);
    CHECK(y(0, 0, 1) == 2);
    CHECK(y(0, 0, 2) == 8);
    Ten3<double> z = {{{1, 2, 3, 4}, {5, 6, 7, 8}}};  // [1, 2, 4] -> 2 heads of 2
    const auto s = split_heads(z, 2);
    CHECK(s(0, 1, 0, 0) == 3);
    CHECK(s(0, 1, 1, 1) == 8);
    CHECK(merge_heads(s) == z);
}

TEST_CASE("the equivariance measurement is 0 for a permuted copy and not for a changed one")
{
    const Tensor y = tt(Mat<double>{{1, 2}, {3, 4}, {5, 6}});
    const Tensor yp = tt(Mat<double>{{5, 6}, {3, 4}, {1, 2}});
    CHECK(equivariance_error(y, yp, {2, 1, 0}) == 0.0);
    CHECK(equivariance_error(y, y, {2, 1, 0}) == 4.0);
    Tensor broken = yp;
    broken.values[0] = std::nan("");
    CHECK(equivariance_error(y, broken, {2, 1, 0}) == INFINITY);  // NaN on one side: infinitely far
    CHECK_THROWS_WITH_AS(validate_permutation({0, 0, 1}, 3), doctest::Contains("repeats 0"), InputError);
    CHECK_THROWS_WITH_AS(validate_permutation({0, 3, 1}, 3), doctest::Contains("outside 0..2"), InputError);
    CHECK_THROWS_WITH_AS(validate_permutation({0, 1}, 3), doctest::Contains("2 entries"), InputError);
}

TEST_CASE("run_permute: equivariance holds without positions and breaks with each of them")
{
    PermuteParams p;
    p.example = true;
    p.no_proj = true;
    const Report r = run_permute(p, RunContext{});
    CHECK(r.passed());
    CHECK(find_check(r, "equivariant").measured < 1e-5);
    CHECK_FALSE(find_check(r, "output_unchanged").passed());  // the articles' wording is wrong
    for (PeKind pe : {PeKind::sinusoidal, PeKind::rope, PeKind::alibi}) {
        PermuteParams q;
        q.pe = pe;
        q.trials = 5;
        CAPTURE(name_of(pe));
        CHECK(run_permute(q, RunContext{}).passed());
    }
    // The identity "permutation" cannot show anything: refused up front.
    PermuteParams id;
    id.pe = PeKind::sinusoidal;
    id.perm = {0, 1, 2, 3, 4, 5};
    CHECK_THROWS_WITH_AS(run_permute(id, RunContext{}), doctest::Contains("--perm is the identity"), InputError);
    id.perm.clear();
    id.len = 1;
    CHECK_THROWS_WITH_AS(run_permute(id, RunContext{}), doctest::Contains("at least 2 positions"), InputError);
}

TEST_CASE("run_permute: 'order now matters' is a demonstration: it can miss its rule of thumb without failing the run")
{
    // The same token at every position: ALiBi, a causal mask or RoPE change the weights, but
    // every value row is the same, so no permutation moves the output at all.
    PermuteParams alibi;
    alibi.pe = PeKind::alibi;
    PermuteParams causal;
    causal.mask = MaskKind::causal;
    PermuteParams rope;
    rope.pe = PeKind::rope;
    for (const PermuteParams& p : {alibi, causal, rope}) {
        RunContext ctx;
        ctx.inputs["x"] = Tensor{"x", {"pos", "dim"}, Elem::float64, {static_cast<std::size_t>(p.len), static_cast<std::size_t>(p.dim)},
                                 std::vector<double>(static_cast<std::size_t>(p.len * p.dim), 0.5)};
        const Report r = run_permute(p, ctx);
        const Check c = find_check(r, "equivariance_breaks");
        CAPTURE(name_of(p.pe));
        CAPTURE(name_of(p.mask));
        CHECK(c.role == Role::demonstration);
        CHECK(c.measured < 1e-6);  // rounding only
        CHECK_FALSE(c.passed());
        CHECK(r.passed());
    }
}

TEST_CASE("run_attend: every check passes across the options, in both dtypes")
{
    struct Case { MaskKind mask; PeKind pe; long kv_heads; std::optional<long> kv_len; std::vector<long> lengths; };
    const Case cases[] = {{MaskKind::none, PeKind::none, 2, {}, {}},       {MaskKind::causal, PeKind::rope, 1, {}, {}},
                          {MaskKind::padding, PeKind::alibi, 2, {}, {3, 6}}, {MaskKind::both, PeKind::sinusoidal, 2, {}, {2, 5}},
                          {MaskKind::window, PeKind::rope, 1, {}, {}},     {MaskKind::none, PeKind::none, 2, 9, {}}};
    for (DType dt : {DType::float32, DType::float64})
        for (const auto& c : cases) {
            AttendParams p;
            p.heads = 4;
            p.dim = 16;
            p.mask = c.mask;
            p.pe = c.pe;
            p.kv_heads = c.kv_heads;
            p.kv_len = c.kv_len;
            p.lengths = c.lengths;
            if (c.mask == MaskKind::window) p.window = 2;
            RunContext ctx;
            ctx.dtype = dt;
            CAPTURE(name_of(dt));
            CAPTURE(name_of(c.mask));
            CAPTURE(name_of(c.pe));
            CAPTURE(c.kv_heads);
            CAPTURE(c.kv_len.value_or(0));
            std::vector<std::string> expected = {"rows_sum_to_one"};
            if (c.mask != MaskKind::none) expected.push_back("masked_weights_exactly_zero");
            expected.insert(expected.end(), {"no_nan_weights", "main_matches_reference"});
            if (!c.kv_len && c.mask != MaskKind::padding) {
                expected.push_back(c.mask == MaskKind::none ? "unmasked_rows_change" : "causal_rows_unchanged");
            }
            if (!c.kv_len && c.mask == MaskKind::none) expected.push_back("teacher_forcing_needs_mask");
            if (c.mask == MaskKind::padding || c.mask == MaskKind::both) expected.push_back("padding_ignored");
            if (c.pe == PeKind::rope) expected.push_back("rope_scores_relative");
            expected.insert(expected.end(), {"out_rows_are_averages", "out_merged_rows_are_averages"});
            // query 0 sees key 0 alone under a causal triangle (causal, both, window)
            if (c.mask == MaskKind::causal || c.mask == MaskKind::both || c.mask == MaskKind::window)
                expected.insert(expected.end(), {"first_row_is_v0", "out_first_row_is_v0"});
            check_invariants_hold(run_attend(p, ctx), expected);
        }
}

TEST_CASE("run_attend: a sequence of length 0 gives NaN rows under plain softmax and none under safe")
{
    AttendParams p;
    p.mask = MaskKind::padding;
    p.lengths = {0, 6};
    const Report r = run_attend(p, RunContext{});
    CHECK_FALSE(find_check(r, "no_nan_weights").passed());
    p.softmax = SoftmaxKind::safe;
    CHECK(find_check(run_attend(p, RunContext{}), "no_nan_weights").passed());
}

TEST_CASE("run_attend: input errors")
{
    AttendParams p;
    p.dim = 10;
    p.heads = 4;
    CHECK_THROWS_WITH_AS(run_attend(p, RunContext{}), doctest::Contains("not divisible by --heads"), InputError);
    p.dim = 12;
    p.kv_heads = 5;
    CHECK_THROWS_WITH_AS(run_attend(p, RunContext{}), doctest::Contains("must divide --heads"), InputError);
    p.kv_heads.reset();
    p.heads = 4;
    p.pe = PeKind::rope;
    CHECK_THROWS_WITH_AS(run_attend(p, RunContext{}), doctest::Contains("even head dimension"), InputError);
    AttendParams q;
    q.mask = MaskKind::padding;
    q.lengths = {3, 9};
    CHECK_THROWS_WITH_AS(run_attend(q, RunContext{}), doctest::Contains("--lengths must lie in 0..6"), InputError);
}

TEST_CASE("a decoder step with a KV cache: lower-right puts query i at position S - L + i for RoPE, ALiBi and PE")
{
    AttendParams p;
    p.len = 2;
    p.kv_len = 5;
    p.heads = 1;
    p.dim = 4;
    p.align = Align::lower_right;
    RunContext ctx;
    ctx.dtype = DType::float64;
    const double m = alibi_slopes(1, SlopeRule::reference_code)[0];
    // ALiBi: query 0 sits at position 3, so its biases over keys 0..4 are -m |3 - j|.
    p.pe = PeKind::alibi;
    const Tensor bias = *run_attend(p, ctx).find("bias");
    for (int j = 0; j < 5; ++j) CHECK(bias.values[j] == doctest::Approx(-m * std::abs(3 - j)));
    p.align = Align::upper_left;  // counted from 0: query 0 favours key 0
    CHECK(run_attend(p, ctx).find("bias")->values[0] == 0.0);
    // RoPE: q_rot of query i is q rotated to position 3 + i; k_rot of key j to position j.
    p.align = Align::lower_right;
    p.pe = PeKind::rope;
    const Report r = run_attend(p, ctx);
    const auto cache = rope_cache<double>(5, rope_frequencies<double>(4, 10000.0, RopeScalingParams{}, 5).theta);
    const Tensor &q = *r.find("q"), &q_rot = *r.find("q_rot"), &k = *r.find("k"), &k_rot = *r.find("k_rot");
    for (int i = 0; i < 2; ++i) {
        double expected[4];
        rope_rotate(q.values.slice(4 * i, 4 * i + 4).data(), expected, 4, 4, &cache.cos(3 + i, 0), &cache.sin(3 + i, 0), RopeStyle::interleaved,
                    Direction::forward);
        for (int c = 0; c < 4; ++c) CHECK(q_rot.values[4 * i + c] == doctest::Approx(expected[c]).epsilon(1e-15));
    }
    double k4[4];
    rope_rotate(k.values.slice(16, 20).data(), k4, 4, 4, &cache.cos(4, 0), &cache.sin(4, 0), RopeStyle::interleaved, Direction::forward);
    for (int c = 0; c < 4; ++c) CHECK(k_rot.values[4 * 4 + c] == doctest::Approx(k4[c]).epsilon(1e-15));
    // sinusoidal PE: x_pe of query i is x + PE(3 + i).
    p.pe = PeKind::sinusoidal;
    const Report s = run_attend(p, ctx);
    const auto table = sinusoidal_table<double>(5, pe_frequencies<double>(4, 10000.0, PeLayout::interleaved, FreqMethod::exp_log),
                                                PeLayout::interleaved);
    const Tensor &x = *s.find("x"), &x_pe = *s.find("x_pe");
    for (int i = 0; i < 2; ++i)
        for (int c = 0; c < 4; ++c) CHECK(x_pe.values[4 * i + c] == doctest::Approx(x.values[4 * i + c] + table(3 + i, c)).epsilon(1e-15));
}

TEST_CASE("attend keeps no tensor when nothing is printed, the main tensor when only it is, and still checks")
{
    AttendParams p;
    p.len = 6;
    p.mask = MaskKind::causal;
    RunContext none;
    none.keep_none = true;
    const Report quiet = run_attend(p, none);
    CHECK(quiet.tensors.empty());
    CHECK(quiet.checks.size() >= 4);  // the checks read the run's own tensors, kept or not
    CHECK(quiet.passed());
    RunContext main;
    main.main_only = true;
    const Report one = run_attend(p, main);
    REQUIRE(one.tensors.size() == 1);
    CHECK(one.tensors[0].name == "out_merged");
    // the same checks, and two more: the merged layout's averages and first-row checks, now
    // that out_merged is computed (out, which the quiet run checks, holds the same numbers)
    CHECK(one.checks.size() == quiet.checks.size() + 2);
    CHECK(one.find_check("out_merged_rows_are_averages") != nullptr);
    CHECK(one.find_check("first_row_is_v0") != nullptr);
    CHECK(quiet.find_check("out_first_row_is_v0") != nullptr);
    CHECK(quiet.find_check("out_rows_are_averages") != nullptr);
}

TEST_CASE("self_kv_rows gives the keys and values prepare_block gives those rows, with every kind of position")
{
    const std::size_t B = 2, L = 7, E = 8;
    const Ten3<float> x = random_tensor3<float>(B, L, E, 4, stream::x);
    const BlockWeights<float> w{random_weight<float>(8, 8, 4, stream::w_q), random_weight<float>(8, 4, 4, stream::w_k),
                                random_weight<float>(8, 4, 4, stream::w_v)};
    for (const PeKind pe : {PeKind::none, PeKind::sinusoidal, PeKind::rope, PeKind::alibi}) {
        for (const RopeStyle style : {RopeStyle::interleaved, RopeStyle::half}) {
            CAPTURE(static_cast<int>(pe));
            BlockConfig cfg;
            cfg.heads = 2, cfg.kv_heads = 1, cfg.pe = pe, cfg.rope_style = style;
            const BlockResult<float> full = prepare_block(x, x, w, cfg);
            const Ten3<float> later = xt::view(x, xt::all(), xt::range(3, 7), xt::all());
            const auto [k, v] = self_kv_rows(later, 3, 7, w, cfg);
            REQUIRE(k.shape() == std::array<std::size_t, 4>{B, 1, 4, 4});
            CHECK(max_abs_diff(k, Ten4<float>(xt::view(full.k, xt::all(), xt::all(), xt::range(3, 7), xt::all()))) == 0.0);
            CHECK(max_abs_diff(v, Ten4<float>(xt::view(full.v, xt::all(), xt::all(), xt::range(3, 7), xt::all()))) == 0.0);
            // Placed at other positions, RoPE's keys and PE's inputs differ: the positions count.
            const auto [k0, v0] = self_kv_rows(later, 0, 7, w, cfg);
            const bool positional = pe == PeKind::sinusoidal || pe == PeKind::rope;
            CHECK((max_abs_diff(k0, k) > 0.0) == positional);
            CHECK((max_abs_diff(v0, v) > 0.0) == (pe == PeKind::sinusoidal));
        }
    }
}

TEST_CASE("cross-attention with RoPE or ALiBi: the output depends on where the two sequences' positions start (§6.1's table refuted)")
{
    for (const PeKind pe : {PeKind::rope, PeKind::alibi}) {
        CAPTURE(name_of(pe));
        AttendParams p;
        p.len = 4;
        p.kv_len = 7;
        p.pe = pe;
        const Report r = run_attend(p, RunContext{});
        const Check c = find_check(r, "cross_attention_positions");
        CHECK(c.role == Role::article);
        CHECK_FALSE(c.passed());
        CHECK(c.measured > 0.01);
        CHECK(c.metric.find("queries from position 3") != std::string::npos);
        CHECK(has_note(r, {"T5 and BART put no position bias in cross-attention"}));
        // keys and values of zeros: every output is 0 wherever the queries sit, so the claim holds there
        RunContext zero;
        zero.inputs["x_kv"] = Tensor{"x_kv", {"batch", "pos", "dim"}, Elem::float64, {1, 7, 8}, std::vector<double>(56, 0.0)};
        CHECK(find_check(run_attend(p, zero), "cross_attention_positions").passed());
    }
    AttendParams none;  // no position scheme, or self-attention: nothing to claim
    none.kv_len = 9;
    CHECK(run_attend(none, RunContext{}).find_check("cross_attention_positions") == nullptr);
    AttendParams self;
    self.pe = PeKind::rope;
    CHECK(run_attend(self, RunContext{}).find_check("cross_attention_positions") == nullptr);
}

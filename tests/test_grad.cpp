// `grad`: the backward pass against PyTorch autograd (data/make_fixtures.py grad_fixture), and
// the passes of core/attention_backward.hpp against figures worked out by hand.
#include "attnlab/core/attention_backward.hpp"
#include "attnlab/core/measure.hpp"
#include "attnlab/experiments/grad.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>
#include <xtensor/xnpy.hpp>

#include <cmath>

using namespace attnlab;

namespace {

Tensor grad_fixture(const std::string& config, const std::string& name)
{
    const xt::xarray<double> a = xt::load_npy<double>(fixture_path("grad_" + config + "_" + name));
    return tt(a);
}

struct FixtureCase {
    std::string config;
    AttendParams p;
    std::vector<std::string> grads;
};

// The configurations of data/make_fixtures.py GRAD_CONFIGS.
std::vector<FixtureCase> fixture_cases()
{
    const std::vector<std::string> common = {"d_weights", "d_scores", "d_q", "d_k", "d_v", "d_x", "d_w_q", "d_w_k", "d_w_v"};
    AttendParams rope;
    rope.len = 5, rope.dim = 8, rope.heads = 2, rope.kv_heads = 1, rope.pe = PeKind::rope, rope.mask = MaskKind::causal;
    AttendParams alibi;
    alibi.len = 4, alibi.dim = 8, alibi.heads = 2, alibi.pe = PeKind::alibi, alibi.mask = MaskKind::padding, alibi.lengths = {4, 2};
    AttendParams cross;
    cross.len = 3, cross.kv_len = 5, cross.dim = 8, cross.heads = 2, cross.pe = PeKind::sinusoidal;
    std::vector<std::string> rope_grads = common, cross_grads = common;
    rope_grads.insert(rope_grads.end(), {"d_q_rot", "d_k_rot"});
    cross_grads.push_back("d_x_kv");
    return {{"rope_causal_gqa", rope, rope_grads}, {"alibi_padding", alibi, common}, {"sinusoidal_cross", cross, cross_grads}};
}

}  // namespace

TEST_CASE("grad: every gradient matches PyTorch autograd in float64 (RoPE + causal + GQA, ALiBi + padding, sinusoidal cross-attention)")
{
    for (const auto& fc : fixture_cases()) {
        CAPTURE(fc.config);
        for (DType dtype : {DType::float64, DType::float32}) {
            CAPTURE(name_of(dtype));
            RunContext ctx;
            ctx.dtype = dtype;
            for (const char* name : {"x", "x_kv", "w_q", "w_k", "w_v", "d_out"})
                if (std::string(name) != "x_kv" || fc.p.kv_len) ctx.inputs[name] = grad_fixture(fc.config, name);
            const Report r = run_grad(fc.p, ctx);
            CHECK(r.passed());
            for (const auto& g : fc.grads) {
                CAPTURE(g);
                const Tensor expected = grad_fixture(fc.config, g);
                REQUIRE(r.find(g) != nullptr);
                const Tensor& got = *r.find(g);
                REQUIRE(got.size() == expected.size());
                // float64: the same sums in another order; float32: its rounding, relative to the
                // largest gradient (the error model's u n sum |terms| is far below 1e-4 here).
                const double bound = (dtype == DType::float64 ? 1e-12 : 1e-4) * (1.0 + max_abs(expected));
                CHECK(max_abs_diff(got.values.to_vector().data(), expected.values.to_vector().data(), got.size()) <= bound);
            }
        }
    }
}

TEST_CASE("attention_backward: the softmax's Jacobian and one-key attention by hand")
{
    // P = [0.5, 0.5], d_weights = [1, 3]: delta = 0.5 + 1.5 = 2, d_scores = 0.5 (1 - 2), 0.5 (3 - 2)
    Ten4<double> p = xt::zeros<double>({1, 1, 1, 2}), dw = p;
    p(0, 0, 0, 0) = p(0, 0, 0, 1) = 0.5;
    dw(0, 0, 0, 0) = 1.0, dw(0, 0, 0, 1) = 3.0;
    const Ten4<double> ds = softmax_backward(p, dw);
    CHECK(ds(0, 0, 0, 0) == -0.5);
    CHECK(ds(0, 0, 0, 1) == 0.5);
    // a fully masked row under the safe softmax (P = 0) gets zeros
    const Ten4<double> none = softmax_backward(Ten4<double>(xt::zeros<double>({1, 1, 1, 2})), dw);
    CHECK(none(0, 0, 0, 0) == 0.0);
    CHECK(none(0, 0, 0, 1) == 0.0);
    // one key: P = 1, so out = v, d_v = d_out, and the scores get no gradient at all
    Ten4<double> q = xt::ones<double>({1, 1, 1, 2}), k = q, v = q, w = xt::ones<double>({1, 1, 1, 1}), d_out = q;
    v(0, 0, 0, 1) = -2.0, d_out(0, 0, 0, 0) = 3.0;
    const AttentionGrads<double> g = attention_backward(q, k, v, w, d_out, 0.5);
    CHECK(g.d_weights(0, 0, 0, 0) == 3.0 * 1.0 + 1.0 * -2.0);
    CHECK(g.d_scores(0, 0, 0, 0) == 0.0);
    CHECK(g.d_v(0, 0, 0, 0) == 3.0);
    CHECK(g.d_v(0, 0, 0, 1) == 1.0);
    CHECK(g.d_q(0, 0, 0, 0) == 0.0);
    // grouped keys: two query heads share one key head, and d_v sums the two
    Ten4<double> q2 = xt::ones<double>({1, 2, 1, 1}), d_out2 = q2;
    d_out2(0, 1, 0, 0) = 5.0;
    const Ten4<double> d_v2 = value_backward(Ten4<double>(xt::ones<double>({1, 2, 1, 1})), d_out2, 1);
    CHECK(d_v2(0, 0, 0, 0) == 6.0);
    // a projection: X [1, 1, 2] = [1, 2], W [2, 1] = [[3], [4]], d_Y = 5: d_W = X^T d_Y, d_X = d_Y W^T
    Ten3<double> x = xt::zeros<double>({1, 1, 2}), d_y = xt::zeros<double>({1, 1, 1});
    x(0, 0, 0) = 1.0, x(0, 0, 1) = 2.0, d_y(0, 0, 0) = 5.0;
    Mat<double> wm = xt::zeros<double>({2, 1});
    wm(0, 0) = 3.0, wm(1, 0) = 4.0;
    const Mat<double> d_w = weight_backward(x, d_y);
    CHECK(d_w(0, 0) == 5.0);
    CHECK(d_w(1, 0) == 10.0);
    const Ten3<double> d_x = input_backward<double>({{&d_y, &wm}, {&d_y, &wm}});
    CHECK(d_x(0, 0, 0) == 30.0);
    CHECK(d_x(0, 0, 1) == 40.0);
}

TEST_CASE("grad: the checks a run reports, every one holding in every dtype")
{
    AttendParams p;
    p.mask = MaskKind::causal, p.pe = PeKind::rope;
    std::vector<std::string> names;
    for (const char* g : {"d_weights", "d_scores", "d_q_rot", "d_k_rot", "d_q", "d_k", "d_v", "d_x", "d_w_q", "d_w_k", "d_w_v"})
        names.push_back(std::string(g) + "_matches_finite_differences");
    for (const char* c : {"d_scores_rows_sum_to_zero", "masked_keys_get_zero_gradient", "no_gradient_from_later_queries", "rope_backward_is_inverse_rotation"})
        names.push_back(c);
    for (DType dtype : {DType::float64, DType::float32, DType::float16, DType::bfloat16}) {
        CAPTURE(name_of(dtype));
        RunContext ctx;
        ctx.dtype = dtype;
        check_invariants_hold(run_grad(p, ctx), names);
    }
}

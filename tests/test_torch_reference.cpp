// Masks and attention against PyTorch, computed independently by data/make_fixtures.py from
// the definitions (torch.triu, masked_fill, repeat_interleave for grouped-query heads,
// softmax). attention() and attention_reference() share MaskSpec and the softmax, so only
// an outside reference can catch a semantic slip the two would make together.
#include "attnlab/core/position/alibi.hpp"
#include "attnlab/experiments/mask.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>
#include <xtensor/xnpy.hpp>

#include <cmath>
#include <string>

using namespace attnlab;

namespace {


template <std::size_t N>
Ten4<double> load4(const std::string& name)
{
    return xt::load_npy<double>(fixture_path(name));
}

MaskSpec spec(MaskKind kind, long L, long S, Align align = Align::upper_left, std::vector<long> lengths = {})
{
    MaskSpec m;
    m.kind = kind;
    m.queries = L;
    m.keys = S;
    m.align = align;
    m.lengths = std::move(lengths);
    return m;
}

// Both implementations on the fixture's inputs; the largest difference from PyTorch.
double worst_against_torch(const Ten4<double>& q, const MaskSpec* mask, const Ten3<double>* bias, const std::string& expected_file)
{
    const Ten4<double> k = load4<4>("attn_k"), v = load4<4>("attn_v");
    const Ten4<double> expected = load4<4>(expected_file);
    AttentionInputs<double> in;
    in.q = &q, in.k = &k, in.v = &v, in.mask = mask, in.head_bias = bias, in.scale = 1.0 / std::sqrt(3.0);
    const auto main = attention(in, Matrices::drop);
    const auto ref = attention_reference(in, RowRange{0, static_cast<long>(q.shape(2))});
    CHECK(main.out.shape() == expected.shape());
    return worse(max_abs_diff(main.out, expected), max_abs_diff(ref.out, expected));
}

}  // namespace

TEST_CASE("masks equal PyTorch's: generate_square_subsequent_mask, the lower-right triangle, the boolean conventions")
{
    const auto causal = xt::load_npy<double>(fixture_path("mask_causal_5"));
    CHECK(max_abs_diff(additive_mask<double>(spec(MaskKind::causal, 5, 5)), causal) == 0.0);
    const auto lower_right = xt::load_npy<double>(fixture_path("mask_causal_lower_right_3x5"));
    CHECK(max_abs_diff(additive_mask<double>(spec(MaskKind::causal, 3, 5, Align::lower_right)), lower_right) == 0.0);
    // and the tril construction agrees with both
    CHECK(max_abs_diff(causal_reference_tril<double>(3, 5, Align::lower_right, 1, -INFINITY), lower_right) == 0.0);
    const MaskSpec padding = spec(MaskKind::padding, 4, 4, Align::upper_left, {2, 4});
    const auto kpm = xt::load_npy<bool>(fixture_path("mask_key_padding_2_4"));
    const auto amb = xt::load_npy<bool>(fixture_path("mask_attn_bool_2_4"));
    CHECK(xt::xtensor<bool, 2>(kpm) == key_padding_mask(padding));
    CHECK(xt::xtensor<bool, 2>(amb) == attn_mask_bool(padding));
}

TEST_CASE("attention equals PyTorch's: causal with grouped-query heads, a decoder step, padding, ALiBi")
{
    const Ten4<double> q = load4<4>("attn_q");  // [2, 4, 5, 3]; k, v [2, 2, 5, 3]
    const MaskSpec causal = spec(MaskKind::causal, 5, 5);
    CHECK(worst_against_torch(q, &causal, nullptr, "attn_causal") <= 1e-14);

    // The decoder step: the last 3 queries after 2 cached keys, the lower-right triangle.
    const Ten4<double> q_last = xt::view(q, xt::all(), xt::all(), xt::range(2, 5), xt::all());
    const MaskSpec step = spec(MaskKind::causal, 3, 5, Align::lower_right);
    CHECK(worst_against_torch(q_last, &step, nullptr, "attn_causal_lower_right") <= 1e-14);

    const MaskSpec padding = spec(MaskKind::padding, 5, 5, Align::upper_left, {3, 5});
    CHECK(worst_against_torch(q, &padding, nullptr, "attn_padding_3_5") <= 1e-14);

    const Ten3<double> bias = alibi_bias<double>(alibi_slopes(4, SlopeRule::reference_code), 5, 5, AlibiVariant::symmetric);
    CHECK(worst_against_torch(q, nullptr, &bias, "attn_alibi") <= 1e-14);

    // The reference catches a slip the implementations could share: the other alignment.
    const MaskSpec wrong = spec(MaskKind::causal, 3, 5, Align::upper_left);
    CHECK(worst_against_torch(q_last, &wrong, nullptr, "attn_causal_lower_right") > 0.1);
}

namespace {

template <class T>
Ten4<T> narrow4(const Ten4<double>& x)
{
    Ten4<T> out = xt::zeros<T>(x.shape());
    std::transform(x.begin(), x.end(), out.begin(), [](double v) { return T(v); });
    return out;
}

// Causal attention in a 16-bit type on the fixture's inputs, against PyTorch's op by op.
template <class T>
double worst_16bit_against_torch(const std::string& expected_file)
{
    const Ten4<T> q = narrow4<T>(load4<4>("attn_q")), k = narrow4<T>(load4<4>("attn_k")), v = narrow4<T>(load4<4>("attn_v"));
    const Ten4<double> expected = load4<4>(expected_file);
    const MaskSpec causal = spec(MaskKind::causal, 5, 5);
    AttentionInputs<T> in;
    in.q = &q, in.k = &k, in.v = &v, in.mask = &causal, in.scale = 1.0 / std::sqrt(3.0);
    const auto main = attention(in, Matrices::drop);
    CHECK(main.out.shape() == expected.shape());
    const Ten4<double> got = xt::cast<double>(main.out);
    return max_abs_diff(got, expected);
}

}  // namespace

TEST_CASE("float16 and bfloat16 attention equal PyTorch's, computed op by op in the dtype")
{
    CHECK(worst_16bit_against_torch<f16>("attn_causal_float16") == 0.0);
    CHECK(worst_16bit_against_torch<bf16>("attn_causal_bfloat16") == 0.0);
    // The fixtures differ from float64's by the dtype's rounding, not by nothing.
    const Ten4<double> f64 = load4<4>("attn_causal");
    CHECK(max_abs_diff(load4<4>("attn_causal_float16"), f64) > 1e-5);
    CHECK(max_abs_diff(load4<4>("attn_causal_bfloat16"), f64) > max_abs_diff(load4<4>("attn_causal_float16"), f64));
}

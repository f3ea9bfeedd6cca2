// Causal, padding and sliding-window masks, in PyTorch's conventions.
// Sizes: B batch, L queries, S keys.
//
//   additive mask   0 where a query may look, the fill (-inf by default) where it may not;
//                   added to the scores before the softmax.
//   key_padding_mask  [B, S] bool, true = padding, ignore (nn.MultiheadAttention).
//   attn_mask (bool)  true = may attend (scaled_dot_product_attention). The opposite sense!
#pragma once

#include "attnlab/report.hpp"
#include "attnlab/softmax.hpp"

#include <optional>
#include <vector>

namespace attnlab {

enum class MaskKind { none, causal, padding, both, window };
constexpr auto enum_names(MaskKind)
{
    return std::array{std::pair{MaskKind::none, std::string_view("none")},
                      std::pair{MaskKind::causal, std::string_view("causal")},
                      std::pair{MaskKind::padding, std::string_view("padding")},
                      std::pair{MaskKind::both, std::string_view("both")},
                      std::pair{MaskKind::window, std::string_view("window")}};
}

// Where the causal triangle sits when L != S. upper-left: query i sees keys 0..i, as
// PyTorch's is_causal=True. lower-right: the last query sees every key, as a decoder that
// appends L new queries after S - L cached keys needs (torch.nn.attention.bias.causal_lower_right).
enum class Align { upper_left, lower_right };
constexpr auto enum_names(Align)
{
    return std::array{std::pair{Align::upper_left, std::string_view("upper-left")},
                      std::pair{Align::lower_right, std::string_view("lower-right")}};
}

// Which (b, i, j) a mask hides. One definition, from which every form is built.
struct MaskSpec {
    MaskKind kind = MaskKind::causal;
    long queries = 1;              // L
    long keys = 1;                 // S
    std::vector<long> lengths;     // per sequence, for padding and both
    long window = 0;               // for window: query i sees keys i-W+1 .. i
    long diagonal = 1;             // torch.triu's diagonal: keys j - i >= diagonal are hidden
    Align align = Align::upper_left;
    double fill = -std::numeric_limits<double>::infinity();

    long offset() const { return align == Align::lower_right ? keys - queries : 0; }
    bool has_padding() const { return kind == MaskKind::padding || kind == MaskKind::both; }
    bool has_causal() const
    {
        return kind == MaskKind::causal || kind == MaskKind::both || kind == MaskKind::window;
    }
    long batch() const { return has_padding() ? static_cast<long>(lengths.size()) : 1; }

    // Whether query i of sequence b may not look at key j. Only padding reads b (as an index
    // into lengths), so a causal or window mask takes any b of the batch.
    bool masked(long b, long i, long j) const;
    // How many keys row i of sequence b should see under the usual diagonal (1): the figure
    // the visibility check holds the mask against.
    long expected_visible(long b, long i) const;
};

// [L, S]: 0 or fill, for sequence b (causal and window do not depend on b).
template <class T>
Mat<T> additive_mask(const MaskSpec& m, long b = 0);

// The standard causal mask, built the other way PyTorch builds it: visible where
// tril(ones(L, S), diagonal = offset) is 1 (scaled_dot_product_attention's is_causal and
// torch.nn.attention.bias.causal_lower_right), the fill elsewhere. additive_mask follows
// triu(full(fill), diagonal) instead (generate_square_subsequent_mask); with the usual
// diagonal 1 the two agree element for element, with any other diagonal they do not.
template <class T>
Mat<T> causal_reference_tril(long queries, long keys, Align align, T fill);

// [B, S] key_padding_mask (true = ignore) and its complement, attn_mask (true = may attend).
xt::xtensor<bool, 2> key_padding_mask(const MaskSpec& m);
xt::xtensor<bool, 2> attn_mask_bool(const MaskSpec& m);

// scores [B, L, S] -> weights, with the mask given one of three ways.
template <class T>
Ten3<T> masked_softmax_additive(const Ten3<T>& scores, const MaskSpec& m, SoftmaxKind kind);
template <class T>
Ten3<T> masked_softmax_key_padding(const Ten3<T>& scores, const xt::xtensor<bool, 2>& kpm,
                                   SoftmaxKind kind);
template <class T>
Ten3<T> masked_softmax_attn_bool(const Ten3<T>& scores, const xt::xtensor<bool, 2>& amb,
                                 SoftmaxKind kind);

// --- measurements behind the checks ---

// Rows (b, i) whose count of visible keys differs from expected_visible.
long rows_with_wrong_visibility(const MaskSpec& m);
// max |w| at hidden positions (0 when masking is exact).
template <class T>
double max_masked_weight(const Ten3<T>& w, const MaskSpec& m);
// max |sum_j w - 1| over rows that are not fully masked.
template <class T>
double max_row_sum_error(const Ten3<T>& w, const MaskSpec& m);
// Number of NaN weights.
template <class T>
long count_nan(const Ten3<T>& w);
// max |a - b|, a NaN on both sides counting as equal and on one side as infinite.
template <class T>
double max_diff_nan_equal(const Ten3<T>& a, const Ten3<T>& b);

struct MaskParams {
    MaskKind kind = MaskKind::causal;
    std::optional<long> len;        // L; default 5, or the longest length
    std::optional<long> kv_len;     // S; default L
    std::optional<Align> align;
    std::optional<long> diagonal;   // default 1
    std::optional<long> window;
    std::optional<long> batch;      // causal and window only; default 1
    std::vector<long> lengths;
    std::string fill = "-inf";
    long dk = 8;
    bool multiply = false;
    SoftmaxKind softmax = SoftmaxKind::plain;
};

// The spec the parameters describe; throws InputError for combinations that make no sense.
MaskSpec mask_spec(const MaskParams& p);
// "-inf", "-1e9" or any number; refuses NaN and +inf.
double parse_fill(const std::string& text);

Report run_mask(const MaskParams& p, const RunContext& ctx);

}  // namespace attnlab

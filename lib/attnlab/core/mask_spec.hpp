// Which (sequence, query, key) a mask hides: one definition, from which every form of a
// mask is built (additive, key_padding_mask, boolean attn_mask, a loop bound), in
// PyTorch's conventions. Sizes: B batch, L queries, S keys.
//
//   additive mask     0 where a query may look, the fill (-inf by default) where it may not;
//                     added to the scores before the softmax.
//   key_padding_mask  [B, S] bool, true = padding, ignore (nn.MultiheadAttention).
//   attn_mask (bool)  true = may attend (scaled_dot_product_attention). The opposite sense!
#pragma once

#include <array>
#include <limits>
#include <string_view>
#include <utility>
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

// What a sliding window of W means. keys: query i sees W keys, i-W+1..i (Hugging Face's
// masking utilities since 2025, Mistral's rotating cache, FlashAttention's window_size =
// (W-1, 0)). hf2024: W + 1 keys, i-W..i (Hugging Face's 2024 _make_causal_mask, whose
// sliding-window diagonal is past - W - 1, and Mistral's reference prefill mask).
enum class WindowConvention { keys, hf2024 };
constexpr auto enum_names(WindowConvention)
{
    return std::array{std::pair{WindowConvention::keys, std::string_view("keys")},
                      std::pair{WindowConvention::hf2024, std::string_view("hf2024")}};
}
// The keys a window of W shows each query under a convention.
constexpr long window_keys(long W, WindowConvention c) { return c == WindowConvention::hf2024 ? W + 1 : W; }

// Where the causal triangle sits when L != S. upper-left: query i sees keys 0..i, as
// PyTorch's is_causal=True. lower-right: the last query sees every key, as a decoder that
// appends L new queries after S - L cached keys needs (torch.nn.attention.bias.causal_lower_right).
enum class Align { upper_left, lower_right };
constexpr auto enum_names(Align)
{
    return std::array{std::pair{Align::upper_left, std::string_view("upper-left")},
                      std::pair{Align::lower_right, std::string_view("lower-right")}};
}

// The most sequences a batch may hold (--batch, and the number of --lengths).
constexpr long kMaxBatch = 1L << 16;

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
    // The keys query i of sequence b may see: every mask here shows a row one interval
    // [first, second) of keys (empty when first >= second), so masked(b, i, j) is
    // j < first || j >= second.
    std::pair<long, long> visible_range(long b, long i) const;
    // Whether every key is hidden from query i of sequence b.
    bool row_fully_masked(long b, long i) const;
    // How many keys row i of sequence b should see, with this spec's diagonal, alignment,
    // window and lengths: the figure the visibility check holds a mask against.
    long expected_visible(long b, long i) const;
};

}  // namespace attnlab

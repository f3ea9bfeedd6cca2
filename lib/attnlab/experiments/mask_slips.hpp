// The mask mistakes learners write, each one rule shared by every experiment and tensor that
// can show it (`mask`'s mask and weights; `attend`'s weights, out and out_merged): one id, one
// meaning. A rule says which keys the slip hides, given the spec that was asked for.
#pragma once

#include "attnlab/core/mask_spec.hpp"
#include "attnlab/core/rng.hpp"
#include "attnlab/core/softmax.hpp"
#include "attnlab/core/tensor.hpp"

#include <functional>
#include <optional>
#include <vector>

namespace attnlab {

// Padding lengths for the random tests: one to three sequences, the first of length len (it
// sets L), the others anywhere in 0..len (0: a fully masked row).
inline std::vector<long> sample_lengths(Rng& rng, long len)
{
    std::vector<long> lengths(static_cast<std::size_t>(between(rng, 1, 3)));
    for (long& n : lengths) n = between(rng, 0, len);
    lengths.front() = len;
    return lengths;
}

// Whether query i of sequence b hides key j.
using Hide = std::function<bool(long b, long i, long j)>;

enum class MaskSlip {
    // a different set of hidden keys: shows on the mask, the scores, the weights and the output
    flipped,           // mask_flipped: hide the past and the diagonal, show the future (tril(ones) == 1)
    future_visible,    // future_visible: hide the strict past, show the diagonal and the future (keep = triu(ones))
    diagonal_masked,   // diagonal_masked: triu(..., diagonal=0) where diagonal=1 was asked for
    off_by_one,        // mask_off_by_one: triu(..., diagonal + 1), each query sees the next key
    on_queries,        // padding_on_queries: padding hides rows (queries), not keys
    padding_one_late,  // padding_one_late: j > lengths[b] hidden instead of j >= lengths[b]
    bool_inverted,     // bool_inverted: a boolean mask's convention inverted (with padding: the complement)
    // the right keys, hidden the wrong way: shows on the weights and the output
    multiplied,          // mask_multiplied: scores times a 0/1 mask (hidden scores 0, not -inf)
    after_softmax,       // mask_after_softmax: weights zeroed after the softmax, not renormalised
    fully_masked_plain,  // fully_masked_row_nan: a row with no visible key under a plain softmax
};

// Whether the slip is a different set of hidden keys (a mask, scores can show it), not a
// different way of hiding the right ones.
inline bool hides_other_keys(MaskSlip s) { return s != MaskSlip::multiplied && s != MaskSlip::after_softmax && s != MaskSlip::fully_masked_plain; }
// Whether the slip changes the masked scores (all but the two that act at the softmax).
inline bool changes_scores(MaskSlip s) { return s != MaskSlip::after_softmax && s != MaskSlip::fully_masked_plain; }

struct SlipInfo {
    MaskSlip slip;
    const char* id;
    const char* en;
    const char* zh;
};
// Every slip, in the order the catalogues list them.
const std::vector<SlipInfo>& mask_slips();

// The keys the slip hides, or nothing when the spec gives the slip no meaning (a flipped
// triangle where there is none, padding on queries without padding, a plain softmax where
// no row is fully masked or the run's softmax is plain already).
std::optional<Hide> slip_rule(MaskSlip slip, const MaskSpec& m, SoftmaxKind run_softmax);
// The softmax the slip's weights are taken with.
SoftmaxKind slip_softmax(MaskSlip slip, SoftmaxKind run_softmax);

// Masked scores from unmasked ones [B, H, L, S] or [B, L, S] (heads = 1): `fill` added where
// `hide` holds; with multiplied, the hidden scores set to 0; after_softmax leaves them as they are.
std::vector<double> slip_scores(MaskSlip slip, const Tensor& raw, std::size_t heads, const Hide& hide, double fill);
// Weights from unmasked scores: slip_scores, then the softmax; with after_softmax, the softmax
// over every key and the hidden keys zeroed, rows left unrenormalised.
std::vector<double> slip_weights(MaskSlip slip, const Tensor& raw, std::size_t heads, const Hide& hide, double fill, SoftmaxKind kind);
// An additive mask shaped as `like` ([L, S], or [B, 1, L, S]): fill where hide holds.
Tensor additive_hiding(const Tensor& like, const Hide& hide, double fill);

}  // namespace attnlab

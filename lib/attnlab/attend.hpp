// `attend`: the whole attention block, from embeddings to output, with its checks.
#pragma once

#include "attnlab/block.hpp"

#include <optional>
#include <vector>

namespace attnlab {

struct AttendParams {
    long batch = 1;                    // B (with --lengths: the number of lengths)
    std::optional<long> batch_given;
    long len = 6;                      // L
    long heads = 2;                    // H
    long dim = 8;                      // E = H * d
    std::optional<long> kv_len;        // S: cross-attention from a second sequence
    std::optional<long> kv_heads;      // Hkv: grouped-query attention
    std::optional<double> scale;
    PeKind pe = PeKind::none;
    RopeStyle rope_style = RopeStyle::interleaved;
    MaskKind mask = MaskKind::none;
    std::vector<long> lengths;
    std::optional<long> window;
    Align align = Align::upper_left;
    SoftmaxKind softmax = SoftmaxKind::plain;
};

Report run_attend(const AttendParams& p, const RunContext& ctx);

}  // namespace attnlab

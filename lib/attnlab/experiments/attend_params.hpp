// `attend`'s parameters and entry point, light enough for the app to include.
#pragma once

#include <string>
#include <vector>

#include "attnlab/core/mask_spec.hpp"
#include "attnlab/core/report.hpp"
#include "attnlab/core/softmax.hpp"
#include "attnlab/model/block_params.hpp"
#include "attnlab/experiments/rope_params.hpp"

#include <optional>
#include <vector>

namespace attnlab {

struct AttendParams {
    std::optional<long> batch;         // B (default 1, or the number of --lengths)
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
    WindowConvention window_convention = WindowConvention::keys;
    Align align = Align::upper_left;
    SoftmaxKind softmax = SoftmaxKind::plain;
    unsigned threads = 0;              // of the kernel and the projections; 0: every core
    // --positions: each token's position, queries and keys alike (self-attention with --pe;
    // any integers, repeats and gaps included); empty: 0..L-1.
    std::vector<long> positions;
};

Report run_attend(const AttendParams& p, const RunContext& ctx);
// The tensors it declares, with their axes.
std::vector<TensorInfo> attend_tensor_infos();
// The arguments that reproduce a run with these parameters ("attend", then the options that
// differ from the defaults).
std::vector<std::string> attend_command(const AttendParams& p);

}  // namespace attnlab

// `mask`'s parameters and entry point, light enough for the app to include.
#pragma once

#include "attnlab/core/mask_spec.hpp"
#include "attnlab/core/report.hpp"
#include "attnlab/core/softmax.hpp"

#include <optional>
#include <string>
#include <vector>

namespace attnlab {

struct MaskParams {
    MaskKind kind = MaskKind::causal;
    std::optional<long> len;        // L; default 5, or the longest length
    std::optional<long> kv_len;     // S; default L
    std::optional<Align> align;
    std::optional<long> diagonal;   // default 1
    std::optional<long> window;
    WindowConvention window_convention = WindowConvention::keys;
    std::optional<long> batch;      // causal and window only; default 1
    std::vector<long> lengths;
    std::string fill = "-inf";
    long dk = 8;
    bool multiply = false;
    SoftmaxKind softmax = SoftmaxKind::plain;
};

Report run_mask(const MaskParams& p, const RunContext& ctx);
// The tensors it declares, with their axes.
std::vector<TensorInfo> mask_tensor_infos();
// The arguments that reproduce a run with these parameters ("mask", then the options that
// differ from the defaults).
std::vector<std::string> mask_command(const MaskParams& p);

}  // namespace attnlab

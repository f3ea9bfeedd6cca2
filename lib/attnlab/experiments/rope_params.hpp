// `rope`'s parameters and entry point, light enough for the app to include.
#pragma once

#include <string>
#include <vector>

#include "attnlab/core/position/rope_scaling.hpp"
#include "attnlab/core/report.hpp"

#include <optional>

namespace attnlab {

struct RopeParams {
    long len = 8;
    long dim = 8;
    long heads = 1;
    long batch = 1;
    double base = 10000.0;
    RopeStyle style = RopeStyle::interleaved;
    std::optional<long> rotary_dim;
    RopeScalingParams scaling;
    bool example = false;
    // Each token's position (HF's position_ids, a learner's token_positions): any integers,
    // repeats and gaps included; empty: 0, 1, ..., L - 1.
    std::vector<long> positions;
};

Report run_rope(const RopeParams& p, const RunContext& ctx);
// The tensors it declares, with their axes.
std::vector<TensorInfo> rope_tensor_infos();
// The arguments that reproduce a run with these parameters ("rope", then the options that
// differ from the defaults).
std::vector<std::string> rope_command(const RopeParams& p);

}  // namespace attnlab

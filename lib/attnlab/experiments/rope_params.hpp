// `rope`'s parameters and entry point, light enough for the app to include.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attnlab/core/position/rope_scaling.hpp"
#include "attnlab/core/report.hpp"

#include <optional>

namespace attnlab {

// The length dynamic NTK scales for. positions: max(position) + 1, as Hugging Face's
// dynamic_rope_update takes max(position_ids) + 1; len: the number of tokens, --len.
enum class DynamicLength { positions, len };
constexpr auto enum_names(DynamicLength)
{
    return std::array{std::pair{DynamicLength::positions, std::string_view("positions")},
                      std::pair{DynamicLength::len, std::string_view("len")}};
}

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
    DynamicLength dynamic_length = DynamicLength::positions;
    // longrope's factors as given, comma-separated (scaling.short_factor and long_factor).
    std::string short_factor, long_factor;
};

Report run_rope(const RopeParams& p, const RunContext& ctx);
// The tensors it declares, with their axes.
std::vector<TensorInfo> rope_tensor_infos();
// The arguments that reproduce a run with these parameters ("rope", then the options that
// differ from the defaults).
std::vector<std::string> rope_command(const RopeParams& p);

}  // namespace attnlab

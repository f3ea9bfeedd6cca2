// A ParamList as the JSON object the report and exercise.json write, in order. For the layers
// that write JSON (render, exercise, the app); the experiments see params.hpp alone.
#pragma once

#include "attnlab/core/params.hpp"

#include <nlohmann/json.hpp>

namespace attnlab {

nlohmann::ordered_json params_json(const ParamList& list);

}  // namespace attnlab

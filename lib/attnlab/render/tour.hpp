// The tour's report as text and JSON.
#pragma once

#include "attnlab/core/tour_report.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>

namespace attnlab {

// quiet: the sections' check lines and the claims table, without tensors and notes.
// picture: when set, draws each section's picture (the terminal's --plot) after the run that
// holds it. width: the columns check lines and claims wrap at (0: one line each).
std::string render_tour_text(const TourReport& t, bool color, bool quiet = false,
                             const std::function<std::string(const TourRun&)>& picture = {}, std::size_t width = 0);
nlohmann::ordered_json tour_to_json(const TourReport& t, bool with_tensors = true);

}  // namespace attnlab

// What attention's output must be whatever computed it: each output row is a weighted average
// of the value rows its query sees (weights >= 0 that sum to 1). Measured on the output and the
// values alone, so it judges a learner's output as well as ours ("Transformer（四）" §3: the
// output is sum_j w_ij v_j; "Attention 的两个补丁" §5: a masked key's weight is 0).
#pragma once

#include "attnlab/core/mask_spec.hpp"
#include "attnlab/core/tensor.hpp"

#include <cmath>
#include <utility>
#include <vector>

namespace attnlab {

struct AverageFigures {
    double excess = 0.0;      // how far an output element lies outside its visible values' range
    double value_scale = 0.0; // max |v| over the values read
    long widest = 0;          // the most keys one query sees (n of the error bound)
    double first_row = 0.0;   // max |out[query 0] - v[key 0]| where query 0 sees key 0 alone
    bool first_row_alone = false;
};

// The smallest and largest of col[first, second) for each interval (NaNs passed over; an empty
// interval gives +inf, -inf). Intervals whose ends never move back, as every mask's rows are,
// take one pass with monotone queues, O(S + L); others a scan.
struct Extremes {
    double lo = INFINITY, hi = -INFINITY;
};
std::vector<Extremes> interval_extremes(const std::vector<double>& col, const std::vector<std::pair<long, long>>& spans);

// out: [B, H, L, d] (merged = false) or [B, L, H d] (merged = true); v: [B, KV, S, d] with KV
// dividing H (grouped-query: head h reads value head h / (H / KV)). Fully masked rows are
// skipped.
AverageFigures measure_averages(const Tensor& out, bool merged, const Tensor& v, const MaskSpec& mask, long heads);

}  // namespace attnlab

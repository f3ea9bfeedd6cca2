// `shaw`: relative position representations (Shaw, Uszkoreit and Vaswani 2018, "Self-Attention
// with Relative Position Representations", §3.1-3.2), the relative scheme "Transformer（四）"
// §9.2 describes: the distance of query and key enters both the scores and the values. Two
// tables rel_k, rel_v of 2K + 1 rows (shared by the heads), row r for the clipped distance
// r - K; pair (i, j) reads row rel_index[i, j] = clip(j - i, -K, K) + K:
//   scores_ij = q_i . (k_j + rel_k[rel_index[i, j]]) / sqrt(d)
//   out_i     = sum_j softmax(scores_i)_j (v_j + rel_v[rel_index[i, j]])
// With --kv-len S > L the L queries are the last L of S positions, O = S - L (tensor2tensor's
// _generate_relative_positions_matrix: range_vec_q = range_vec_k[-length_q:]), so query i sits
// at O + i and pair (i, j) reads clip(j - (O + i), -K, K) + K.
#pragma once

#include "attnlab/core/mask_spec.hpp"
#include "attnlab/core/report.hpp"
#include "attnlab/experiments/experiment.hpp"

#include <optional>
#include <string>
#include <vector>

namespace attnlab {

struct ShawParams {
    long len = 6;    // L
    long dim = 8;    // E, the model dimension, a multiple of H
    long heads = 2;  // H; d = E / H
    long batch = 1;  // B
    long clip = 2;   // K: distances beyond K share the end rows
    MaskKind mask = MaskKind::none;  // none (an encoder, as the paper's) or causal
    std::optional<long> kv_len;      // S >= L keys; the queries are the last L positions (default L)
};

const Experiment<ShawParams>& shaw_experiment();
Report run_shaw(const ShawParams& p, const RunContext& ctx);
// The arguments that reproduce a run ("shaw", then the options that differ from the defaults).
std::vector<std::string> shaw_command(const ShawParams& p);

}  // namespace attnlab

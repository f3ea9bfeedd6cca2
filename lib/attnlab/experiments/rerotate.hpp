// `rerotate`: moving a RoPE key cache. A cached key is stored rotated, k_rot = R(m) k; when
// the cache moves every key from position m to m + Δ (llama.cpp's context shift, Hugging
// Face's former SinkCache after an eviction), it is rotated once more, by Δ:
// R(Δ) R(m) k = R(m + Δ) k, the rotation of the un-rotated key at its new position. This is
// the composition rule behind "Attention 的两个补丁" §3.1's R(a)^T R(b) = R(b - a), and it
// is why a RoPE cache never needs its keys before rotation. Sizes: B batch, H heads, L cached
// keys at positions 0 .. L-1, d the head dimension (even), P = d/2 pairs.
#pragma once

#include "attnlab/core/position/rope_scaling.hpp"
#include "attnlab/core/report.hpp"
#include "attnlab/experiments/experiment.hpp"

#include <string>
#include <vector>

namespace attnlab {

struct RerotateParams {
    long len = 6;                            // L cached keys
    long dim = 8;                            // d, the head dimension
    long heads = 2;                          // H
    long batch = 1;                          // B
    long shift = -2;                         // Δ: each key moves from m to m + Δ (an eviction moves them back)
    double base = 10000.0;                   // theta_i = base^(-2i/d)
    RopeStyle style = RopeStyle::interleaved;  // pairing: interleaved (2i, 2i+1) or half (i, i+d/2)
};

const Experiment<RerotateParams>& rerotate_experiment();
Report run_rerotate(const RerotateParams& p, const RunContext& ctx);
// The arguments that reproduce a run ("rerotate", then the options that differ from the defaults).
std::vector<std::string> rerotate_command(const RerotateParams& p);

}  // namespace attnlab

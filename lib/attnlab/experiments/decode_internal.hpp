// What decode.cpp (the compute through a real cache) and decode_checks.cpp (the rule as a
// formula, the float64 recomputation, the checks and the mistakes) share.
#pragma once

#include "attnlab/experiments/decode.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace attnlab::decode_detail {

constexpr double kBase = 10000.0;  // RoPE's and the sinusoidal table's

inline long tokens(const DecodeParams& p) { return p.prefill + p.steps; }
inline long kv_heads(const DecodeParams& p) { return p.kv_heads.value_or(p.heads); }
inline long head_dim(const DecodeParams& p) { return p.dim / p.heads; }
// Slots of the cache: every token without a window, S + W with one.
inline long slots(const DecodeParams& p) { return p.window > 0 ? p.sinks + p.window : tokens(p); }
inline long slots_at_end(const DecodeParams& p) { return std::min(slots(p), tokens(p)); }
// Pads in front of sequence b: P minus its real length.
inline long pad_of(const DecodeParams& p, std::size_t b) { return p.left_pad.empty() ? 0 : p.prefill - p.left_pad[b]; }
// Token t of sequence b at its position cumsum(mask) - 1; a pad gets Hugging Face's fill, 1
// (masked, so never read).
inline long position_of_token(const DecodeParams& p, std::size_t b, long t) { return t < pad_of(p, b) ? 1 : t - pad_of(p, b); }

// --sink-logits as numbers, one per head (one given: every head's); empty without sinks.
std::vector<double> sink_logits(const DecodeParams& p);

// How the positions are read: as they should be, or as a usual mistake reads them.
enum class PositionRule { correct, restart_each_step, off_by_one, sinks_original, left_pad_from_0 };

struct Visible {
    std::vector<long> tokens;     // oldest first, sinks first; pads left out (masked)
    std::vector<long> positions;  // of each key
    long query_position = 0;
};

// The tokens query n of sequence b sees and the position of each, by the cache's rule written
// as a formula (the compute keeps a real cache instead).
Visible visible_at(const DecodeParams& p, std::size_t b, long n, PositionRule rule);

// The same rows as the run computes them, in `dtype`, from the run's q, k and v: the plain
// reference in the run's precision whose error sets the steps' tolerance (decode_checks.cpp).
std::vector<double> rows_in(DType dtype, const DecodeParams& p, const Run& run, long first, long count, PositionRule rule);

std::vector<CheckDef<DecodeParams>> decode_checks();
std::vector<Mistake<DecodeParams>> decode_mistakes();

}  // namespace attnlab::decode_detail

// What mask.cpp (the compute, the descriptor) and mask_checks.cpp (the checks and notes) share.
#pragma once

#include "attnlab/experiments/mask.hpp"

#include <vector>

namespace attnlab::mask_detail {

// Sequences in the batch: one per length with padding, else --batch (default 1).
inline long batch_of(const MaskParams& p, const MaskSpec& m) { return m.has_padding() ? m.batch() : p.batch.value_or(1); }

// The checks and notes that judge a run computed in T.
template <class T>
std::vector<CheckDef<MaskParams>> mask_checks();
template <class T>
std::vector<NoteFn<MaskParams>> mask_notes();

}  // namespace attnlab::mask_detail

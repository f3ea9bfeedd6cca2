// What pe.cpp (the compute, the descriptor) and pe_checks.cpp (the checks and notes) share.
#pragma once

#include "attnlab/experiments/pe.hpp"
#include "attnlab/experiments/precision.hpp"

#include <vector>

namespace attnlab::pe_detail {

// Angle precision: pos * w_i as sinusoidal_table computes it in T against the exact product.
template <class T>
Vec<double> pe_angle_errors(const PeParams& p, const Vec<T>& freq)
{
    return angle_errors_by_position<T>(p.len, std::vector<double>(freq.begin(), freq.end()), pe_frequencies_reference(p.dim, p.base, p.layout));
}

// The checks and notes that judge a run computed in T.
template <class T>
std::vector<CheckDef<PeParams>> pe_checks();
template <class T>
std::vector<NoteFn<PeParams>> pe_notes();

}  // namespace attnlab::pe_detail

// What pe.cpp (the compute, the descriptor) and pe_checks.cpp (the checks and notes) share.
#pragma once

#include "attnlab/experiments/pe.hpp"
#include "attnlab/experiments/precision.hpp"

#include <numeric>
#include <vector>

namespace attnlab::pe_detail {

// The frequency rule a run asked for: its --frequencies (the layout's own by default) and
// --min-timescale.
inline PeFreqRule rule_of(const PeParams& p) { return {p.frequencies.value_or(default_frequencies(p.layout)), p.min_timescale}; }

template <class T>
Vec<T> frequencies_of(const PeParams& p, FreqMethod method)
{
    return pe_frequencies<T>(p.dim, p.base, rule_of(p), method);
}

// The first `rows` rows of the table, positions start_index onwards; an odd D gets a zero
// last column, as fairseq and tensor2tensor pad it.
template <class T>
Mat<T> table_rows(const PeParams& p, const Vec<T>& freq, long rows)
{
    std::vector<long> positions(static_cast<std::size_t>(rows));
    std::iota(positions.begin(), positions.end(), p.start_index);
    const Mat<T> pairs = sinusoidal_rows<T>(positions, freq, p.layout);
    if (p.dim % 2 == 0) return pairs;
    Mat<T> padded = xt::zeros<T>({pairs.shape(0), pairs.shape(1) + 1});
    xt::view(padded, xt::all(), xt::range(0, static_cast<long>(pairs.shape(1)))) = pairs;
    return padded;
}

// Angle precision: pos * w_i as the table computes it in T against the exact product.
template <class T>
Vec<double> pe_angle_errors(const PeParams& p, const Vec<T>& freq)
{
    return angle_errors_by_position<T>(p.len, std::vector<double>(freq.begin(), freq.end()), pe_frequencies_reference(p.dim, p.base, rule_of(p)), nullptr,
                                       p.start_index);
}

// The checks and notes that judge a run computed in T.
template <class T>
std::vector<CheckDef<PeParams>> pe_checks();
template <class T>
std::vector<NoteFn<PeParams>> pe_notes();

}  // namespace attnlab::pe_detail

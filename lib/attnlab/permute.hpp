// `permute-test`: the articles' first experiment. Without position information,
// self-attention is permutation-equivariant: Attn(PX) = P Attn(X). Its output is *not*
// "strictly unchanged" (invariant), as the articles first word it; the run measures both.
#pragma once

#include "attnlab/block.hpp"

#include <optional>
#include <vector>

namespace attnlab {

struct PermuteParams {
    long len = 6;                     // L
    long dim = 8;                     // E
    long heads = 1;                   // H
    bool example = false;             // the articles' n = 4, d = 8, permutation 2,1,0,3
    bool example_conflict = false;    // the CLI sets it when --example meets --len or --dim
    std::vector<long> perm;           // given permutation; empty: random
    long trials = 1;                  // random permutations (the worst is reported)
    bool no_proj = false;             // Softmax(X X^T) X, the articles' projection-free form
    PeKind pe = PeKind::none;
    MaskKind mask = MaskKind::none;   // none or causal
};

// Throws InputError unless perm is a permutation of 0..n-1.
void validate_permutation(const std::vector<long>& perm, long n);

// max |Y(P X) - P Y(X)| where rows of PX are X[perm[i]]: [1, L, E] tensors.
template <class T>
double equivariance_error(const Ten3<T>& y, const Ten3<T>& y_perm, const std::vector<long>& perm);

Report run_permute(const PermuteParams& p, const RunContext& ctx);

}  // namespace attnlab

// `permute-test`: the articles' first experiment. Without position information,
// self-attention is permutation-equivariant: Attn(PX) = P Attn(X). Its output is *not*
// "strictly unchanged" (invariant), as the articles first word it; the run measures both.
#pragma once

#include "attnlab/model/block.hpp"
#include "attnlab/experiments/experiment.hpp"
#include "attnlab/experiments/permute_params.hpp"

#include <vector>

namespace attnlab {

// Throws InputError unless perm is a permutation of 0..n-1.
void validate_permutation(const std::vector<long>& perm, long n);

// max |Y(P X) - P Y(X)| where rows of PX are X[perm[i]]: y and y_perm are [L, E].
double equivariance_error(const Tensor& y, const Tensor& y_perm, const std::vector<long>& perm);
// max |A(PX) - P A(X) P^T| for weights [H, L, L].
double weights_permutation_error(const Tensor& w, const Tensor& w_perm, const std::vector<long>& perm);

const Experiment<PermuteParams>& permute_experiment();

// The claim of "Attention 的两个补丁" §1 and FAQ Q5 that without position encoding attention is
// a bag of words, as permute-test (random X) and nope (the closed form) measure it: the figure
// is how far permuting the input moves the output beyond permuting it.
Check bag_of_words_claim(const CheckEnv& env, MaskKind mask, std::string metric, double figure, double tol, double scale);

// `trials` random permutations of 0..len-1 from the seed, never the identity (when len > 1).
std::vector<std::vector<long>> random_permutations(long len, long trials, std::uint64_t seed);

}  // namespace attnlab

// `permute-test`'s parameters and entry point, light enough for the app to include.
#pragma once

#include <string>
#include <vector>

#include "attnlab/core/mask_spec.hpp"
#include "attnlab/core/report.hpp"
#include "attnlab/model/block_params.hpp"

#include <vector>

namespace attnlab {

struct PermuteParams {
    long len = 6;                     // L
    long dim = 8;                     // E
    long heads = 1;                   // H
    bool example = false;             // the articles' n = 4, d = 8, permutation 2,1,0,3
    std::vector<long> perm;           // given permutation; empty: random
    long trials = 1;                  // random permutations (the worst is reported)
    bool no_proj = false;             // Softmax(X X^T) X, the articles' projection-free form
    PeKind pe = PeKind::none;
    MaskKind mask = MaskKind::none;   // none or causal
};

Report run_permute(const PermuteParams& p, const RunContext& ctx);
// The tensors it declares, with their axes.
std::vector<TensorInfo> permute_tensor_infos();
// The arguments that reproduce a run with these parameters ("permute-test", then the options that
// differ from the defaults).
std::vector<std::string> permute_command(const PermuteParams& p);

}  // namespace attnlab

// `nope`: no position encoding at all, under a causal mask. With equal scores (q = 0) row i
// of the causal softmax is uniform over its i + 1 visible keys, so a value that is 1 on the
// first token and 0 elsewhere comes out as 1/(i+1): the position can be read from the output
// alone. Without the mask every row is 1/L and order is invisible. This is how position-free
// decoders learn position (Haviv et al. 2022, arXiv 2203.16634; Kazemnejad et al. 2023,
// arXiv 2305.19466), and why "no PE means a bag of words" ("Attention 的两个补丁" §1, FAQ Q5)
// holds for an encoder only.
#pragma once

#include "attnlab/core/mask_spec.hpp"
#include "attnlab/core/report.hpp"
#include "attnlab/experiments/experiment.hpp"

#include <string>
#include <vector>

namespace attnlab {

struct NopeParams {
    long len = 6;                      // L
    MaskKind mask = MaskKind::causal;  // none or causal
};

const Experiment<NopeParams>& nope_experiment();
Report run_nope(const NopeParams& p, const RunContext& ctx);
// The arguments that reproduce a run ("nope", then the options that differ from the defaults).
std::vector<std::string> nope_command(const NopeParams& p);

}  // namespace attnlab

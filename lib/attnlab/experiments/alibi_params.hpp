// `alibi`'s parameters and entry point, light enough for the app to include.
#pragma once

#include <string>
#include <vector>

#include "attnlab/core/position/alibi.hpp"
#include "attnlab/core/report.hpp"

namespace attnlab {

struct AlibiParams {
    long heads = 4;   // H
    long len = 8;     // L
    long dim = 8;     // d of the random q and k
    SlopeRule slopes = SlopeRule::reference_code;
    AlibiVariant variant = AlibiVariant::symmetric;
};

Report run_alibi(const AlibiParams& p, const RunContext& ctx);
// The tensors it declares, with their axes.
std::vector<TensorInfo> alibi_tensor_infos();
// The arguments that reproduce a run with these parameters ("alibi", then the options that
// differ from the defaults).
std::vector<std::string> alibi_command(const AlibiParams& p);

}  // namespace attnlab

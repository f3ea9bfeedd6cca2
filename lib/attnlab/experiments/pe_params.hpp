// `pe`'s parameters and entry point, light enough for the app to include.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attnlab/core/position/sinusoidal_layout.hpp"
#include "attnlab/core/report.hpp"

namespace attnlab {

struct PeParams {
    long len = 8;         // L
    long dim = 8;         // D
    double base = 10000.0;
    PeLayout layout = PeLayout::interleaved;
    long max_len = 0;     // rows precomputed before slicing the first L; 0 means L
    FreqMethod freq_method = FreqMethod::exp_log;
    bool embed = false;   // also build X [B, L, D] and H = s*X + PE
    long batch = 1;       // B, with embed
    bool scale_embed = false;  // s = sqrt(D) as in the original Transformer, else 1
    long shift = 1;       // k of the relative-shift check
    std::optional<PeFrequencies> frequencies;  // the layout's own when not given
    double min_timescale = 1.0;  // tensor2tensor's min_timescale m: w_i = m (base/m)^(-e_i)
    long start_index = 0;        // tensor2tensor's start_index: row r is position start_index + r
};

Report run_pe(const PeParams& p, const RunContext& ctx);
// The tensors it declares, with their axes.
std::vector<TensorInfo> pe_tensor_infos();
// The arguments that reproduce a run with these parameters ("pe", then the options that
// differ from the defaults).
std::vector<std::string> pe_command(const PeParams& p);

}  // namespace attnlab

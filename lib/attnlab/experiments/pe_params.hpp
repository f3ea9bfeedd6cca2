// `pe`'s parameters and entry point, light enough for the app to include.
#pragma once

#include <string>
#include <vector>

#include "attnlab/core/report.hpp"

namespace attnlab {

// interleaved: the paper's sin/cos alternation, w_i = base^(-2i/D).
// concat:      [sin | cos] halves with w_i = base^(-i/(P-1)), as tensor2tensor's
//              get_timing_signal_1d and fairseq's SinusoidalPositionalEmbedding build them.
enum class PeLayout { interleaved, concat };
constexpr auto enum_names(PeLayout)
{
    return std::array{std::pair{PeLayout::interleaved, std::string_view("interleaved")},
                      std::pair{PeLayout::concat, std::string_view("concat")}};
}

// exp-log: w_i = exp(2i * (-ln(base) / D)), as the Annotated Transformer and the articles.
// pow:     w_i = 1 / base^(2i / D), as most RoPE code computes its frequencies.
enum class FreqMethod { exp_log, pow };
constexpr auto enum_names(FreqMethod)
{
    return std::array{std::pair{FreqMethod::exp_log, std::string_view("exp-log")},
                      std::pair{FreqMethod::pow, std::string_view("pow")}};
}

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
};

Report run_pe(const PeParams& p, const RunContext& ctx);
// The tensors it declares, with their axes.
std::vector<TensorInfo> pe_tensor_infos();
// The arguments that reproduce a run with these parameters ("pe", then the options that
// differ from the defaults).
std::vector<std::string> pe_command(const PeParams& p);

}  // namespace attnlab

// RoPE's conventions as data: which dimensions pair up, and the context-extension methods with
// their parameters. Light enough for the app and the params headers to include.
#pragma once

#include <array>
#include <optional>
#include <vector>
#include <string_view>
#include <utility>

namespace attnlab {

// Which dimensions form a pair: a choice a checkpoint makes and a port must match.
// interleaved: (2i, 2i+1): RoFormer, the articles, GPT-J, Meta's LLaMA code (as complex
//              numbers), ggml's normal mode.
// half:        (i, i + r/2): rotate_half of GPT-NeoX, Hugging Face Llama, ggml's NeoX mode.
enum class RopeStyle { interleaved, half };
constexpr auto enum_names(RopeStyle)
{
    return std::array{std::pair{RopeStyle::interleaved, std::string_view("interleaved")},
                      std::pair{RopeStyle::half, std::string_view("half")}};
}

// Context-extension methods, as Hugging Face transformers' modeling_rope_utils computes them
// (llama.cpp's ggml rope_yarn agrees on yarn):
//   none:    theta_i = base^(-2i/r)
//   linear:  theta_i / factor (position interpolation, Chen et al. 2023)
//   ntk:     base * factor^(r/(r-2)) (NTK-aware scaling, bloc97 2023; static)
//   dynamic: base * (factor*L/L0 - (factor-1))^(r/(r-2)) once L > L0 (dynamic NTK)
//   linear+ntk: both at once, base * alpha^(r/(r-2)) and theta_i / factor: llama.cpp's
//            --rope-freq-base with --rope-freq-scale 1/factor, exllama's alpha_value with
//            compress_pos_emb
//   yarn:    a ramp between interpolated and original theta by wavelength, plus the
//            attention factor 0.1 ln(factor) + 1 (Peng et al. 2023, YaRN)
//   llama3:  original theta for wavelengths below L0/high_freq_factor, theta/factor above
//            L0/low_freq_factor, a smooth blend between (Llama 3.1)
//   longrope: theta_i / ext_i, ext the short factors up to L0 and the long ones past it, plus
//            the attention factor sqrt(1 + ln(factor) / ln(L0)) (Phi-3, Hugging Face)
enum class RopeScaling { none, linear, ntk, dynamic, yarn, llama3, longrope, linear_ntk };
constexpr auto enum_names(RopeScaling)
{
    return std::array{std::pair{RopeScaling::none, std::string_view("none")},
                      std::pair{RopeScaling::linear, std::string_view("linear")},
                      std::pair{RopeScaling::ntk, std::string_view("ntk")},
                      std::pair{RopeScaling::dynamic, std::string_view("dynamic")},
                      std::pair{RopeScaling::yarn, std::string_view("yarn")},
                      std::pair{RopeScaling::llama3, std::string_view("llama3")},
                      std::pair{RopeScaling::longrope, std::string_view("longrope")},
                      std::pair{RopeScaling::linear_ntk, std::string_view("linear+ntk")}};
}

struct RopeScalingParams {
    RopeScaling method = RopeScaling::none;
    std::optional<double> factor;        // s
    std::optional<long> original_len;    // L0, the context the model was trained on
    std::optional<double> ntk_alpha;     // linear+ntk: the NTK factor alpha, beside the linear factor s
    double beta_fast = 32.0;             // yarn (HF and llama.cpp defaults)
    double beta_slow = 1.0;
    std::optional<double> attention_factor;  // yarn: overrides 0.1 ln(s) + 1
    bool yarn_no_truncate = false;       // yarn: the ramp's ends left unrounded (HF's truncate=False)
    // yarn, DeepSeek: attention factor mscale(s, mscale) / mscale(s, mscale_all_dim), with
    // mscale(s, m) = 0.1 m ln(s) + 1, when both are given and nonzero (HF get_mscale).
    std::optional<double> mscale, mscale_all_dim;
    std::vector<double> short_factor, long_factor;  // longrope: one per pair
    double low_freq_factor = 1.0;        // llama3 (Meta's defaults)
    double high_freq_factor = 4.0;
};

// Whether Hugging Face multiplies cos and sin by the attention factor (yarn and longrope).
inline bool scales_cos_sin(const RopeScalingParams& s) { return s.method == RopeScaling::yarn || s.method == RopeScaling::longrope; }

// The largest |position|: m stays exact in float32 (2^24), so m * theta rounds once.
constexpr long kMaxRopePosition = 1L << 24;

}  // namespace attnlab

// Rotary position embedding, RoFormer (Su et al. 2021): each 2-D pair of a query or key is
// rotated by m * theta_i at position m, theta_i = base^(-2i/r). Then q_m . k_n depends on
// m - n alone, which this file proves numerically on any input.
// Sizes: B batch, H heads, L positions, d per-head dimension, r rotary dimensions (<= d),
// P = r/2 pairs.
#pragma once

#include "attnlab/report.hpp"

#include <optional>
#include <vector>

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
//   yarn:    a ramp between interpolated and original theta by wavelength, plus the
//            attention factor 0.1 ln(factor) + 1 (Peng et al. 2023, YaRN)
//   llama3:  original theta for wavelengths below L0/high_freq_factor, theta/factor above
//            L0/low_freq_factor, a smooth blend between (Llama 3.1)
enum class RopeScaling { none, linear, ntk, dynamic, yarn, llama3 };
constexpr auto enum_names(RopeScaling)
{
    return std::array{std::pair{RopeScaling::none, std::string_view("none")},
                      std::pair{RopeScaling::linear, std::string_view("linear")},
                      std::pair{RopeScaling::ntk, std::string_view("ntk")},
                      std::pair{RopeScaling::dynamic, std::string_view("dynamic")},
                      std::pair{RopeScaling::yarn, std::string_view("yarn")},
                      std::pair{RopeScaling::llama3, std::string_view("llama3")}};
}

struct RopeScalingParams {
    RopeScaling method = RopeScaling::none;
    std::optional<double> factor;        // s
    std::optional<long> original_len;    // L0, the context the model was trained on
    double beta_fast = 32.0;             // yarn (HF and llama.cpp defaults)
    double beta_slow = 1.0;
    std::optional<double> attention_factor;  // yarn: overrides 0.1 ln(s) + 1
    double low_freq_factor = 1.0;        // llama3 (Meta's defaults)
    double high_freq_factor = 4.0;
};

struct RopeFrequencies {
    std::vector<double> theta;           // [P] as used, after scaling
    std::vector<double> theta_unscaled;  // [P]
    double attention_factor = 1.0;       // HF multiplies cos and sin by it
    double base_used = 0.0;              // after ntk/dynamic
};

// theta for r rotary dimensions at sequence length L (dynamic needs L). Computed in T as
// PyTorch computes them in float32, returned widened to double.
template <class T>
RopeFrequencies rope_frequencies(long rotary_dim, double base, const RopeScalingParams& s, long len);

// The same frequencies in long double, for the precision check.
std::vector<long double> rope_frequencies_exact(long rotary_dim, double base, const RopeScalingParams& s,
                                                long len);

// cos and sin of m * theta_i: [L, P] each, angles rounded in T.
template <class T>
struct RopeCache {
    Mat<T> cos;
    Mat<T> sin;
};
template <class T>
RopeCache<T> rope_cache(long len, const std::vector<double>& theta);

// The dimensions (a, b) of pair i among P pairs: (2i, 2i+1) interleaved, (i, i+P) half.
inline std::pair<long, long> rope_pair(RopeStyle style, long i, long P)
{
    return style == RopeStyle::interleaved ? std::pair{2 * i, 2 * i + 1} : std::pair{i, i + P};
}

// Rotates one vector x [d] at the position whose cos/sin rows are given ([P] each); the
// dimensions from r on pass through. inverse rotates by -m*theta: the inverse of a rotation
// is its transpose, which is the same matrix with the sine's sign flipped.
template <class T>
void rope_rotate(const T* x, T* out, long d, long r, const T* cos_m, const T* sin_m, RopeStyle style,
                 bool inverse);

// x [B, H, L, d] rotated position by position.
template <class T>
Ten4<T> rope_apply(const Ten4<T>& x, const RopeCache<T>& cache, long rotary_dim, RopeStyle style,
                   bool inverse = false);

// Dimension order that turns a half-style vector into an interleaved one: perm[2i] = i,
// perm[2i+1] = i + P (dimensions from r on map to themselves).
std::vector<long> half_to_interleaved(long d, long r);

// RoFormer §3.4.3: the relative upper bound (1/P) sum_{j=1..P} |S_j|,
// S_j = sum_{k<j} exp(i * distance * theta_k), for distance 0..n-1.
std::vector<double> rope_decay(const std::vector<double>& theta, long n);

// max over offsets of the spread of dots[m][m + offset] over m (the Toeplitz defect).
double toeplitz_spread(const Mat<double>& dots);

struct RopeParams {
    long len = 8;
    long dim = 8;
    long heads = 1;
    long batch = 1;
    double base = 10000.0;
    RopeStyle style = RopeStyle::interleaved;
    std::optional<long> rotary_dim;
    RopeScalingParams scaling;
    bool example = false;
    bool example_conflict = false;  // the CLI sets it when --example meets a size option
};

Report run_rope(const RopeParams& p, const RunContext& ctx);

}  // namespace attnlab

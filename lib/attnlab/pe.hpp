// Sinusoidal positional encoding, Attention Is All You Need (Vaswani et al. 2017) §3.5:
//   PE(pos, 2i) = sin(pos * w_i),  PE(pos, 2i+1) = cos(pos * w_i),  w_i = base^(-2i/D).
// Sizes: L positions, D encoding dimension (even), P = D/2 frequencies.
#pragma once

#include "attnlab/report.hpp"

#include <vector>

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

// Throws InputError for sizes the formula cannot take (odd D, L > max-len, ...).
void validate(const PeParams& p);

// freq: [P]. The exponent's denominator is D for interleaved and max(P-1, 1) for concat.
template <class T>
Vec<T> pe_frequencies(long dim, double base, PeLayout layout, FreqMethod method);

// The same frequencies in long double, the reference the two methods are measured against.
std::vector<long double> pe_frequencies_reference(long dim, double base, PeLayout layout);

// pe: [L, D] from freq [P].
template <class T>
Mat<T> sinusoidal_table(long len, const Vec<T>& freq, PeLayout layout);

// --- measurements behind the checks (each usable on any table, so tests can break one) ---

// max |PE(0) - expected row 0| where row 0 is [0,1,0,1,...] (interleaved) or [0..0,1..1].
template <class T>
double row0_error(const Mat<T>& pe, PeLayout layout);

// max over p of |PE(p+k) - M(k) PE(p)|, M(k) block-diagonal rotations by k*w_i (float64).
template <class T>
double shift_error(const Mat<T>& pe, const Vec<T>& freq, PeLayout layout, long k);

// Over all pairs (p, p+k) with 1 <= k <= max_offset:
struct PairStats {
    double min_distance = 0.0;     // smallest |PE(p) - PE(p+k)| (inf if there is no pair)
    double max_dot_spread = 0.0;   // max over k of (max_p - min_p) of PE(p).PE(p+k)
};
template <class T>
PairStats pair_stats(const Mat<T>& pe, std::size_t max_offset);

// The largest offset whose pairs fit a fixed work budget (about 2^30 multiply-adds, a second
// or so): every pair for the usual sizes, the nearest offsets only for very long tables.
std::size_t pair_offset_budget(long len, long dim);

// max over i of w_{i+1} / w_i (below 1 when the frequencies fall strictly).
template <class T>
double max_freq_ratio(const Vec<T>& freq);

// max over i of |w_i - ref_i| / ref_i.
template <class T>
double max_rel_error(const Vec<T>& freq, const std::vector<long double>& ref);

// The table of the other layout, its dimensions reordered into this layout's order.
template <class T>
Mat<T> other_layout_reordered(long len, long dim, double base, PeLayout layout, FreqMethod m);

Report run_pe(const PeParams& p, const RunContext& ctx);

}  // namespace attnlab

#include "attnlab/pe.hpp"

#include "attnlab/measure.hpp"
#include "attnlab/rng.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace attnlab {

void validate(const PeParams& p)
{
    if (p.len < 1) throw InputError(fmt::format("--len must be at least 1 (got {})", p.len));
    if (p.dim < 2) throw InputError(fmt::format("--dim must be at least 2 (got {})", p.dim));
    if (p.dim % 2 != 0) {
        throw InputError(fmt::format("--dim must be even (got {}): sin and cos fill pairs", p.dim));
    }
    if (!(p.base > 0.0) || !std::isfinite(p.base)) {
        throw InputError(fmt::format("--base must be a positive number (got {})", p.base));
    }
    if (p.max_len != 0 && p.len > p.max_len) {
        throw InputError(fmt::format(
            "input length exceeds the precomputed max-len (--len {} > --max-len {})", p.len,
            p.max_len));
    }
    if (p.shift < 1 || p.shift >= std::max(p.len, 2L)) {
        throw InputError(
            fmt::format("--shift must be between 1 and len-1 (got {} with --len {})", p.shift, p.len));
    }
    if (p.embed && p.batch < 1) {
        throw InputError(fmt::format("--batch must be at least 1 (got {})", p.batch));
    }
}

namespace {

// The exponent of w_i = base^(-i * 2 / denom): interleaved uses (2i, D), concat (i, P-1).
double exponent_denominator(long dim, PeLayout layout)
{
    const long pairs = dim / 2;
    return layout == PeLayout::interleaved ? static_cast<double>(dim)
                                           : static_cast<double>(std::max(pairs - 1, 1L));
}
double exponent_numerator(long i, PeLayout layout)
{
    return layout == PeLayout::interleaved ? 2.0 * static_cast<double>(i) : static_cast<double>(i);
}

// Column of pair i's sine and cosine in a table of the given layout.
std::size_t sin_col(long i, long pairs, PeLayout layout)
{
    (void)pairs;
    return static_cast<std::size_t>(layout == PeLayout::interleaved ? 2 * i : i);
}
std::size_t cos_col(long i, long pairs, PeLayout layout)
{
    return static_cast<std::size_t>(layout == PeLayout::interleaved ? 2 * i + 1 : pairs + i);
}

}  // namespace

template <class T>
Vec<T> pe_frequencies(long dim, double base, PeLayout layout, FreqMethod method)
{
    const long pairs = dim / 2;
    const T denom = static_cast<T>(exponent_denominator(dim, layout));
    Vec<T> freq = xt::zeros<T>({static_cast<std::size_t>(pairs)});
    // Computed in T throughout, as PyTorch computes in the tensor's dtype.
    const T neg_log_base_over_denom = static_cast<T>(-std::log(base) / static_cast<double>(denom));
    for (long i = 0; i < pairs; ++i) {
        const T num = static_cast<T>(exponent_numerator(i, layout));
        if (method == FreqMethod::exp_log) {
            freq(i) = std::exp(num * neg_log_base_over_denom);
        } else {
            freq(i) = T(1) / std::pow(static_cast<T>(base), num / denom);
        }
    }
    return freq;
}

std::vector<long double> pe_frequencies_reference(long dim, double base, PeLayout layout)
{
    const long pairs = dim / 2;
    const long double denom = exponent_denominator(dim, layout);
    std::vector<long double> ref(static_cast<std::size_t>(pairs));
    for (long i = 0; i < pairs; ++i) {
        ref[static_cast<std::size_t>(i)] =
            std::pow(static_cast<long double>(base),
                     -static_cast<long double>(exponent_numerator(i, layout)) / denom);
    }
    return ref;
}

template <class T>
Mat<T> sinusoidal_table(long len, const Vec<T>& freq, PeLayout layout)
{
    const long pairs = static_cast<long>(freq.size());
    Mat<T> pe = xt::zeros<T>({static_cast<std::size_t>(len), static_cast<std::size_t>(2 * pairs)});
    for (long pos = 0; pos < len; ++pos) {
        for (long i = 0; i < pairs; ++i) {
            const T angle = static_cast<T>(pos) * freq(i);  // pos * w_i, rounded in T
            pe(pos, sin_col(i, pairs, layout)) = std::sin(angle);
            pe(pos, cos_col(i, pairs, layout)) = std::cos(angle);
        }
    }
    return pe;
}

template <class T>
double row0_error(const Mat<T>& pe, PeLayout layout)
{
    const long pairs = static_cast<long>(pe.shape(1) / 2);
    double err = 0.0;
    for (long i = 0; i < pairs; ++i) {
        err = std::max(err, std::abs(static_cast<double>(pe(0, sin_col(i, pairs, layout))) - 0.0));
        err = std::max(err, std::abs(static_cast<double>(pe(0, cos_col(i, pairs, layout))) - 1.0));
    }
    return err;
}

template <class T>
double shift_error(const Mat<T>& pe, const Vec<T>& freq, PeLayout layout, long k)
{
    const long len = static_cast<long>(pe.shape(0));
    const long pairs = static_cast<long>(freq.size());
    double err = 0.0;
    for (long i = 0; i < pairs; ++i) {
        // M(k) for pair i: [sin(a+b); cos(a+b)] = [[cos b, sin b], [-sin b, cos b]] [sin a; cos a]
        // with b = k*w_i. It is built from k alone, never from p.
        const double b = static_cast<double>(k) * static_cast<double>(freq(i));
        const double cb = std::cos(b), sb = std::sin(b);
        const std::size_t cs = sin_col(i, pairs, layout), cc = cos_col(i, pairs, layout);
        for (long p = 0; p + k < len; ++p) {
            const double s_p = pe(p, cs), c_p = pe(p, cc);
            const double s_pred = cb * s_p + sb * c_p;
            const double c_pred = -sb * s_p + cb * c_p;
            err = std::max(err, std::abs(s_pred - static_cast<double>(pe(p + k, cs))));
            err = std::max(err, std::abs(c_pred - static_cast<double>(pe(p + k, cc))));
        }
    }
    return err;
}

std::size_t pair_offset_budget(long len, long dim)
{
    const double budget = 1073741824.0;  // 2^30
    const double per_offset = static_cast<double>(len) * static_cast<double>(dim);
    const double k = std::floor(budget / per_offset);
    return static_cast<std::size_t>(std::clamp(k, 1.0, std::max(1.0, static_cast<double>(len - 1))));
}

template <class T>
PairStats pair_stats(const Mat<T>& pe, std::size_t max_offset)
{
    const std::size_t len = pe.shape(0), dim = pe.shape(1);
    PairStats s;
    s.min_distance = std::numeric_limits<double>::infinity();
    const T* rows = pe.data();
    // One pass over all pairs (p, p+k): the distance and the dot product of each.
    for (std::size_t k = 1; k < len && k <= max_offset; ++k) {
        double dot_lo = std::numeric_limits<double>::infinity();
        double dot_hi = -std::numeric_limits<double>::infinity();
        for (std::size_t p = 0; p + k < len; ++p) {
            const T* a = rows + p * dim;
            const T* b = rows + (p + k) * dim;
            double dist2 = 0.0, dot = 0.0;
            for (std::size_t j = 0; j < dim; ++j) {
                const double aj = a[j], bj = b[j];
                dist2 += (aj - bj) * (aj - bj);
                dot += aj * bj;
            }
            s.min_distance = std::min(s.min_distance, std::sqrt(dist2));
            dot_lo = std::min(dot_lo, dot);
            dot_hi = std::max(dot_hi, dot);
        }
        s.max_dot_spread = std::max(s.max_dot_spread, dot_hi - dot_lo);
    }
    return s;
}

template <class T>
double max_freq_ratio(const Vec<T>& freq)
{
    double worst = 0.0;
    for (std::size_t i = 0; i + 1 < freq.size(); ++i) {
        worst = std::max(worst, static_cast<double>(freq(i + 1)) / static_cast<double>(freq(i)));
    }
    return worst;
}

template <class T>
double max_rel_error(const Vec<T>& freq, const std::vector<long double>& ref)
{
    long double worst = 0.0L;
    for (std::size_t i = 0; i < freq.size(); ++i) {
        worst = std::max(worst, std::abs(static_cast<long double>(freq(i)) - ref[i]) / ref[i]);
    }
    return static_cast<double>(worst);
}

template <class T>
Mat<T> other_layout_reordered(long len, long dim, double base, PeLayout layout, FreqMethod m)
{
    const PeLayout other = layout == PeLayout::interleaved ? PeLayout::concat : PeLayout::interleaved;
    const Mat<T> theirs = sinusoidal_table<T>(len, pe_frequencies<T>(dim, base, other, m), other);
    const long pairs = dim / 2;
    Mat<T> out = xt::zeros<T>(theirs.shape());
    for (long pos = 0; pos < len; ++pos) {
        for (long i = 0; i < pairs; ++i) {
            out(pos, sin_col(i, pairs, layout)) = theirs(pos, sin_col(i, pairs, other));
            out(pos, cos_col(i, pairs, layout)) = theirs(pos, cos_col(i, pairs, other));
        }
    }
    return out;
}

namespace {

// max over (b, j) of the spread over positions i of H[b, i, j] - s X[b, i, j]: how much the
// added code tells positions apart.
template <class T>
double added_code_spread(const Ten3<T>& h, const Ten3<T>& x, T s)
{
    double worst = 0.0;
    for (std::size_t b = 0; b < h.shape(0); ++b)
        for (std::size_t j = 0; j < h.shape(2); ++j) {
            double lo = std::numeric_limits<double>::infinity(), hi = -lo;
            for (std::size_t i = 0; i < h.shape(1); ++i) {
                const double added = static_cast<double>(h(b, i, j)) - static_cast<double>(s * x(b, i, j));
                lo = std::min(lo, added);
                hi = std::max(hi, added);
            }
            worst = std::max(worst, hi - lo);
        }
    return worst;
}

template <class T>
Report run_pe_typed(const PeParams& p, const RunContext& ctx)
{
    const long max_len = p.max_len == 0 ? p.len : p.max_len;
    const auto L = static_cast<std::size_t>(p.len), D = static_cast<std::size_t>(p.dim);
    const double elem_bytes = sizeof(T) + sizeof(double);  // computed, then kept for output
    const double rows = static_cast<double>(max_len) + 3.0 * static_cast<double>(p.len);
    double bytes = rows * static_cast<double>(p.dim) * elem_bytes;
    if (p.embed) {
        bytes += 2.0 * static_cast<double>(p.batch) * static_cast<double>(p.len) *
                 static_cast<double>(p.dim) * elem_bytes;
    }
    require_memory(bytes, ctx,
                   fmt::format("pe [{}, {}] precomputed from [{}, {}]", p.len, p.dim, max_len, p.dim));

    Recorder rec("pe", "pe", ctx);
    auto& par = rec.params();
    par["len"] = p.len;
    par["dim"] = p.dim;
    par["base"] = p.base;
    par["layout"] = name_of(p.layout);
    par["max_len"] = max_len;
    par["freq_method"] = name_of(p.freq_method);
    par["embed"] = p.embed;
    par["batch"] = p.batch;
    par["scale_embed"] = p.scale_embed;
    par["shift"] = p.shift;

    const Vec<T> freq = pe_frequencies<T>(p.dim, p.base, p.layout, p.freq_method);
    // As the articles' module: precompute max-len rows once, then slice pe[:L].
    const Mat<T> table = sinusoidal_table<T>(max_len, freq, p.layout);
    const Mat<T> pe = xt::view(table, xt::range(0, p.len), xt::all());

    rec.tensor("pe", {"pos", "dim"}, pe, elem_of<T>());
    rec.tensor("freq", {"pair"}, freq, elem_of<T>());
    rec.tensor("wavelength", {"pair"}, T(2) * static_cast<T>(M_PI) / freq, elem_of<T>());

    const double eps = eps_of(ctx.dtype);
    const double n = static_cast<double>(p.len);

    rec.check({"row0_exact",
               p.layout == PeLayout::interleaved
                   ? "row 0 is exactly [0, 1, 0, 1, ...] (sin 0, cos 0)"
                   : "row 0 is exactly [0, ..., 0, 1, ..., 1] (sin 0, cos 0)",
               "max |PE(0) - row0|", row0_error(pe, p.layout), 0.0, Compare::le, Role::invariant,
               TolKind::fixed});
    rec.check({"values_bounded", "every value lies in [-1, 1]", "max |PE|", max_abs(pe), 1.0,
               Compare::le, Role::invariant, TolKind::fixed});
    const std::size_t max_offset = pair_offset_budget(p.len, p.dim);
    const PairStats pairs = pair_stats(pe, max_offset);
    const std::string pair_scope = max_offset + 1 >= static_cast<std::size_t>(p.len)
                                       ? "over all pairs"
                                       : fmt::format("over pairs up to {} apart", max_offset);
    if (p.len >= 2) {
        rec.check({"rows_distinct", "every position's vector is distinct",
                   fmt::format("min |PE(p) - PE(q)| {}", pair_scope), pairs.min_distance, 0.0, Compare::gt,
                   Role::invariant, TolKind::fixed});
    }
    if (freq.size() >= 2) {
        rec.check({"freq_falling", "frequencies fall strictly from low to high dimension",
                   "max w(i+1)/w(i)", max_freq_ratio(freq), 1.0, Compare::lt, Role::invariant,
                   TolKind::fixed});
    }
    // Rounding the angle pos*w_i in T costs up to about pos*eps, so the tolerance grows with
    // the largest position; the sin/cos and the float64 rotation add a few eps more.
    if (p.len > p.shift) {
        rec.check({"relative_shift_linear",
                   fmt::format("relative shift is linear: PE(p+{}) = M({})PE(p), M built from k alone",
                               p.shift, p.shift),
                   "max |PE(p+k) - M(k)PE(p)|", shift_error(pe, freq, p.layout, p.shift),
                   eps * (4.0 * n + 8.0)});
    }
    if (p.len >= 3) {
        // Error bound: rounding the angle p*w_i moves sin and cos by up to eps*p*w_i, and each
        // product of the dot adds an eps; the dot of rows p, q is off by at most
        // eps * sum_i ((p+q) w_i + 4), and a spread is the difference of two such dots.
        double sum_freq = 0.0;
        for (T w : freq) sum_freq += static_cast<double>(w);
        const double dot_tol = 2.0 * eps * (2.0 * n * sum_freq + 4.0 * static_cast<double>(freq.size()));
        rec.check({"dot_depends_on_offset", "PE(p).PE(p+k) depends on k alone",
                   fmt::format("max over k of spread over p, {}", pair_scope), pairs.max_dot_spread, dot_tol});
    }
    const Mat<T> direct = sinusoidal_table<T>(p.len, freq, p.layout);
    rec.check({"slice_matches_direct",
               fmt::format("slicing {} precomputed rows to {} equals computing {} directly",
                           max_len, p.len, p.len),
               "max |table[:L] - PE_L|", max_abs_diff(pe, direct), 0.0, Compare::le,
               Role::invariant, TolKind::fixed});

    // Both ways of computing w_i against a long-double reference.
    const auto ref = pe_frequencies_reference(p.dim, p.base, p.layout);
    const double err_exp = max_rel_error(pe_frequencies<T>(p.dim, p.base, p.layout, FreqMethod::exp_log), ref);
    const double err_pow = max_rel_error(pe_frequencies<T>(p.dim, p.base, p.layout, FreqMethod::pow), ref);
    // Each method rounds an exponent of size up to ln(base); that error is multiplied into
    // the result, hence the bound eps * (2 ln(base) + 4).
    const double freq_tol = eps * (2.0 * std::abs(std::log(p.base)) + 4.0);
    rec.check({"freq_exp_log_accuracy", "exp-log frequencies match the exact w_i",
               "max rel error vs long double", err_exp, freq_tol});
    rec.check({"freq_pow_accuracy", "pow frequencies match the exact w_i",
               "max rel error vs long double", err_pow, freq_tol});
    // A common comment on the exp-log form ("computed in log space") is that it is the more
    // accurate of the two; measure it rather than take it on trust.
    rec.check({"log_space_more_accurate",
               "computing w_i in log space (exp-log) is at least as accurate as base^(-2i/D) (pow)",
               "rel error exp-log / rel error pow", err_pow > 0.0 ? err_exp / err_pow : (err_exp > 0.0 ? INFINITY : 1.0),
               1.0, Compare::le, Role::article, TolKind::fixed});
    rec.note(fmt::format("frequency methods in {}: exp-log max rel error {:.3g}, pow {:.3g}: {}",
                         name_of(ctx.dtype), err_exp, err_pow,
                         err_exp == err_pow ? "equally accurate here"
                         : err_exp < err_pow ? "exp-log is more accurate here"
                                             : "pow is more accurate here"));

    if (p.dim >= 4) {
        // Only a permutation apart? The two layouts use different frequencies (exponent
        // denominators D and P-1), so a checkpoint cannot be ported by reordering alone.
        const Mat<T> other = other_layout_reordered<T>(p.len, p.dim, p.base, p.layout, p.freq_method);
        const double diff = max_abs_diff(pe, other);
        rec.check({"layouts_not_a_permutation",
                   "interleaved and concat layouts differ by more than a reordering of dimensions",
                   "max |PE - reorder(other layout)|", diff, 0.0, Compare::gt, Role::invariant,
                   TolKind::fixed});
    }

    if (p.embed) {
        // X: [B, L, D] seeded normal; H = s*X + PE with PE broadcast as [1, L, D].
        const std::size_t B = static_cast<std::size_t>(p.batch);
        Rng rng(ctx.seed, stream::x);
        Ten3<T> x = xt::zeros<T>({B, L, D});
        for (auto& v : x) v = static_cast<T>(rng.normal());
        const T s = p.scale_embed ? std::sqrt(static_cast<T>(p.dim)) : T(1);
        Ten3<T> h = s * x + xt::view(pe, xt::newaxis(), xt::all(), xt::all());
        rec.tensor("x", {"batch", "pos", "dim"}, x, elem_of<T>());
        rec.tensor("h", {"batch", "pos", "dim"}, h, elem_of<T>());
        double err = 0.0, max_h = 0.0;
        for (std::size_t b = 0; b < B; ++b) {
            for (std::size_t i = 0; i < L; ++i) {
                for (std::size_t j = 0; j < D; ++j) {
                    const double added = static_cast<double>(h(b, i, j)) -
                                         static_cast<double>(s * x(b, i, j));
                    err = std::max(err, std::abs(added - static_cast<double>(pe(i, j))));
                    max_h = std::max(max_h, std::abs(static_cast<double>(h(b, i, j))));
                }
            }
        }
        rec.check({"embed_broadcast", "every sequence of the batch gets the same PE added",
                   "max |H[b] - s*X[b] - PE|", err, eps * (max_h + 1.0)});

        // The slicing bug: a [max_len, 1, D] table sliced as pe[:x.size(0)] on batch-first input
        // takes B rows instead of L, so sequence b gets PE(b) at every position.
        if (p.len >= 2 && p.batch <= max_len) {
            Ten3<T> h_bug = s * x;
            for (std::size_t b = 0; b < B; ++b)
                for (std::size_t i = 0; i < L; ++i)
                    for (std::size_t j = 0; j < D; ++j) h_bug(b, i, j) += table(b, j);
            rec.tensor("h_sliced_by_batch", {"batch", "pos", "dim"}, h_bug, elem_of<T>());
            const double right = added_code_spread(h, x, s), wrong = added_code_spread(h_bug, x, s);
            rec.check({"slicing_bug_loses_position",
                       "slicing the table on the batch axis (pe[:x.size(0)] with batch-first x) gives every "
                       "position of a sequence the same code",
                       "max spread over positions of H_bug - s*X (rounding of s*X + PE only)", wrong,
                       2.0 * eps * (max_h + 1.0)});
            rec.note(fmt::format("slicing bug: the added code varies over positions by up to {:.3g} when sliced on the "
                                 "sequence axis, by {:.3g} when sliced on the batch axis",
                                 right, wrong));
        }
    }
    return rec.finish();
}

}  // namespace

Report run_pe(const PeParams& p, const RunContext& ctx)
{
    validate(p);
    return ctx.dtype == DType::float32 ? run_pe_typed<float>(p, ctx) : run_pe_typed<double>(p, ctx);
}

#define ATTNLAB_PE_INSTANTIATE(T)                                                            \
    template Vec<T> pe_frequencies<T>(long, double, PeLayout, FreqMethod);                   \
    template Mat<T> sinusoidal_table<T>(long, const Vec<T>&, PeLayout);                      \
    template double row0_error<T>(const Mat<T>&, PeLayout);                                  \
    template double shift_error<T>(const Mat<T>&, const Vec<T>&, PeLayout, long);            \
    template PairStats pair_stats<T>(const Mat<T>&, std::size_t);                                \
    template double max_freq_ratio<T>(const Vec<T>&);                                        \
    template double max_rel_error<T>(const Vec<T>&, const std::vector<long double>&);        \
    template Mat<T> other_layout_reordered<T>(long, long, double, PeLayout, FreqMethod);
ATTNLAB_PE_INSTANTIATE(float)
ATTNLAB_PE_INSTANTIATE(double)

}  // namespace attnlab

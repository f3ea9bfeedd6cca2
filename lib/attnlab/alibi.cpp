#include "attnlab/alibi.hpp"

#include "attnlab/attention.hpp"
#include "attnlab/measure.hpp"
#include "attnlab/rng.hpp"
#include "attnlab/softmax.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

namespace attnlab {

namespace {

bool is_power_of_two(long n) { return n > 0 && (n & (n - 1)) == 0; }

std::vector<double> power_of_two_slopes(long n)
{
    // m_h = 2^(-8(h+1)/n): the geometric sequence starting at and with ratio 2^(-8/n).
    std::vector<double> s;
    for (long h = 0; h < n; ++h) s.push_back(std::exp2(-8.0 * static_cast<double>(h + 1) / static_cast<double>(n)));
    return s;
}

}  // namespace

std::vector<double> alibi_slopes(long heads, SlopeRule rule)
{
    if (rule == SlopeRule::simple || is_power_of_two(heads)) return power_of_two_slopes(heads);
    // Not a power of two (the paper's get_slopes): the c = 2^floor(log2 H) slopes, then the
    // slopes of 2c at even indices, as many as are missing. They interleave between the
    // first ones instead of extending the sequence below 2^-8.
    long c = 1;
    while (c * 2 <= heads) c *= 2;
    std::vector<double> s = power_of_two_slopes(c);
    const std::vector<double> twice = alibi_slopes(2 * c, SlopeRule::paper);
    for (long k = 0; k < heads - c; ++k) s.push_back(twice[static_cast<std::size_t>(2 * k)]);
    return s;
}

template <class T>
Ten3<T> alibi_bias(const std::vector<double>& slopes, long queries, long keys, AlibiVariant v)
{
    const auto H = slopes.size();
    Ten3<T> bias = xt::zeros<T>({H, static_cast<std::size_t>(queries), static_cast<std::size_t>(keys)});
    for (std::size_t h = 0; h < H; ++h) {
        const T m = static_cast<T>(slopes[h]);
        for (long i = 0; i < queries; ++i)
            for (long j = 0; j < keys; ++j) {
                if (v == AlibiVariant::causal && j > i) {
                    bias(h, i, j) = -std::numeric_limits<T>::infinity();  // the causal mask
                } else {
                    const long distance = v == AlibiVariant::causal ? i - j : std::abs(i - j);
                    bias(h, i, j) = distance == 0 ? T(0) : -m * static_cast<T>(distance);  // no -0
                }
            }
    }
    return bias;
}

template <class T>
Ten3<T> alibi_bias_key_only(const std::vector<double>& slopes, long len)
{
    const auto H = slopes.size(), L = static_cast<std::size_t>(len);
    Ten3<T> bias = xt::zeros<T>({H, L, L});
    for (std::size_t h = 0; h < H; ++h)
        for (std::size_t i = 0; i < L; ++i)
            for (std::size_t j = 0; j < L; ++j)
                bias(h, i, j) = j > i ? -std::numeric_limits<T>::infinity()
                                      : static_cast<T>(slopes[h]) * static_cast<T>(j);
    return bias;
}

double max_abs_diagonal(const Ten3<double>& bias)
{
    double worst = 0.0;
    for (std::size_t h = 0; h < bias.shape(0); ++h)
        for (std::size_t i = 0; i < std::min(bias.shape(1), bias.shape(2)); ++i)
            worst = std::max(worst, std::abs(bias(h, i, i)));
    return worst;
}

double max_finite(const Ten3<double>& bias)
{
    double worst = -std::numeric_limits<double>::infinity();
    for (double v : bias)
        if (std::isfinite(v)) worst = std::max(worst, v);
    return worst;
}

double max_diagonal_spread(const Ten3<double>& bias)
{
    const long L = static_cast<long>(bias.shape(1)), S = static_cast<long>(bias.shape(2));
    double worst = 0.0;
    for (std::size_t h = 0; h < bias.shape(0); ++h)
        for (long delta = -(S - 1); delta <= L - 1; ++delta) {  // delta = i - j
            double lo = std::numeric_limits<double>::infinity(), hi = -lo;
            for (long i = std::max(0L, delta); i < L && i - delta < S; ++i) {
                const double v = bias(h, i, i - delta);
                if (!std::isfinite(v)) continue;
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
            if (hi >= lo) worst = std::max(worst, hi - lo);
        }
    return worst;
}

long decay_violations(const Ten3<double>& w, AlibiVariant v, double smallest_normal)
{
    long bad = 0;
    const long L = static_cast<long>(w.shape(1));
    for (std::size_t h = 0; h < w.shape(0); ++h)
        for (long i = 0; i < L; ++i) {
            // Walk away from the diagonal on each side the variant looks at.
            for (int side : {-1, +1}) {
                if (side == +1 && v == AlibiVariant::causal) continue;
                for (long j = i; j + side >= 0 && j + side < L; j += side) {
                    const double nearer = w(h, i, j), farther = w(h, i, j + side);
                    if (nearer >= smallest_normal && !(farther < nearer)) ++bad;
                }
            }
        }
    return bad;
}

namespace {

template <class T>
Ten3<T> softmax_of(Ten3<T> scores)
{
    const std::size_t n = scores.shape(2);
    for (std::size_t r = 0; r < scores.shape(0) * scores.shape(1); ++r)
        softmax_inplace(scores.data() + r * n, n, SoftmaxKind::plain);
    return scores;
}

template <class T>
Report run_alibi_typed(const AlibiParams& p, const RunContext& ctx)
{
    const auto H = static_cast<std::size_t>(p.heads), L = static_cast<std::size_t>(p.len),
               d = static_cast<std::size_t>(p.dim);
    const double cells = static_cast<double>(p.heads) * static_cast<double>(p.len) * static_cast<double>(p.len);
    require_memory(cells * 8.0 * (sizeof(T) + sizeof(double)) +
                       2.0 * static_cast<double>(p.heads * p.len * p.dim) * sizeof(T),
                   ctx, fmt::format("bias, scores and weights [{}, {}, {}] several times", H, L, L));

    Recorder rec("alibi", "bias", ctx);
    auto& par = rec.params();
    par["heads"] = p.heads;
    par["len"] = p.len;
    par["dim"] = p.dim;
    par["slopes"] = name_of(p.slopes);
    par["variant"] = name_of(p.variant);
    const Elem E = elem_of<T>();
    const double eps = eps_of(ctx.dtype);

    const std::vector<double> slopes = alibi_slopes(p.heads, p.slopes);
    Vec<T> slopes_t = xt::zeros<T>({H});
    for (std::size_t h = 0; h < H; ++h) slopes_t(h) = static_cast<T>(slopes[h]);
    rec.tensor("slopes", {"head"}, slopes_t, E);
    const Ten3<T> bias = alibi_bias<T>(slopes, p.len, p.len, p.variant);
    rec.tensor("bias", {"head", "query", "key"}, bias, E);

    // Demonstration: scores = q k^T / sqrt(d) + bias with seeded q, k [head, pos, dim].
    Rng rq(ctx.seed, stream::q), rk(ctx.seed, stream::k);
    Ten3<T> q = xt::zeros<T>({H, L, d}), k = xt::zeros<T>({H, L, d});
    for (auto& v : q) v = static_cast<T>(rq.normal());
    for (auto& v : k) v = static_cast<T>(rk.normal());
    const Ten3<T> raw = scaled_scores(q, k, 1.0 / std::sqrt(static_cast<double>(p.dim)));
    const Ten3<T> scores = raw + bias;
    const Ten3<T> weights = softmax_of(scores);
    rec.tensor("q", {"head", "pos", "dim"}, q, E);
    rec.tensor("k", {"head", "pos", "dim"}, k, E);
    rec.tensor("scores", {"head", "query", "key"}, scores, E);
    rec.tensor("weights", {"head", "query", "key"}, weights, E);
    if (rec.wants("distance_profile")) {
        // Mean weight at each query-key distance (i - j, or |i - j| when symmetric), per head.
        Mat<T> profile = xt::zeros<T>({H, L});
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t dist = 0; dist < L; ++dist) {
                double sum = 0.0;
                long count = 0;
                for (std::size_t i = 0; i < L; ++i)
                    for (std::size_t j = 0; j < L; ++j) {
                        const long delta = static_cast<long>(i) - static_cast<long>(j);
                        const long dd = p.variant == AlibiVariant::causal ? delta : std::abs(delta);
                        if (dd != static_cast<long>(dist)) continue;
                        sum += static_cast<double>(weights(h, i, j));
                        ++count;
                    }
                profile(h, dist) = static_cast<T>(count > 0 ? sum / static_cast<double>(count) : 0.0);
            }
        rec.tensor("distance_profile", {"head", "distance"}, profile, E);
    }

    // Slopes.
    const std::vector<double> simple = alibi_slopes(p.heads, SlopeRule::simple);
    const std::vector<double> paper = alibi_slopes(p.heads, SlopeRule::paper);
    if (is_power_of_two(p.heads) || p.slopes == SlopeRule::simple) {
        double err = 0.0;
        for (std::size_t h = 0; h < H; ++h) err = std::max(err, std::abs(slopes[h] - simple[h]) / simple[h]);
        rec.check({"slopes_geometric",
                   fmt::format("the slopes are the geometric sequence 2^(-8/{0}), 2^(-16/{0}), ..., 2^(-8)", p.heads),
                   "max rel |m_h - 2^(-8(h+1)/H)|", err, 4.0 * std::numeric_limits<double>::epsilon()});
    }
    {
        long outside = 0;
        for (double m : slopes) outside += (m > 0.0 && m < 1.0) ? 0 : 1;
        rec.check({"slopes_in_unit_interval", "every slope lies in (0, 1)", "slopes outside",
                   static_cast<double>(outside), 0.0, Compare::le, Role::invariant, TolKind::fixed});
        std::vector<double> sorted = slopes;
        std::sort(sorted.begin(), sorted.end());
        double gap = std::numeric_limits<double>::infinity();
        for (std::size_t h = 1; h < sorted.size(); ++h) gap = std::min(gap, sorted[h] - sorted[h - 1]);
        if (H >= 2) {
            rec.check({"slopes_distinct", "the slopes are distinct", "smallest gap between two slopes", gap,
                       0.0, Compare::gt, Role::invariant, TolKind::fixed});
        }
    }
    {
        double diff = 0.0;
        std::vector<std::string> where;
        std::size_t differing = 0;
        for (std::size_t h = 0; h < H; ++h) {
            const double dd = std::abs(simple[h] - paper[h]);
            diff = std::max(diff, dd);
            if (dd > 0.0 && ++differing <= 6)
                where.push_back(fmt::format("head {}: paper {:.6g}, simple {:.6g}", h, paper[h], simple[h]));
        }
        rec.check({"simple_formula_matches_paper",
                   fmt::format("the articles' m_h = 2^(-8(h+1)/H) gives the paper's slopes for H = {}", p.heads),
                   "max |m_simple - m_paper|", diff, 0.0, Compare::le, Role::article, TolKind::fixed});
        rec.note(diff == 0.0
                     ? fmt::format("H = {}: the paper's rule and the simple formula agree on every head", p.heads)
                     : fmt::format("H = {} is not a power of two: the paper's rule and the simple formula differ "
                                   "({}{}); this run uses {}",
                                   p.heads, fmt::join(where, "; "),
                                   differing > where.size() ? fmt::format("; {} more heads", differing - where.size()) : "",
                                   name_of(p.slopes)));
    }

    // Bias shape.
    const Ten3<double> bias64 = xt::cast<double>(bias);
    rec.check({"bias_zero_diagonal", "the bias is zero on the diagonal", "max |bias[h, i, i]|",
               max_abs_diagonal(bias64), 0.0, Compare::le, Role::invariant, TolKind::fixed});
    rec.check({"bias_never_positive", "the bias is never positive", "max bias", max_finite(bias64), 0.0,
               Compare::le, Role::invariant, TolKind::fixed});
    rec.check({"bias_toeplitz", "the bias depends on i - j alone", "max spread along a diagonal",
               max_diagonal_spread(bias64), eps * static_cast<double>(p.len)});

    // BLOOM's shortcut: +m*j (key only) with the causal mask vs -m*(i-j) with the causal mask.
    {
        const Ten3<T> paper_causal = softmax_of(Ten3<T>(raw + alibi_bias<T>(slopes, p.len, p.len, AlibiVariant::causal)));
        const Ten3<T> bloom = softmax_of(Ten3<T>(raw + alibi_bias_key_only<T>(slopes, p.len)));
        // The two score rows differ by the constant m*i; rounding that shift costs up to
        // about eps * m * L in each score, which the softmax passes on to the weights.
        rec.check({"bloom_shortcut_equivalent",
                   "BLOOM's key-only bias m*j gives the same causal softmax rows as -m*(i - j)",
                   "max |w_bloom - w_paper|", max_abs_diff(bloom, paper_causal),
                   4.0 * eps * (static_cast<double>(p.len) * slopes.front() + 4.0)});
    }

    // Weights.
    {
        double sum_err = 0.0, future = 0.0;
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t i = 0; i < L; ++i) {
                double sum = 0.0;
                for (std::size_t j = 0; j < L; ++j) {
                    sum += static_cast<double>(weights(h, i, j));
                    if (j > i && p.variant == AlibiVariant::causal)
                        future = std::max(future, std::abs(static_cast<double>(weights(h, i, j))));
                }
                sum_err = std::max(sum_err, std::abs(sum - 1.0));
            }
        rec.check({"rows_sum_to_one", "attention weights sum to 1 per row", "max |sum_j w - 1|", sum_err,
                   eps * (static_cast<double>(p.len) + 4.0)});
        if (p.variant == AlibiVariant::causal) {
            rec.check({"future_weights_zero", "every future weight is exactly 0", "max |w| above the diagonal",
                       future, 0.0, Compare::le, Role::invariant, TolKind::fixed});
        }
    }

    // Distance decay with equal raw scores (q.k = 0): the bias alone decides.
    {
        const Ten3<T> flat = softmax_of(bias);
        const Ten3<double> flat64 = xt::cast<double>(flat);
        rec.check({"weights_fall_with_distance",
                   "with equal raw scores every head's weights fall strictly with distance (while they are normal numbers)",
                   "(head, query, distance) where they do not",
                   static_cast<double>(decay_violations(flat64, p.variant, std::numeric_limits<T>::min())),
                   0.0, Compare::le, Role::invariant, TolKind::fixed});
        // Steeper slope, more weight on the nearest key: compare heads pairwise on the last row.
        long inversions = 0;
        const std::size_t last = L - 1;
        for (std::size_t a = 0; a < H; ++a)
            for (std::size_t b = 0; b < H; ++b)
                if (slopes[a] > slopes[b] && L >= 2 && !(flat(a, last, last) > flat(b, last, last))) ++inversions;
        rec.check({"steeper_looks_nearer",
                   "a steeper slope puts more weight on the nearest key than a shallower one",
                   "head pairs where it does not", static_cast<double>(inversions), 0.0, Compare::le,
                   Role::invariant, TolKind::fixed});
    }
    return rec.finish();
}

}  // namespace

Report run_alibi(const AlibiParams& p, const RunContext& ctx)
{
    if (p.heads < 1) throw InputError(fmt::format("--heads must be at least 1 (got {})", p.heads));
    if (p.len < 1) throw InputError(fmt::format("--len must be at least 1 (got {})", p.len));
    if (p.dim < 1) throw InputError(fmt::format("--dim must be at least 1 (got {})", p.dim));
    return ctx.dtype == DType::float32 ? run_alibi_typed<float>(p, ctx) : run_alibi_typed<double>(p, ctx);
}

template Ten3<float> alibi_bias<float>(const std::vector<double>&, long, long, AlibiVariant);
template Ten3<double> alibi_bias<double>(const std::vector<double>&, long, long, AlibiVariant);
template Ten3<float> alibi_bias_key_only<float>(const std::vector<double>&, long);
template Ten3<double> alibi_bias_key_only<double>(const std::vector<double>&, long);

}  // namespace attnlab

#include "attnlab/mask.hpp"

#include "attnlab/attention.hpp"
#include "attnlab/rng.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace attnlab {

bool MaskSpec::masked(long b, long i, long j) const
{
    const long reach = i + offset();  // the last key query i may see (diagonal 1)
    switch (kind) {
    case MaskKind::none: return false;
    case MaskKind::causal: return j - i - offset() >= diagonal;
    case MaskKind::padding: return j >= lengths[static_cast<std::size_t>(b)];
    case MaskKind::both:
        return j >= lengths[static_cast<std::size_t>(b)] || j - i - offset() >= diagonal;
    case MaskKind::window: return j - i - offset() >= diagonal || reach - j >= window;
    }
    return false;
}

long MaskSpec::expected_visible(long b, long i) const
{
    const long causal_reach = std::clamp(i + offset() + 1, 0L, keys);  // keys 0 .. i+offset
    switch (kind) {
    case MaskKind::none: return keys;
    case MaskKind::causal: return causal_reach;
    case MaskKind::padding: return lengths[static_cast<std::size_t>(b)];
    case MaskKind::both: return std::min(lengths[static_cast<std::size_t>(b)], causal_reach);
    case MaskKind::window:
        return causal_reach - std::clamp(i + offset() - window + 1, 0L, keys);
    }
    return keys;
}

template <class T>
Mat<T> additive_mask(const MaskSpec& m, long b)
{
    Mat<T> out = xt::zeros<T>({static_cast<std::size_t>(m.queries), static_cast<std::size_t>(m.keys)});
    const T fill = static_cast<T>(m.fill);
    for (long i = 0; i < m.queries; ++i)
        for (long j = 0; j < m.keys; ++j)
            if (m.masked(b, i, j)) out(i, j) = fill;
    return out;
}

template <class T>
Mat<T> causal_reference_tril(long queries, long keys, Align align, T fill)
{
    const long diag = align == Align::lower_right ? keys - queries : 0;
    // tril(ones, diag): 1 where j - i <= diag.
    Mat<T> out = xt::zeros<T>({static_cast<std::size_t>(queries), static_cast<std::size_t>(keys)});
    for (long i = 0; i < queries; ++i)
        for (long j = 0; j < keys; ++j) {
            const bool tril_one = j - i <= diag;
            out(i, j) = tril_one ? T(0) : fill;
        }
    return out;
}

xt::xtensor<bool, 2> key_padding_mask(const MaskSpec& m)
{
    const auto B = static_cast<std::size_t>(m.lengths.size());
    xt::xtensor<bool, 2> out = xt::zeros<bool>({B, static_cast<std::size_t>(m.keys)});
    for (std::size_t b = 0; b < B; ++b)
        for (long j = 0; j < m.keys; ++j) out(b, j) = j >= m.lengths[b];  // true = padding
    return out;
}

xt::xtensor<bool, 2> attn_mask_bool(const MaskSpec& m)
{
    const auto B = static_cast<std::size_t>(m.lengths.size());
    xt::xtensor<bool, 2> out = xt::zeros<bool>({B, static_cast<std::size_t>(m.keys)});
    for (std::size_t b = 0; b < B; ++b)
        for (long j = 0; j < m.keys; ++j) out(b, j) = j < m.lengths[b];  // true = may attend
    return out;
}

namespace {

template <class T>
void softmax_rows(Ten3<T>& w, SoftmaxKind kind)
{
    const std::size_t n = w.shape(2);
    for (std::size_t r = 0; r < w.shape(0) * w.shape(1); ++r) softmax_inplace(w.data() + r * n, n, kind);
}

}  // namespace

template <class T>
Ten3<T> masked_softmax_additive(const Ten3<T>& scores, const MaskSpec& m, SoftmaxKind kind)
{
    Ten3<T> w = scores;
    for (long b = 0; b < static_cast<long>(w.shape(0)); ++b) {
        const Mat<T> mask = additive_mask<T>(m, b);
        for (std::size_t i = 0; i < w.shape(1); ++i)
            for (std::size_t j = 0; j < w.shape(2); ++j) w(b, i, j) += mask(i, j);  // scores + mask
    }
    softmax_rows(w, kind);
    return w;
}

namespace {

// scores.masked_fill(hide(b, j), -inf), then the softmax: the one body behind both
// boolean conventions, which differ only in what `true` means.
template <class T, class Hide>
Ten3<T> masked_fill_softmax(const Ten3<T>& scores, Hide hide, SoftmaxKind kind)
{
    Ten3<T> w = scores;
    for (std::size_t b = 0; b < w.shape(0); ++b)
        for (std::size_t i = 0; i < w.shape(1); ++i)
            for (std::size_t j = 0; j < w.shape(2); ++j)
                if (hide(b, j)) w(b, i, j) = -std::numeric_limits<T>::infinity();
    softmax_rows(w, kind);
    return w;
}

}  // namespace

template <class T>
Ten3<T> masked_softmax_key_padding(const Ten3<T>& scores, const xt::xtensor<bool, 2>& kpm, SoftmaxKind kind)
{
    // key_padding_mask: true means "ignore this key".
    return masked_fill_softmax(scores, [&](std::size_t b, std::size_t j) { return kpm(b, j); }, kind);
}

template <class T>
Ten3<T> masked_softmax_attn_bool(const Ten3<T>& scores, const xt::xtensor<bool, 2>& amb, SoftmaxKind kind)
{
    // scaled_dot_product_attention's boolean attn_mask: true means "may attend".
    return masked_fill_softmax(scores, [&](std::size_t b, std::size_t j) { return !amb(b, j); }, kind);
}

long rows_with_wrong_visibility(const MaskSpec& m)
{
    long wrong = 0;
    for (long b = 0; b < m.batch(); ++b)
        for (long i = 0; i < m.queries; ++i) {
            long visible = 0;
            for (long j = 0; j < m.keys; ++j) visible += m.masked(b, i, j) ? 0 : 1;
            wrong += visible != m.expected_visible(b, i);
        }
    return wrong;
}

namespace {

bool row_fully_masked(const MaskSpec& m, long b, long i)
{
    for (long j = 0; j < m.keys; ++j)
        if (!m.masked(b, i, j)) return false;
    return true;
}


}  // namespace

template <class T>
double max_masked_weight(const Ten3<T>& w, const MaskSpec& m)
{
    double worst = 0.0;
    for (std::size_t b = 0; b < w.shape(0); ++b)
        for (std::size_t i = 0; i < w.shape(1); ++i)
            for (std::size_t j = 0; j < w.shape(2); ++j)
                if (m.masked(static_cast<long>(b), static_cast<long>(i), static_cast<long>(j))) {
                    const double v = std::abs(static_cast<double>(w(b, i, j)));
                    worst = std::isnan(v) ? v : std::max(worst, v);
                    if (std::isnan(worst)) return worst;
                }
    return worst;
}

template <class T>
double max_row_sum_error(const Ten3<T>& w, const MaskSpec& m)
{
    double worst = 0.0;
    for (std::size_t b = 0; b < w.shape(0); ++b)
        for (std::size_t i = 0; i < w.shape(1); ++i) {
            if (row_fully_masked(m, static_cast<long>(b), static_cast<long>(i))) continue;
            double sum = 0.0;
            for (std::size_t j = 0; j < w.shape(2); ++j) sum += static_cast<double>(w(b, i, j));
            const double err = std::abs(sum - 1.0);
            if (std::isnan(err)) return err;
            worst = std::max(worst, err);
        }
    return worst;
}

template <class T>
long count_nan(const Ten3<T>& w)
{
    long n = 0;
    for (T v : w) n += std::isnan(v) ? 1 : 0;
    return n;
}

template <class T>
double max_diff_nan_equal(const Ten3<T>& a, const Ten3<T>& b)
{
    double worst = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double x = a.data()[i], y = b.data()[i];
        if (std::isnan(x) && std::isnan(y)) continue;
        if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<double>::infinity();
        if (x == y) continue;  // equal infinities too
        worst = std::max(worst, std::abs(x - y));
    }
    return worst;
}

double parse_fill(const std::string& text)
{
    if (text == "-inf") return -std::numeric_limits<double>::infinity();
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || end == nullptr || *end != '\0' || std::isnan(v) || v > 0 ||
        (std::isinf(v) && v > 0)) {
        throw InputError(fmt::format(
            "--fill must be -inf, -1e9 or another number <= 0 (got '{}')", text));
    }
    return v;
}

MaskSpec mask_spec(const MaskParams& p)
{
    MaskSpec m;
    m.kind = p.kind;
    const std::string kind = name_of(p.kind);
    if (p.kind == MaskKind::none) throw InputError("--kind none builds no mask; choose causal, padding, both or window");
    const bool padding = p.kind == MaskKind::padding || p.kind == MaskKind::both;
    if (padding && p.lengths.empty()) {
        throw InputError(fmt::format("--kind {} needs --lengths (one length per sequence, e.g. 3,5,2)", kind));
    }
    if (!padding && !p.lengths.empty()) {
        throw InputError(fmt::format("--lengths describes padding; it makes no sense with --kind {}", kind));
    }
    if (padding && p.batch) {
        throw InputError("--batch is the number of --lengths with padding; give one or the other");
    }
    if (p.kind == MaskKind::window && !p.window) throw InputError("--kind window needs --window W");
    if (p.kind != MaskKind::window && p.window) {
        throw InputError(fmt::format("--window applies to --kind window, not --kind {}", kind));
    }
    if (p.window && *p.window < 1) throw InputError(fmt::format("--window must be at least 1 (got {})", *p.window));
    if (p.kind == MaskKind::padding && (p.diagonal || p.align)) {
        throw InputError("--diagonal and --align shape the causal triangle; --kind padding has none");
    }
    for (long len : p.lengths) {
        if (len < 0) throw InputError(fmt::format("--lengths must not be negative (got {})", len));
    }
    const long longest = p.lengths.empty() ? 0 : *std::max_element(p.lengths.begin(), p.lengths.end());
    if (p.len && *p.len < 1) throw InputError(fmt::format("--len must be at least 1 (got {})", *p.len));
    m.queries = p.len.value_or(p.lengths.empty() ? 5 : std::max(longest, 1L));
    m.keys = p.kv_len.value_or(m.queries);
    if (m.keys < 1) throw InputError(fmt::format("--kv-len must be at least 1 (got {})", m.keys));
    if (longest > m.keys) {
        throw InputError(fmt::format("--lengths has {} but there are only {} key positions (--len/--kv-len)",
                                     longest, m.keys));
    }
    m.lengths = p.lengths;
    m.window = p.window.value_or(0);
    m.diagonal = p.diagonal.value_or(1);
    m.align = p.align.value_or(Align::upper_left);
    m.fill = parse_fill(p.fill);
    if (p.dk < 1) throw InputError(fmt::format("--dk must be at least 1 (got {})", p.dk));
    return m;
}

namespace {

template <class T>
Ten3<T> random_scores(std::size_t B, std::size_t L, std::size_t S, long dk, std::uint64_t seed)
{
    // scores = q k^T / sqrt(d_k) with q [B, L, dk], k [B, S, dk] seeded normal.
    Rng rq(seed, stream::q), rk(seed, stream::k);
    const auto D = static_cast<std::size_t>(dk);
    Ten3<T> q = xt::zeros<T>({B, L, D}), k = xt::zeros<T>({B, S, D});
    for (auto& v : q) v = static_cast<T>(rq.normal());
    for (auto& v : k) v = static_cast<T>(rk.normal());
    return scaled_scores(q, k, 1.0 / std::sqrt(static_cast<double>(dk)));
}

template <class T>
std::string row_string(const Ten3<T>& w, std::size_t b, std::size_t i)
{
    std::vector<std::string> items;
    const std::size_t n = std::min<std::size_t>(w.shape(2), 6);
    for (std::size_t j = 0; j < n; ++j) {
        const double v = static_cast<double>(w(b, i, j));
        items.push_back(std::isnan(v) ? std::string("nan") : fmt::format("{:.4g}", v));
    }
    if (w.shape(2) > n) items.push_back("...");
    return fmt::format("[{}]", fmt::join(items, ", "));
}

template <class T>
Report run_mask_typed(const MaskParams& p, const MaskSpec& m, const RunContext& ctx)
{
    const long B = m.has_padding() ? m.batch() : p.batch.value_or(1);
    if (B < 1) throw InputError(fmt::format("--batch must be at least 1 (got {})", B));
    const auto uB = static_cast<std::size_t>(B), L = static_cast<std::size_t>(m.queries),
               S = static_cast<std::size_t>(m.keys);
    const double cells = static_cast<double>(B) * static_cast<double>(L) * static_cast<double>(S);
    require_memory(cells * 12.0 * (sizeof(T) + sizeof(double)), ctx,
                   fmt::format("scores and weights [{}, {}, {}], a dozen times", B, L, S));

    Recorder rec("mask", "mask", ctx);
    auto& par = rec.params();
    par["kind"] = name_of(m.kind);
    par["len"] = m.queries;
    par["kv_len"] = m.keys;
    par["batch"] = B;
    par["lengths"] = m.lengths;
    par["align"] = name_of(m.align);
    par["diagonal"] = m.diagonal;
    par["window"] = m.kind == MaskKind::window ? nlohmann::ordered_json(m.window) : nullptr;
    par["fill"] = p.fill;
    par["dk"] = p.dk;
    par["multiply"] = p.multiply;
    par["softmax"] = name_of(p.softmax);

    const Elem E = elem_of<T>();
    const bool batched_mask = m.has_padding();
    if (rec.wants("mask")) {
        if (batched_mask) {
            Ten4<T> mask4 = xt::zeros<T>({uB, std::size_t{1}, L, S});
            for (long b = 0; b < B; ++b) xt::view(mask4, b, 0, xt::all(), xt::all()) = additive_mask<T>(m, b);
            rec.tensor("mask", {"batch", "head", "query", "key"}, mask4, E);
        } else {
            rec.tensor("mask", {"query", "key"}, additive_mask<T>(m, 0), E);
        }
    }
    const Ten3<T> scores = random_scores<T>(uB, L, S, p.dk, ctx.seed);
    rec.tensor("scores", {"batch", "query", "key"}, scores, E);
    if (rec.wants("masked_scores")) {
        Ten3<T> ms = scores;
        for (long b = 0; b < B; ++b) {
            const Mat<T> mask = additive_mask<T>(m, b);
            xt::view(ms, b, xt::all(), xt::all()) += mask;
        }
        rec.tensor("masked_scores", {"batch", "query", "key"}, ms, E);
    }
    const Ten3<T> weights = masked_softmax_additive(scores, m, p.softmax);
    rec.tensor("weights", {"batch", "query", "key"}, weights, E);

    const double eps = eps_of(ctx.dtype);
    const bool causal_part = m.kind == MaskKind::causal || m.kind == MaskKind::both;

    if (m.kind == MaskKind::causal) {
        const Mat<T> ours = additive_mask<T>(m, 0);
        const Mat<T> ref = causal_reference_tril<T>(m.queries, m.keys, m.align, static_cast<T>(m.fill));
        double differing = 0;
        for (std::size_t i = 0; i < ours.size(); ++i) differing += ours.data()[i] != ref.data()[i];
        rec.check({"causal_equals_tril",
                   fmt::format("the causal mask triu(fill, diagonal={}) equals the lower-triangular "
                               "construction where(tril(ones), 0, fill)", m.diagonal),
                   "elements that differ", differing, 0.0, Compare::le, Role::invariant, TolKind::fixed});
    }
    {
        std::string expect;
        switch (m.kind) {
        case MaskKind::causal: expect = m.offset() == 0 ? "row i sees exactly i+1 keys" : fmt::format("row i sees exactly i+{} keys", m.offset() + 1); break;
        case MaskKind::padding: expect = "row i of sequence b sees exactly lengths[b] keys"; break;
        case MaskKind::both: expect = "row i of sequence b sees exactly min(lengths[b], i+1) keys"; break;
        case MaskKind::window: expect = fmt::format("row i sees exactly min(i+1, {}) keys (the window)", m.window); break;
        case MaskKind::none: break;
        }
        rec.check({"visible_keys_per_row", expect, "rows with another count",
                   static_cast<double>(rows_with_wrong_visibility(m)), 0.0, Compare::le,
                   Role::invariant, TolKind::fixed});
    }
    rec.check({"rows_sum_to_one", "every softmax row that is not fully masked sums to 1",
               "max |sum_j w - 1|", max_row_sum_error(weights, m),
               eps * (static_cast<double>(S) + 4.0)});
    rec.check({"masked_weights_exactly_zero", "every masked weight is exactly 0, not merely small",
               "max |w| at masked keys", max_masked_weight(weights, m), 0.0, Compare::le,
               Role::invariant, TolKind::fixed});
    if (causal_part && m.offset() == 0 && (m.kind != MaskKind::both ||
                                           std::all_of(m.lengths.begin(), m.lengths.end(), [](long n) { return n > 0; }))) {
        double err = 0.0;
        for (std::size_t b = 0; b < uB; ++b)
            for (std::size_t j = 0; j < S; ++j) {
                const double v = static_cast<double>(weights(b, 0, j));
                const double d = std::abs(v - (j == 0 ? 1.0 : 0.0));
                err = std::isnan(d) ? d : std::max(err, d);
            }
        rec.check({"row0_one_hot", "row 0 of the causal weights is [1, 0, ..., 0]",
                   "max |w[0] - e_0|", err, 0.0, Compare::le, Role::invariant, TolKind::fixed});
    }
    rec.check({"no_nan_weights", "no attention weight is NaN", "NaN weights",
               static_cast<double>(count_nan(weights)), 0.0, Compare::le, Role::invariant, TolKind::fixed});

    if (m.has_padding()) {
        const auto kpm = key_padding_mask(m);
        const auto amb = attn_mask_bool(m);
        rec.tensor("key_padding_mask", {"batch", "key"}, kpm, Elem::boolean);
        rec.tensor("attn_mask_bool", {"batch", "key"}, amb, Elem::boolean);
        double same = 0;
        for (std::size_t i = 0; i < kpm.size(); ++i) same += kpm.data()[i] == amb.data()[i];
        rec.check({"bool_conventions_complement",
                   "key_padding_mask (true = ignore) is the complement of attn_mask (true = may attend)",
                   "positions where the two agree", same, 0.0, Compare::le, Role::invariant, TolKind::fixed});
        if (m.kind == MaskKind::padding) {
            const auto w_kpm = masked_softmax_key_padding(scores, kpm, p.softmax);
            const auto w_amb = masked_softmax_attn_bool(scores, amb, p.softmax);
            rec.check({"bool_conventions_same_weights",
                       "key_padding_mask, boolean attn_mask and the additive mask give the same weights",
                       "max |w_bool - w_additive| (NaN = NaN)",
                       std::max(max_diff_nan_equal(w_kpm, weights), max_diff_nan_equal(w_amb, weights)), 0.0});
        }
    }

    if (m.offset() != 0 || m.queries != m.keys) {
        if (m.kind == MaskKind::causal || m.kind == MaskKind::window) {
            MaskSpec ul = m, lr = m;
            ul.align = Align::upper_left;
            lr.align = Align::lower_right;
            rec.tensor("mask_upper_left", {"query", "key"}, additive_mask<T>(ul, 0), E);
            rec.tensor("mask_lower_right", {"query", "key"}, additive_mask<T>(lr, 0), E);
        }
    }
    if (m.has_causal()) {
        rec.note(m.queries == m.keys
                     ? std::string("L = S, so upper-left (PyTorch's is_causal=True) and lower-right alignment coincide")
                     : fmt::format("alignment {}: PyTorch's is_causal=True gives upper-left (query i sees keys "
                                   "0..i); a decoder that appends {} queries after {} cached keys needs "
                                   "lower-right (the last query sees every key)",
                                   name_of(m.align), m.queries, std::max(0L, m.keys - m.queries)));
    }

    // Fully masked rows: what each softmax choice and each fill does to them.
    std::vector<std::string> full_rows;
    long first_b = -1, first_i = -1;
    for (long b = 0; b < B; ++b)
        for (long i = 0; i < m.queries; ++i)
            if (row_fully_masked(m, b, i)) {
                if (first_b < 0) {
                    first_b = b;
                    first_i = i;
                }
                if (full_rows.size() < 8) full_rows.push_back(fmt::format("(batch {}, query {})", b, i));
            }
    if (first_b >= 0) {
        MaskSpec neg_inf = m, finite = m;
        neg_inf.fill = -std::numeric_limits<double>::infinity();
        finite.fill = -1e9;
        const auto fb = static_cast<std::size_t>(first_b), fi = static_cast<std::size_t>(first_i);
        rec.note(fmt::format(
            "fully masked rows: {}{}; for {} they give: plain softmax with -inf {}, safe softmax {}, "
            "fill -1e9 {}, this run ({} softmax, fill {}) {}",
            fmt::join(full_rows, ", "), full_rows.size() == 8 ? ", ..." : "", full_rows.front(),
            row_string(masked_softmax_additive(scores, neg_inf, SoftmaxKind::plain), fb, fi),
            row_string(masked_softmax_additive(scores, neg_inf, SoftmaxKind::safe), fb, fi),
            row_string(masked_softmax_additive(scores, finite, SoftmaxKind::plain), fb, fi),
            name_of(p.softmax), p.fill, row_string(weights, fb, fi)));
    }

    // Causality of the result: the scores of hidden keys must not matter at all.
    {
        Ten3<T> changed = scores;
        Rng rng(ctx.seed, stream::perturb);
        for (long b = 0; b < B; ++b)
            for (long i = 0; i < m.queries; ++i)
                for (long j = 0; j < m.keys; ++j)
                    if (m.masked(b, i, j)) changed(b, i, j) += static_cast<T>(10.0 * rng.normal());
        rec.check({"hidden_scores_ignored",
                   "changing the scores of masked keys leaves every row's weights bit-identical",
                   "max |w_changed - w|", max_diff_nan_equal(masked_softmax_additive(changed, m, p.softmax), weights),
                   0.0});
    }

    if (p.multiply) {
        // The wrong way: scores * (0/1 mask) instead of scores + mask. A zero score is not
        // "no attention": exp(0) is as large as any visible score's typical weight.
        Ten3<T> mult = scores;
        for (long b = 0; b < B; ++b)
            for (long i = 0; i < m.queries; ++i)
                for (long j = 0; j < m.keys; ++j)
                    if (m.masked(b, i, j)) mult(b, i, j) = T(0);
        rec.tensor("multiplied_scores", {"batch", "query", "key"}, mult, E);
        softmax_rows(mult, SoftmaxKind::plain);
        rec.tensor("multiplied_weights", {"batch", "query", "key"}, mult, E);
        Mat<T> leak = xt::zeros<T>({uB, L});
        double worst = 0.0;
        for (long b = 0; b < B; ++b)
            for (long i = 0; i < m.queries; ++i) {
                T mass = 0;
                for (long j = 0; j < m.keys; ++j)
                    if (m.masked(b, i, j)) mass += mult(b, i, j);
                leak(b, i) = mass;
                worst = std::max(worst, static_cast<double>(mass));
            }
        rec.tensor("leak", {"batch", "query"}, leak, E);
        rec.check({"multiply_leak_very_small",
                   "multiplying by a 0/1 mask leaks only a very small probability mass to masked keys "
                   "(taking 'very small' as below 1%)",
                   "max leaked mass per row", worst, 0.01, Compare::le, Role::article, TolKind::fixed});
    }
    return rec.finish();
}

}  // namespace

Report run_mask(const MaskParams& p, const RunContext& ctx)
{
    const MaskSpec m = mask_spec(p);
    return ctx.dtype == DType::float32 ? run_mask_typed<float>(p, m, ctx) : run_mask_typed<double>(p, m, ctx);
}

#define ATTNLAB_MASK_INSTANTIATE(T)                                                              \
    template Mat<T> additive_mask<T>(const MaskSpec&, long);                                     \
    template Mat<T> causal_reference_tril<T>(long, long, Align, T);                              \
    template Ten3<T> masked_softmax_additive<T>(const Ten3<T>&, const MaskSpec&, SoftmaxKind);   \
    template Ten3<T> masked_softmax_key_padding<T>(const Ten3<T>&, const xt::xtensor<bool, 2>&, SoftmaxKind); \
    template Ten3<T> masked_softmax_attn_bool<T>(const Ten3<T>&, const xt::xtensor<bool, 2>&, SoftmaxKind);   \
    template double max_masked_weight<T>(const Ten3<T>&, const MaskSpec&);                       \
    template double max_row_sum_error<T>(const Ten3<T>&, const MaskSpec&);                       \
    template long count_nan<T>(const Ten3<T>&);                                                  \
    template double max_diff_nan_equal<T>(const Ten3<T>&, const Ten3<T>&);
ATTNLAB_MASK_INSTANTIATE(float)
ATTNLAB_MASK_INSTANTIATE(double)

}  // namespace attnlab

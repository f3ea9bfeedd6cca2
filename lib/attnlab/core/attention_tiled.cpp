// The main attention implementation: tiles, a streaming softmax, BLAS products, threads.
// attention.cpp holds the plain-loop reference the tests hold it to.
#include "attnlab/core/attention.hpp"

#include "attnlab/core/blas.hpp"
#include "attnlab/core/fast_exp.hpp"
#include "attnlab/core/kernel_scratch.hpp"
#include "attnlab/core/microkernel.hpp"
#include "attnlab/core/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

namespace attnlab {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// What every work item reads: the inputs, the sizes, the rows asked for, the output.
template <class T>
struct Tiled {
    const AttentionInputs<T>& in;
    std::size_t B, H, L, d, S, group;
    const MaskSpec* mask;  // null: no mask
    bool skip_hidden;      // the fill is -inf: a wholly hidden tile has weights exactly 0
    RowRange range;
    std::size_t last_block;  // the query block holding row range.end - 1
    std::size_t blocks;      // query blocks in the range
    bool keep;
    AttentionOutput<T>& res;
};

using kernel::KeyTiles;
using kernel::Worker;

// Rows [r0, r1) of a query block.
struct Rows {
    std::size_t r0, r1;
};

// One block of queries of one (sequence, head): its rows' running max m, sum l, output
// accumulator o, visible key interval, and largest score at a hidden key.
template <class T>
struct QueryBlock {
    std::size_t b, h, hk, i0, n;
    std::unique_ptr<T[]> s;  // [rows, nk] scores, then p, of the rows in hand; never read before a product writes it
    KeyTiles* keys;          // this thread's key tiles, for the kernel's own q k^T
    std::vector<T> o, m, l, shift, alpha, masked_max;
    std::vector<std::pair<long, long>> span;
    std::vector<std::pair<long, long>> group_seen;  // per group of 64 rows: keys from the least first to the greatest end
    std::vector<char> unwritten;  // per group of 64 rows: o not written yet (the kernel's own p v only)
    std::vector<char> revisited;        // the rows whose final weights are formed again
    bool any_revisited = false;
    std::vector<std::size_t> kept_row;  // a revisited row's row in `kept`, when scores are kept
    std::vector<T> kept;                // [revisited rows, S]: their scores, kept as the tiles pass
};

// The most scores a work item keeps for its probe rows (4 MB of floats); past it, the tiles
// are computed again instead.
constexpr std::size_t kMaxKeptScores = std::size_t{1} << 20;

// Whether q k^T and p v take the kernel's own product (microkernel.hpp): float32 with a head
// dimension of whole panels (64, 128, ...), q k^T on whole panels of keys.
template <class T>
bool own_products(std::size_t d)
{
    return std::is_same_v<T, float> && d % kPanelWidth == 0;
}

template <class T>
QueryBlock<T> query_block(const Tiled<T>& t, std::size_t item, Worker<T>& worker)
{
    // Item bh * blocks + k: block k of (sequence, head) bh counted from the last, since under a
    // causal mask the last blocks are the longest (run_heads).
    const std::size_t bh = item / t.blocks, qb = t.last_block - item % t.blocks;
    QueryBlock<T> w;
    w.keys = &worker.keys;
    w.b = bh / t.H, w.h = bh % t.H, w.hk = w.h / t.group, w.i0 = qb * kBlockQ;
    w.n = std::min(kBlockQ, t.L - w.i0);
    w.s = worker.s ? std::move(worker.s) : std::unique_ptr<T[]>(new T[kBlockQ * kBlockK]);
    w.o = std::move(worker.o);
    w.shift.resize(w.n);
    w.alpha.resize(w.n);
    // The kernel's own p v writes a group's o at its first product (every later tile rescales
    // it first); BLAS's adds to it from the start.
    if (own_products<T>(t.d)) w.o.resize(kBlockQ * t.d);
    else w.o.assign(w.n * t.d, T(0));
    w.unwritten.assign((w.n + kPanelWidth - 1) / kPanelWidth, own_products<T>(t.d) ? 1 : 0);
    w.m.assign(w.n, -std::numeric_limits<T>::infinity());
    w.l.assign(w.n, T(0));
    w.masked_max.assign(w.n, -std::numeric_limits<T>::infinity());
    for (std::size_t r = 0; r < w.n; ++r)
        w.span.push_back(t.mask ? t.mask->visible_range(static_cast<long>(w.b), static_cast<long>(w.i0 + r)) : std::pair<long, long>{0, static_cast<long>(t.S)});
    for (std::size_t r0 = 0; r0 < w.n; r0 += kPanelWidth) {
        std::pair<long, long> seen{static_cast<long>(t.S), 0L};  // none: the empty [S, 0)
        for (std::size_t r = r0; r < std::min(w.n, r0 + kPanelWidth); ++r)
            if (w.span[r].first < w.span[r].second) seen = {std::min(seen.first, w.span[r].first), std::max(seen.second, w.span[r].second)};
        w.group_seen.push_back(seen);
    }
    return w;
}

// Row r of the scores [r1 - r0, nk] of rows [r0, r1): a group of 64 rows, whose scores stay in
// cache through every step, or the whole block.
template <class T>
T* score_row(QueryBlock<T>& w, Rows rr, std::size_t r, std::size_t nk)
{
    return w.s.get() + (r - rr.r0) * nk;
}

// Whether the mask hides keys [j0, j1) from every row of the block.
template <class T>
bool wholly_hidden(const QueryBlock<T>& w, long j0, long j1)
{
    for (const auto& [lo, hi] : w.span)
        if (lo < hi && lo < j1 && hi > j0) return false;
    return true;
}

// Adds the bias of one row: a stored [H, L, S] tensor, or ALiBi's -m |pos - j| computed here.
template <class T>
void add_bias(const Tiled<T>& t, const QueryBlock<T>& w, T* row, std::size_t i, std::size_t j0, std::size_t nk)
{
    if (t.in.head_bias) {
        const T* bias = &(*t.in.head_bias)(w.h, i, j0);
        for (std::size_t c = 0; c < nk; ++c) row[c] += bias[c];
    }
    if (t.in.alibi_slopes) {
        const T slope = static_cast<T>((*t.in.alibi_slopes)[w.h]);
        const long pos = t.in.alibi_q0 + static_cast<long>(i) - static_cast<long>(j0);
        for (std::size_t c = 0; c < nk; ++c) {
            const long distance = std::abs(pos - static_cast<long>(c));
            row[c] += distance == 0 ? T(0) : -slope * static_cast<T>(distance);
        }
    }
}

// The keys [lo, hi) of a tile at j0, counted from j0, that some row of the group of 64 from
// row r0 of the block sees (every key unless hidden keys may be skipped: the -inf fill makes
// their weights exactly 0): lo <= nk and hi >= 0, lo >= hi when none does.
template <class T>
std::pair<long, long> seen_by_group(const Tiled<T>& t, const QueryBlock<T>& w, std::size_t r0, std::size_t j0, std::size_t nk)
{
    if (!t.mask || !t.skip_hidden) return {0, static_cast<long>(nk)};
    const auto [lo, hi] = w.group_seen[r0 / kPanelWidth];
    const long from = static_cast<long>(j0), to = static_cast<long>(j0 + nk);
    return {std::min(lo, to) - from, std::max(hi, from) - from};
}

// The key tile at j0 transposed in panels of 64 keys (transpose_scaled), with the scale folded
// in (1/8 at d = 64: exact), so that the kernel's own q k^T packs nothing again and zeroes
// nothing first. Each thread transposes a tile once per key head, in registers, and keeps it
// while it takes that head's query blocks.
const float* key_tile(const Tiled<float>& t, const QueryBlock<float>& w, std::size_t j0, std::size_t nk)
{
    KeyTiles& c = *w.keys;
    const std::size_t tiles = (t.S + kBlockK - 1) / kBlockK, tile = j0 / kBlockK;
    if (c.b != w.b || c.hk != w.hk) {
        c.b = w.b, c.hk = w.hk;
        c.reserve(tiles * t.d * kBlockK);
        c.ready.assign(tiles, 0);
    }
    float* kt = c.kt.get() + tile * t.d * kBlockK;
    if (!c.ready[tile]) transpose_scaled(nk, t.d, static_cast<float>(t.in.scale), &(*t.in.k)(w.b, w.hk, j0, 0), kt);
    c.ready[tile] = 1;
    return kt;
}

// Rows [r0, r1) of s [n, nk] = scale q k^T for float32 with whole panels of d and of keys: the
// kernel's own product against the transposed key tile. A panel no row of a group of 64 sees
// is not computed: it is set to 0 (the -inf fill makes it -inf) where some row's scores are
// read again, and left as it is otherwise, since the softmax and p v never read it.
void own_score_product(const Tiled<float>& t, QueryBlock<float>& w, const float* q, Rows rr, std::size_t j0, std::size_t nk)
{
    const std::size_t d = t.d;
    const float* kt = key_tile(t, w, j0, nk);
    for (std::size_t r0 = rr.r0; r0 < rr.r1; r0 += kPanelWidth) {
        const std::size_t rows = std::min(kPanelWidth, rr.r1 - r0);
        const auto [lo, hi] = seen_by_group(t, w, r0, j0, nk);
        for (std::size_t c0 = 0; c0 < nk; c0 += kPanelWidth) {
            float* out = score_row(w, rr, r0, nk) + c0;
            if (static_cast<long>(c0) < hi && static_cast<long>(c0 + kPanelWidth) > lo) {
                panel64(rows, d, q + r0 * d, d, kt + c0 * d, kPanelWidth, out, nk, false);
            } else if (w.any_revisited) {  // otherwise nothing reads it (softmax_columns)
                for (std::size_t r = 0; r < rows; ++r) std::fill_n(out + r * nk, kPanelWidth, 0.0f);
            }
        }
    }
}

// Rows [r0, r1) of s [n, nk] = scale q k^T: the kernel's own product where it applies,
// OpenBLAS otherwise.
template <class T>
void score_product(const Tiled<T>& t, QueryBlock<T>& w, Rows rr, std::size_t j0, std::size_t nk)
{
    const T* q = &(*t.in.q)(w.b, w.h, w.i0, 0);
    const T* k = &(*t.in.k)(w.b, w.hk, j0, 0);
    if constexpr (std::is_same_v<T, float>) {
        if (own_products<T>(t.d) && nk % kPanelWidth == 0) return own_score_product(t, w, q, rr, j0, nk);
    }
    blas::gemm_nt(rr.r1 - rr.r0, nk, t.d, static_cast<T>(t.in.scale), q + rr.r0 * t.d, t.d, k, t.d, T(0), w.s.get(), nk);
}

// The tile columns [from, to) whose scores the softmax reads for rows [r0, r0 + 64): every
// column, or, where the kernel's own q k^T skipped panels no row of the group sees, the panels
// it computed. A skipped panel holds -inf, whose p is exactly 0 and adds +0 to a row's sum, so
// leaving it out changes no bit (the sums' lanes start at multiples of 16 either way).
template <class T>
std::pair<std::size_t, std::size_t> softmax_columns(const Tiled<T>& t, const QueryBlock<T>& w, std::size_t r0, std::size_t j0, std::size_t nk)
{
    if (!own_products<T>(t.d) || nk % kPanelWidth != 0) return {0, nk};
    const auto [lo, hi] = seen_by_group(t, w, r0, j0, nk);
    if (lo >= hi) return {0, 0};
    const auto p = static_cast<long>(kPanelWidth);
    return {static_cast<std::size_t>(std::max(0L, lo) / p * p), static_cast<std::size_t>(std::min(static_cast<long>(nk), (hi + p - 1) / p * p))};
}

// Rows [r0, r1) of s [n, nk] = scale q k^T, plus the fill at hidden keys, plus the bias, in
// the reference's order; and each row's largest score at a hidden key. Unless some row's
// scores are read again (kept, or revisited), the fill goes only where the softmax reads.
template <class T>
void score_tile(const Tiled<T>& t, QueryBlock<T>& w, Rows rr, std::size_t j0, std::size_t nk)
{
    score_product(t, w, rr, j0, nk);
    const T fill = t.mask ? static_cast<T>(t.mask->fill) : T(0);
    const bool bias = t.in.head_bias != nullptr || t.in.alibi_slopes != nullptr;
    const auto clip = [&](long j) { return static_cast<std::size_t>(std::clamp(j - static_cast<long>(j0), 0L, static_cast<long>(nk))); };
    for (std::size_t r0 = rr.r0; r0 < rr.r1; r0 += kPanelWidth) {
        const auto [from, to] = w.any_revisited ? std::pair<std::size_t, std::size_t>{0, nk} : softmax_columns(t, w, r0, j0, nk);
        for (std::size_t r = r0; r < std::min(rr.r1, r0 + kPanelWidth); ++r) {
            T* row = score_row(w, rr, r, nk);
            // Hidden: tile columns [0, a) and [e, nk) (all of them when the row sees nothing).
            const std::size_t a = clip(w.span[r].first), e = std::max(a, clip(w.span[r].second));
            const bool filled = t.mask && (a > 0 || e < nk);
            for (std::size_t c = from; filled && c < std::min(a, to); ++c) row[c] += fill;
            for (std::size_t c = std::max(e, from); filled && c < to; ++c) row[c] += fill;
            if (bias) add_bias(t, w, row, w.i0 + r, j0, nk);
            // A -inf fill makes every hidden score -inf or NaN, whose largest (NaN ignored) is
            // -inf: masked_max keeps its start.
            if (filled && !t.skip_hidden) w.masked_max[r] = row_max(row + e, nk - e, row_max(row, a, w.masked_max[r]));
        }
    }
}

// The streaming softmax of rows [r0, r1) over one tile: new row max, p = exp(s - m), rescale
// of l and o.
template <class T>
void absorb_tile(const Tiled<T>& t, QueryBlock<T>& w, Rows rr, std::size_t j0, std::size_t nk)
{
    const std::size_t d = t.d;
    for (std::size_t r0 = rr.r0; r0 < rr.r1; r0 += kPanelWidth) {
        const std::size_t r1 = std::min(rr.r1, r0 + kPanelWidth);
        const auto [from, to] = softmax_columns(t, w, r0, j0, nk);
        for (std::size_t r = r0; r < r1; ++r) {
            const T m_new = row_max(score_row(w, rr, r, nk) + from, to - from, w.m[r]);
            // Nothing visible yet: every p is 0 (exp(-inf - -inf) would be NaN).
            w.shift[r] = m_new == -std::numeric_limits<T>::infinity() ? T(0) : m_new;
            w.alpha[r] = w.m[r] - w.shift[r];
            w.m[r] = m_new;
        }
        exp_inplace(w.alpha.data() + r0, r1 - r0);
        for (std::size_t r = r0; r < r1; ++r) {
            w.l[r] = w.l[r] * w.alpha[r] + exp_shifted_sum(score_row(w, rr, r, nk) + from, to - from, w.shift[r]);
            if (w.alpha[r] != T(1) && !w.unwritten[r0 / kPanelWidth]) scale_inplace(w.o.data() + r * d, d, w.alpha[r]);
        }
    }
}

// Whether a row's weights are NaN: a NaN score, or the plain softmax of a row of -inf.
template <class T>
bool nan_row(const Tiled<T>& t, const QueryBlock<T>& w, std::size_t r)
{
    return std::isnan(w.l[r]) || (w.m[r] == -std::numeric_limits<T>::infinity() && t.in.softmax == SoftmaxKind::plain);
}

// The weight of a score s of row r, from the row's final max and sum.
template <class T>
T final_weight(const Tiled<T>& t, const QueryBlock<T>& w, std::size_t r, T s)
{
    if (nan_row(t, w, r)) return std::numeric_limits<T>::quiet_NaN();
    if (w.m[r] == -std::numeric_limits<T>::infinity()) return T(0);  // safe softmax, fully masked
    return static_cast<T>(std::exp(s - w.m[r]) / w.l[r]);
}

bool in_range(const RowRange& r, std::size_t i) { return static_cast<long>(i) >= r.begin && static_cast<long>(i) < r.end; }

// out = o / l for the rows asked for; the figures of weights nobody keeps.
template <class T>
void finish_rows(const Tiled<T>& t, const QueryBlock<T>& w, AttentionStats& st)
{
    for (std::size_t r = 0; r < w.n; ++r) {
        if (!in_range(t.range, w.i0 + r)) continue;
        T* out = &t.res.out(w.b, w.h, w.i0 + r - static_cast<std::size_t>(t.range.begin), 0);
        const bool nan = nan_row(t, w, r), zero = w.m[r] == -std::numeric_limits<T>::infinity();
        if (nan || zero) std::fill_n(out, t.d, nan ? std::numeric_limits<T>::quiet_NaN() : T(0));
        else divide_into(out, w.o.data() + r * t.d, t.d, w.l[r]);
        if (t.keep) continue;  // the kept weights are measured themselves
        if (nan) st.nan_weights += static_cast<long>(t.S);
        const bool hides = t.mask && (w.span[r].first > 0 || w.span[r].second < static_cast<long>(t.S));
        if (hides) st.max_masked_weight = worse(st.max_masked_weight, std::abs(static_cast<double>(final_weight(t, w, r, w.masked_max[r]))));
    }
}

// Which rows of the block form their final weights again: with keep_matrices, every row asked
// for (its scores and weights written out); without, the probe rows (their sums measured).
template <class T>
std::vector<char> revisited_rows(const Tiled<T>& t, const QueryBlock<T>& w)
{
    std::vector<char> rows(w.n, 0);
    for (std::size_t r = 0; r < w.n; ++r) {
        const long i = static_cast<long>(w.i0 + r);
        rows[r] = in_range(t.range, w.i0 + r) && (t.keep || in_ranges(t.in.probes, i)) ? 1 : 0;
    }
    return rows;
}

// Which rows form their final weights again, and whether their scores are kept as the tiles
// pass (probe rows only, within kMaxKeptScores) rather than computed again afterwards.
template <class T>
void plan_revisit(const Tiled<T>& t, QueryBlock<T>& w)
{
    w.revisited = revisited_rows(t, w);
    const auto rows = static_cast<std::size_t>(std::count(w.revisited.begin(), w.revisited.end(), 1));
    w.any_revisited = rows > 0;
    if (t.keep || rows == 0 || rows * t.S > kMaxKeptScores) return;
    w.kept_row.assign(w.n, 0);
    for (std::size_t r = 0, at = 0; r < w.n; ++r)
        if (w.revisited[r]) w.kept_row[r] = at++;
    w.kept.resize(rows * t.S);
}

// Keeps the scores of the revisited rows of [r0, r1) in the tile just scored.
template <class T>
void keep_scores(const Tiled<T>& t, QueryBlock<T>& w, Rows rr, std::size_t j0, std::size_t nk)
{
    if (w.kept.empty()) return;
    for (std::size_t r = rr.r0; r < rr.r1; ++r)
        if (w.revisited[r]) std::copy_n(score_row(w, rr, r, nk), nk, w.kept.data() + w.kept_row[r] * t.S + j0);
}

// Every tile again, from the kernel's own scores (kept, or computed again): the final weights
// of the revisited rows, written out with keep_matrices, and their sums measured.
template <class T>
void revisit_tiles(const Tiled<T>& t, QueryBlock<T>& w, AttentionStats& st)
{
    const std::vector<char>& rows = w.revisited;
    if (std::find(rows.begin(), rows.end(), 1) == rows.end()) return;
    std::vector<double> sums(w.n, 0.0);
    for (std::size_t j0 = 0; j0 < t.S; j0 += kBlockK) {
        const std::size_t nk = std::min(kBlockK, t.S - j0);
        // A measured sum needs no tile whose weights are all exactly 0 (nor does the kernel
        // score one: the kept scores have the same tiles).
        if (!t.keep && t.skip_hidden && wholly_hidden(w, static_cast<long>(j0), static_cast<long>(j0 + nk))) continue;
        if (w.kept.empty()) score_tile(t, w, Rows{0, w.n}, j0, nk);
        for (std::size_t r = 0; r < w.n; ++r) {
            if (!rows[r]) continue;
            const std::size_t row = w.i0 + r - static_cast<std::size_t>(t.range.begin);
            const T* scores = w.kept.empty() ? w.s.get() + r * nk : w.kept.data() + w.kept_row[r] * t.S + j0;
            for (std::size_t c = 0; c < nk; ++c) {
                const T s = scores[c], weight = final_weight(t, w, r, s);
                sums[r] += static_cast<double>(weight);
                if (!t.keep) continue;
                const long j = static_cast<long>(j0 + c);
                t.res.scores(w.b, w.h, row, j0 + c) = s;
                t.res.weights(w.b, w.h, row, j0 + c) = weight;
                if (std::isnan(weight)) ++st.nan_weights;
                if (j < w.span[r].first || j >= w.span[r].second) st.max_masked_weight = worse(st.max_masked_weight, std::abs(static_cast<double>(weight)));
            }
        }
    }
    for (std::size_t r = 0; r < w.n; ++r)
        if (rows[r] && w.span[r].first < w.span[r].second) st.max_row_sum_error = worse(st.max_row_sum_error, std::abs(sums[r] - 1.0));
}

// o += p v for rows [r0, r1) and one tile: the kernel's own product for float32 with whole
// panels of d, one panel of 64 columns at a time (OpenBLAS would copy p, which was just
// written, before multiplying it), each group of 64 rows over the keys some row of it sees
// (the others' p are exactly 0); OpenBLAS otherwise.
template <class T>
void value_product(const Tiled<T>& t, QueryBlock<T>& w, Rows rr, const T* v, std::size_t j0, std::size_t nk)
{
    const std::size_t d = t.d;
    if constexpr (std::is_same_v<T, float>) {
        if (own_products<T>(d)) {
            for (std::size_t r0 = rr.r0; r0 < rr.r1; r0 += kPanelWidth) {
                const std::size_t rows = std::min(kPanelWidth, rr.r1 - r0);
                const auto [lo, hi] = seen_by_group(t, w, r0, j0, nk);
                const auto from = static_cast<std::size_t>(std::clamp(lo, 0L, static_cast<long>(nk)));
                const auto to = static_cast<std::size_t>(std::clamp(hi, static_cast<long>(from), static_cast<long>(nk)));
                if (from >= to) continue;
                char& unwritten = w.unwritten[r0 / kPanelWidth];
                for (std::size_t c0 = 0; c0 < d; c0 += kPanelWidth)  // from +0 either way: the same bits
                    panel64(rows, to - from, score_row(w, rr, r0, nk) + from, nk, v + from * d + c0, d, w.o.data() + r0 * d + c0, d, !unwritten);
                unwritten = 0;
            }
            return;
        }
    }
    blas::gemm_nn(rr.r1 - rr.r0, d, nk, T(1), w.s.get(), nk, v, d, T(1), w.o.data() + rr.r0 * d, d);
}

template <class T>
void run_item(const Tiled<T>& t, std::size_t item, Worker<T>& worker, AttentionStats& st)
{
    QueryBlock<T> w = query_block(t, item, worker);
    plan_revisit(t, w);
    const auto& v = *t.in.v;
    for (std::size_t j0 = 0; j0 < t.S; j0 += kBlockK) {
        const std::size_t nk = std::min(kBlockK, t.S - j0);
        if (t.skip_hidden && wholly_hidden(w, static_cast<long>(j0), static_cast<long>(j0 + nk))) continue;
        // With the kernel's own products, a group of 64 rows goes through every step before
        // the next, while its scores are in cache; with BLAS's, the whole block at once.
        const std::size_t step = own_products<T>(t.d) && nk % kPanelWidth == 0 ? kPanelWidth : w.n;
        for (std::size_t r0 = 0; r0 < w.n; r0 += step) {
            const Rows rr{r0, std::min(w.n, r0 + step)};
            score_tile(t, w, rr, j0, nk);
            keep_scores(t, w, rr, j0, nk);
            absorb_tile(t, w, rr, j0, nk);
            value_product(t, w, rr, &v(w.b, w.hk, j0, 0), j0, nk);
        }
    }
    finish_rows(t, w, st);
    revisit_tiles(t, w, st);
    worker.s = std::move(w.s);
    worker.o = std::move(w.o);
}

void merge(AttentionStats& into, const AttentionStats& part)
{
    into.max_row_sum_error = worse(into.max_row_sum_error, part.max_row_sum_error);
    into.max_masked_weight = worse(into.max_masked_weight, part.max_masked_weight);
    into.nan_weights += part.nan_weights;
}

// Runs the query blocks of every (sequence, head) on the kernel's threads. Each thread starts on
// heads of its own and takes them one after another, so that it transposes the key tiles of as
// few heads as it can; a head's blocks come from one counter, the last first, and a thread whose
// heads are done takes the blocks left in the others'. Which thread runs a block changes no bit.
template <class T>
void run_heads(const Tiled<T>& t, unsigned threads, kernel::WorkerLease<T>& workers, AttentionStats& stats)
{
    const std::size_t heads = t.B * t.H;
    const std::unique_ptr<std::atomic<std::size_t>[]> next(new std::atomic<std::size_t>[heads]);
    for (std::size_t h = 0; h < heads; ++h) next[h] = 0;
    std::mutex lock;
    parallel_for_workers(threads, threads, [&](std::size_t start, unsigned worker) {
        AttentionStats part;
        for (std::size_t i = 0; i < heads; ++i) {
            const std::size_t bh = (start * heads / threads + i) % heads;
            for (std::size_t block = next[bh]++; block < t.blocks; block = next[bh]++) run_item(t, bh * t.blocks + block, workers[worker], part);
        }
        const std::lock_guard<std::mutex> hold(lock);
        merge(stats, part);
    });
}

// Every (sequence, head, query block) of the range, on the kernel's threads.
template <class T>
void run_tiled(const AttentionInputs<T>& in, RowRange range, bool keep, AttentionOutput<T>& res)
{
    const std::size_t B = in.q->shape(0), H = in.q->shape(1), L = in.q->shape(2), d = in.q->shape(3), S = in.k->shape(2);
    const MaskSpec* mask = active_mask(in);
    const std::size_t first_block = static_cast<std::size_t>(range.begin) / kBlockQ, last_block = static_cast<std::size_t>(range.end - 1) / kBlockQ;
    const std::size_t blocks = last_block - first_block + 1;
    const Tiled<T> t{in, B, H, L, d, S, H / in.k->shape(1), mask, mask == nullptr || mask->fill == -kInf, range, last_block, blocks, keep, res};
    const unsigned threads = thread_count(in.threads);
    kernel::WorkerLease<T> workers(threads);
    run_heads(t, threads, workers, res.stats);
}

// The 16-bit types run the reference, a block of rows at a time, with the figures the
// kernel measures taken from its weights.
template <class T>
void reference_rows(const AttentionInputs<T>& in, RowRange rows, long first_row, bool keep, AttentionOutput<T>& res)
{
    const AttentionOutput<T> part = attention_reference(in, rows);
    const std::size_t B = res.out.shape(0), H = res.out.shape(1), d = res.out.shape(3), S = in.k->shape(2);
    const auto n = static_cast<std::size_t>(rows.end - rows.begin);
    const MaskSpec* mask = active_mask(in);
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t r = 0; r < n; ++r) {
                const std::size_t i = static_cast<std::size_t>(rows.begin) + r;
                std::copy_n(&part.out(b, h, r, 0), d, &res.out(b, h, i - static_cast<std::size_t>(first_row), 0));
                double sum = 0.0;
                bool visible = false;
                for (std::size_t j = 0; j < S; ++j) {
                    const double w = static_cast<double>(part.weights(b, h, r, j));
                    const bool hidden = mask && mask->masked(static_cast<long>(b), static_cast<long>(i), static_cast<long>(j));
                    visible = visible || !hidden;
                    sum += w;
                    if (std::isnan(w)) ++res.stats.nan_weights;
                    if (hidden) res.stats.max_masked_weight = worse(res.stats.max_masked_weight, std::abs(w));
                }
                if ((keep || in_ranges(in.probes, static_cast<long>(i))) && visible) res.stats.max_row_sum_error = worse(res.stats.max_row_sum_error, std::abs(sum - 1.0));
                if (!keep) continue;
                const std::size_t row = i - static_cast<std::size_t>(first_row);
                std::copy_n(&part.scores(b, h, r, 0), S, &res.scores(b, h, row, 0));
                std::copy_n(&part.weights(b, h, r, 0), S, &res.weights(b, h, row, 0));
            }
}

// Whether a probe row lies in the range.
bool probed(const std::vector<RowRange>* probes, RowRange range)
{
    if (probes == nullptr) return false;
    for (const auto& p : *probes)
        if (std::max(p.begin, range.begin) < std::min(p.end, range.end)) return true;
    return false;
}

}  // namespace

template <class T>
void attention(const AttentionInputs<T>& in, Matrices matrices, std::optional<RowRange> rows, AttentionOutput<T>& res)
{
    const bool keep_matrices = matrices == Matrices::keep;
    const auto& q = *in.q;
    const auto& k = *in.k;
    if (k.shape() != in.v->shape() || q.shape(0) != k.shape(0) || q.shape(3) != k.shape(3) || k.shape(1) == 0 || q.shape(1) % k.shape(1) != 0)
        throw std::logic_error("attention: q [B,H,L,d] and k, v [B,Hkv,S,d] with H % Hkv == 0 expected");
    const std::size_t B = q.shape(0), H = q.shape(1), L = q.shape(2), d = q.shape(3), S = k.shape(2);
    const RowRange range = rows.value_or(RowRange{0, static_cast<long>(L)});
    const auto n = static_cast<std::size_t>(range.end - range.begin);
    const std::array<std::size_t, 4> shape{B, H, n, d};
    if (res.out.shape() != shape) res.out = xt::empty<T>(shape);  // every row of the range is written
    res.scores = Ten4<T>(), res.weights = Ten4<T>(), res.stats = AttentionStats{};
    if (keep_matrices) {
        res.scores = xt::zeros<T>({B, H, n, S});
        res.weights = xt::zeros<T>({B, H, n, S});
    } else if (!probed(in.probes, range)) {
        res.stats.max_row_sum_error = std::numeric_limits<double>::quiet_NaN();
    }
    if (n == 0) return;
    if constexpr (is_narrow<T>) {
        for (long i0 = range.begin; i0 < range.end; i0 += 64)
            reference_rows(in, {i0, std::min(i0 + 64, range.end)}, range.begin, keep_matrices, res);
    } else {
        run_tiled(in, range, keep_matrices, res);
    }
}

double kernel_scratch_bytes(std::size_t S, std::size_t d, unsigned threads)
{
    const double keys = static_cast<double>((S + kBlockK - 1) / kBlockK * kBlockK) * static_cast<double>(d);
    const double tile = static_cast<double>(kBlockQ) * static_cast<double>(kBlockK) + static_cast<double>(kBlockQ) * static_cast<double>(d);
    return static_cast<double>(thread_count(threads)) * (keys * 4.0 + tile * 8.0);
}

double kernel_tile_share(const MaskSpec& mask, long batch)
{
    if (mask.kind == MaskKind::none || mask.fill != -kInf || mask.queries < 1 || mask.keys < 1) return 1.0;
    const long L = mask.queries, S = mask.keys, bq = static_cast<long>(kBlockQ), bk = static_cast<long>(kBlockK);
    const long sequences = mask.has_padding() ? batch : 1;  // the other masks are the same for every sequence
    double computed = 0.0;
    for (long b = 0; b < sequences; ++b)
        for (long i0 = 0; i0 < L; i0 += bq) {
            const long last = std::min(i0 + bq, L) - 1;
            const long lo = mask.visible_range(b, i0).first, hi = mask.visible_range(b, last).second;
            if (lo < hi) computed += static_cast<double>(last - i0 + 1) * static_cast<double>(((hi + bk - 1) / bk - lo / bk) * bk);
        }
    return std::min(1.0, computed / (static_cast<double>(sequences) * static_cast<double>(L) * static_cast<double>(S)));
}

template <class T>
AttentionOutput<T> attention(const AttentionInputs<T>& in, Matrices matrices, std::optional<RowRange> rows)
{
    AttentionOutput<T> res;
    attention(in, matrices, rows, res);
    return res;
}

#define ATTNLAB_TILED_INSTANTIATE(T)                                                                    \
    template AttentionOutput<T> attention<T>(const AttentionInputs<T>&, Matrices, std::optional<RowRange>); \
    template void attention<T>(const AttentionInputs<T>&, Matrices, std::optional<RowRange>, AttentionOutput<T>&);
ATTNLAB_TILED_INSTANTIATE(float)
ATTNLAB_TILED_INSTANTIATE(double)
ATTNLAB_TILED_INSTANTIATE(f16)
ATTNLAB_TILED_INSTANTIATE(bf16)

}  // namespace attnlab

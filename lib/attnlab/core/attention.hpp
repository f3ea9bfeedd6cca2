// Multi-head scaled dot-product attention, the core every position mechanism plugs into:
//   scores = q k^T * scale (+ additive mask) (+ per-head bias),  weights = softmax over keys,
//   out = weights v.
// Sizes: B batch, H query heads, Hkv key/value heads (H % Hkv == 0: grouped-query attention,
// Hkv = 1 multi-query), L queries, S keys, d per-head dimension, E = H * d model dimension.
#pragma once

#include "attnlab/core/mask_spec.hpp"
#include "attnlab/core/measure.hpp"
#include "attnlab/core/softmax.hpp"
#include "attnlab/core/xt.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <vector>

namespace attnlab {

// A read-only view of N-dimensional row-major data, set from a container's address (it reads
// that container) or from a tensor's storage (no copy). It dereferences to itself, so code
// written for a pointer to a container reads it unchanged: (*v)(b, h, i, c), v->shape(0).
template <class T, std::size_t N>
class View {
public:
    View() = default;
    View(std::nullptr_t) {}
    View(const xt::xtensor<T, N>* c) : data_(c ? c->data() : nullptr), set_(c != nullptr)
    {
        if (c) std::copy(c->shape().begin(), c->shape().end(), shape_.begin());
    }
    View(const T* data, const std::array<std::size_t, N>& shape) : data_(data), shape_(shape), set_(true) {}

    explicit operator bool() const { return set_; }
    bool operator==(std::nullptr_t) const { return !set_; }
    bool operator!=(std::nullptr_t) const { return set_; }
    const View& operator*() const { return *this; }
    const View* operator->() const { return this; }
    const std::array<std::size_t, N>& shape() const { return shape_; }
    std::size_t shape(std::size_t a) const { return shape_[a]; }
    const T* data() const { return data_; }
    template <class... I>
    const T& operator()(I... i) const
    {
        static_assert(sizeof...(I) == N, "one index per axis");
        const std::size_t idx[] = {static_cast<std::size_t>(i)...};
        std::size_t at = 0;
        for (std::size_t a = 0; a < N; ++a) at = at * shape_[a] + idx[a];
        return data_[at];
    }

private:
    const T* data_ = nullptr;
    std::array<std::size_t, N> shape_{};
    bool set_ = false;
};

// A run's tensor seen as T: its storage itself when it holds T (float32 and float64 runs),
// otherwise a converted copy kept in `owned` (the 16-bit types).
template <class T, std::size_t N>
View<T, N> view_of(const Tensor& t, xt::xtensor<T, N>& owned)
{
    std::array<std::size_t, N> shape{};
    if (t.rank() != N) throw std::logic_error("view_of: tensor " + t.name + " has another rank");
    std::copy(t.shape.begin(), t.shape.end(), shape.begin());
    const T* data = t.values.visit([](const auto* p) -> const T* {
        if constexpr (std::is_same_v<std::remove_cv_t<std::remove_pointer_t<decltype(p)>>, T>) return p;
        else return nullptr;
    });
    if (data != nullptr) return View<T, N>(data, shape);
    owned = from_tensor<T, N>(t);
    return View<T, N>(&owned);
}

template <class T>
struct AttentionInputs {
    View<T, 4> q;                        // [B, H, L, d]
    View<T, 4> k;                        // [B, Hkv, S, d]
    View<T, 4> v;                        // [B, Hkv, S, d]
    const MaskSpec* mask = nullptr;      // additive mask by spec; null or kind none: no mask
    View<T, 3> head_bias;                // [H, L, S], any additive bias; unset: none
    // ALiBi computed tile by tile: head h adds -m_h |q0 + i - j| (null: none).
    const std::vector<double>* alibi_slopes = nullptr;
    long alibi_q0 = 0;
    double scale = 1.0;
    SoftmaxKind softmax = SoftmaxKind::plain;
    unsigned threads = 0;  // the main implementation's threads; 0: every core
    // Rows whose weights the kernel also forms, from its own scores, to measure their sums
    // (stats.max_row_sum_error) when the matrices are not kept (null: none).
    const std::vector<RowRange>* probes = nullptr;
};

// Whether row i lies in one of the ranges.
inline bool in_ranges(const std::vector<RowRange>* ranges, long i)
{
    if (ranges == nullptr) return false;
    for (const auto& r : *ranges)
        if (i >= r.begin && i < r.end) return true;
    return false;
}

// The mask the inputs apply: null when there is none, or when its kind is none.
template <class T>
const MaskSpec* active_mask(const AttentionInputs<T>& in)
{
    return in.mask != nullptr && in.mask->kind != MaskKind::none ? in.mask : nullptr;
}

// [L, S]: 0 where query i of sequence b may look, the spec's fill where it may not.
template <class T>
Mat<T> additive_mask(const MaskSpec& m, long b = 0);

// The additive mask as a tensor named "mask": [query, key] for causal and window, or
// [batch, head = 1, query, key] once padding makes it differ per sequence (the shape
// scaled_dot_product_attention broadcasts over heads), for `batch` sequences.
template <class T>
Tensor additive_mask_tensor(const MaskSpec& m, long batch);

// Measured while the rows are computed, so checks need no stored weights.
struct AttentionStats {
    // |sum_j w - 1| over rows that are not fully masked: measured on the weights, so only when
    // they are kept, or on the probe rows (NaN otherwise, which no check passes).
    double max_row_sum_error = 0.0;
    double max_masked_weight = 0.0;  // |w| where the mask hides the key
    long nan_weights = 0;
};

template <class T>
struct AttentionOutput {
    Ten4<T> out;      // [B, H, rows, d]: row r is query rows.begin + r (every row without a range)
    Ten4<T> scores;   // [B, H, rows, S] after mask and bias, when kept (else empty)
    Ten4<T> weights;  // [B, H, rows, S], when kept (else empty)
    AttentionStats stats;
};

// Whether a run keeps the scores and weights [B, H, L, S] (keep) or streams them and keeps
// only the output (drop).
enum class Matrices { drop, keep };

// The main implementation, tiled with a streaming softmax (FlashAttention-2's scheme on the
// CPU): for each (sequence, head, block of kBlockQ queries), the blocks of kBlockK keys are
// walked with a running max and sum per row; S = Q K^T and the sum P V are BLAS products.
// A key block the mask hides wholly from every row of the query block is skipped when the
// fill is -inf (its weights are exactly 0). Memory beyond q, k, v and out is a tile and one
// key head's keys per thread (kernel_scratch_bytes), unless Matrices::keep asks for scores and
// weights, which a second pass over the keys writes. Each row's arithmetic depends only on the fixed block grid, never on the
// thread count or the row range asked for: any rows computed again are bit-identical.
template <class T>
AttentionOutput<T> attention(const AttentionInputs<T>& in, Matrices matrices, std::optional<RowRange> rows = {});
// The same into res, whose output storage is reused when it has the shape already (a caller
// that runs the kernel again, as bench's timed repeats, touches no fresh memory).
template <class T>
void attention(const AttentionInputs<T>& in, Matrices matrices, std::optional<RowRange> rows, AttentionOutput<T>& res);

constexpr std::size_t kBlockQ = 256;
constexpr std::size_t kBlockK = 512;

// The kernel's memory beyond q, k, v and out, in bytes, at most: on each thread a score tile,
// an output accumulator and one key head's tiles transposed (S keys of d, rounded up to a tile),
// in float32 (the kernel keeps the transposed keys for float32 only; float64's tiles are twice
// the size, and its keys are not kept).
double kernel_scratch_bytes(std::size_t S, std::size_t d, unsigned threads);

// The share of the score tiles of a [batch, L, S] attention (L = mask.queries, S = mask.keys)
// the kernel computes: with the -inf fill it skips a tile the mask hides from every row of its
// query block. Each mask shows a row an interval of keys whose ends never move back as the
// row moves on, so a block sees keys from its first row's first to its last row's last.
double kernel_tile_share(const MaskSpec& mask, long batch);

// The reference: the formula pass by pass on full matrices, plain loops, nothing skipped.
// Its scores and weights are [B, H, rows, S]: row r is query rows.begin + r.
template <class T>
AttentionOutput<T> attention_reference(const AttentionInputs<T>& in, RowRange rows);

// max |a - b| over the rows rr of a, the output of that range ([B, H, rows, d], row r is query
// rr.begin + r), and b, a whole [B, H, L, d] output given by its data and L (NaN = NaN); with
// row_end, sequence b stops at row_end[b] (its length).
template <class T, class V>
double max_abs_diff_rows(const Ten4<T>& a, const V* b, std::size_t L, const RowRange& rr, const std::vector<long>* row_end = nullptr)
{
    const std::size_t H = a.shape(1), n = a.shape(2), d = a.shape(3);
    double worst = 0.0;
    for (std::size_t bb = 0; bb < a.shape(0); ++bb)
        for (std::size_t h = 0; h < H; ++h) {
            const long end = row_end ? std::min(rr.end, (*row_end)[bb]) : rr.end;
            for (long i = rr.begin; i < end; ++i) {
                const std::size_t in_a = ((bb * H + h) * n + static_cast<std::size_t>(i - rr.begin)) * d;
                const std::size_t in_b = ((bb * H + h) * L + static_cast<std::size_t>(i)) * d;
                worst = worse(worst, max_abs_diff(a.data() + in_a, b + in_b, d));
            }
        }
    return worst;
}
// The same against a run's [B, H, L, d] tensor, whatever its storage.
template <class T>
double max_abs_diff_rows(const Ten4<T>& a, const Tensor& b, const RowRange& rr, const std::vector<long>* row_end = nullptr)
{
    return b.values.visit([&](const auto* p) { return max_abs_diff_rows(a, p, b.shape.at(2), rr, row_end); });
}

// scores [N, L, S] = q k^T * scale for q [N, L, d], k [N, S, d] (N: any leading batch of heads).
template <class T>
Ten3<T> scaled_scores(const Ten3<T>& q, const Ten3<T>& k, double scale);

// Row vectors times W with W stored [in, out] (PyTorch's nn.Linear stores [out, in]):
// x [B, L, in], w [in, out] -> [B, L, out]. BLAS products over fixed blocks of rows, on
// `threads` threads (0: every core); project_reference is the plain loop.
template <class T>
Ten3<T> project(const Ten3<T>& x, const Mat<T>& w, unsigned threads = 0);
template <class T>
Ten3<T> project_reference(const Ten3<T>& x, const Mat<T>& w);
// split_heads(project(x, w), heads) without the intermediate [B, L, out]: each head's rows
// written in place by their own products (fixed blocks, so any thread count gives the same bits).
template <class T>
Ten4<T> project_heads(const Ten3<T>& x, const Mat<T>& w, long heads, unsigned threads = 0);

// [B, L, H*d] <-> [B, H, L, d]
template <class T>
Ten4<T> split_heads(const Ten3<T>& x, long heads);
template <class T>
Ten3<T> merge_heads(const Ten4<T>& x);

// A [rows, cols] matrix of seeded normals scaled by 1/sqrt(rows), so projections keep the
// scale of their input.
template <class T>
Mat<T> random_weight(long rows, long cols, std::uint64_t seed, std::uint64_t stream);
template <class T>
Ten3<T> random_tensor3(std::size_t a, std::size_t b, std::size_t c, std::uint64_t seed, std::uint64_t stream);

}  // namespace attnlab

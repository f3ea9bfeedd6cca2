#include "attnlab/core/measure.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace attnlab {

namespace {

// A tensor read as `lead` matrices of rows x cols (its last two axes; rank 1 is one row).
struct Matrices {
    std::size_t lead, rows, cols;
};

Matrices matrices_of(const Tensor& t)
{
    const std::size_t cols = t.rank() >= 1 ? t.shape.back() : 1, rows = t.rank() >= 2 ? t.shape[t.rank() - 2] : 1;
    return {rows * cols == 0 ? 0 : t.size() / (rows * cols), rows, cols};
}

}  // namespace

double max_abs_diff(const Tensor& a, const Tensor& b)
{
    if (a.shape != b.shape) {
        throw std::logic_error(fmt::format("max_abs_diff: {} and {} differ in shape", a.name, b.name));
    }
    return a.values.visit([&](const auto* pa) { return b.values.visit([&](const auto* pb) { return max_abs_diff(pa, pb, a.size()); }); });
}

double max_abs(const Tensor& t)
{
    return t.values.visit([&](const auto* p) { return max_abs(p, t.size()); });
}

long count_nan(const Tensor& t)
{
    return t.values.visit([&](const auto* p) { return count_nan(p, t.size()); });
}

template <class V>
double diagonal_spread(const V* m, std::size_t rows, std::size_t cols)
{
    const long L = static_cast<long>(rows), S = static_cast<long>(cols);
    double worst = 0.0;
    for (long delta = -(S - 1); delta <= L - 1; ++delta) {  // delta = i - j
        const long i0 = std::max(0L, delta);
        const double first = static_cast<double>(m[i0 * S + (i0 - delta)]);
        double lo = first, hi = first;
        for (long i = i0; i < L && i - delta < S; ++i) {
            const double v = static_cast<double>(m[i * S + (i - delta)]);
            if (std::isnan(v)) return std::numeric_limits<double>::quiet_NaN();
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
        const double spread = lo == hi ? 0.0 : hi - lo;  // equal infinities: 0; inf and finite: inf
        worst = worse(worst, spread);
    }
    return worst;
}

template double diagonal_spread<double>(const double*, std::size_t, std::size_t);

double max_diagonal_spread(const Tensor& t)
{
    if (t.rank() < 2) throw std::logic_error("max_diagonal_spread needs a tensor of rank 2 or more");
    const auto [lead, rows, cols] = matrices_of(t);
    double worst = 0.0;
    t.values.visit([&](const auto* p) {
        for (std::size_t n = 0; n < lead; ++n) worst = worse(worst, diagonal_spread(p + n * rows * cols, rows, cols));
    });
    return worst;
}

double max_spread_by_offset(const Tensor& t, const std::vector<long>& positions)
{
    const auto [lead, rows, cols] = matrices_of(t);
    if (rows != positions.size() || cols != positions.size()) throw std::logic_error("max_spread_by_offset: one position per row and column");
    double worst = 0.0;
    for (std::size_t n = 0; n < lead; ++n) {
        std::map<long, std::pair<double, double>> range;  // offset -> (lowest, highest)
        for (std::size_t i = 0; i < rows; ++i)
            for (std::size_t j = 0; j < cols; ++j) {
                const double v = t.values[(n * rows + i) * cols + j];
                if (std::isnan(v)) return std::numeric_limits<double>::quiet_NaN();
                const auto [it, fresh] = range.emplace(positions[i] - positions[j], std::pair{v, v});
                if (!fresh) it->second = {std::min(it->second.first, v), std::max(it->second.second, v)};
            }
        for (const auto& [offset, r] : range) worst = worse(worst, r.first == r.second ? 0.0 : r.second - r.first);
    }
    return worst;
}

double max_row_sum_error(const Tensor& w, const RowPredicate& skip)
{
    const auto [lead, rows, cols] = matrices_of(w);
    double worst = 0.0;
    for (std::size_t n = 0; n < lead; ++n)
        for (std::size_t i = 0; i < rows; ++i) {
            if (skip && skip(n, i)) continue;
            const std::size_t row = (n * rows + i) * cols;
            double sum = 0.0;
            for (std::size_t j = 0; j < cols; ++j) sum += w.values[row + j];
            worst = worse(worst, std::abs(sum - 1.0));
        }
    return worst;
}

double max_masked_weight(const Tensor& w, const CellPredicate& hidden)
{
    const auto [lead, rows, cols] = matrices_of(w);
    double worst = 0.0;
    for (std::size_t n = 0; n < lead; ++n)
        for (std::size_t i = 0; i < rows; ++i)
            for (std::size_t j = 0; j < cols; ++j)
                if (hidden(n, i, j)) worst = worse(worst, std::abs(w.values[(n * rows + i) * cols + j]));
    return worst;
}

std::vector<RowRange> sampled_rows(long len, double work_per_row)
{
    const double budget = kCheckBudget;
    if (static_cast<double>(len) * work_per_row <= budget || len <= 96) return {RowRange{0, len}};
    // Three ranges (the first rows, the middle, the last) of up to 32 rows, as many as fit. The
    // middle one starts at len / 2, so that a power-of-two length's middle rows lie in one
    // block of the kernel's grid, unless it would then reach the last range.
    const long width = static_cast<long>(std::clamp(std::floor(budget / (3.0 * work_per_row)), 1.0, 32.0));
    const long mid = std::min(len / 2, len - 2 * width);
    return {RowRange{0, width}, RowRange{mid, mid + width}, RowRange{len - width, len}};
}

std::string rows_description(const std::vector<RowRange>& rows, long len, Lang lang)
{
    const bool zh = lang == Lang::zh;
    if (rows.size() == 1 && rows[0].begin == 0 && rows[0].end == len) return zh ? "全部行" : "over all rows";
    std::vector<std::string> parts;
    for (const auto& r : rows) parts.push_back(fmt::format("{}..{}", r.begin, r.end - 1));
    return fmt::format(zh ? "第 {} 行" : "over rows {}", fmt::join(parts, ", "));
}

std::vector<long> sampled_positions(long len)
{
    std::vector<long> pos;
    if (len <= 1024) {
        for (long m = 0; m < len; ++m) pos.push_back(m);
        return pos;
    }
    for (long m = 0; m < 128; ++m) pos.push_back(m);
    for (long k = 1; k <= 256; ++k) pos.push_back(128 + k * (len - 256) / 257);
    for (long m = len - 128; m < len; ++m) pos.push_back(m);
    std::sort(pos.begin(), pos.end());
    pos.erase(std::unique(pos.begin(), pos.end()), pos.end());
    return pos;
}

namespace {

double inner(const std::vector<double>& a, const std::vector<double>& b)
{
    double s = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
}

}  // namespace

std::vector<std::vector<double>> orthonormal_span(const std::vector<std::vector<double>>& vs)
{
    double largest = 0.0;
    for (const auto& v : vs) largest = std::max(largest, std::sqrt(inner(v, v)));
    std::vector<std::vector<double>> basis;
    for (std::vector<double> v : vs) {
        for (int pass = 0; pass < 2; ++pass)
            for (const auto& u : basis) {
                const double c = inner(u, v);
                for (std::size_t i = 0; i < v.size(); ++i) v[i] -= c * u[i];
            }
        const double norm = std::sqrt(inner(v, v));
        if (norm <= 1e-12 * largest) continue;
        for (double& x : v) x /= norm;
        basis.push_back(std::move(v));
    }
    return basis;
}

double outside_span(const std::vector<double>& S, std::size_t n, const std::vector<std::vector<double>>& U,
                    const std::vector<std::vector<double>>& V)
{
    std::vector<double> SV(n * V.size(), 0.0), C(U.size() * V.size(), 0.0), UC(n * V.size(), 0.0);
    for (std::size_t a = 0; a < n; ++a)
        for (std::size_t c = 0; c < V.size(); ++c)
            for (std::size_t b = 0; b < n; ++b) SV[a * V.size() + c] += S[a * n + b] * V[c][b];
    for (std::size_t r = 0; r < U.size(); ++r)
        for (std::size_t c = 0; c < V.size(); ++c)
            for (std::size_t a = 0; a < n; ++a) C[r * V.size() + c] += U[r][a] * SV[a * V.size() + c];
    for (std::size_t a = 0; a < n; ++a)
        for (std::size_t c = 0; c < V.size(); ++c)
            for (std::size_t r = 0; r < U.size(); ++r) UC[a * V.size() + c] += U[r][a] * C[r * V.size() + c];
    double left = 0.0;
    for (std::size_t a = 0; a < n; ++a)
        for (std::size_t b = 0; b < n; ++b) {
            double fit = 0.0;
            for (std::size_t c = 0; c < V.size(); ++c) fit += UC[a * V.size() + c] * V[c][b];
            left += (S[a * n + b] - fit) * (S[a * n + b] - fit);
        }
    return std::sqrt(left);
}

}  // namespace attnlab

// Softmax over the last axis (keys), numerically stable: subtract the row max first.
#pragma once

#include "attnlab/core/enums.hpp"
#include "attnlab/core/narrow.hpp"

#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace attnlab {

// plain: what PyTorch's softmax does: a row that is all -inf becomes NaN (its max is -inf and
//        -inf - (-inf) is NaN). nn.MultiheadAttention's fast path and the math path of
//        scaled_dot_product_attention before PyTorch 2.5 give NaN rows this way.
// safe:  the safe softmax scaled_dot_product_attention uses since PyTorch 2.5: a fully
//        masked row gives zeros instead.
enum class SoftmaxKind { plain, safe };
constexpr auto enum_names(SoftmaxKind)
{
    return std::array{std::pair{SoftmaxKind::plain, std::string_view("plain")},
                      std::pair{SoftmaxKind::safe, std::string_view("safe")}};
}

// row: [n], replaced by its softmax.
template <class T>
void softmax_inplace(T* row, std::size_t n, SoftmaxKind kind)
{
    if constexpr (is_narrow<T>) {  // as PyTorch's softmax in 16 bits: float32 inside, rounded once
        std::vector<float> wide(row, row + n);
        softmax_inplace(wide.data(), n, kind);
        for (std::size_t j = 0; j < n; ++j) row[j] = T(wide[j]);
        return;
    }
    // pass 1: the row max
    T row_max = -std::numeric_limits<T>::infinity();
    for (std::size_t j = 0; j < n; ++j) row_max = row[j] > row_max ? row[j] : row_max;
    if (kind == SoftmaxKind::safe && row_max == -std::numeric_limits<T>::infinity()) {
        for (std::size_t j = 0; j < n; ++j) row[j] = T(0);
        return;
    }
    // pass 2: exp(x - max) and their sum
    T sum(0);
    for (std::size_t j = 0; j < n; ++j) {
        row[j] = std::exp(row[j] - row_max);
        sum += row[j];
    }
    // pass 3: normalise
    for (std::size_t j = 0; j < n; ++j) row[j] /= sum;
}

// Compiled once, with the kernels (core/softmax.cpp), for the four dtypes: the experiments
// built around it are plumbing, compiled for size, while a row's softmax is their hot loop.
extern template void softmax_inplace<float>(float*, std::size_t, SoftmaxKind);
extern template void softmax_inplace<double>(double*, std::size_t, SoftmaxKind);
extern template void softmax_inplace<f16>(f16*, std::size_t, SoftmaxKind);
extern template void softmax_inplace<bf16>(bf16*, std::size_t, SoftmaxKind);

// rows consecutive rows of n, each replaced by its softmax.
template <class T>
void softmax_rows(T* data, std::size_t rows, std::size_t n, SoftmaxKind kind)
{
    for (std::size_t r = 0; r < rows; ++r) softmax_inplace(data + r * n, n, kind);
}

}  // namespace attnlab

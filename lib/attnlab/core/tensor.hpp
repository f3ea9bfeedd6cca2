// A named tensor as every layer outside the math sees it: its axes, its element type, its
// shape and its values, row-major. It holds float32 values exactly (float -> double), so a
// check, a renderer or a file writer never needs to know how it was computed.
//
// Glossary of size names used across the library (as in the articles):
//   B  batch          L  query positions (sequence length)   S  key/value positions
//   H  heads          d  per-head dimension                  E  model dimension (H * d)
//   D  encoding dimension of the sinusoidal table             P  pairs (D / 2 or d / 2)
#pragma once

#include "attnlab/core/narrow.hpp"

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace attnlab {

// How a tensor's values are to be read and printed.
// float16 and bfloat16 values are held as the doubles they stand for.
enum class Elem { float32, float64, boolean, index, float16, bfloat16 };
constexpr auto enum_names(Elem)
{
    return std::array{std::pair{Elem::float32, std::string_view("float32")},
                      std::pair{Elem::float64, std::string_view("float64")},
                      std::pair{Elem::float16, std::string_view("float16")},
                      std::pair{Elem::bfloat16, std::string_view("bfloat16")},
                      std::pair{Elem::boolean, std::string_view("bool")},
                      std::pair{Elem::index, std::string_view("int64")}};
}

template <class T>
constexpr Elem elem_of()
{
    if constexpr (std::is_same_v<T, f16>) return Elem::float16;
    else if constexpr (std::is_same_v<T, bf16>) return Elem::bfloat16;
    else return sizeof(T) == sizeof(float) ? Elem::float32 : Elem::float64;
}

struct Tensor {
    std::string name;
    std::vector<std::string> axes;  // one name per dimension, e.g. {"pos", "dim"}
    Elem elem = Elem::float64;
    std::vector<std::size_t> shape;
    std::vector<double> values;     // row-major

    std::size_t rank() const { return shape.size(); }
    std::size_t size() const { return values.size(); }
    std::size_t dim(std::size_t axis) const { return shape[axis]; }
    // Element of a rank-2 tensor, or of the last two axes at a flat leading offset.
    double at(std::size_t i, std::size_t j) const { return values[i * shape.back() + j]; }
};

// The number of elements a shape holds.
std::size_t element_count(const std::vector<std::size_t>& shape);

}  // namespace attnlab

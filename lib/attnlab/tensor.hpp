// The one place the library includes xtensor. Everything else includes this header.
//
// Glossary of size names used across the library (as in the articles):
//   B  batch          L  query positions (sequence length)   S  key/value positions
//   H  heads          d  per-head dimension                  E  model dimension (H * d)
//   D  encoding dimension of the sinusoidal table             P  pairs (D / 2 or d / 2)
#pragma once

#include <xtensor/xarray.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include <cstddef>
#include <limits>

namespace attnlab {

// Fixed-rank containers for the math (fast, stack-shaped); xarray only where the rank is
// not known at compile time (the report that the renderer prints).
template <class T>
using Vec = xt::xtensor<T, 1>;
template <class T>
using Mat = xt::xtensor<T, 2>;
template <class T>
using Ten3 = xt::xtensor<T, 3>;
template <class T>
using Ten4 = xt::xtensor<T, 4>;

template <class T>
constexpr T eps_of() {
    return std::numeric_limits<T>::epsilon();
}

}  // namespace attnlab

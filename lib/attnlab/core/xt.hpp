// The one place the library includes xtensor: the math of the experiments works on
// fixed-rank xtensor containers, and this header turns them into the light Tensor that
// checks, renderers and files read, and back.
#pragma once

#include "attnlab/core/tensor.hpp"

#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include <cstddef>
#include <limits>
#include <memory>
#include <stdexcept>

namespace attnlab {

// Fixed-rank containers for the math (fast, stack-shaped).
template <class T>
using Vec = xt::xtensor<T, 1>;
template <class T>
using Mat = xt::xtensor<T, 2>;
template <class T>
using Ten3 = xt::xtensor<T, 3>;
template <class T>
using Ten4 = xt::xtensor<T, 4>;


// A Tensor's name, axes, element type and shape, with no values yet.
template <class Shape>
Tensor tensor_header(std::string name, std::vector<std::string> axes, const Shape& shape, Elem elem)
{
    Tensor t;
    t.name = std::move(name);
    t.axes = std::move(axes);
    t.elem = elem;
    t.shape.assign(shape.begin(), shape.end());
    if (t.axes.size() != t.shape.size()) throw std::logic_error("tensor " + t.name + " has a wrong number of axis names");
    return t;
}

// Any xtensor expression as a Tensor (evaluated once; float32, float16 and bfloat16 values
// stored as floats, float64 and indices as doubles, exactly).
template <class E>
Tensor to_tensor(std::string name, std::vector<std::string> axes, const E& expr, Elem elem)
{
    const auto& value = xt::eval(expr);  // a container itself, or the evaluated expression: no copy
    Tensor t = tensor_header(std::move(name), std::move(axes), value.shape(), elem);
    // float32, float16 and bfloat16 values are all floats: stored as such, half the memory.
    t.values = elem == Elem::float64 || elem == Elem::index ? Values(std::vector<double>(value.size())) : Values::floats(value.size());
    t.values.visit([&](auto* out) {
        using S = std::remove_pointer_t<decltype(out)>;
        const auto* in = value.data();
        for (std::size_t i = 0; i < value.size(); ++i) out[i] = static_cast<S>(static_cast<double>(in[i]));
    });
    return t;
}

// A float container moved into a Tensor: its storage adopted, no copy.
template <std::size_t N>
Tensor to_tensor(std::string name, std::vector<std::string> axes, xt::xtensor<float, N>&& c, Elem elem)
{
    if (elem == Elem::float64 || elem == Elem::index) return to_tensor(std::move(name), std::move(axes), static_cast<const xt::xtensor<float, N>&>(c), elem);
    auto held = std::make_shared<xt::xtensor<float, N>>(std::move(c));
    Tensor t = tensor_header(std::move(name), std::move(axes), held->shape(), elem);
    float* data = held->data();
    const std::size_t n = held->size();
    t.values = Values::adopt(std::move(held), data, n);
    return t;
}

// A Tensor as a fixed-rank container of T (exact for values that came from T).
template <class T, std::size_t N>
xt::xtensor<T, N> from_tensor(const Tensor& t)
{
    if (t.rank() != N) throw std::logic_error("from_tensor: tensor " + t.name + " has another rank");
    std::array<std::size_t, N> shape{};
    for (std::size_t a = 0; a < N; ++a) shape[a] = t.shape[a];
    xt::xtensor<T, N> out(shape);
    t.values.visit([&](const auto* in) {
        for (std::size_t i = 0; i < t.size(); ++i) out.data()[i] = static_cast<T>(in[i]);
    });
    return out;
}

}  // namespace attnlab

// What a compute uses for an input: the learner's tensor from --input (its shape checked by
// the runner, its values converted to T), or the one the compute draws itself.
#pragma once

#include "attnlab/core/xt.hpp"
#include "attnlab/experiments/experiment.hpp"

namespace attnlab {

template <class T, std::size_t N, class Make>
xt::xtensor<T, N> input_or(const Plan& plan, const std::string& name, Make make)
{
    if (const Tensor* t = plan.input(name)) {
        if (t->rank() == N) return from_tensor<T, N>(*t);
        Tensor reshaped = *t;  // a [pos, dim] input of a [1, pos, dim] computation
        reshaped.shape.insert(reshaped.shape.begin(), N - t->rank(), std::size_t{1});
        return from_tensor<T, N>(reshaped);
    }
    return make();
}

}  // namespace attnlab

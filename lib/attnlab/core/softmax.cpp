// The softmax of softmax.hpp, instantiated once for the four dtypes.
#include "attnlab/core/softmax.hpp"

namespace attnlab {

template void softmax_inplace<float>(float*, std::size_t, SoftmaxKind);
template void softmax_inplace<double>(double*, std::size_t, SoftmaxKind);
template void softmax_inplace<f16>(f16*, std::size_t, SoftmaxKind);
template void softmax_inplace<bf16>(bf16*, std::size_t, SoftmaxKind);

}  // namespace attnlab

// float16 (IEEE 754 binary16) and bfloat16, rounded as PyTorch's CPU .half() and .bfloat16()
// round: to nearest, ties to even; float16 overflows to +-inf (above 65519.99...) and has
// subnormals down to 2^-24; bfloat16 keeps float32's exponent range and 8 bits of precision
// (so 257 becomes 256). NaN stays NaN. A float64 value is rounded to float32 first, as
// PyTorch converts it (1 + 2^-8 + 2^-40 becomes 1 in bfloat16, not 1 + 2^-7). Checked against
// data/fixtures/precision_conversions.npy, made with PyTorch.
#pragma once

#include "attnlab/core/enums.hpp"

#include <cstdint>

namespace attnlab {

std::uint16_t half_bits(float x);
float from_half_bits(std::uint16_t h);
std::uint16_t bfloat16_bits(float x);
float from_bfloat16_bits(std::uint16_t b);

// The value x becomes when stored in the format, as a double.
double round_to_half(double x);
double round_to_bfloat16(double x);
// The value x becomes when stored in the dtype (float32: rounded to float; float64: x).
double round_to_dtype(double x, DType dtype);

}  // namespace attnlab

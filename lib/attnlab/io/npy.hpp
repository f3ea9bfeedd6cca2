// NPY files (numpy's format, versions 1 to 3): read into a Tensor of float64 values.
// The reader trusts nothing it reads: the magic, the header dict, the dtype, the shape and
// its product are all checked against the bytes there are before anything is allocated.
#pragma once

#include "attnlab/core/tensor.hpp"

#include <string>
#include <vector>

namespace attnlab {

// Element types read: <f2 <f4 <f8 >f4 >f8, the integers i1..i8 and u1..u8 of either byte
// order, |b1; C and Fortran order (Fortran arrays are returned in C order).
// Throws InputError naming `what` (a file name, say) and what is wrong.
Tensor parse_npy(const std::vector<unsigned char>& bytes, const std::string& what);

}  // namespace attnlab

namespace attnlab {

// A Tensor as an NPY v1 file: float32 as <f4 (exactly its values), float64 as <f8, bool as
// |b1, int64 as <i8; C order.
std::vector<unsigned char> write_npy(const Tensor& t);

}  // namespace attnlab

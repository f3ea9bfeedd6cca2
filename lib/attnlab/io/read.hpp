// A learner's tensor from a file: NPY, CSV (attnlab's long form, its --wide form, or a plain
// numeric matrix with or without a header row) or JSON (attnlab's own output, the tensor
// picked by name, or a bare nested list). Every reader checks what it reads before it
// allocates; anything it cannot take is an InputError naming the file and the problem.
#pragma once

#include "attnlab/core/tensor.hpp"

#include <string>
#include <vector>

namespace attnlab {

// name: the tensor to pick from an attnlab JSON document (empty: its main tensor).
// max_bytes: the largest file accepted (the memory budget).
Tensor read_tensor_file(const std::string& path, const std::string& name, double max_bytes);

// The same from bytes already read; what names the source in messages.
Tensor read_tensor_bytes(const std::vector<unsigned char>& bytes, const std::string& what, const std::string& name);
Tensor parse_csv_tensor(const std::string& text, const std::string& what);
Tensor parse_json_tensor(const std::string& text, const std::string& what, const std::string& name);

}  // namespace attnlab

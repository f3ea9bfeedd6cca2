// A learner's tensor from a file: NPY, CSV (attnlab's long form, its --wide form, or a plain
// numeric matrix with or without a header row) or JSON (attnlab's own output, the tensor
// picked by name, or a bare nested list). Every reader checks what it reads before it
// allocates; anything it cannot take is an InputError naming the file and the problem.
#pragma once

#include "attnlab/core/tensor.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace attnlab {

// name: the tensor to pick from an attnlab JSON document (empty: its main tensor).
// max_bytes: the memory budget; a file is accepted when parsing it fits (each format's cost
// per byte counted). path "-" reads standard input. notes, when given, receives what the
// reader decided for the user to know (a pandas index column dropped).
Tensor read_tensor_file(const std::string& path, const std::string& name, double max_bytes,
                        std::vector<std::string>* notes = nullptr);

// The same from bytes already read; what names the source in messages.
Tensor read_tensor_bytes(const std::vector<unsigned char>& bytes, const std::string& what, const std::string& name,
                         std::vector<std::string>* notes = nullptr);
// CSV: a UTF-8 BOM is skipped; a header is a first row with no number in it (or pandas' own,
// an empty first cell over numbered columns); any other cell that is not a number is refused
// naming its line and cell; an unnamed first column counting 0, 1, 2, ... is pandas' index,
// dropped with a note; a decimal beyond float64's range is refused.
Tensor parse_csv_tensor(std::string_view text, const std::string& what, std::vector<std::string>* notes = nullptr);
// How deep brackets nest in a JSON text (strings not told apart: an upper bound), checked
// before a parser recurses into a hostile document.
std::size_t json_nesting(std::string_view text);
Tensor parse_json_tensor(const std::string& text, const std::string& what, const std::string& name);

}  // namespace attnlab

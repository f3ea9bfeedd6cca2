// A run's parameters and reported figures as an ordered list of named values: what the
// report's "params" and "measurements" hold. No JSON here: core/params_json.hpp turns a list
// into a JSON object for the layers that write one.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace attnlab {

// A value as the params report it: null, a whole number, a seed (unsigned 64-bit), a
// number, a flag, a name, a list.
using ParamValue = std::variant<std::monostate, long, std::uint64_t, double, bool, std::string, std::vector<long>>;
using ParamList = std::vector<std::pair<std::string, ParamValue>>;

// Sets `name` to `value`: in its place when the list has it, at the end when not (as a JSON
// object's key is replaced in place).
void set_param(ParamList& list, const std::string& name, ParamValue value);
// Each entry of `more` set in turn.
void set_params(ParamList& list, const ParamList& more);
// The value of `name` (nullptr when the list has none).
const ParamValue* find_param(const ParamList& list, const std::string& name);
// A number the list must hold (a missing or non-numeric entry is a programming error).
double param_number(const ParamList& list, const std::string& name);

}  // namespace attnlab

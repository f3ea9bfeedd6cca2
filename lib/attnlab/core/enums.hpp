// Every convention the program offers is an enum with one table of names. The CLI's
// validators, the JSON params and the text output all read that one table, so a spelling
// can never differ between them.
//
// Each enum E provides, next to its definition, a function found by argument-dependent
// lookup:   constexpr auto enum_names(E) -> std::array<std::pair<E, std::string_view>, N>
#pragma once

#include <array>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace attnlab {

template <class E>
std::string name_of(E value)
{
    for (const auto& [e, name] : enum_names(E{})) {
        if (e == value) return std::string(name);
    }
    throw std::logic_error("enum value without a name");
}

// name -> value, in the form CLI11's CheckedTransformer takes.
template <class E>
std::map<std::string, E> enum_map()
{
    std::map<std::string, E> out;
    for (const auto& [e, name] : enum_names(E{})) out.emplace(std::string(name), e);
    return out;
}


// The language of check lines, notes and narration; names, keys and options stay English.
enum class Lang { en, zh };
constexpr auto enum_names(Lang)
{
    return std::array{std::pair{Lang::en, std::string_view("en")}, std::pair{Lang::zh, std::string_view("zh")}};
}

// float16 and bfloat16 follow PyTorch's CPU semantics for those dtypes (core/narrow.hpp).
enum class DType { float32, float64, float16, bfloat16 };
constexpr auto enum_names(DType)
{
    return std::array{std::pair{DType::float32, std::string_view("float32")},
                      std::pair{DType::float64, std::string_view("float64")},
                      std::pair{DType::float16, std::string_view("float16")},
                      std::pair{DType::bfloat16, std::string_view("bfloat16")}};
}
constexpr bool is_16bit(DType d) { return d == DType::float16 || d == DType::bfloat16; }

}  // namespace attnlab

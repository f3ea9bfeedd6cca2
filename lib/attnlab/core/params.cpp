#include "attnlab/core/params.hpp"

#include "attnlab/core/params_json.hpp"

#include <algorithm>
#include <stdexcept>
#include <type_traits>

namespace attnlab {

void set_param(ParamList& list, const std::string& name, ParamValue value)
{
    auto it = std::find_if(list.begin(), list.end(), [&](const auto& item) { return item.first == name; });
    if (it != list.end()) it->second = std::move(value);
    else list.emplace_back(name, std::move(value));
}

void set_params(ParamList& list, const ParamList& more)
{
    for (const auto& [name, value] : more) set_param(list, name, value);
}

const ParamValue* find_param(const ParamList& list, const std::string& name)
{
    auto it = std::find_if(list.begin(), list.end(), [&](const auto& item) { return item.first == name; });
    return it == list.end() ? nullptr : &it->second;
}

double param_number(const ParamList& list, const std::string& name)
{
    const ParamValue* v = find_param(list, name);
    if (v != nullptr) {
        if (const auto* d = std::get_if<double>(v)) return *d;
        if (const auto* l = std::get_if<long>(v)) return static_cast<double>(*l);
    }
    throw std::logic_error("params hold no number " + name);
}

nlohmann::ordered_json params_json(const ParamList& list)
{
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    for (const auto& [name, value] : list)
        std::visit([&, &key = name](const auto& v) {
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) out[key] = nullptr;
            else out[key] = v;
        }, value);
    return out;
}

}  // namespace attnlab

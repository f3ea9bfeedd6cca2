#include "attnlab/experiments/options.hpp"

#include "attnlab/core/report.hpp"

#include <cstdlib>

namespace attnlab {

std::string json_name(const std::string& flag)
{
    std::string name = flag.rfind("--", 0) == 0 ? flag.substr(2) : flag;
    for (char& c : name)
        if (c == '-') c = '_';
    return name;
}

std::vector<double> number_list(const std::string& text, const char* flag, bool (*accept)(double), const char* what)
{
    std::vector<double> out;
    for (std::size_t at = 0; at <= text.size() && !text.empty();) {
        const std::size_t comma = std::min(text.find(',', at), text.size());
        const std::string item = text.substr(at, comma - at);
        char* end = nullptr;
        const double v = std::strtod(item.c_str(), &end);
        if (item.empty() || end != item.c_str() + item.size() || !accept(v)) throw InputError(fmt::format("{}: '{}' is not {}", flag, item, what));
        out.push_back(v);
        at = comma + 1;
    }
    return out;
}

namespace detail {

ParamValue value_of(const OptionRef& ref)
{
    return std::visit(Overloaded{[](long* v) { return ParamValue(*v); }, [](double* v) { return ParamValue(*v); },
                                 [](bool* v) { return ParamValue(*v); }, [](unsigned* v) { return ParamValue(static_cast<long>(*v)); },
                                 [](std::string* v) { return ParamValue(*v); },
                                 [](std::optional<long>* v) { return *v ? ParamValue(**v) : ParamValue(); },
                                 [](std::optional<double>* v) { return *v ? ParamValue(**v) : ParamValue(); },
                                 [](std::vector<long>* v) { return ParamValue(*v); },
                                 [](const ChoiceRef& c) { return c.optional && c.get().empty() ? ParamValue() : ParamValue(c.get()); }},
                      ref);
}

std::optional<std::string> spelled(const OptionRef& ref)
{
    using Text = std::optional<std::string>;
    return std::visit(Overloaded{[](long* v) { return Text(std::to_string(*v)); }, [](double* v) { return Text(fmt::format("{}", *v)); },
                                 [](bool* v) { return *v ? Text("") : Text(); }, [](unsigned* v) { return Text(std::to_string(*v)); },
                                 [](std::string* v) { return Text(*v); },
                                 [](std::optional<long>* v) { return *v ? Text(std::to_string(**v)) : Text(); },
                                 [](std::optional<double>* v) { return *v ? Text(fmt::format("{}", **v)) : Text(); },
                                 [](std::vector<long>* v) { return v->empty() ? Text() : Text(fmt::format("{}", fmt::join(*v, ","))); },
                                 [](const ChoiceRef& c) { return c.get().empty() ? Text() : Text(c.get()); }},
                      ref);
}

}  // namespace detail

}  // namespace attnlab

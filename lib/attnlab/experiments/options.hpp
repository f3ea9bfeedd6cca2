// An experiment's options, one row each. A row holds the flag, the help, where its value lives
// in the parameters, its range or choices, and what it excludes or implies. From the rows come
// the command line's options (app/cmd_experiment.cpp binds them), the params of the report and
// of exercise.json (the JSON name is the flag's: --max-len is max_len), the command line that
// reproduces a run, the manual's options table and the random command-line tests.
#pragma once

#include "attnlab/core/enums.hpp"
#include "attnlab/core/params.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace attnlab {

// An enum option's value, by name: the names it takes, and how to read and set it.
struct ChoiceRef {
    std::vector<std::string> names;
    std::function<std::string()> get;  // "" when an optional choice is not given
    std::function<void(const std::string&)> set;
    bool optional = false;
};

// Where one option's value lives in a parameter set.
using OptionRef = std::variant<long*, double*, bool*, unsigned*, std::string*, std::optional<long>*,
                               std::optional<double>*, std::vector<long>*, ChoiceRef>;

// What a value must be, besides its type.
struct Limits {
    enum class Kind { none, whole_range, positive } kind = Kind::none;
    long lo = 0, hi = 0;
};
inline Limits whole_range(long lo, long hi) { return {Limits::Kind::whole_range, lo, hi}; }
inline Limits positive() { return {Limits::Kind::positive, 0, 0}; }

template <class P>
struct OptionRow {
    std::string flag;  // "--max-len"
    std::string help;
    std::function<OptionRef(P&)> field;
    Limits limits;
    std::vector<std::string> only;      // an enum option that takes only these of the enum's names
    // Old spellings an enum option still takes, each with the name it means (paper ->
    // reference-code); the run's report then says so.
    std::vector<std::pair<std::string, std::string>> aliases;
    std::vector<std::string> excludes;  // flags that cannot be given with this one
    // A list option that sets a whole-number option to its length when that one is not given
    // (--positions 0,3,7 alone means --len 3).
    std::string sets_length_of;
    // The params report the value the run used (a default resolved) instead of the one given.
    std::function<ParamValue(const P&)> reported;
};

// A list whose absence means a default (positions 0..L-1): null when empty.
inline ParamValue list_or_null(const std::vector<long>& v) { return v.empty() ? ParamValue() : ParamValue(v); }

// One visitor from several lambdas, for std::visit over an OptionRef.
template <class... F>
struct Overloaded : F... {
    using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

// "--max-len" -> "max_len"
std::string json_name(const std::string& flag);

// A list of numbers given as one option's text, comma-separated ("1.0,1.02,1.1"; empty: none):
// each item a number that `accept` takes, or an input error naming the flag, the item and what
// an item must be (`what`, e.g. "a positive number").
std::vector<double> number_list(const std::string& text, const char* flag, bool (*accept)(double), const char* what);

namespace detail {

template <class E>
ChoiceRef choice_of(E& v)
{
    ChoiceRef c;
    for (const auto& entry : enum_names(E{})) c.names.emplace_back(entry.second);
    c.get = [&v] { return name_of(v); };
    c.set = [&v](const std::string& s) { v = enum_map<E>().at(s); };
    return c;
}

template <class E>
ChoiceRef choice_of(std::optional<E>& v)
{
    ChoiceRef c;
    for (const auto& entry : enum_names(E{})) c.names.emplace_back(entry.second);
    c.get = [&v] { return v ? name_of(*v) : std::string(); };
    c.set = [&v](const std::string& s) { v = enum_map<E>().at(s); };
    c.optional = true;
    return c;
}

inline OptionRef ref_of(long& v) { return &v; }
inline OptionRef ref_of(double& v) { return &v; }
inline OptionRef ref_of(bool& v) { return &v; }
inline OptionRef ref_of(unsigned& v) { return &v; }
inline OptionRef ref_of(std::string& v) { return &v; }
inline OptionRef ref_of(std::optional<long>& v) { return &v; }
inline OptionRef ref_of(std::optional<double>& v) { return &v; }
inline OptionRef ref_of(std::vector<long>& v) { return &v; }
template <class E, std::enable_if_t<std::is_enum_v<E>, int> = 0>
OptionRef ref_of(E& v)
{
    return choice_of(v);
}
template <class E, std::enable_if_t<std::is_enum_v<E>, int> = 0>
OptionRef ref_of(std::optional<E>& v)
{
    return choice_of(v);
}

// The value an option holds, as the params report it.
ParamValue value_of(const OptionRef& ref);
// The value as the command line spells it, or nullopt when the option is absent (a flag that
// is off, an optional not given, an empty list).
std::optional<std::string> spelled(const OptionRef& ref);

}  // namespace detail

// One row. `get` is a member pointer (&PeParams::len) or a function returning a reference to
// the value (for a nested field).
template <class P, class Get>
OptionRow<P> option(std::string flag, std::string help, Get get, Limits limits = {})
{
    OptionRow<P> r;
    r.flag = std::move(flag);
    r.help = std::move(help);
    r.field = [get](P& p) { return detail::ref_of(std::invoke(get, p)); };
    r.limits = limits;
    return r;
}

// The row of a flag, to set what the row helper does not (a missing flag is a programming
// error).
template <class P>
OptionRow<P>& row_of(std::vector<OptionRow<P>>& rows, const std::string& flag)
{
    for (auto& r : rows)
        if (r.flag == flag) return r;
    throw std::logic_error("no option row " + flag);
}

// Every option's value as the params report it, in row order.
template <class P>
ParamList param_values(const std::vector<OptionRow<P>>& rows, const P& p)
{
    ParamList out;
    P copy = p;
    for (const auto& r : rows) out.emplace_back(json_name(r.flag), r.reported ? r.reported(p) : detail::value_of(r.field(copy)));
    return out;
}

// The arguments that reproduce a run: the subcommand, then each option that differs from
// its default, in row order.
template <class P>
std::vector<std::string> command_args(const std::string& command, const std::vector<OptionRow<P>>& rows, const P& p)
{
    std::vector<std::string> args{command};
    P given = p, defaults{};
    auto differs = [&](const OptionRow<P>& r) {
        const auto value = detail::spelled(r.field(given));
        return value && value != detail::spelled(r.field(defaults));
    };
    std::vector<std::string> excluded;  // by an option that is given (--example fixes --len)
    for (const auto& r : rows)
        if (differs(r)) excluded.insert(excluded.end(), r.excludes.begin(), r.excludes.end());
    for (const auto& r : rows) {
        if (!differs(r) || std::find(excluded.begin(), excluded.end(), r.flag) != excluded.end()) continue;
        args.push_back(r.flag);
        if (!std::holds_alternative<bool*>(r.field(given))) args.push_back(*detail::spelled(r.field(given)));
    }
    return args;
}

}  // namespace attnlab

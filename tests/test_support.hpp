// Helpers shared by the unit tests.
#pragma once

#include "attnlab/core/report.hpp"
#include "attnlab/core/xt.hpp"
#include "attnlab/experiments/experiment.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

namespace doctest {
// Lists of names print in failure messages as ["a", "b"].
template <>
struct StringMaker<std::vector<std::string>> {
    static String convert(const std::vector<std::string>& v)
    {
        std::string out = "[";
        for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", \"" : "\"") + v[i] + "\"";
        return (out + "]").c_str();
    }
};
}  // namespace doctest

// The sanitizer build runs a swept or randomized test on fewer draws, for memory safety (each
// run there is many times slower); the release build judges the full count.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitizedBuild = true;
#else
constexpr bool kSanitizedBuild = false;
#endif
constexpr int draws(int release, int sanitized) { return kSanitizedBuild ? sanitized : release; }

constexpr double kInf = std::numeric_limits<double>::infinity();

// A committed fixture, data/fixtures/NAME.npy (made by data/make_fixtures.py).
inline std::string fixture_path(const std::string& name) { return std::string(ATTNLAB_DATA_DIR) + "/fixtures/" + name + ".npy"; }

// A scratch path of this process (two test runs on one machine never share a file).
inline std::string scratch(const std::string& name) { return "/tmp/attnlab-" + std::to_string(getpid()) + "-" + name; }

// A copy of the check of that name in a list or a report (fails the test if there is none). A
// copy, so that find_check(run_x(...), name) cannot outlive the temporary report.
inline attnlab::Check find_check(const std::vector<attnlab::Check>& checks, const std::string& name)
{
    for (const auto& c : checks)
        if (c.name == name) return c;
    FAIL("no check named " << name);
    throw;
}
inline attnlab::Check find_check(const attnlab::Report& r, const std::string& name) { return find_check(r.checks, name); }

// Whether one note of the report holds every one of these parts.
inline bool has_note(const attnlab::Report& r, std::initializer_list<std::string> parts)
{
    for (const auto& n : r.notes)
        if (std::all_of(parts.begin(), parts.end(), [&](const std::string& part) { return n.find(part) != std::string::npos; })) return true;
    return false;
}

// The run's tensor of that name, to doctor in place (fails the test if there is none).
inline attnlab::Tensor& tensor_of(attnlab::Run& run, const std::string& name)
{
    for (auto& t : run.tensors)
        if (t.name == name) return t;
    FAIL("no tensor " << name);
    throw;
}

// Any xtensor expression as a Tensor, with axes named a0, a1, ... (for the measurements).
template <class E>
attnlab::Tensor tt(const E& expr, attnlab::Elem elem = attnlab::Elem::float64)
{
    const auto value = xt::eval(expr);
    std::vector<std::string> axes;
    for (std::size_t a = 0; a < value.dimension(); ++a) axes.push_back("a" + std::to_string(a));
    return attnlab::to_tensor("t", axes, value, elem);
}

// The names of the checks of a report, in order.
inline std::vector<std::string> check_names(const attnlab::Report& r)
{
    std::vector<std::string> names;
    for (const auto& c : r.checks) names.push_back(c.name);
    return names;
}

// The names of the checks that failed (invariants and article claims alike).
inline std::vector<std::string> failed_checks(const std::vector<attnlab::Check>& checks)
{
    std::vector<std::string> names;
    for (const auto& c : checks)
        if (!c.passed()) names.push_back(c.name);
    return names;
}

// The report has exactly the expected checks, and every invariant among them holds; a
// failure names the check and its figures. Naming the checks means a check that silently
// disappears fails the test.
inline void check_invariants_hold(const attnlab::Report& r, const std::vector<std::string>& expected)
{
    CHECK(check_names(r) == expected);
    for (const auto& c : r.checks) {
        if (c.role != attnlab::Role::invariant) continue;
        CAPTURE(c.name);
        CAPTURE(c.measured);
        CAPTURE(c.tolerance);
        CHECK(c.passed());
    }
}

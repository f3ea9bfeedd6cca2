// Helpers shared by the unit tests.
#pragma once

#include "attnlab/report.hpp"

#include <doctest/doctest.h>

#include <string>

// A copy of the check of that name in a report (fails the test if there is none). A copy,
// so that find_check(run_x(...), name) cannot outlive the temporary report.
inline attnlab::Check find_check(const attnlab::Report& r, const std::string& name)
{
    for (const auto& c : r.checks)
        if (c.name == name) return c;
    FAIL("no check named " << name);
    throw;
}

// Every invariant of the report holds; a failure names the check and its figures.
inline void check_invariants_hold(const attnlab::Report& r)
{
    for (const auto& c : r.checks) {
        if (c.role != attnlab::Role::invariant) continue;
        CAPTURE(c.name);
        CAPTURE(c.measured);
        CAPTURE(c.tolerance);
        CHECK(c.passed());
    }
}

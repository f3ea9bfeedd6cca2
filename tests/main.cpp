// The doctest main of every test binary, with two additions. A run whose filter matched no
// test case fails. And a run given one --test-case=NAME, as CTest runs each case (doctest's
// discovery gives every case its entry, commas escaped), fails unless the case named exactly
// NAME ran: an entry can never pass having run nothing, or another case in place of its own
// (CMake splits names at ';', which the style check refuses).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <set>
#include <string>

namespace {

unsigned g_cases_run = 0;
bool g_run_ended = false;
std::set<std::string> g_names_run;

struct CaseCounter : doctest::IReporter {
    explicit CaseCounter(const doctest::ContextOptions&) {}
    void report_query(const doctest::QueryData&) override {}
    void test_run_start() override {}
    void test_run_end(const doctest::TestRunStats& stats) override
    {
        g_cases_run = stats.numTestCasesPassingFilters;
        g_run_ended = true;
    }
    void test_case_start(const doctest::TestCaseData& data) override { g_names_run.insert(data.m_name); }
    void test_case_reenter(const doctest::TestCaseData&) override {}
    void test_case_end(const doctest::CurrentTestCaseStats&) override {}
    void test_case_exception(const doctest::TestCaseException&) override {}
    void subcase_start(const doctest::SubcaseSignature&) override {}
    void subcase_end() override {}
    void log_assert(const doctest::AssertData&) override {}
    void log_message(const doctest::MessageData&) override {}
    void test_case_skipped(const doctest::TestCaseData&) override {}
};

REGISTER_LISTENER("case_counter", 1, CaseCounter);

// The one case an argument list names: its --test-case=NAME with doctest's "\," unescaped;
// empty when there is none, or more than one filter.
std::string named_case(int argc, char** argv)
{
    std::string name;
    int filters = 0;
    for (int i = 1; i < argc; ++i) {
        if (std::strncmp(argv[i], "--test-case=", 12) != 0 && std::strncmp(argv[i], "-tc=", 4) != 0) continue;
        const char* value = std::strchr(argv[i], '=') + 1;
        ++filters;
        name.clear();
        for (const char* c = value; *c; ++c) {
            if (*c == '\\' && c[1] == ',') ++c;
            name += *c;
        }
    }
    return filters == 1 ? name : std::string();
}

}  // namespace

int main(int argc, char** argv)
{
    doctest::Context context(argc, argv);
    const int status = context.run();
    if (context.shouldExit()) return status;  // --help, --list-test-cases, ...
    if (g_run_ended && g_cases_run == 0) {
        std::fprintf(stderr, "no test case ran: the filter matched nothing, which counts as a failure\n");
        return status != 0 ? status : 1;
    }
    const std::string named = named_case(argc, argv);
    const bool wildcard = named.find_first_of("*?") != std::string::npos;
    if (g_run_ended && !named.empty() && !wildcard && g_names_run.count(named) == 0) {
        std::fprintf(stderr, "the case named by --test-case did not run (another matched in its place), which counts as a failure\n");
        return status != 0 ? status : 1;
    }
    return status;
}

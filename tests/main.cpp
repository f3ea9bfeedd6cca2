// The doctest main of every test binary, with one addition: a run whose filter matched no
// test case fails. CTest runs each case by name, so a name that doctest cannot match
// (CMake splits names at ';') would otherwise be an entry that runs nothing and passes.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

namespace {

unsigned g_cases_run = 0;
bool g_run_ended = false;

struct CaseCounter : doctest::IReporter {
    explicit CaseCounter(const doctest::ContextOptions&) {}
    void report_query(const doctest::QueryData&) override {}
    void test_run_start() override {}
    void test_run_end(const doctest::TestRunStats& stats) override
    {
        g_cases_run = stats.numTestCasesPassingFilters;
        g_run_ended = true;
    }
    void test_case_start(const doctest::TestCaseData&) override {}
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
    return status;
}

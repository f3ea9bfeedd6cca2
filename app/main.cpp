// attnlab: every experiment of the articles on position in self-attention, run on the CPU,
// with each claim turned into a measured check.
//
// Exit status: 0 every checked property holds, 1 a checked property does not hold for the
// configuration asked for (one stderr line names the failed checks), 2 a usage or input error
// or a failed write (one line on stderr, nothing on stdout).
#include "attnlab/core/isa.hpp"
#include "attnlab/core/report.hpp"
#include "attnlab/io/files.hpp"
#include "attnlab/version.hpp"
#include "commands.hpp"
#include "common.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <cstdlib>
#include <new>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <string>
#include <vector>

namespace {

int fail(const std::string& message)
{
    std::string line = message;
    for (char& c : line) {
        if (c == '\n') c = ' ';
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    // Never throws: with stderr closed the line is lost, and the status still says it.
    const std::string text = "attnlab: error: " + line + "\n";
    std::fputs(text.c_str(), stderr);
    return 2;
}

bool has_subcommand(const CLI::App& app, const std::string& name)
{
    for (const auto* sub : app.get_subcommands({})) {
        if (sub->get_name() == name) return true;
    }
    return false;
}

// The command the line names, run: after the kernel's target is checked (attnlab/core/isa.hpp:
// one the CPU lacks is refused, not replaced).
int run_parsed(const attnlab::app::Runners& runners)
{
    if (const std::string problem = attnlab::isa_request_problem(std::getenv("ATTNLAB_ISA"), attnlab::cpu_isas()); !problem.empty())
        return fail(problem);
    for (const auto& [sub, run] : runners)
        if (sub->parsed()) return run();
    return fail("no command ran; see --help");
}

}  // namespace

// glibc raises its mmap threshold each time a large block is freed, up to 32 MB, so the
// tensors of a large run land in the heap, whose freed holes stay resident: the peak memory
// would be the heap's high-water mark, not the tensors alive at once. A fixed threshold keeps
// every block of 1 MB or more (a tensor) in its own mapping, returned to the system when
// freed; the kernels' smaller scratch blocks stay in the heap, reused without page faults.
static void fix_large_allocations()
{
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, 1024 * 1024);
#endif
}

int main(int argc, char** argv)
{
    fix_large_allocations();
    attnlab::install_write_cleanup();
    attnlab::app::guard_standard_streams();
    attnlab::app::set_command_line(argc, argv);
    CLI::App app{"attnlab: how self-attention sees word order, as measured experiments.\n"
                 "Each subcommand prints its tensors with shapes and axis names, then checks "
                 "every claim with a measured figure and a tolerance.",
                 "attnlab"};
    app.set_version_flag("--version", std::string("attnlab ") + attnlab::kVersion);
    app.require_subcommand(1);
    app.option_defaults()->always_capture_default();
    app.footer("Exit status: 0 every checked property holds; 1 a checked property does not hold for the\n"
               "configuration asked for (stderr then says 'attnlab: failed checks: NAME, NAME'); 2 a usage\n"
               "or input error, or output that could not be written (one line on stderr, nothing on stdout).\n"
               "An article's claim measured as wrong is reported, never counted.\n"
               "Run 'attnlab <command> --help' for a command's options.");

    attnlab::app::Runners runners;
    attnlab::app::setup_tour(app, runners);
    // Only the command being run gets its options bound; the others are named for --help.
    attnlab::app::setup_experiments(app, argc > 1 ? argv[1] : "", runners);
    attnlab::app::setup_exercise(app, runners);

    try {
        if (argc > 1 && argv[1][0] != '-' && !has_subcommand(app, argv[1])) {
            std::vector<std::string> names;
            for (const auto* sub : app.get_subcommands({})) names.push_back(sub->get_name());
            return fail(fmt::format("unknown command '{}'; commands: {}", argv[1],
                                    fmt::join(names, ", ")));
        }
        if (argc > 1 && has_subcommand(app, argv[1])) attnlab::app::refuse_loose_lists(*app.get_subcommand(argv[1]), std::vector<std::string>(argv + 2, argv + argc));
        app.parse(argc, argv);
        return run_parsed(runners);
    } catch (const CLI::Success& e) {
        return app.exit(e);  // --help, --version
    } catch (const CLI::ExtrasError& e) {
        // An option the subcommand does not have: name the closest one it does.
        std::string hint;
        for (int i = 2; i < argc && hint.empty() && has_subcommand(app, argv[1]); ++i)
            if (std::string(argv[i]).rfind("--", 0) == 0) hint = attnlab::app::did_you_mean(*app.get_subcommand(argv[1]), argv[i]);
        return fail(std::string(e.what()) + (hint.empty() ? "; see --help" : hint));
    } catch (const CLI::ParseError& e) {
        return fail(std::string(e.what()) + "; see --help");
    } catch (const attnlab::InputError& e) {
        return fail(e.what());
    } catch (const attnlab::OutputError& e) {
        return fail(e.what());
    } catch (const std::bad_alloc&) {
        return fail("out of memory; reduce the sizes or --max-memory");
    } catch (const std::exception& e) {
        return fail(std::string("internal error: ") + e.what());
    }
}

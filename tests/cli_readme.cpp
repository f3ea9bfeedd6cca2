// Every ```console block of README.md is run and compared line for line, so the README can
// only show what the program really prints.
#include "cli_support.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

namespace {

struct Example {
    std::vector<std::string> args;
    std::string expected;
    std::string line;
    int status = 0;  // shown by a following `$ echo $?`; a failed run's stderr line ends its output
};

// Splits on spaces; '...' quotes an argument that holds spaces.
std::vector<std::string> split_args(const std::string& s)
{
    std::vector<std::string> out;
    std::string cur;
    bool quoted = false, any = false;
    for (char c : s) {
        if (c == '\'') {
            quoted = !quoted;
            any = true;
        } else if (c == ' ' && !quoted) {
            if (any) out.push_back(cur);
            cur.clear();
            any = false;
        } else {
            cur += c;
            any = true;
        }
    }
    if (any) out.push_back(cur);
    return out;
}

std::vector<Example> readme_examples()
{
    std::ifstream in(std::string(ATTNLAB_SOURCE_DIR) + "/README.md");
    REQUIRE(in.good());
    std::vector<Example> out;
    std::string line;
    bool in_console = false;
    while (std::getline(in, line)) {
        if (!in_console) {
            in_console = line == "```console";
            continue;
        }
        if (line == "```") {
            in_console = false;
            continue;
        }
        if (line == "$ echo $?") {  // the exit status of the command before, on the next line
            const bool has_status = !out.empty() && static_cast<bool>(std::getline(in, line));
            REQUIRE_MESSAGE(has_status, "$ echo $? without a command or a status");
            out.back().status = std::stoi(line);
            continue;
        }
        if (line.rfind("$ attnlab", 0) == 0) {
            Example ex;
            ex.line = line;
            ex.args = split_args(line.substr(std::string("$ attnlab ").size()));
            out.push_back(ex);
        } else {
            REQUIRE_MESSAGE(!out.empty(), "console block without a command: " << line);
            out.back().expected += line + "\n";
        }
    }
    return out;
}

}  // namespace

TEST_CASE("README console examples print exactly what the README shows")
{
    const auto examples = readme_examples();
    CHECK(examples.size() >= 2);
    for (const auto& ex : examples) {
        CAPTURE(ex.line);
        const auto r = run_cli(ex.args);
        CHECK(r.status == ex.status);
        if (ex.status == 0) CHECK(r.err.empty());
        CHECK(r.out + r.err == ex.expected);
    }
}

// Every ```console block of README.md is run and compared line for line, so the README can
// only show what the program really prints.
#include "cli_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>
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

TEST_CASE("README pictures: each command beside a picture runs as written and draws the file shown")
{
    std::ifstream in(std::string(ATTNLAB_SOURCE_DIR) + "/README.md");
    std::string line;
    std::size_t pictures = 0;
    while (std::getline(in, line)) {
        const auto at = line.find("--plot-file docs/pictures/");
        if (line.rfind("![", 0) != 0 || at == std::string::npos) continue;
        const auto from = line.find("`attnlab ") + 9, to = line.find('`', from);
        REQUIRE(to != std::string::npos);
        auto args = split_args(line.substr(from, to - from));
        const std::string file = args.back(), png = scratch("readme-picture.png");
        CAPTURE(line);
        CHECK(line.find("](" + file + ")") != std::string::npos);  // the command draws the picture shown
        args.back() = png;
        const auto r = run_cli(args);
        CHECK(r.status == 0);
        CHECK(slurp(png).rfind("\x89PNG", 0) == 0);
        CHECK(slurp(std::string(ATTNLAB_SOURCE_DIR) + "/" + file).rfind("\x89PNG", 0) == 0);
        std::remove(png.c_str());
        ++pictures;
    }
    CHECK(pictures == 11);  // one per subcommand but bench
    std::ifstream script(std::string(ATTNLAB_SOURCE_DIR) + "/docs/pictures.sh");
    std::stringstream text;
    text << script.rdbuf();
    CHECK(text.str().find("--plot-file docs/pictures/") != std::string::npos);  // it reads the README's commands
}

namespace {

// The README's options table (a unit test holds it to the registered option rows): each
// command with its flags, in row order.
std::map<std::string, std::vector<std::string>> readme_options()
{
    std::ifstream in(std::string(ATTNLAB_SOURCE_DIR) + "/README.md");
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    const auto a = text.find("<!-- options:begin -->"), b = text.find("<!-- options:end -->");
    REQUIRE(a != std::string::npos);
    REQUIRE(b != std::string::npos);
    std::map<std::string, std::vector<std::string>> out;
    std::stringstream table(text.substr(a, b - a));
    for (std::string line; std::getline(table, line);) {
        if (line.rfind("| `", 0) != 0) continue;
        const auto c1 = line.find('`', 3), f0 = line.find('`', c1 + 1), f1 = line.find('`', f0 + 1);
        out[line.substr(3, c1 - 3)].push_back(line.substr(f0 + 1, f1 - f0 - 1));
    }
    return out;
}

}  // namespace

TEST_CASE("every registered option is in its command's --help and in its JSON params, spelled one way")
{
    const auto options = readme_options();
    // every experiment subcommand of --help (all but tour and exercise) has its rows
    std::size_t listed = 0;
    for (const std::string& command : help_subcommands()) {
        if (command == "tour" || command == "exercise") continue;
        CAPTURE(command);
        CHECK(options.count(command) == 1);
        ++listed;
    }
    REQUIRE(options.size() == listed);
    for (const auto& [command, flags] : options) {
        CAPTURE(command);
        const auto help = run_cli({command, "--help"});
        REQUIRE(help.status == 0);
        std::vector<std::string> args{command, "--quiet", "--format", "json"};
        if (command == "bench") args.insert(args.end(), {"--len", "64", "--heads", "2", "--head-dim", "16", "--repeat", "1"});
        if (command == "train") args.insert(args.end(), {"--steps", "2"});  // the params, not 800 steps of training
        const auto run = run_cli(args);
        REQUIRE(run.status <= 1);
        const auto params = nlohmann::json::parse(run.out)["params"];
        for (const auto& flag : flags) {
            CAPTURE(flag);
            CHECK(help.out.find("  " + flag + " ") != std::string::npos);
            std::string name = flag.substr(2);
            std::replace(name.begin(), name.end(), '-', '_');
            CHECK(params.contains(name));
        }
    }
}

// Every ```console block of README.md and of the manual (docs/*.md) is run and compared line
// for line, so neither can show anything but what the program really prints. The README's
// table of subcommands is --help's list, each row linking to its heading in the manual.
#include "cli_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
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

// README.md, then every page of docs/ in name order: the files whose examples are run.
std::vector<std::string> documents()
{
    std::vector<std::string> out{"README.md"};
    for (const auto& e : std::filesystem::directory_iterator(std::string(ATTNLAB_SOURCE_DIR) + "/docs"))
        if (e.path().extension() == ".md") out.push_back("docs/" + e.path().filename().string());
    std::sort(out.begin() + 1, out.end());
    return out;
}

std::vector<Example> console_examples(const std::string& document)
{
    std::ifstream in(std::string(ATTNLAB_SOURCE_DIR) + "/" + document);
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

TEST_CASE("README and manual console examples print exactly what they show")
{
    const auto docs = documents();
    REQUIRE(docs.size() == 7);  // the README and the manual's six pages
    std::size_t total = 0;
    for (const auto& document : docs) {
        CAPTURE(document);
        const auto examples = console_examples(document);
        // the pages whose examples print the same figures on every machine (the kernel's
        // timings and a class's files are shown as text, not run)
        for (const char* with : {"README.md", "docs/learn.md", "docs/experiments.md", "docs/check.md"})
            if (document == with) CHECK(!examples.empty());
        for (const auto& ex : examples) {
            CAPTURE(ex.line);
            const auto r = run_cli(ex.args);
            CHECK(r.status == ex.status);
            if (ex.status == 0) CHECK(r.err.empty());
            CHECK(r.out + r.err == ex.expected);
        }
        total += examples.size();
    }
    CHECK(total >= 33);
}

TEST_CASE("manual pictures: each command beside a picture runs as written and draws the file shown")
{
    std::ifstream in(std::string(ATTNLAB_SOURCE_DIR) + "/docs/experiments.md");
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
        REQUIRE(file.rfind("docs/", 0) == 0);
        CHECK(line.find("](" + file.substr(5) + ")") != std::string::npos);  // the command draws the picture shown
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
    CHECK(text.str().find("--plot-file docs/pictures/") != std::string::npos);  // it reads the manual's commands
    CHECK(text.str().find("docs/experiments.md") != std::string::npos);
}

namespace {

// The manual's options table (a unit test holds it to the registered option rows): each
// command with its flags, in row order.
std::map<std::string, std::vector<std::string>> readme_options()
{
    std::ifstream in(std::string(ATTNLAB_SOURCE_DIR) + "/docs/experiments.md");
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

namespace {

// The anchor GitHub gives a heading: lower case, spaces as '-', other ASCII punctuation dropped.
std::string anchor_of(const std::string& heading)
{
    std::string out;
    for (unsigned char c : heading) {
        if (std::isalnum(c) || c == '-' || c == '_' || c >= 0x80) out += static_cast<char>(std::tolower(c));
        else if (c == ' ') out += '-';
    }
    return out;
}

std::vector<std::string> heading_anchors(const std::string& document)
{
    std::ifstream in(std::string(ATTNLAB_SOURCE_DIR) + "/" + document);
    std::vector<std::string> out;
    bool code = false;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("```", 0) == 0) code = !code;
        const auto hashes = line.find_first_not_of('#');
        if (!code && hashes != std::string::npos && hashes >= 1 && line[hashes] == ' ') out.push_back(anchor_of(line.substr(hashes + 1)));
    }
    return out;
}

}  // namespace

TEST_CASE("the README's table of subcommands is --help's list, each linking to its heading in the manual")
{
    CHECK(anchor_of("`t5`: T5's relative position buckets") == "t5-t5s-relative-position-buckets");
    CHECK(anchor_of("`grad`: the attention block's backward pass") == "grad-the-attention-blocks-backward-pass");
    const std::string readme = slurp(std::string(ATTNLAB_SOURCE_DIR) + "/README.md");
    const auto a = readme.find("<!-- subcommands:begin -->"), b = readme.find("<!-- subcommands:end -->");
    REQUIRE(a != std::string::npos);
    REQUIRE(b != std::string::npos);
    std::stringstream table(readme.substr(a, b - a));
    // --help's subcommand lines: "  NAME   SUMMARY"
    const std::string top = run_cli({"--help"}).out;
    std::map<std::string, std::string> summary;
    for (const auto& name : help_subcommands()) {
        const auto at = top.find("\n  " + name + " ") + 3 + name.size();
        summary[name] = top.substr(top.find_first_not_of(' ', at), top.find('\n', at) - top.find_first_not_of(' ', at));
    }
    std::vector<std::string> rows;
    for (std::string line; std::getline(table, line);) {
        if (line.rfind("| [`", 0) != 0) continue;
        const auto n1 = line.find('`', 4), l0 = line.find("](", n1) + 2, l1 = line.find(')', l0);
        const std::string name = line.substr(4, n1 - 4), link = line.substr(l0, l1 - l0);
        CAPTURE(line);
        rows.push_back(name);
        REQUIRE(summary.count(name) == 1);
        std::string said = line.substr(l1 + 4, line.size() - l1 - 6);
        for (auto at = said.find("\\|"); at != std::string::npos; at = said.find("\\|", at)) said.erase(at, 1);
        CHECK(said == summary[name]);
        const auto hash = link.find('#');
        REQUIRE(hash != std::string::npos);
        const auto anchors = heading_anchors(link.substr(0, hash));
        CHECK(std::count(anchors.begin(), anchors.end(), link.substr(hash + 1)) == 1);
        CHECK(link.find("#" + anchor_of("`" + name + "`:")) != std::string::npos);  // the heading names the subcommand
    }
    CHECK(rows == help_subcommands());
}

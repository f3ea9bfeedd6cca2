// Files handed to a class: attnlab never writes outside the folder it was given, never leaves
// a half-written file (a full disk, a signal), never replaces the file it grades, and reads
// only regular files (or standard input), echoing none of their bytes raw.
#include "cli_support.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <fstream>
#include <algorithm>
#include <iomanip>
#include <sstream>
#include <string>
#include <thread>

namespace fs = std::filesystem;

namespace {

const std::string& kExe = program();

// A new empty folder for one test; every one made is removed when the test program ends.
std::string fresh(const std::string& tag) { return fresh_dir("cli-files-" + tag); }

// Runs a POSIX shell script in dir, with $A the attnlab program; stdout and stderr captured.
CliResult shell(const std::string& dir, const std::string& script)
{
    std::ofstream(dir + ".sh") << "cd '" << dir << "' || exit 99\nA='" << kExe << "'\n" << script << "\n";
    const int status = std::system(("/bin/sh '" + dir + ".sh' >'" + dir + ".out' 2>'" + dir + ".err'").c_str());
    CliResult r;
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(dir + ".out");
    r.err = slurp(dir + ".err");
    for (const char* ext : {".sh", ".out", ".err"}) fs::remove(dir + ext);  // no leftovers in /tmp
    return r;
}

// Every name under dir, hidden ones included, as paths relative to it.
std::vector<std::string> tree(const std::string& dir)
{
    // Lexically: a file the program renames while this lists it must not make the listing throw
    // (fs::relative looks the path up on disk), nor may an entry that vanishes mid-walk.
    std::vector<std::string> names;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        names.push_back(it->path().lexically_relative(dir).string());
    std::sort(names.begin(), names.end());
    return names;
}

bool has_temporary(const std::string& dir)
{
    for (const auto& name : tree(dir))
        if (name.find(".attnlab-") != std::string::npos) return true;
    return false;
}

}  // namespace

TEST_CASE("files: a link in the folder is replaced, never followed (exercise solve, --save, exercise new --force)")
{
    const std::string dir = fresh("links");
    std::ofstream(dir + "/outside.txt") << "outside";
    REQUIRE(run_cli({"exercise", "new", "attention", dir + "/hw", "--lang", "en"}).status == 0);
    fs::create_symlink("../outside.txt", dir + "/hw/answer.npy");
    CHECK(run_cli({"exercise", "solve", "attention", dir + "/hw", "--force"}).status == 0);
    CHECK(slurp(dir + "/outside.txt") == "outside");
    CHECK(fs::is_regular_file(fs::symlink_status(dir + "/hw/answer.npy")));
    fs::remove(dir + "/hw/answer.npy");
    fs::create_symlink("../created.txt", dir + "/hw/answer.npy");  // dangling: must not create its target
    CHECK(run_cli({"exercise", "solve", "attention", dir + "/hw", "--force"}).status == 0);
    CHECK_FALSE(fs::exists(dir + "/created.txt"));

    fs::create_directory(dir + "/s");
    fs::create_symlink("../outside.txt", dir + "/s/pe.npy");
    CHECK(run_cli({"pe", "--len", "4", "--dim", "4", "--quiet", "--save", dir + "/s"}).status == 0);
    CHECK(slurp(dir + "/outside.txt") == "outside");
    CHECK(fs::is_regular_file(fs::symlink_status(dir + "/s/pe.npy")));

    fs::remove(dir + "/hw/README.md");
    fs::create_symlink("../outside.txt", dir + "/hw/README.md");
    CHECK(run_cli({"exercise", "new", "attention", dir + "/hw", "--force", "--lang", "en"}).status == 0);
    CHECK(slurp(dir + "/outside.txt") == "outside");
    fs::remove_all(dir + "/hw/inputs");
    fs::create_directory(dir + "/elsewhere");
    fs::create_directory_symlink("../elsewhere", dir + "/hw/inputs");
    expect_usage_error({"exercise", "new", "attention", dir + "/hw", "--force"}, "exercise new: cannot write into " + dir + "/hw/inputs: it is a symbolic link");
    CHECK(fs::is_empty(dir + "/elsewhere"));
}

TEST_CASE("files: --save never replaces the file it grades, and replaces the previous run as a set")
{
    const std::string dir = fresh("save");
    REQUIRE(run_cli({"pe", "--len", "4", "--dim", "4", "--quiet", "--save", dir + "/hw"}).status == 0);
    write_npy(dir + "/hw/pe.npy", {4, 4}, std::vector<double>(16, 0.0));  // a wrong answer, to grade
    const std::string wrong = slurp(dir + "/hw/pe.npy");
    expect_usage_error({"pe", "--len", "4", "--dim", "4", "--against", dir + "/hw/pe.npy", "--save", dir + "/hw"},
                       "--save " + dir + "/hw: it would replace " + dir + "/hw/pe.npy, which this run reads; save to another folder");
    CHECK(slurp(dir + "/hw/pe.npy") == wrong);
    CHECK(slurp(dir + "/hw/pe.npy") == wrong);
    REQUIRE(run_cli({"attend", "--len", "4", "--quiet", "--save", dir + "/in"}).status == 0);
    const std::string x = slurp(dir + "/in/x.npy");
    expect_usage_error({"attend", "--len", "4", "--input", "x=" + dir + "/in/x.npy", "--save", dir + "/in"},
                       "it would replace " + dir + "/in/x.npy, which this run reads");
    CHECK(slurp(dir + "/in/x.npy") == x);

    REQUIRE(run_cli({"rope", "--len", "4", "--dim", "4", "--quiet", "--save", dir + "/set"}).status == 0);
    REQUIRE(fs::exists(dir + "/set/cache.npy"));
    std::ofstream(dir + "/set/notes.txt") << "mine";  // not named by run.json: kept
    REQUIRE(run_cli({"pe", "--len", "4", "--dim", "4", "--quiet", "--save", dir + "/set"}).status == 0);
    CHECK(tree(dir + "/set") == std::vector<std::string>{"angle_error.npy", "freq.npy", "notes.txt", "pe.npy", "run.json", "wavelength.npy"});

    std::ofstream(dir + "/outside.npy") << "outside";  // a run.json from elsewhere names a file outside
    std::ofstream(dir + "/set/run.json") << R"({"tensors": [{"file": "../outside.npy"}, {"file": "/etc/hostname"}, {"file": 3}]})";
    REQUIRE(run_cli({"pe", "--len", "4", "--dim", "4", "--quiet", "--save", dir + "/set"}).status == 0);
    CHECK(slurp(dir + "/outside.npy") == "outside");

    expect_usage_error({"pe", "--dim", "3", "--save", dir + "/refused"}, "--dim");
    CHECK_FALSE(fs::exists(dir + "/refused"));  // a refused run makes no folder
}

TEST_CASE("files: a full disk leaves each file whole or absent, and says why (ulimit -f)")
{
    const std::string dir = fresh("full");
    std::ofstream(dir + "/s.keep") << "";
    auto r = shell(dir, "ulimit -f 64; $A attend --len 64 --dim 32 --heads 2 --quiet --save s");
    CHECK(r.status == 2);
    CHECK(count_lines(r.err) == 1);
    CHECK(r.err.find("--save: cannot write s/") != std::string::npos);
    CHECK(r.err.find("File too large") != std::string::npos);
    CHECK_FALSE(has_temporary(dir));
    for (const auto& name : tree(dir + "/s")) {  // what is there is whole: attnlab reads it back
        if (name.size() < 4 || name.substr(name.size() - 4) != ".npy") continue;
        CAPTURE(name);
        CHECK(run_cli({"pe", "--against", dir + "/s/" + name, "--quiet"}).status != 2);
    }
    r = shell(dir, "ulimit -f 2; $A exercise new attention hw --lang en");
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK_FALSE(fs::exists(dir + "/hw"));  // no half-made folder, and a retry is not refused
    CHECK_FALSE(has_temporary(dir));
    CHECK(shell(dir, "$A exercise new attention hw --lang en").status == 0);
    r = shell(dir, "ulimit -f 1; $A pe --len 64 --dim 64 --quiet --plot-file p.png");
    CHECK(r.status == 2);
    CHECK(r.err.find("--plot-file: cannot write ./p.png: File too large") != std::string::npos);
    CHECK_FALSE(fs::exists(dir + "/p.png"));
    CHECK_FALSE(has_temporary(dir));
}

TEST_CASE("files: exercise new with its stdout on /dev/full writes nothing, so a retry works")
{
    const std::string dir = fresh("devfull");
    const auto r = run_cli_io({"exercise", "new", "pe", dir + "/hw"}, Stdout::dev_full);
    CHECK(r.status == 2);
    CHECK_FALSE(fs::exists(dir + "/hw"));
    CHECK(tree(dir).empty());
}

namespace {

// Starts a large --save into dir/s and, once a temporary file exists, stops the program there
// and sends sig. False when the save ended before a temporary was seen (a busy machine). The
// program starts with SIGINT, SIGTERM and SIGHUP at their default disposition, or with `ignored`
// set to SIG_IGN (as nohup leaves SIGHUP, and a shell's background job SIGINT), whatever the
// test runner itself was started with.
bool interrupt_a_save(int sig, const std::string& dir, int& status, int ignored = 0, bool into_earlier = false)
{
    if (!into_earlier) fs::remove_all(dir + "/s");
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        for (int s : {SIGINT, SIGTERM, SIGHUP}) ::signal(s, s == ignored ? SIG_IGN : SIG_DFL);
        const int devnull = ::open("/dev/null", O_WRONLY);
        ::dup2(devnull, 1);
        ::execl(kExe.c_str(), kExe.c_str(), "attend", "--len", "1024", "--dim", "64", "--heads", "8", "--dtype", "float64",
                "--quiet", "--save", (dir + "/s").c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    bool caught = false;
    while (!caught) {
        if (::waitpid(pid, &status, WNOHANG) == pid) return false;
        if (fs::exists(dir + "/s") && has_temporary(dir)) {
            ::kill(pid, SIGSTOP);
            caught = has_temporary(dir);
            if (!caught) ::kill(pid, SIGCONT);
        }
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    ::kill(pid, sig);
    ::kill(pid, SIGCONT);
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    return true;
}

}  // namespace

TEST_CASE("files: SIGINT, SIGTERM or SIGHUP during a large --save leaves no temporary and no partial file")
{
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
        CAPTURE(sig);
        const std::string dir = fresh("signal-" + std::to_string(sig));
        int status = 0, attempts = 0;
        while (!interrupt_a_save(sig, dir, status) && ++attempts < 10) {
        }
        REQUIRE(attempts < 10);  // caught in the middle of a write at least once
        CHECK(WIFSIGNALED(status));
        CHECK(WTERMSIG(status) == sig);
        CHECK_FALSE(has_temporary(dir));
        for (const auto& name : tree(dir + "/s")) {
            if (name.size() < 4 || name.substr(name.size() - 4) != ".npy") continue;
            CAPTURE(name);
            CHECK(run_cli({"pe", "--against", dir + "/s/" + name, "--quiet"}).status != 2);  // read whole: not a cut NPY
        }
    }
}

namespace {

// The files of DIR and the command its run.json names, for telling one saved run from another.
struct SavedSet {
    std::vector<std::string> files;
    std::string command;
};
SavedSet saved_set(const std::string& dir)
{
    SavedSet out{tree(dir), ""};
    const auto j = nlohmann::json::parse(slurp(dir + "/run.json"), nullptr, false);
    if (j.is_object() && j.contains("command")) out.command = j["command"].get<std::string>();
    return out;
}

}  // namespace

TEST_CASE("files: a signal during --save into an earlier run's folder leaves one run's set whole, never a mix")
{
    const std::string dir = fresh("signal-set");
    REQUIRE(run_cli({"pe", "--len", "4", "--dim", "4", "--quiet", "--save", dir + "/s"}).status == 0);
    std::ofstream(dir + "/s/notes.txt") << "mine";  // not the run's: kept either way
    const SavedSet before = saved_set(dir + "/s");
    REQUIRE(before.command == "pe");
    REQUIRE(run_cli({"attend", "--len", "1024", "--dim", "64", "--heads", "8", "--dtype", "float64", "--quiet", "--save", dir + "/whole"}).status == 0);
    std::ofstream(dir + "/whole/notes.txt") << "mine";
    const SavedSet after = saved_set(dir + "/whole");
    int caught = 0;
    for (int attempt = 0; attempt < 6; ++attempt) {
        int status = 0;
        caught += interrupt_a_save(SIGTERM, dir, status, 0, true);
        CHECK_FALSE(has_temporary(dir));
        const SavedSet now = saved_set(dir + "/s");
        CAPTURE(now.command);
        CHECK(((now.files == before.files && now.command == before.command) || (now.files == after.files && now.command == after.command)));
        if (now.command == after.command) {  // the new set went in whole: start again from the old one
            fs::remove_all(dir + "/s");
            REQUIRE(run_cli({"pe", "--len", "4", "--dim", "4", "--quiet", "--save", dir + "/s"}).status == 0);
            std::ofstream(dir + "/s/notes.txt") << "mine";
        }
    }
    CHECK(caught > 0);  // interrupted in the middle at least once
    CHECK(slurp(dir + "/s/notes.txt") == "mine");
    // a folder named through a link stays the link's: the files change, not the link
    fs::create_directory_symlink(dir + "/s", dir + "/via-link");
    REQUIRE(run_cli({"pe", "--len", "4", "--dim", "4", "--quiet", "--save", dir + "/via-link"}).status == 0);
    CHECK(fs::is_symlink(dir + "/via-link"));
    CHECK(saved_set(dir + "/s").command == "pe");
    CHECK_FALSE(has_temporary(dir));
}

TEST_CASE("files: two --save runs into one folder at once leave one run's set, never a mix")
{
    const std::string dir = fresh("two-saves");
    std::vector<std::string> pe_set, rope_set;
    for (int round = 0; round < 4; ++round) {
        fs::remove_all(dir + "/s");
        fs::create_directories(dir + "/s");
        std::ofstream(dir + "/s/notes.txt") << "mine";
        const auto r = shell(dir, "$A pe --len 64 --dim 64 --quiet --save s >/dev/null & $A rope --len 64 --dim 64 --quiet --save s >/dev/null & wait");
        CHECK(r.err.empty());
        const SavedSet now = saved_set(dir + "/s");
        CAPTURE(now.command);
        REQUIRE((now.command == "pe" || now.command == "rope"));
        // the set is exactly what run.json names, and the other file
        const auto j = nlohmann::json::parse(slurp(dir + "/s/run.json"));
        std::vector<std::string> named = {"notes.txt", "run.json"};
        for (const auto& t : j["tensors"]) named.push_back(t["file"].get<std::string>());
        std::sort(named.begin(), named.end());
        CHECK(now.files == named);
    }
}

TEST_CASE("files: under nohup (SIGHUP ignored) a SIGHUP during a large --save changes nothing: the save completes")
{
    const std::string dir = fresh("signal-nohup");
    int status = 0, attempts = 0;
    while (!interrupt_a_save(SIGHUP, dir, status, SIGHUP) && ++attempts < 10) {
    }
    REQUIRE(attempts < 10);  // caught in the middle of a write at least once
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK_FALSE(has_temporary(dir));
    std::size_t files = 0;
    for (const auto& name : tree(dir + "/s")) {
        if (name.size() < 4 || name.substr(name.size() - 4) != ".npy") continue;
        CAPTURE(name);
        ++files;
        CHECK(run_cli({"pe", "--against", dir + "/s/" + name, "--quiet"}).status != 2);  // read whole: not a cut NPY
    }
    CHECK(files > 0);
}

TEST_CASE("files: special files are refused up front, naming what they are, and - reads standard input once")
{
    const std::string dir = fresh("special");
    expect_usage_error({"pe", "--against", dir}, dir + ": cannot be read: it is a directory");
    REQUIRE(::mkfifo((dir + "/fifo").c_str(), 0600) == 0);
    expect_usage_error({"pe", "--against", dir + "/fifo"}, "it is a pipe (FIFO); to read a pipe, give - and send it on standard input");
    expect_usage_error({"pe", "--against", "/dev/zero"}, "/dev/zero: cannot be read: it is a character device");
    REQUIRE(run_cli({"pe", "--len", "4", "--dim", "4", "--format", "csv", "--save", dir}).status == 0);
    auto r = shell(dir, "$A pe --len 4 --dim 4 --format csv > pe.csv && $A pe --len 4 --dim 4 --quiet --against - < pe.csv");
    CHECK(r.status == 0);
    CHECK(r.out.find("MATCH") != std::string::npos);
    r = shell(dir, "$A pe --len 4 --dim 4 --quiet --against - < pe.npy");  // NPY on standard input
    CHECK(r.status == 0);
    r = shell(dir, "cat pe.csv | $A pe --len 4 --dim 4 --quiet --against /dev/stdin");
    CHECK(r.status == 2);
    CHECK(r.err.find("/dev/stdin: cannot be read: it is a pipe (FIFO); to read a pipe, give -") != std::string::npos);
    r = shell(dir, "$A attend --input x=- --input w_q=- < pe.npy");
    CHECK(r.status == 2);
    CHECK(r.err == "attnlab: error: standard input (-) is read once; give - to one file option only\n");
    r = shell(dir, "head -c 3000000 /dev/zero | tr '\\0' 1 | $A pe --quiet --max-memory 0.02 --against -");
    CHECK(r.status == 2);
    CHECK(r.err.find("standard input: more than") != std::string::npos);
    CHECK(r.err.find("is too large for the memory budget (a CSV takes about 10 bytes of memory per byte to read") != std::string::npos);
}

TEST_CASE("files: an error line never echoes a file's bytes raw")
{
    const std::string dir = fresh("echo");
    std::ofstream(dir + "/esc.csv") << "1,2\n3,\x1b]0;owned\x07\x1b[2J\r\n";
    auto r = run_cli({"pe", "--against", dir + "/esc.csv"});
    CHECK(r.status == 2);
    CHECK(r.err.find('\x1b') == std::string::npos);
    CHECK(r.err.find("holds '\\x1b]0;owned\\x07\\x1b[2J', not a number") != std::string::npos);
    std::ofstream(dir + "/big.csv") << "1,2\n3," << std::string(5u << 20, 'y') << "\n";
    r = run_cli({"pe", "--against", dir + "/big.csv"});
    CHECK(r.status == 2);
    CHECK(r.err.size() < 300);
    std::ofstream(dir + "/cr.csv") << "1,2\n3,abc\rdef\n";
    r = run_cli({"pe", "--against", dir + "/cr.csv"});
    CHECK(r.err.find('\r') == std::string::npos);
    CHECK(r.err.find("abc\\x0ddef") != std::string::npos);
}

TEST_CASE("files: pandas' to_csv is read as the matrix it holds, with a note on stderr")
{
    const std::string dir = fresh("pandas");
    const auto pe = run_json({"pe", "--len", "3", "--dim", "4", "--show", "pe"});
    std::ofstream csv(dir + "/pandas.csv");
    csv << ",0,1,2,3\n";
    for (int r = 0; r < 3; ++r) {
        csv << r;
        for (int c = 0; c < 4; ++c) csv << "," << std::setprecision(17) << pe["tensors"][0]["data"][r][c].get<double>();
        csv << "\n";
    }
    csv.close();
    const auto r = run_cli({"pe", "--len", "3", "--dim", "4", "--quiet", "--against", dir + "/pandas.csv"});
    CHECK(r.status == 0);
    CHECK(r.err == "attnlab: note: " + dir + "/pandas.csv: the first column, unnamed and counting 0, 1, 2, ..., is read as pandas' index and dropped\n");
    CHECK(r.out.find("note: " + dir + "/pandas.csv: the first column") != std::string::npos);
}

TEST_CASE("files: a symlinked check.sh grades the answer in the exercise's folder")
{
    const std::string dir = fresh("checklink");
    REQUIRE(run_cli({"exercise", "new", "pe", dir + "/hw", "--lang", "en"}).status == 0);
    REQUIRE(run_cli({"exercise", "solve", "pe", dir + "/hw", "--force"}).status == 0);
    fs::create_directory(dir + "/elsewhere");
    fs::create_symlink("../hw/check.sh", dir + "/elsewhere/check.sh");
    auto r = shell(dir + "/elsewhere", "PATH=\"$(dirname \"$A\"):$PATH\" ./check.sh");
    CHECK(r.status == 0);
    CHECK(r.out.find("MATCH") != std::string::npos);
    // A student's answer.npy that links to the grader's files is refused, not read into the error line.
    fs::remove(dir + "/hw/answer.npy");
    fs::create_symlink("/etc/passwd", dir + "/hw/answer.npy");
    r = shell(dir + "/hw", "PATH=\"$(dirname \"$A\"):$PATH\" ./check.sh");
    CHECK(r.status == 2);
    CHECK(r.err == "check.sh: " + dir + "/hw/answer.npy is a symbolic link; give the file itself\n");
}

TEST_CASE("files: reading a CSV or JSON file stays inside the memory budget, each format's parse cost counted")
{
    const std::string dir = fresh("budget");
    const double budget = 0.25 * 1024 * 1024 * 1024;  // --max-memory 0.25
    // The costliest shapes per byte: one short number a line, and lists nested ten deep.
    struct Case {
        std::string name, unit;
        double cost;
    };
    for (const Case& c : {Case{"col.csv", "0\n", 10.0}, Case{"nested.json", "[[[[[[[[[0]]]]]]]]],", 48.0}}) {
        CAPTURE(c.name);
        const auto write = [&](double bytes) {
            std::ofstream f(dir + "/" + c.name, std::ios::binary);
            const bool json = c.name.find(".json") != std::string::npos;
            if (json) f << "[";
            for (std::size_t n = 0; n < static_cast<std::size_t>(bytes / static_cast<double>(c.unit.size())) - 1; ++n) f << c.unit;
            if (json) f << "[[[[[[[[[0]]]]]]]]]]";
            else f << "0\n";
        };
        write(0.95 * budget / c.cost);
        const auto accepted = run_cli({"pe", "--len", "4", "--dim", "4", "--quiet", "--max-memory", "0.25", "--against", dir + "/" + c.name});
        CHECK(accepted.status == 1);  // read whole, and the wrong shape
        if (!program_sanitized()) CHECK(static_cast<double>(accepted.max_rss_kb) * 1024.0 <= budget);  // ASan's shadow is its own
        write(1.05 * budget / c.cost);
        const auto refused = run_cli({"pe", "--len", "4", "--dim", "4", "--quiet", "--max-memory", "0.25", "--against", dir + "/" + c.name});
        CHECK(refused.status == 2);
        CHECK(refused.err.find("is too large for the memory budget") != std::string::npos);
    }
    fs::remove_all(dir);
}

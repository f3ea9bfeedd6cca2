// exercise grade's parts: the hidden cases drawn for every exercise, the points, the copy of a
// submission folder and the limits a program runs under.
#include "attnlab/exercise/accounting.hpp"
#include "attnlab/exercise/exercise_file.hpp"
#include "attnlab/exercise/grade.hpp"
#include "attnlab/exercise/gradebook.hpp"
#include "attnlab/exercise/program.hpp"

#include "attnlab/io/files.hpp"
#include "process_support.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

using namespace attnlab;
namespace fs = std::filesystem;

namespace {

std::string slurp_log(const std::string& path)
{
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("grade: every exercise draws hidden cases within its size_range, each differing from the visible case")
{
    for (const auto& info : exercise_list()) {
        CAPTURE(info.name);
        REQUIRE(info.size_range.size() == info.sizes.size());
        for (const auto& key : info.sizes) {
            const auto& [lo, hi] = info.size_range.at(key);
            CHECK(lo <= info.defaults.at(key));  // the visible case's default sizes lie in the range
            CHECK(info.defaults.at(key) <= hi);
        }
        const auto cases = grade_cases(info.name, {"visible", false, 3, {}}, 5, {});
        REQUIRE(cases.size() == 6);
        CHECK(cases[0].config.sizes == info.defaults);
        std::set<std::uint64_t> seeds{3};
        for (int i = 1; i <= 5; ++i) {
            const auto& c = cases[static_cast<std::size_t>(i)].config;
            CHECK(c.name == "hidden-" + std::to_string(i));
            CHECK(c.hidden);
            CHECK(c.seed == derived_hidden_seed(3, i));
            seeds.insert(c.seed);
            CHECK(c.sizes != cases[0].config.sizes);
            for (const auto& [key, size] : c.sizes) {
                CHECK(size >= info.size_range.at(key).first);
                CHECK(size <= info.size_range.at(key).second);
            }
        }
        CHECK(seeds.size() == 6);
        // hidden-1 holds the smallest sizes the exercise takes: none of its sizes is above any
        // other hidden case's, except where the exercise refuses the smallest together
        long smallest = 0, others = 1L << 40;
        for (const auto& [key, size] : cases[1].config.sizes) smallest += size;
        for (std::size_t i = 2; i < cases.size(); ++i) {
            long sum = 0;
            for (const auto& [key, size] : cases[i].config.sizes) sum += size;
            others = std::min(others, sum);
        }
        CHECK(smallest <= others);
    }
}

TEST_CASE("grade: the same seeds draw the same cases, and kept seeds replace the derived ones")
{
    const auto a = grade_cases("attention", {"visible", false, 11, {}}, 3, {});
    const auto b = grade_cases("attention", {"visible", false, 11, {}}, 3, {});
    for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i].config.sizes == b[i].config.sizes);
    const auto kept = grade_cases("attention", {"visible", false, 11, {}}, 2, {42, 43});
    CHECK(kept[1].config.seed == 42);
    CHECK(kept[2].config.seed == 43);
    // the smallest sizes of attention at which no mistake is right: at len 1 each softmax is 1
    // whatever its scores, and with one head the head-splitting mistakes are right; so batch 1,
    // len 2, dim 4, heads 2 (not the range's low ends, batch 1, len 1, dim 2, heads 1)
    CHECK(a[1].config.sizes == std::map<std::string, long>{{"batch", 1}, {"len", 2}, {"dim", 4}, {"heads", 2}});
    CHECK(case_command("attention", a[1].config) ==
          "attnlab exercise new attention DIR --seed " + std::to_string(a[1].config.seed) + " --batch 1 --len 2 --dim 4 --heads 2");
    CHECK_THROWS_AS(grade_cases("attention", {"visible", false, 0, {{"dim", 7}}}, 1, {}), InputError);  // 7 is not a multiple of 2 heads
}

TEST_CASE("grade: no free points: in every hidden case of every exercise, over 100 seeds (20 under ASan), every mistake it names is wrong")
{
    const std::uint64_t seeds = static_cast<std::uint64_t>(draws(100, 20));
    for (const auto& info : exercise_list()) {
        CAPTURE(info.name);
        std::set<std::string> named;
        for (const auto& m : make_exercise({info.name, {}, 0, {}}).mistakes) named.insert(m.id);
        int cases = 0;
        for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
            CAPTURE(seed);
            const auto made = grade_cases(info.name, {"visible", false, seed, {}}, seed <= 10 ? 5 : 1, {});
            for (std::size_t i = 1; i < made.size(); ++i, ++cases) {
                std::set<std::string> differ;
                for (const auto& m : made[i].made.mistakes) differ.insert(m.id);
                // each named mistake is offered only where it differs from the answer at float32 precision
                for (const auto& id : named) CHECK_MESSAGE(differ.count(id) == 1, id);
            }
        }
        CHECK(cases == static_cast<int>(10 * 5 + (seeds - 10)));
    }
}

TEST_CASE("grade: at its smallest sizes, an interleaved RoPE is right for dim 2, so the exercise's hidden-1 is larger")
{
    // dim 2 has one pair: (0, 1) in the interleaved pairing and (0, d/2) = (0, 1) in the half one
    const auto low = make_exercise({"rope-half", {{"dim", 2}, {"len", 1}}, 5, {}});
    bool interleaved_offered = false;
    for (const auto& m : low.mistakes) interleaved_offered |= m.id.find("interleaved") != std::string::npos;
    CHECK_FALSE(interleaved_offered);
    const auto cases = grade_cases("rope-half", {"visible", false, 5, {}}, 1, {});
    CHECK(cases[1].config.sizes.at("dim") > 2);
}

TEST_CASE("grade: points per case, from a share of the maximum or from a points file")
{
    const auto cases = grade_cases("causal-mask", {"visible", false, 0, {}}, 3, {});
    GradeSettings s;
    CHECK(case_points(cases, s) == std::vector<double>{1, 1, 1, 1});
    s.max_score = 10;
    CHECK(case_points(cases, s) == std::vector<double>{2.5, 2.5, 2.5, 2.5});
    s.points = parse_points(R"({"visible": 4, "hidden-3": 0.5})", "p.json");
    CHECK(case_points(cases, s) == std::vector<double>{4, 2.5, 2.5, 0.5});
    s.points = {{"hidden-4", 1.0}};
    CHECK_THROWS_AS(case_points(cases, s), InputError);
    CHECK_THROWS_AS(parse_points("[1]", "p.json"), InputError);
    CHECK_THROWS_AS(parse_points(R"({"visible": "1"})", "p.json"), InputError);
    CHECK_THROWS_AS(parse_points(R"({"visible": -2})", "p.json"), InputError);
}

TEST_CASE("grade: a submission is copied without links out of it, special files, its answer or its inputs")
{
    const TempFolder tmp("attnlab-test-copy-");
    const fs::path from = fs::path(tmp.path()) / "sub", to = fs::path(tmp.path()) / "copy";
    fs::create_directories(from / "lib" / "deep");
    fs::create_directories(from / "inputs");
    std::ofstream(from / "starter.py") << "print(1)";
    std::ofstream(from / "lib" / "deep" / "util.py") << "x = 1";
    std::ofstream(from / "answer.npy") << "stale";
    std::ofstream(from / "inputs" / "q.npy") << "tampered";
    std::ofstream(fs::path(tmp.path()) / "secret.txt") << "the grader's";
    fs::create_symlink("../secret.txt", from / "out.txt");
    fs::create_symlink("lib/deep/util.py", from / "in.py");
    fs::create_symlink("lib", from / "linked_dir");
    REQUIRE(mkfifo((from / "pipe").c_str(), 0600) == 0);
    const auto left_out = copy_submission(from.string(), to.string(), {"answer.npy", "inputs"});
    CHECK(std::set<std::string>(left_out.begin(), left_out.end()) == std::set<std::string>{"out.txt", "linked_dir", "pipe"});
    CHECK(fs::is_regular_file(to / "starter.py"));
    CHECK(fs::is_regular_file(to / "lib" / "deep" / "util.py"));
    CHECK(fs::is_regular_file(fs::symlink_status(to / "in.py")));  // a link inside: copied as its file
    CHECK_FALSE(fs::exists(fs::symlink_status(to / "out.txt")));
    CHECK_FALSE(fs::exists(to / "answer.npy"));
    CHECK_FALSE(fs::exists(to / "inputs"));
    CHECK_FALSE(fs::exists(fs::symlink_status(to / "pipe")));
    CHECK_THROWS_AS(copy_submission((from / "starter.py").string(), (fs::path(tmp.path()) / "x").string(), {}), InputError);
    // folders nested more than 32 deep are left out, and named
    fs::path deep = fs::path(tmp.path()) / "nested";
    for (int i = 0; i < 34; ++i) deep /= "d";
    fs::create_directories(deep);
    std::ofstream(deep / "f.py") << "x = 1";
    const auto nested = copy_submission((fs::path(tmp.path()) / "nested").string(), (fs::path(tmp.path()) / "nested-copy").string(), {});
    REQUIRE(nested.size() == 1);
    CHECK(nested[0].size() == 33 * 2 - 1 + std::string("/ (more than 32 folders deep)").size());
    CHECK(nested[0].find("/ (more than 32 folders deep)") != std::string::npos);
}

namespace {

// A sleep's duration that no other test process uses: 31.<this process><n> seconds.
std::string sleep_marker(const std::string& n) { return fmt::format("31.{}{}", getpid(), n); }

// The ways a program can be run here: always without a sandbox, and under bubblewrap where it works.
std::vector<Sandbox> sandboxes()
{
    std::vector<Sandbox> out{Sandbox::none};
    if (bwrap_works()) out.push_back(Sandbox::bwrap);
    else MESSAGE("bubblewrap is not installed or cannot make namespaces here: the bwrap sandbox is not tested");
    return out;
}

// DIR's program run with the answer answer.npy, its log DIR.log and the copied-out answer DIR.answer.
ProgramOutcome run_in(const std::string& command, const std::string& dir, const ProgramLimits& limits)
{
    fs::create_directories(dir);
    return run_program({command, dir, dir + ".log", "answer.npy", dir + ".answer"}, limits);
}

}  // namespace

TEST_CASE("grade: a program's time and memory are limited, and its background children end with it")
{
    for (Sandbox sandbox : sandboxes()) {
        CAPTURE(name_of(sandbox));
        const TempFolder tmp("attnlab-test-run-");
        const std::string dir = tmp.path() + "/run", log = dir + ".log";
        ProgramLimits limits;
        limits.sandbox = sandbox;
        limits.timeout_s = 0.3;
        // a child left in the background is killed with the run
        auto run = run_in("sleep " + sleep_marker("001") + " & while :; do :; done", dir, limits);
        CHECK(run.end == ProgramOutcome::End::timed_out);
        CHECK(run.seconds >= 0.3);
        CHECK_FALSE(process_alive("sleep " + sleep_marker("001")));
        run = run_in("sleep " + sleep_marker("002") + " & echo started; exit 0", dir, limits);
        CHECK(run.end == ProgramOutcome::End::exited);
        CHECK(run.code == 0);
        CHECK(run.output_tail == "started");
        CHECK_FALSE(process_alive("sleep " + sleep_marker("002")));
        // 64 MiB of address space (the shell reports it in KiB) and no core file
        limits.memory_bytes = 64.0 * 1024 * 1024;
        run = run_in("ulimit -v; ulimit -c", dir, limits);
        CHECK(run.code == 0);
        CHECK(slurp_log(log) == "65536\n0\n");
    }
}

TEST_CASE("grade: a double fork into a session of its own outlives neither the run nor a timeout")
{
    for (Sandbox sandbox : sandboxes()) {
        CAPTURE(name_of(sandbox));
        const TempFolder tmp("attnlab-test-daemon-");
        ProgramLimits limits;
        limits.sandbox = sandbox;
        limits.timeout_s = 5;
        // the daemon's parent exits at once: the daemon is nobody's child in the run's group
        auto run = run_in("(setsid sleep " + sleep_marker("003") + " </dev/null >/dev/null 2>&1 &); exit 0", tmp.path() + "/a", limits);
        CHECK(run.end == ProgramOutcome::End::exited);
        CHECK_FALSE(process_alive("sleep " + sleep_marker("003")));
        limits.timeout_s = 0.5;
        run = run_in("(setsid sleep " + sleep_marker("004") + " </dev/null >/dev/null 2>&1 &); sleep 30", tmp.path() + "/b", limits);
        CHECK(run.end == ProgramOutcome::End::timed_out);
        CHECK_FALSE(process_alive("sleep " + sleep_marker("004")));
    }
}

TEST_CASE("grade: memory and disk are limited for all of a run's processes and files together")
{
    if (std::system("python3 -c 1 >/dev/null 2>&1") != 0) {
        MESSAGE("python3 is missing: the memory test needs a program that holds memory");
        return;
    }
    for (Sandbox sandbox : sandboxes()) {
        CAPTURE(name_of(sandbox));
        const TempFolder tmp("attnlab-test-limits-");
        ProgramLimits limits;
        limits.sandbox = sandbox;
        limits.timeout_s = 20;
        limits.memory_bytes = 0.5 * 1024 * 1024 * 1024;
        // three processes of 300 MB each: under the limit one by one, over it together
        const std::string hold = "python3 -c 'import time; b = bytearray(b\"x\") * (300 << 20); time.sleep(30)' &";
        auto run = run_in(hold + hold + hold + " wait", tmp.path() + "/m", limits);
        CHECK(run.end == ProgramOutcome::End::memory_exceeded);
        CHECK(run.peak_bytes > limits.memory_bytes);
        CHECK(run.seconds < 15);
        // three files of 40 MB against 100 MiB of disk: the third cannot be written whole
        limits.disk_bytes = 100.0 * 1024 * 1024;
        run = run_in("for i in 1 2 3; do head -c 40000000 /dev/zero > f$i || exit 9; done; sleep 30", tmp.path() + "/d", limits);
        if (sandbox == Sandbox::bwrap) {
            CHECK(run.end == ProgramOutcome::End::exited);  // the tmpfs is full: the write fails
            CHECK(run.code == 9);
        } else {
            CHECK(run.end == ProgramOutcome::End::disk_exceeded);  // polled
        }
        // the next run has the whole disk again
        run = run_in("head -c 40000000 /dev/zero > f && printf ok > answer.npy", tmp.path() + "/e", limits);
        CHECK(run.end == ProgramOutcome::End::exited);
        CHECK(run.code == 0);
        CHECK(slurp_log(run.answer_path) == "ok");
    }
}

TEST_CASE("grade: memory in memfd files counts against a run's limit, polled and under the grading's cgroup")
{
    if (std::system("python3 -c 1 >/dev/null 2>&1") != 0) {
        MESSAGE("python3 is missing: the memfd test needs a program that holds memory");
        return;
    }
    const double limit_bytes = 0.4 * 1024 * 1024 * 1024;
    // three memfds of 200 MiB, unmapped: no PSS shows them
    const std::string hold = "python3 -c 'import os, time\nfds = [os.memfd_create(\"m\") for _ in range(3)]\n"
                             "for fd in fds: os.write(fd, b\"x\" * (200 << 20))\ntime.sleep(30)'";
    for (Sandbox sandbox : sandboxes()) {
        for (const bool hosted : {false, true}) {
            CAPTURE(name_of(sandbox));
            CAPTURE(hosted);
            std::optional<RunHost> host;
            ProgramLimits limits;
            if (hosted) limits.host = &host.emplace(AccountLimits{limit_bytes, 256}, 1);
            limits.sandbox = sandbox;
            limits.timeout_s = 20;
            limits.memory_bytes = limit_bytes;
            const TempFolder tmp("attnlab-test-memfd-", TempFolder::Reach::others);
            const auto run = run_in(hold, tmp.path() + "/m", limits);
            CHECK(run.end == ProgramOutcome::End::memory_exceeded);
            CHECK(run.seconds < 15);
        }
    }
}

TEST_CASE("grade: under the grading's cgroup or a uid of its own, a fork bomb stops at the process cap")
{
    const RunHost host(AccountLimits{2.0 * 1024 * 1024 * 1024, 32}, 1);
    if (host.accounting() == Accounting::polled && !host.own_uids()) {
        MESSAGE("no cgroup can be made here and the tests do not run as root: nothing caps a run's processes");
        return;
    }
    for (Sandbox sandbox : sandboxes()) {
        CAPTURE(name_of(sandbox));
        ProgramLimits limits;
        limits.sandbox = sandbox;
        limits.host = &host;
        limits.processes = 32;
        limits.timeout_s = 20;
        const TempFolder tmp("attnlab-test-forks-", TempFolder::Reach::others);
        const auto run = run_in("i=0; while [ $i -lt 100 ]; do sleep " + sleep_marker("005") + " & i=$((i+1)); done; echo all forked", tmp.path() + "/f", limits);
        const std::string log = slurp_log(tmp.path() + "/f.log");
        CAPTURE(log);
        CHECK(log.find("all forked") == std::string::npos);
        CHECK(log.find("fork") != std::string::npos);  // dash: "Cannot fork"
        CHECK(run.code != 0);
        if (host.accounting() != Accounting::polled) CHECK(run.process_cap);
        CHECK_FALSE(process_alive("sleep " + sleep_marker("005")));
    }
}

TEST_CASE("grade: a root grader runs each program as a uid of its own, which reads no root-only file")
{
    if (geteuid() != 0) {
        MESSAGE("the tests do not run as root: runs have the grader's uid, as the gradebook says");
        return;
    }
    const RunHost host(AccountLimits{2.0 * 1024 * 1024 * 1024, 256}, 2);
    CHECK(host.own_uids());
    CHECK(host.text(Lang::en).find("each run as a uid and gid of its own") != std::string::npos);
    const std::string secret = "/var/tmp/attnlab-test-root-only-" + std::to_string(getpid());
    std::ofstream(secret) << "root's";
    ::chmod(secret.c_str(), 0600);
    for (Sandbox sandbox : sandboxes()) {
        CAPTURE(name_of(sandbox));
        ProgramLimits limits;
        limits.sandbox = sandbox;
        limits.host = &host;
        const TempFolder tmp("attnlab-test-uid-", TempFolder::Reach::others);
        const auto run = run_in("id -u > answer.npy; cat /etc/shadow >/dev/null 2>&1 && echo read /etc/shadow; cat " + secret +
                                    " >/dev/null 2>&1 && echo read the secret; exit 0",
                                tmp.path() + "/u", limits);
        CHECK(run.code == 0);
        const std::string uid = slurp_log(run.answer_path);
        CAPTURE(uid);
        const auto number = std::stoull(uid);
        CHECK(number >= kUidBase);
        CHECK(number < std::uint64_t{kUidBase} + 65536ull * kUidsPerGrading);
        CHECK(slurp_log(tmp.path() + "/u.log").find("read") == std::string::npos);
    }
    fs::remove(secret);
}

TEST_CASE("grade: the answer a run leaves is found: a regular file, something else, or nothing")
{
    for (Sandbox sandbox : sandboxes()) {
        CAPTURE(name_of(sandbox));
        const TempFolder tmp("attnlab-test-answer-");
        ProgramLimits limits;
        limits.sandbox = sandbox;
        auto run = run_in("printf 'NUMPY' > answer.npy", tmp.path() + "/a", limits);
        CHECK(run.answer == ProgramOutcome::Answer::regular);
        CHECK(slurp_log(run.answer_path) == "NUMPY");
        run = run_in("ln -s /etc/passwd answer.npy", tmp.path() + "/b", limits);
        CHECK(run.answer == ProgramOutcome::Answer::other);
        run = run_in("mkdir answer.npy", tmp.path() + "/c", limits);
        CHECK(run.answer == ProgramOutcome::Answer::other);
        run = run_in("true", tmp.path() + "/d", limits);
        CHECK(run.answer == ProgramOutcome::Answer::absent);
    }
}

TEST_CASE("grade: under bubblewrap a run sees its own copy, its own processes and no network, not the grader's files")
{
    if (!bwrap_works()) {
        MESSAGE("bubblewrap is not installed or cannot make namespaces here");
        return;
    }
    const TempFolder tmp("attnlab-test-bwrap-");
    std::ofstream(tmp.path() + "/secret.txt") << "the grader's";
    fs::create_directories(tmp.path() + "/run");
    std::ofstream(tmp.path() + "/run/mine.txt") << "mine";
    ProgramLimits limits;
    limits.sandbox = Sandbox::bwrap;
    const std::string probe = fmt::format(
        "[ -f mine.txt ] || exit 3; [ ! -e {0}/secret.txt ] || exit 4; [ \"$(ls /proc | grep -c '^[0-9]')\" -le 6 ] || exit 5; "
        "[ \"$(grep -c ':' /proc/net/dev)\" -le 1 ] || exit 6; touch /usr/x 2>/dev/null && exit 7; echo hi > /tmp/t && [ -f /tmp/t ] || exit 8; "
        "[ ! -e /proc/{1} ] || [ \"$(cat /proc/{1}/comm)\" != \"$(cat /proc/self/comm)\" ] || exit 9",
        tmp.path(), getpid());
    const auto run = run_program({probe, tmp.path() + "/run", tmp.path() + "/log", "answer.npy", tmp.path() + "/answer"}, limits);
    CAPTURE(slurp_log(tmp.path() + "/log"));
    CHECK(run.end == ProgramOutcome::End::exited);
    CHECK(run.code == 0);
}

TEST_CASE("grade: text from a submission is valid UTF-8 in every gradebook, and names stay one line")
{
    CHECK(valid_utf8("plain") == "plain");
    CHECK(valid_utf8("\xe4\xb8\xad\xe6\x96\x87") == "\xe4\xb8\xad\xe6\x96\x87");  // 中文
    CHECK(valid_utf8("a\xff" "b") == "a\xef\xbf\xbd" "b");
    CHECK(valid_utf8("\xe4\xb8") == "\xef\xbf\xbd\xef\xbf\xbd");  // a character cut short
    CHECK(valid_utf8("\xc0\xaf") == "\xef\xbf\xbd\xef\xbf\xbd");  // an overlong '/'
    CHECK(valid_utf8("\xed\xa0\x80") == "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // a surrogate
    CHECK(valid_utf8("\xf4\x90\x80\x80").find("\xf4") == std::string::npos);  // past U+10FFFF
    // an excerpt cuts at a character's boundary: 60 three-byte characters kept to at most 10 bytes and "..."
    std::string han;
    for (int i = 0; i < 60; ++i) han += "\xe4\xb8\xad";
    const std::string cut = excerpt(han, 10);
    CHECK(cut == "\xe4\xb8\xad\xe4\xb8\xad\xe4\xb8\xad\xe4\xb8\xad...");
    CHECK(valid_utf8(cut) == cut);
    CHECK(excerpt("line\nforged") == "line\\x0aforged");
    CHECK(excerpt("\xc2\x9b" "31m") == "\\u009b31m");  // a C1 control (CSI)
    CHECK(csv_text_cell("=HYPERLINK(\"http://x\")") == "\"'=HYPERLINK(\"\"http://x\"\")\"");
    for (const char* lead : {"+1", "-1", "@SUM(A1)"}) CHECK(csv_text_cell(lead).find('\'') != std::string::npos);
    CHECK(csv_text_cell("\tx") == "\\x09x");  // no tab or carriage return reaches a cell: escaped
    CHECK(csv_text_cell("a;=1+1") == "\"a;'=1+1\"");
    CHECK(csv_text_cell("a|@x") == "\"a|'@x\"");
    CHECK(csv_text_cell("a,+1") == "\"a,'+1\"");
    CHECK(csv_text_cell("alice") == "alice");
    CHECK(excerpt("a\xe2\x80\xae" "b\xe2\x80\xa8" "c\xe2\x81\xa6" "d") == "a\\u202eb\\u2028c\\u2066d");
}

TEST_CASE("grade: CSV cells are quoted as RFC 4180 says")
{
    CHECK(csv_cell("plain") == "plain");
    CHECK(csv_cell("a,b") == "\"a,b\"");
    CHECK(csv_cell("say \"hi\"") == "\"say \"\"hi\"\"\"");
    CHECK(csv_cell("two\nlines") == "\"two\nlines\"");
}

// exercise grade with submissions written as shell scripts (no Python needed): each verdict a
// program can earn without numpy, the limits it runs under, points, the teacher's grading
// file and the usage errors. tests/python/exercise_grade.py grades Python submissions.
#include "cli_support.hpp"
#include "process_support.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <string>
#include <thread>

namespace fs = std::filesystem;

namespace {

// DIR/NAME holding run.sh with BODY; the grader runs it as `sh run.sh`.
std::string submission(const std::string& dir, const std::string& name, const std::string& body)
{
    const std::string folder = dir + "/" + name;
    fs::create_directories(folder);
    std::ofstream(folder + "/run.sh") << body << "\n";
    return folder;
}

std::string grade_dir(const std::string& tag) { return fresh_dir("cli-grade-" + tag); }

// The names in DIR, sorted.
std::vector<std::string> tree_names(const std::string& dir)
{
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

std::vector<std::string> verdicts(const nlohmann::json& sub)
{
    std::vector<std::string> out;
    for (const auto& c : sub["cases"]) out.push_back(c["verdict"]);
    return out;
}

}  // namespace

TEST_CASE("exercise grade: crash, timeout, missing and unreadable answers each get their verdict and 0 points")
{
    const std::string dir = grade_dir("verdicts");
    const std::vector<std::string> subs = {
        submission(dir, "crash", "echo 'half done' >&2; exit 3"),
        submission(dir, "killed", "kill -9 $$"),
        submission(dir, "loop", "while :; do :; done"),
        submission(dir, "silent", "true"),
        submission(dir, "garbage", "printf 'not an npy file' > answer.npy"),
        submission(dir, "link", "ln -s /etc/passwd answer.npy"),
        // no standard input (read meets end of file at once) and none of the grader's environment
        submission(dir, "sealed", "if read line; then exit 5; fi; [ -z \"$ATTNLAB_GRADER_SECRET\" ] || exit 6; [ -n \"$PATH\" ] || exit 7"),
    };
    std::vector<std::string> args = {"exercise", "grade", "causal-mask"};
    args.insert(args.end(), subs.begin(), subs.end());
    for (const char* a : {"--run", "sh run.sh", "--hidden", "2", "--timeout", "0.5", "--format", "json", "--jobs", "2"}) args.emplace_back(a);
    const auto r = run_cli(args, {"ATTNLAB_GRADER_SECRET=1"});
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["submissions"].size() == subs.size());
    const std::vector<std::vector<std::string>> expected = {
        {"crash", "crash", "crash"}, {"crash", "crash", "crash"}, {"timeout", "timeout", "timeout"}, {"missing", "missing", "missing"},
        {"unreadable", "unreadable", "unreadable"}, {"unreadable", "unreadable", "unreadable"}, {"missing", "missing", "missing"}};
    for (std::size_t i = 0; i < subs.size(); ++i) {
        CAPTURE(subs[i]);
        CHECK(j["submissions"][i]["path"] == subs[i]);
        CHECK(verdicts(j["submissions"][i]) == expected[i]);
        CHECK(j["submissions"][i]["score"] == 0);
        CHECK(j["submissions"][i]["max_score"] == 3);
    }
    CHECK(j["submissions"][0]["cases"][0]["detail"] == "exit status 3; last output line: half done");
    CHECK(j["submissions"][1]["cases"][0]["detail"] == "killed by signal 9 (Killed)");
    CHECK(j["submissions"][2]["cases"][0]["detail"] == "still running after 0.5 s, killed");
    CHECK(j["submissions"][3]["cases"][0]["detail"] == "the program ended without writing answer.npy");
    CHECK(j["submissions"][5]["cases"][0]["detail"] == "answer.npy is not a regular file");
    CHECK(j["submissions"][4]["cases"][0]["detail"].get<std::string>().find("answer.npy") != std::string::npos);
    // the smallest failing case is searched for from hidden-1 (already the smallest: no run)
    CHECK(j["submissions"][0]["smallest_failing"]["command"] == "attnlab exercise new causal-mask DIR --seed " +
                                                                     std::to_string(j["submissions"][0]["cases"][1]["config"]["seed"].get<std::uint64_t>()) +
                                                                     " --len 1");
    CHECK(j["submissions"][2]["smallest_failing"].is_null());  // a timeout is not searched: each run would take the full time
}

TEST_CASE("exercise grade: right only at the visible size, with points from a file and a maximum score")
{
    const std::string dir = grade_dir("points");
    // The student's folder keeps exercise.json (the visible case's seed and sizes): solving that
    // is right at the visible case and nowhere else.
    REQUIRE(run_cli({"exercise", "new", "causal-mask", dir + "/visible", "--len", "6"}).status == 0);
    REQUIRE(run_cli({"exercise", "solve", "causal-mask", dir + "/visible"}).status == 0);
    std::ofstream(dir + "/visible/run.sh") << "cp solution/answer.npy answer.npy\n";
    std::ofstream(dir + "/points.json") << R"({"visible": 4})";
    const auto j = run_json({"exercise", "grade", "causal-mask", dir + "/visible", "--len", "6", "--run", "sh run.sh", "--hidden", "2",
                             "--max-score", "6", "--points", dir + "/points.json"});
    const auto& sub = j["submissions"][0];
    CHECK(verdicts(sub) == std::vector<std::string>{"match", "wrong_shape", "wrong_shape"});
    CHECK(sub["cases"][0]["points"] == 4);
    CHECK(sub["cases"][0]["max_points"] == 4);
    CHECK(sub["cases"][1]["max_points"] == 2);  // 6 shared by 3 cases; the file sets the visible one's
    CHECK(sub["score"] == 4);
    CHECK(sub["max_score"] == 8);
    CHECK(sub["cases"][1]["detail"] == "shape [6, 6], expected [2, 2]");
    CHECK(sub["cases"][1]["config"]["len"] == 2);  // hidden-1: the smallest size where no mistake is right (a 1x1 mask is 0 either way)
    CHECK(sub["cases"][2]["config"]["len"] != 6);  // every hidden case differs from the visible one
    const auto csv = run_cli({"exercise", "grade", "causal-mask", dir + "/visible", "--len", "6", "--run", "sh run.sh", "--hidden", "2",
                              "--max-score", "6", "--points", dir + "/points.json", "--format", "csv"});
    CHECK(csv.out == "submission,score,max_score,visible,hidden-1,hidden-2,visible_verdict,hidden-1_verdict,hidden-2_verdict\n" + dir +
                         "/visible,4,8,4,0,0,match,wrong_shape,wrong_shape\n");
    const auto zh = run_cli({"exercise", "grade", "causal-mask", dir + "/visible", "--len", "6", "--run", "sh run.sh", "--hidden", "1", "--lang", "zh"});
    CHECK(zh.out.find("提交") != std::string::npos);
    CHECK(zh.out.find("hidden-1: 形状不对（wrong_shape）") != std::string::npos);  // a hidden case: its verdict only
}

TEST_CASE("exercise new --hidden-seeds keeps the hidden cases' seeds beside the folder, for exercise grade --grading")
{
    const std::string dir = grade_dir("seeds");
    const auto made = run_cli({"exercise", "new", "causal-mask", dir + "/hw", "--seed", "9", "--hidden-seeds", "--lang", "en"});
    REQUIRE(made.status == 0);
    CHECK(made.out.find("the hidden cases' seeds are only in " + dir + "/hw.grading.json") != std::string::npos);
    const auto file = nlohmann::json::parse(slurp(dir + "/hw.grading.json"));
    CHECK(file["exercise"] == "causal-mask");
    CHECK(file["seed"] == 9);
    REQUIRE(file["hidden_seeds"].size() == 10);
    for (const auto& entry : fs::recursive_directory_iterator(dir + "/hw"))  // nothing in the folder tells them
        for (const auto& seed : file["hidden_seeds"]) CHECK(slurp(entry.path().string()).find(std::to_string(seed.get<std::uint64_t>())) == std::string::npos);
    submission(dir, "silent", "true");
    const auto j = run_json({"exercise", "grade", "causal-mask", dir + "/silent", "--run", "sh run.sh", "--hidden", "3", "--grading", dir + "/hw.grading.json"});
    const auto& cases = j["submissions"][0]["cases"];
    CHECK(cases[0]["config"]["seed"] == 9);
    for (int i = 1; i <= 3; ++i) CHECK(cases[i]["config"]["seed"] == file["hidden_seeds"][i - 1]);
    expect_usage_error({"exercise", "grade", "causal-mask", dir + "/silent", "--hidden", "11", "--grading", dir + "/hw.grading.json"},
                       "--hidden 11: " + dir + "/hw.grading.json keeps 10 hidden seeds");
    expect_usage_error({"exercise", "grade", "causal-mask", dir + "/silent", "--seed", "3", "--grading", dir + "/hw.grading.json"},
                       "--grading FILE sets the seed and sizes");
    expect_usage_error({"exercise", "grade", "pe", dir + "/silent", "--grading", dir + "/hw.grading.json"},
                       "is the grading file of exercise 'causal-mask', not pe");
}

TEST_CASE("exercise grade: usage errors are refused before any program runs, exit 2 with one line")
{
    const std::string dir = grade_dir("usage");
    const std::string sub = submission(dir, "a", "touch ran");
    const std::string other = submission(dir + "/x", "a", "touch ran");
    expect_usage_error({"exercise", "grade", "causal-mask", dir + "/missing"}, "not a folder (a submission is the folder that holds the student's program)");
    expect_usage_error({"exercise", "grade", "nope", sub}, "no exercise 'nope'");
    for (const char* memory : {"1e11", "1e308", "1e-9", "nan"})
        expect_usage_error({"exercise", "grade", "causal-mask", sub, "--memory", memory}, "--memory: must lie in 0.01..1024 GiB (got '" + std::string(memory) + "')");
    expect_usage_error({"exercise", "grade", "causal-mask", sub, "--timeout", "1e308"}, "--timeout: must lie in 0.01..86400 seconds");
    expect_usage_error({"exercise", "grade", "causal-mask", sub, "--disk", "0"}, "--disk: must lie in 0.001..1024 GiB");
    expect_usage_error({"exercise", "grade", "causal-mask", sub, "--cpu-time", "0"}, "--cpu-time: must lie in 0.01..86400 seconds");
    for (const char* processes : {"7", "65537", "1.5"})
        expect_usage_error({"exercise", "grade", "causal-mask", sub, "--processes", processes}, "--processes");
    expect_usage_error({"exercise", "grade", "causal-mask", sub, "--sandbox", "docker"}, "--sandbox");
    expect_usage_error({"exercise", "grade", "causal-mask", sub, sub + "/..", "--format", "gradescope"}, "give --out DIR");
    expect_usage_error({"exercise", "grade", "causal-mask", sub, other, "--format", "prairielearn"}, "--format prairielearn grades one submission");
    expect_usage_error({"exercise", "grade", "causal-mask", sub, other, "--format", "gradescope", "--out", dir + "/o"}, "two submissions are named");
    expect_usage_error({"exercise", "grade", "causal-mask", sub, "--python", dir + "/no-python"}, "--python " + dir + "/no-python: not an executable file");
    std::ofstream(dir + "/points.json") << R"({"hidden-9": 1})";
    expect_usage_error({"exercise", "grade", "causal-mask", sub, "--points", dir + "/points.json"}, "--points: there is no case \"hidden-9\"");
    std::ofstream(dir + "/bad.json") << R"({"visible": -1})";
    expect_usage_error({"exercise", "grade", "causal-mask", sub, "--points", dir + "/bad.json"}, "the points of \"visible\" are not a number >= 0");
    expect_usage_error({"exercise", "grade", "causal-mask", sub, "--len", "2000"}, "--len 2000 is outside 1..1024");
    CHECK_FALSE(fs::exists(sub + "/ran"));  // the program itself is never run in place
}

TEST_CASE("exercise grade: the gradebook is the same for any --jobs, in argument order")
{
    const std::string dir = grade_dir("jobs");
    std::vector<std::string> args = {"exercise", "grade", "causal-mask"};
    for (int i = 0; i < 6; ++i)  // exit statuses 0..5: missing, then crashes with their own status
        args.push_back(submission(dir, "s" + std::to_string(i), "sleep 0.0" + std::to_string(5 - i) + "; exit " + std::to_string(i)));
    for (const char* a : {"--run", "sh run.sh", "--hidden", "2"}) args.emplace_back(a);
    auto strip_times = [](nlohmann::json j) {
        for (auto& s : j["submissions"]) {
            s.erase("time_s");
            for (auto& c : s["cases"]) c.erase("time_s");
        }
        return j;
    };
    auto one = args, four = args;
    one.insert(one.end(), {"--jobs", "1"});
    four.insert(four.end(), {"--jobs", "4"});
    const auto a = strip_times(run_json(one)), b = strip_times(run_json(four));
    CHECK(a == b);
    REQUIRE(a["submissions"].size() == 6);
    CHECK(a["submissions"][0]["cases"][0]["verdict"] == "missing");
    for (int i = 1; i < 6; ++i) CHECK(a["submissions"][i]["cases"][2]["detail"] == "exit status " + std::to_string(i));
}

TEST_CASE("exercise grade --isolate: no network inside, or a plain refusal where the machine cannot")
{
    const std::string dir = grade_dir("isolate");
    // in a network namespace of its own a program sees the loopback interface alone
    const std::string sub = submission(dir, "net", "[ \"$(grep -c ':' /proc/net/dev)\" -le 1 ] || exit 8");
    const auto r = run_cli({"exercise", "grade", "causal-mask", sub, "--run", "sh run.sh", "--hidden", "0", "--isolate", "--format", "json"});
    if (r.status == 2) {
        CHECK(r.out.empty());
        CHECK(r.err.find("--isolate needs root or unprivileged user namespaces") != std::string::npos);
        return;
    }
    REQUIRE(r.status == 0);
    CHECK(nlohmann::json::parse(r.out)["submissions"][0]["cases"][0]["verdict"] == "missing");  // not crash: exit 8 never ran
}

TEST_CASE("exercise grade --format gradescope: one submission to stdout, several to DIR/NAME/results.json")
{
    const std::string dir = grade_dir("gradescope");
    const std::string a = submission(dir, "alice", "exit 1"), b = submission(dir, "bob", "true");
    const auto one = run_cli({"exercise", "grade", "causal-mask", a, "--run", "sh run.sh", "--hidden", "1", "--format", "gradescope"});
    REQUIRE(one.status == 0);
    const auto j = nlohmann::json::parse(one.out);
    CHECK(j["score"] == 0);
    CHECK(j["execution_time"].is_number());
    REQUIRE(j["tests"].size() == 2);
    CHECK(j["tests"][0]["name"] == "visible");
    CHECK(j["tests"][0]["max_score"] == 1);
    CHECK(j["tests"][0]["status"] == "failed");
    CHECK(j["tests"][0]["output"].get<std::string>().rfind("visible (seed 0, len 6): crash: exit status 1", 0) == 0);
    // a folder named with a trailing slash, as a shell glob gives it, keeps its name
    const auto several = run_cli({"exercise", "grade", "causal-mask", a + "/", b, "--run", "sh run.sh", "--hidden", "1", "--format", "gradescope",
                                  "--out", dir + "/results"});
    REQUIRE(several.status == 0);
    CHECK(several.out == "wrote " + dir + "/results/grades.txt, grades.csv, grades.json, junit.xml and gradescope/NAME/results.json for 2 submissions\n");
    const auto alice = nlohmann::json::parse(slurp(dir + "/results/gradescope/alice/results.json"));
    CHECK(alice["tests"][1]["name"] == "hidden-1");
    CHECK(alice["tests"][1]["visibility"] == "after_published");
    CHECK(alice["tests"][1]["output"] == "hidden-1: crash");  // no seed, sizes or command of a hidden case
    CHECK(alice["tests"][0]["visibility"] == "visible");
    CHECK(alice["output"] == "");
    CHECK(nlohmann::json::parse(slurp(dir + "/results/gradescope/bob/results.json"))["tests"][0]["output"].get<std::string>().find("missing") != std::string::npos);
    // the other formats from the same grading
    const auto book = nlohmann::json::parse(slurp(dir + "/results/grades.json"));
    CHECK(book["submissions"][1]["cases"][0]["verdict"] == "missing");
    CHECK(slurp(dir + "/results/grades.csv").rfind("submission,score,max_score,visible,hidden-1", 0) == 0);
    CHECK(slurp(dir + "/results/junit.xml").find("<testsuites") != std::string::npos);
    CHECK(slurp(dir + "/results/grades.txt").find("hidden-1: crash") != std::string::npos);
    REQUIRE(run_cli({"exercise", "new", "causal-mask", dir + "/hw/", "--hidden-seeds"}).status == 0);
    CHECK(fs::is_regular_file(dir + "/hw.grading.json"));
}

namespace {

bool has_xmllint() { return std::system("xmllint --version >/dev/null 2>&1") == 0; }

}  // namespace

TEST_CASE("exercise grade: output that is not UTF-8 and hostile folder names leave every format parseable")
{
    const std::string dir = grade_dir("utf8");
    // a Chinese traceback line longer than the excerpt (cut in a character), raw bytes, a terminal escape
    std::string han;
    for (int i = 0; i < 80; ++i) han += "\xe9\x94\x99";  // 错
    const std::vector<std::string> subs = {
        submission(dir, "traceback", "printf '" + han + "\\n' >&2; exit 1"),
        submission(dir, "bytes", "printf 'bad \\377\\376 \\033[31m red\\n'; exit 1"),
        submission(dir, "name\xff" "x", "exit 1"),
        submission(dir, "=HYPERLINK(\"http:,x\")", "exit 1"),
        submission(dir, "two\nlines", "exit 1"),
    };
    fs::create_directories(subs[1] + "/bad\xfe" "dir");
    std::ofstream(subs[1] + "/bad\xfe" "dir/f") << "x";
    if (::mkfifo((subs[1] + "/pipe\xfe").c_str(), 0600) != 0) FAIL("mkfifo");
    std::vector<std::string> args = {"exercise", "grade", "causal-mask"};
    args.insert(args.end(), subs.begin(), subs.end());
    for (const char* a : {"--run", "sh run.sh", "--hidden", "1", "--out", ""}) args.emplace_back(a);
    args.back() = dir + "/out";
    const auto r = run_cli(args);
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    const auto j = nlohmann::json::parse(slurp(dir + "/out/grades.json"));  // strict: it refuses bytes that are not UTF-8
    REQUIRE(j["submissions"].size() == subs.size());
    const std::string detail = j["submissions"][0]["cases"][0]["detail"];
    CHECK(detail.rfind("exit status 1; last output line: \xe9\x94\x99", 0) == 0);
    CHECK(detail.size() < 220);
    CHECK(detail.substr(detail.size() - 3) == "...");
    CHECK(j["submissions"][1]["cases"][0]["detail"] == "exit status 1; last output line: bad \xef\xbf\xbd\xef\xbf\xbd \\x1b[31m red");
    CHECK(j["submissions"][2]["path"] == dir + "/name\xef\xbf\xbdx");
    for (const auto& sub : subs) {
        const std::string name = fs::path(sub).filename().string();
        CHECK(nlohmann::json::parse(slurp(dir + "/out/gradescope/" + name + "/results.json"))["score"] == 0);
    }
    // CSV: the formula is text, behind a quote
    const std::string csv = slurp(dir + "/out/grades.csv");
    CHECK(csv.find("\"" + dir + "/=HYPERLINK(\"\"http:,x\"\")\"") != std::string::npos);
    // text: every name on one line
    const std::string text = slurp(dir + "/out/grades.txt");
    CHECK(text.find(dir + "/two\\x0alines") != std::string::npos);
    CHECK(text.find("\nlines") == std::string::npos);
    if (has_xmllint()) CHECK(std::system(("xmllint --noout '" + dir + "/out/junit.xml'").c_str()) == 0);
    else MESSAGE("xmllint is missing (Debian: libxml2-utils): junit.xml not parsed");
    // what was not copied is named in valid UTF-8
    const auto not_copied = j["submissions"][1]["not_copied"];
    CHECK(not_copied.size() == 1);
    CHECK(not_copied[0] == "pipe\xef\xbf\xbd");
}

TEST_CASE("exercise grade: names with separators, tabs, bidirectional and line-separator characters are data in every format")
{
    const std::string dir = grade_dir("names");
    const std::string rlo = "\xe2\x80\xae", ls = "\xe2\x80\xa8";  // U+202E, U+2028
    const std::vector<std::string> subs = {
        submission(dir, "x;=1+1", "exit 1"),
        submission(dir, "tab\tname", "exit 1"),
        submission(dir, "evil" + rlo + "txt.exe", "printf 'esc \\033[31m and " + rlo + " and " + ls + " end\\n'; exit 1"),
    };
    std::vector<std::string> args = {"exercise", "grade", "causal-mask"};
    args.insert(args.end(), subs.begin(), subs.end());
    for (const char* a : {"--run", "sh run.sh", "--hidden", "0", "--out", ""}) args.emplace_back(a);
    args.back() = dir + "/out";
    const auto r = run_cli(args);
    REQUIRE(r.status == 0);
    const std::string csv = slurp(dir + "/out/grades.csv");
    // after a separator a spreadsheet may split on, a formula character is text, and the cell is quoted
    CHECK(csv.find("\"" + dir + "/x;'=1+1\",0,1,0,crash\n") != std::string::npos);
    CHECK(csv.find(dir + "/tab\\x09name,0,1,0,crash\n") != std::string::npos);
    CHECK(csv.find(rlo) == std::string::npos);
    const std::string text = slurp(dir + "/out/grades.txt");
    CHECK(text.find(rlo) == std::string::npos);
    CHECK(text.find(ls) == std::string::npos);
    CHECK(text.find(dir + "/evil\\u202etxt.exe") != std::string::npos);
    // the program's output escaped once: \x1b, not \\x1b
    CHECK(text.find("last output line: esc \\x1b[31m and \\u202e and \\u2028 end") != std::string::npos);
    const std::string gradescope = slurp(dir + "/out/gradescope/evil" + rlo + "txt.exe/results.json");
    CHECK(gradescope.find(rlo) == std::string::npos);
    CHECK(gradescope.find(ls) == std::string::npos);
    CHECK(nlohmann::json::parse(gradescope)["score"] == 0);
}

namespace {

// A gradebook's JSON without its timings, for comparing gradings.
nlohmann::json untimed(nlohmann::json j)
{
    for (auto& sub : j["submissions"]) {
        sub.erase("time_s");
        for (auto& c : sub["cases"]) c.erase("time_s");
    }
    return j;
}

}  // namespace

TEST_CASE("exercise grade --shard and exercise merge: the parts of a class make the gradebook of one run, and a wrong set of parts is refused")
{
    const std::string dir = grade_dir("shards");
    REQUIRE(run_cli({"exercise", "new", "causal-mask", dir + "/hw", "--seed", "3"}).status == 0);
    REQUIRE(run_cli({"exercise", "solve", "causal-mask", dir + "/hw"}).status == 0);
    std::vector<std::string> subs;
    for (const char* name : {"eve", "alice", "dave", "bob", "carol"}) {
        subs.push_back(submission(dir + "/subs", name, std::string("[ -f saved.npy ] && cp saved.npy answer.npy; exit ") + (name[0] == 'e' ? "1" : "0")));
        fs::copy_file(dir + "/hw/solution/answer.npy", subs.back() + "/saved.npy");  // right at the visible size only
    }
    const std::vector<std::string> common = {"--seed", "3", "--run", "sh run.sh", "--hidden", "2"};
    const auto grade = [&](std::vector<std::string> extra, const std::vector<std::string>& env = {}) {
        std::vector<std::string> args = {"exercise", "grade", "causal-mask"};
        args.insert(args.end(), subs.begin(), subs.end());
        args.insert(args.end(), common.begin(), common.end());
        args.insert(args.end(), extra.begin(), extra.end());
        return run_cli(args, env);
    };
    // 5 submissions in 3 shards, from the sorted paths: alice | bob, carol | dave, eve
    for (int i = 0; i < 3; ++i) REQUIRE(grade({"--shard", std::to_string(i) + "/3", "--out", dir + "/parts"}).status == 0);
    const auto part = nlohmann::json::parse(slurp(dir + "/parts/part-1-of-3.json"));
    CHECK(part["submissions"] == nlohmann::json::array({dir + "/subs/bob", dir + "/subs/carol"}));
    CHECK(part["class_size"] == 5);
    CHECK(part["shard"] == nlohmann::json({{"index", 1}, {"count", 3}}));
    const std::vector<std::string> parts = {dir + "/parts/part-2-of-3.json", dir + "/parts/part-0-of-3.json", dir + "/parts/part-1-of-3.json"};
    std::vector<std::string> merge = {"exercise", "merge"};
    merge.insert(merge.end(), parts.begin(), parts.end());
    auto merged = merge;
    merged.insert(merged.end(), {"--format", "json"});
    const auto from_parts = run_cli(merged);
    REQUIRE(from_parts.status == 0);
    // one run over the sorted submissions
    std::vector<std::string> sorted = subs;
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::string> one = {"exercise", "grade", "causal-mask"};
    one.insert(one.end(), sorted.begin(), sorted.end());
    one.insert(one.end(), common.begin(), common.end());
    auto one_json = one;
    one_json.insert(one_json.end(), {"--format", "json"});
    const auto whole = run_cli(one_json);
    REQUIRE(whole.status == 0);
    CHECK(untimed(nlohmann::json::parse(from_parts.out)) == untimed(nlohmann::json::parse(whole.out)));
    for (const char* format : {"text", "csv"}) {
        auto m = merge, w = one;
        m.insert(m.end(), {"--format", format});
        w.insert(w.end(), {"--format", format});
        CHECK(run_cli(m).out == run_cli(w).out);
    }
    // the Slurm and Kubernetes variables name the shard; a rerun replaces its part
    REQUIRE(grade({"--shard", "auto", "--out", dir + "/parts"}, {"SLURM_ARRAY_TASK_ID=5", "SLURM_ARRAY_TASK_MIN=4", "SLURM_ARRAY_TASK_COUNT=3"}).status == 0);
    REQUIRE(grade({"--shard", "auto/3", "--out", dir + "/parts"}, {"JOB_COMPLETION_INDEX=2"}).status == 0);
    CHECK(tree_names(dir + "/parts") == std::vector<std::string>{"part-0-of-3.json", "part-1-of-3.json", "part-2-of-3.json"});
    CHECK(run_cli(merged).status == 0);
    // refusals, each naming the file
    expect_usage_error({"exercise", "merge", parts[1], parts[0]}, "the parts lack shard 1 of 3");
    expect_usage_error({"exercise", "merge", parts[0], parts[1], parts[2], parts[2]}, parts[2] + ": shard 1 is given twice");
    const auto other = grade({"--shard", "2/3", "--timeout", "7"});  // another limit: another grading
    REQUIRE(other.status == 0);
    std::ofstream(dir + "/other-grading.json") << other.out;
    expect_usage_error({"exercise", "merge", parts[1], parts[2], dir + "/other-grading.json"}, dir + "/other-grading.json: graded otherwise than");
    auto twice = nlohmann::json::parse(slurp(parts[1]));  // shard 0's part, with bob in it too
    auto moved = nlohmann::json::parse(slurp(dir + "/parts/part-1-of-3.json"));
    twice["gradebook"]["submissions"].push_back(moved["gradebook"]["submissions"][0]);
    std::ofstream(dir + "/twice.json") << twice.dump();
    expect_usage_error({"exercise", "merge", dir + "/twice.json", dir + "/parts/part-1-of-3.json", parts[0]}, "/subs/bob is also in");
    std::ofstream(dir + "/not-a-part.json") << R"({"exercise": "causal-mask"})";
    expect_usage_error({"exercise", "merge", dir + "/not-a-part.json"}, dir + "/not-a-part.json: not a part of `exercise grade --shard`");
    for (const char* bad : {"3/3", "1", "-1/3", "a/b", "0/0"}) expect_usage_error({"exercise", "grade", "causal-mask", subs[0], "--shard", bad}, "--shard");
    expect_usage_error({"exercise", "grade", "causal-mask", subs[0], "--shard", "auto"}, "--shard auto: SLURM_ARRAY_TASK_COUNT is not set");
    expect_usage_error({"exercise", "grade", "causal-mask", subs[0], "--shard", "0/2", "--format", "csv"}, "give --format to the merge");
    expect_usage_error({"exercise", "grade", "causal-mask", subs[0], "--shard", "0/2", "--hidden-detail", "verdict"},
                       "--shard writes a part for exercise merge; give --teacher-report, --show-hidden and --hidden-detail to the merge");
}

TEST_CASE("exercise grade: a folder whose name starts with = lands in the CSV as text, not a formula")
{
    const std::string dir = grade_dir("formula");
    submission(dir, "=1+2", "exit 1");
    const int status = std::system(("cd '" + dir + "' && '" + program() + "' exercise grade causal-mask =1+2 --run 'sh run.sh' --hidden 0 --format csv > out.csv").c_str());
    REQUIRE(status == 0);
    CHECK(slurp(dir + "/out.csv").find("\n'=1+2,0,1,0,crash\n") != std::string::npos);
}

TEST_CASE("exercise grade: hidden cases show their name, verdict, matched mistake and exception line, never their seed, except to the teacher")
{
    const std::string dir = grade_dir("hidden");
    const std::string sub = submission(dir, "alice", "exit 4");
    const std::vector<std::string> base = {"exercise", "grade", "causal-mask", sub, "--run", "sh run.sh", "--hidden", "2", "--seed", "5"};
    auto with = [&](std::vector<std::string> extra) {
        auto a = base;
        a.insert(a.end(), extra.begin(), extra.end());
        return run_cli(a);
    };
    const auto j = run_json(base);
    const std::string seed1 = std::to_string(j["submissions"][0]["cases"][1]["config"]["seed"].get<std::uint64_t>());
    CHECK(j["submissions"][0]["smallest_failing"]["command"].get<std::string>().find("--seed " + seed1) != std::string::npos);  // JSON: the teacher's
    for (const char* format : {"text", "csv", "junit", "gradescope"}) {
        CAPTURE(format);
        const auto r = with({"--format", format});
        REQUIRE(r.status == 0);
        CHECK(r.out.find(seed1) == std::string::npos);
        CHECK(r.out.find("exercise new") == std::string::npos);
    }
    const auto text = with({"--teacher-report", dir + "/teacher.txt"});
    CHECK(text.out.find("  hidden-1: crash\n") != std::string::npos);
    CHECK(text.out.find("  visible (seed 5, len 6): crash: exit status 4\n") != std::string::npos);
    const std::string teacher = slurp(dir + "/teacher.txt");
    CHECK(teacher.find("hidden-1 (seed " + seed1) != std::string::npos);
    CHECK(teacher.find("smallest failing case") != std::string::npos);
    CHECK(with({"--show-hidden"}).out.find("hidden-1 (seed " + seed1) != std::string::npos);
    // a crash shows its exception line to the student; --hidden-detail verdict shows the verdict alone
    const std::string bob = submission(dir, "bob", "echo 'Traceback (most recent call last):'; echo 'ValueError: not done' >&2; exit 1");
    const auto crash = run_cli({"exercise", "grade", "causal-mask", bob, "--run", "sh run.sh", "--hidden", "1", "--seed", "5"});
    CHECK(crash.out.find("  hidden-1: crash: ValueError: not done\n") != std::string::npos);
    CHECK(crash.out.find(seed1) == std::string::npos);
    const auto terse = run_cli({"exercise", "grade", "causal-mask", bob, "--run", "sh run.sh", "--hidden", "1", "--seed", "5", "--hidden-detail", "verdict"});
    CHECK(terse.out.find("  hidden-1: crash\n") != std::string::npos);
    const auto scope = run_cli({"exercise", "grade", "causal-mask", bob, "--run", "sh run.sh", "--hidden", "1", "--seed", "5", "--format", "gradescope"});
    CHECK(scope.out.find("\"output\": \"hidden-1: crash: ValueError: not done\"") != std::string::npos);
    expect_usage_error({"exercise", "grade", "causal-mask", bob, "--hidden-detail", "sizes"}, "--hidden-detail");
}

TEST_CASE("exercise grade: a crash keeps the last lines of stdout and of stderr apart, shown for the visible case and to the teacher")
{
    const std::string dir = grade_dir("tails");
    // 12 lines on stdout, then a traceback on stderr: the stdout before it is kept, its last 10 lines
    const std::string sub = submission(dir, "carol",
                                       "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo \"step $i\"; done; "
                                       "echo 'Traceback (most recent call last):' >&2; echo 'KeyError: dim' >&2; exit 1");
    const std::vector<std::string> base = {"exercise", "grade", "causal-mask", sub, "--run", "sh run.sh", "--hidden", "1", "--seed", "5"};
    const auto j = run_json(base);
    const auto& visible = j["submissions"][0]["cases"][0];
    CHECK(visible["last_line"] == "KeyError: dim");  // stderr's last line, not stdout's
    CHECK(visible["stdout_tail"].size() == 10);
    CHECK(visible["stdout_tail"][0] == "step 3");
    CHECK(visible["stdout_tail"][9] == "step 12");
    CHECK(visible["stderr_tail"] == nlohmann::json::array({"Traceback (most recent call last):", "KeyError: dim"}));
    CHECK(j["submissions"][0]["cases"][1]["stdout_tail"].size() == 10);  // the teacher's JSON has the hidden case's too
    const auto text = run_cli(base);
    CHECK(text.out.find("  visible (seed 5, len 6): crash: exit status 1; last output line: KeyError: dim\n"
                        "    stdout, last 10 lines:\n      step 3\n") != std::string::npos);
    CHECK(text.out.find("      step 12\n    stderr, last 2 lines:\n      Traceback (most recent call last):\n      KeyError: dim\n  hidden-1: crash: KeyError: dim\n")
          != std::string::npos);
    CHECK(text.out.find("step 2\n") == std::string::npos);
    auto scope_args = base;
    scope_args.insert(scope_args.end(), {"--format", "gradescope"});
    const auto scope = nlohmann::json::parse(run_cli(scope_args).out);
    CHECK(scope["tests"][0]["output"].get<std::string>().find("stdout, last 10 lines:\n  step 3\n") != std::string::npos);
    CHECK(scope["tests"][1]["output"] == "hidden-1: crash: KeyError: dim");  // a hidden case's output stays hidden
    // a program that wrote nothing has no output lines; a timeout keeps them too
    const std::string quiet = submission(dir, "dave", "exit 3");
    CHECK(run_json({"exercise", "grade", "causal-mask", quiet, "--run", "sh run.sh", "--hidden", "0"})["submissions"][0]["cases"][0]["stdout_tail"].empty());
    const std::string looping = submission(dir, "erin", "echo started; while :; do :; done");
    const auto slow = run_json({"exercise", "grade", "causal-mask", looping, "--run", "sh run.sh", "--hidden", "0", "--timeout", "0.3"});
    CHECK(slow["submissions"][0]["cases"][0]["verdict"] == "timeout");
    CHECK(slow["submissions"][0]["cases"][0]["stdout_tail"] == nlohmann::json::array({"started"}));
}

TEST_CASE("exercise grade: an answer stored as float16 is wrong, not judged at float16's tolerance")
{
    const std::string dir = grade_dir("float16");
    // the causal mask of len 6 (0 and -inf), which float16 holds exactly
    std::vector<double> mask;
    for (int i = 0; i < 6; ++i)
        for (int k = 0; k < 6; ++k) mask.push_back(k <= i ? 0.0 : -INFINITY);
    const std::string half = submission(dir, "half", "cp answer16.npy answer.npy"), full = submission(dir, "full", "cp answer64.npy answer.npy");
    write_npy(half + "/answer16.npy", {6, 6}, mask, NpyFloat::half);
    write_npy(full + "/answer64.npy", {6, 6}, mask);
    const auto j = run_json({"exercise", "grade", "causal-mask", half, full, "--run", "sh run.sh", "--hidden", "0"});
    CHECK(j["submissions"][0]["cases"][0]["verdict"] == "differs");
    CHECK(j["submissions"][0]["cases"][0]["detail"] == "stored as float16; this exercise is judged at float32");
    CHECK(j["submissions"][1]["cases"][0]["verdict"] == "match");
    // check.sh of the same exercise says what the grading says, by the same comparison (--judged-at)
    REQUIRE(run_cli({"exercise", "new", "causal-mask", dir + "/hw", "--lang", "en"}).status == 0);
    CHECK(slurp(dir + "/hw/check.sh").find(" --judged-at float32 ") != std::string::npos);
    const std::string path = fs::path(ATTNLAB_EXE).parent_path().string();
    const auto check = [&](const std::string& file) {
        const std::string command = "PATH='" + path + "':\"$PATH\" sh '" + dir + "/hw/check.sh' '" + file + "' > '" + dir + "/check.out' 2>&1";
        const int status = std::system(command.c_str());
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    };
    CHECK(check(half + "/answer16.npy") == 1);
    CHECK(slurp(dir + "/check.out").find("stored as float16; this exercise is judged at float32: save the answer as float32 or float64") != std::string::npos);
    CHECK(check(full + "/answer64.npy") == 0);
    // the option alone: a float16 file judged at float16 storage matches, as before
    const std::vector<std::string> plain{"mask", "--kind", "causal", "--len", "6", "--quiet", "--against", half + "/answer16.npy"};
    CHECK(run_cli(plain).status == 0);
    std::vector<std::string> judged = plain;
    judged.insert(judged.end(), {"--judged-at", "float32"});
    const auto refused = run_cli(judged);
    CHECK(refused.status == 1);
    CHECK(refused.out.find("DIFFERS max |diff| = 0; 0 of 36 elements differ; stored_below\n") != std::string::npos);
    CHECK(refused.err == "attnlab: failed checks: against (" + half + "/answer16.npy, tensor mask)\n");
    judged.back() = "float16";
    CHECK(run_cli(judged).status == 0);
    expect_usage_error({"mask", "--kind", "causal", "--judged-at", "float32"}, "--judged-at says how --against judges a file; give --against FILE");
}

TEST_CASE("exercise grade: an interpreter without numpy is refused before any grading, exit 2 naming it")
{
    if (std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0) {
        MESSAGE("numpy is missing: no interpreter with and without it to compare");
        return;
    }
    const std::string dir = grade_dir("python");
    fs::create_directories(dir + "/env/bin");
    // python3 without its site packages: no numpy
    std::ofstream(dir + "/env/bin/python3") << "#!/bin/sh\nexec /usr/bin/python3 -S -I \"$@\"\n";
    fs::permissions(dir + "/env/bin/python3", fs::perms::owner_all);
    const std::string sub = submission(dir, "a", "touch ran");
    expect_usage_error({"exercise", "grade", "causal-mask", sub, "--python", dir + "/env/bin/python3"},
                       "--python " + dir + "/env/bin/python3 cannot import numpy");
    CHECK_FALSE(fs::exists(sub + "/ran"));
    const auto ok = run_cli({"exercise", "grade", "causal-mask", sub, "--python", "/usr/bin/python3", "--run", "sh run.sh", "--hidden", "0"});
    CHECK(ok.status == 0);
}

TEST_CASE("exercise grade: SIGTERM to the grader ends every run, a double-forked daemon too, and leaves no temporary folder")
{
    for (const char* sandbox : {"none", "auto"}) {
        CAPTURE(sandbox);
        const std::string dir = grade_dir(std::string("sigterm-") + sandbox), tmp = dir + "/tmp";
        fs::create_directories(tmp);
        // a duration that no other test process uses
        const std::string marker = "31." + std::to_string(::getpid()) + (sandbox[0] == 'n' ? "71" : "72");
        const std::string sub = submission(dir, "daemon", "(setsid sleep " + marker + " </dev/null >/dev/null 2>&1 &); sleep " + marker);
        const std::string& exe = program();
        const pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            const int devnull = ::open("/dev/null", O_WRONLY);
            ::dup2(devnull, 1);
            ::dup2(devnull, 2);
            ::setenv("TMPDIR", tmp.c_str(), 1);
            ::execl(exe.c_str(), exe.c_str(), "exercise", "grade", "causal-mask", sub.c_str(), "--run", "sh run.sh", "--hidden", "0", "--sandbox",
                    sandbox, static_cast<char*>(nullptr));
            ::_exit(127);
        }
        int waited = 0;
        while (!process_alive("sleep " + marker) && waited++ < 200) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        REQUIRE(waited < 200);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the daemon too
        ::kill(pid, SIGTERM);
        int status = 0;
        REQUIRE(::waitpid(pid, &status, 0) == pid);
        CHECK(WIFSIGNALED(status));
        CHECK(WTERMSIG(status) == SIGTERM);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        CHECK_FALSE(process_alive("sleep " + marker));
        CHECK(fs::is_empty(tmp));
    }
}

// exercise grade with submissions written as shell scripts (no Python needed): each verdict a
// program can earn without numpy, the limits it runs under, points, the teacher's grading
// file and the usage errors. tests/python/exercise_grade.py grades Python submissions.
#include "cli_support.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

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

std::string fresh(const std::string& tag)
{
    const std::string dir = scratch("cli-grade-" + tag);
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

// A submission that runs attnlab itself: under the sanitizers it reserves terabytes of address
// space for its shadow memory, which the default limit of 2 GiB refuses.
const char* const kAttnlabChildMemory = ATTNLAB_PROGRAM_SANITIZED ? "100000" : "2";

std::vector<std::string> verdicts(const nlohmann::json& sub)
{
    std::vector<std::string> out;
    for (const auto& c : sub["cases"]) out.push_back(c["verdict"]);
    return out;
}

}  // namespace

TEST_CASE("exercise grade: crash, timeout, missing and unreadable answers each get their verdict and 0 points")
{
    const std::string dir = fresh("verdicts");
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
    const std::string dir = fresh("points");
    // The student's folder keeps exercise.json (the visible case's seed and sizes): solving that
    // is right at the visible case and nowhere else.
    REQUIRE(run_cli({"exercise", "new", "causal-mask", dir + "/visible", "--len", "6"}).status == 0);
    std::ofstream(dir + "/visible/run.sh") << "'" << ATTNLAB_EXE << "' exercise solve causal-mask . --force\n";
    std::ofstream(dir + "/points.json") << R"({"visible": 4})";
    const auto j = run_json({"exercise", "grade", "causal-mask", dir + "/visible", "--len", "6", "--run", "sh run.sh", "--hidden", "2",
                             "--max-score", "6", "--points", dir + "/points.json", "--memory", kAttnlabChildMemory});
    const auto& sub = j["submissions"][0];
    CHECK(verdicts(sub) == std::vector<std::string>{"match", "wrong_shape", "wrong_shape"});
    CHECK(sub["cases"][0]["points"] == 4);
    CHECK(sub["cases"][0]["max_points"] == 4);
    CHECK(sub["cases"][1]["max_points"] == 2);  // 6 shared by 3 cases; the file sets the visible one's
    CHECK(sub["score"] == 4);
    CHECK(sub["max_score"] == 8);
    CHECK(sub["cases"][1]["detail"] == "shape [6, 6], expected [1, 1]");
    CHECK(sub["cases"][1]["config"]["len"] == 1);  // hidden-1: the smallest size
    CHECK(sub["cases"][2]["config"]["len"] != 6);  // every hidden case differs from the visible one
    const auto csv = run_cli({"exercise", "grade", "causal-mask", dir + "/visible", "--len", "6", "--run", "sh run.sh", "--hidden", "2",
                              "--max-score", "6", "--points", dir + "/points.json", "--format", "csv", "--memory", kAttnlabChildMemory});
    CHECK(csv.out == "submission,score,max_score,visible,hidden-1,hidden-2,visible_verdict,hidden-1_verdict,hidden-2_verdict\n" + dir +
                         "/visible,4,8,4,0,0,match,wrong_shape,wrong_shape\n");
    const auto zh = run_cli({"exercise", "grade", "causal-mask", dir + "/visible", "--len", "6", "--run", "sh run.sh", "--hidden", "1", "--lang", "zh",
                             "--memory", kAttnlabChildMemory});
    CHECK(zh.out.find("提交") != std::string::npos);
    CHECK(zh.out.find("形状不对（wrong_shape）") != std::string::npos);
}

TEST_CASE("exercise new --hidden-seeds keeps the hidden cases' seeds beside the folder, for exercise grade --grading")
{
    const std::string dir = fresh("seeds");
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
    const std::string dir = fresh("usage");
    const std::string sub = submission(dir, "a", "touch ran");
    const std::string other = submission(dir + "/x", "a", "touch ran");
    expect_usage_error({"exercise", "grade", "causal-mask", dir + "/missing"}, "not a folder (a submission is the folder that holds the student's program)");
    expect_usage_error({"exercise", "grade", "nope", sub}, "no exercise 'nope'");
    expect_usage_error({"exercise", "grade", "causal-mask", sub, "--out", dir + "/o"}, "--out DIR goes with --format gradescope");
    expect_usage_error({"exercise", "grade", "causal-mask", sub, sub + "/..", "--format", "gradescope"}, "give --out DIR");
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
    const std::string dir = fresh("jobs");
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
    const std::string dir = fresh("isolate");
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
    const std::string dir = fresh("gradescope");
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
    CHECK(several.out == "wrote " + dir + "/results/NAME/results.json for 2 submissions\n");
    CHECK(nlohmann::json::parse(slurp(dir + "/results/alice/results.json"))["tests"][1]["name"] == "hidden-1");
    CHECK(nlohmann::json::parse(slurp(dir + "/results/bob/results.json"))["tests"][0]["output"].get<std::string>().find("missing") != std::string::npos);
    REQUIRE(run_cli({"exercise", "new", "causal-mask", dir + "/hw/", "--hidden-seeds"}).status == 0);
    CHECK(fs::is_regular_file(dir + "/hw.grading.json"));
}

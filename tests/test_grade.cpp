// exercise grade's parts: the hidden cases drawn for every exercise, the points, the copy of a
// submission folder and the limits a program runs under.
#include "attnlab/exercise/exercise_file.hpp"
#include "attnlab/exercise/grade.hpp"
#include "attnlab/exercise/gradebook.hpp"
#include "attnlab/exercise/program.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
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
    // the smallest sizes of attention: batch 1, len 1, dim 2, heads 1
    CHECK(a[1].config.sizes == std::map<std::string, long>{{"batch", 1}, {"len", 1}, {"dim", 2}, {"heads", 1}});
    CHECK(case_command("attention", a[1].config) ==
          "attnlab exercise new attention DIR --seed " + std::to_string(a[1].config.seed) + " --batch 1 --len 1 --dim 2 --heads 1");
    CHECK_THROWS_AS(grade_cases("attention", {"visible", false, 0, {{"dim", 7}}}, 1, {}), InputError);  // 7 is not a multiple of 2 heads
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
}

TEST_CASE("grade: a program's time and memory are limited, and its background children end with it")
{
    const TempFolder tmp("attnlab-test-run-");
    const std::string log = tmp.path() + "/log";
    ProgramLimits limits;
    limits.timeout_s = 0.3;
    // a child left in the background is killed with the group (it would create `late` after 1 s)
    auto run = run_program("(sleep 1; touch late) & while :; do :; done", tmp.path(), log, limits);
    CHECK(run.end == ProgramOutcome::End::timed_out);
    CHECK(run.seconds >= 0.3);
    run = run_program("(sleep 1; touch late2) & echo started; exit 0", tmp.path(), log, limits);
    CHECK(run.end == ProgramOutcome::End::exited);
    CHECK(run.code == 0);
    CHECK(run.output_tail == "started");
    usleep(1500000);  // past the background children's second
    CHECK_FALSE(fs::exists(tmp.path() + "/late"));
    CHECK_FALSE(fs::exists(tmp.path() + "/late2"));
    // 64 MiB of address space (the shell reports it in KiB) and no core file
    limits.memory_bytes = 64.0 * 1024 * 1024;
    run = run_program("ulimit -v; ulimit -c", tmp.path(), log, limits);
    CHECK(run.code == 0);
    CHECK(slurp_log(log) == "65536\n0\n");
    run = run_program("echo ok", tmp.path() + "/missing", log, limits);
    CHECK(run.code == 127);
}

TEST_CASE("grade: CSV cells are quoted as RFC 4180 says")
{
    CHECK(csv_cell("plain") == "plain");
    CHECK(csv_cell("a,b") == "\"a,b\"");
    CHECK(csv_cell("say \"hi\"") == "\"say \"\"hi\"\"\"");
    CHECK(csv_cell("two\nlines") == "\"two\nlines\"");
}

// exercise new --roster and exercise grade with its grading file: a folder per student, each
// graded on their own cases; the refusals, exit 2 with one line.
#include "cli_support.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

namespace fs = std::filesystem;

namespace {

// DIR/NAME holding run.sh with BODY; the grader runs it as `sh run.sh`.
std::string program(const std::string& dir, const std::string& name, const std::string& body)
{
    const std::string folder = dir + "/" + name;
    fs::create_directories(folder);
    std::ofstream(folder + "/run.sh") << body << "\n";
    return folder;
}

std::vector<std::string> grade(const std::string& grading, std::vector<std::string> subs, const std::vector<std::string>& extra = {})
{
    std::vector<std::string> args{"exercise", "grade", "rope-interleaved"};
    args.insert(args.end(), subs.begin(), subs.end());
    for (const char* a : {"--run", "sh run.sh", "--hidden", "1", "--sandbox", "none", "--timeout", "5"}) args.push_back(a);
    args.push_back("--grading");
    args.push_back(grading);
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
}

}  // namespace

TEST_CASE("exercise new --roster: a folder per student, each its own seed and sizes, the secret only in the grading file")
{
    const std::string dir = fresh_dir("cli-roster-new");
    std::ofstream(dir + "/roster.csv") << "ann\nbo\ncy\n";
    const auto made = run_cli({"exercise", "new", "rope-interleaved", dir + "/hw", "--roster", dir + "/roster.csv", "--lang", "en"});
    REQUIRE(made.status == 0);
    CHECK(made.out.find("a folder for each of 3 students (" + dir + "/hw/ID/)") != std::string::npos);
    CHECK(made.out.find("3 different reference answers\n") != std::string::npos);
    const auto grading = nlohmann::json::parse(slurp(dir + "/hw.grading.json"));
    CHECK(grading["variants"]["students"] == nlohmann::json{"ann", "bo", "cy"});
    const std::string secret = grading["variants"]["secret"];
    CHECK(secret.size() == 32);
    std::set<std::uint64_t> seeds;
    for (const char* id : {"ann", "bo", "cy"}) {
        const auto file = nlohmann::json::parse(slurp(dir + "/hw/" + id + "/exercise.json"));
        seeds.insert(file["seed"].get<std::uint64_t>());
        for (const auto& entry : fs::recursive_directory_iterator(dir + "/hw/" + id)) {
            if (entry.is_regular_file()) CHECK(slurp(entry.path().string()).find(secret) == std::string::npos);
        }
    }
    CHECK(seeds.size() == 3);
    // another class from the same roster: other secrets, other seeds
    REQUIRE(run_cli({"exercise", "new", "rope-interleaved", dir + "/hw2", "--roster", dir + "/roster.csv", "--len", "5"}).status == 0);
    CHECK(nlohmann::json::parse(slurp(dir + "/hw2.grading.json"))["variants"]["secret"] != secret);
    CHECK(nlohmann::json::parse(slurp(dir + "/hw2/bo/exercise.json"))["sizes"]["len"] == 5);

    expect_usage_error({"exercise", "new", "rope-interleaved", dir + "/a", "--roster", dir + "/roster.csv", "--seed", "4"}, "give it without --seed");
    expect_usage_error({"exercise", "new", "rope-interleaved", dir + "/a", "--roster", dir + "/roster.csv", "--platform", "gradescope"},
                       "--platform grades one exercise for the whole class");
    expect_usage_error({"exercise", "new", "rope-interleaved", dir + "/a", "--roster-column", "id"}, "--roster-column names a column of --roster FILE");
    expect_usage_error({"exercise", "new", "rope-interleaved", dir + "/hw", "--roster", dir + "/roster.csv", "--force"}, "is not empty: --roster writes");
    std::ofstream(dir + "/bad.csv") << "ann\nStudent Two\n";
    expect_usage_error({"exercise", "new", "rope-interleaved", dir + "/a", "--roster", dir + "/bad.csv"}, dir + "/bad.csv: line 2: 'Student Two' is not a student id");
    expect_usage_error({"exercise", "new", "rope-interleaved", dir + "/a", "--roster", dir + "/missing.csv"}, "missing.csv");
    CHECK_FALSE(fs::exists(dir + "/a"));
    CHECK_FALSE(fs::exists(dir + "/a.grading.json"));
}

TEST_CASE("exercise grade with a roster: each student on their own case, a classmate's answer fails, unmatched and doubled submissions refused")
{
    const std::string dir = fresh_dir("cli-roster-grade");
    std::ofstream(dir + "/roster.csv") << "ann\nbo\n";
    REQUIRE(run_cli({"exercise", "new", "rope-interleaved", dir + "/hw", "--roster", dir + "/roster.csv"}).status == 0);
    const std::string grading = dir + "/hw.grading.json";
    for (const char* id : {"ann", "bo"}) REQUIRE(run_cli({"exercise", "solve", "rope-interleaved", dir + "/hw/" + id}).status == 0);
    // ann hands in her own answer, bo hands in ann's
    const std::string ann = program(dir + "/subs", "ann", "cp saved.npy answer.npy");
    const std::string bo = program(dir + "/subs", "bo", "cp saved.npy answer.npy");
    fs::copy_file(dir + "/hw/ann/solution/answer.npy", ann + "/saved.npy");
    fs::copy_file(dir + "/hw/ann/solution/answer.npy", bo + "/saved.npy");
    const auto book = run_json(grade(grading, {ann, bo}));
    REQUIRE(book["submissions"].size() == 2);
    CHECK(book["submissions"][0]["student"] == "ann");
    CHECK(book["submissions"][0]["cases"][0]["verdict"] == "match");
    CHECK(book["submissions"][0]["cases"][0]["config"]["seed"] == nlohmann::json::parse(slurp(dir + "/hw/ann/exercise.json"))["seed"]);
    CHECK(book["submissions"][1]["student"] == "bo");
    CHECK(book["submissions"][1]["cases"][0]["verdict"] != "match");
    CHECK(book["submissions"][1]["cases"][0]["config"]["seed"] == nlohmann::json::parse(slurp(dir + "/hw/bo/exercise.json"))["seed"]);
    CHECK(book["submissions"][0]["cases"][1]["config"]["seed"] != book["submissions"][1]["cases"][1]["config"]["seed"]);
    CHECK(book["not_graded"].empty());
    // the CSV says which student each row was graded as
    const auto csv = run_cli(grade(grading, {ann}, {"--format", "csv"}));
    CHECK(csv.out.find(",student\n") != std::string::npos);
    CHECK(csv.out.find(",ann\n") != std::string::npos);

    const std::string stranger = program(dir + "/subs", "zed", "true");
    expect_usage_error(grade(grading, {ann, stranger}), stranger + ": no student of the roster hands in a folder of this name (2 students in " + grading);
    const auto skipped = run_json(grade(grading, {ann, stranger}, {"--unmatched", "skip"}));
    CHECK(skipped["not_graded"] == nlohmann::json{stranger});
    CHECK(skipped["submissions"].size() == 1);
    const auto text = run_cli(grade(grading, {ann, stranger}, {"--unmatched", "skip"}));
    CHECK(text.out.find("not graded (no student of the roster hands in this folder): " + stranger + "\n") != std::string::npos);
    const std::string again = program(dir + "/more", "ann", "true");
    expect_usage_error(grade(grading, {ann, again}), "two submissions of student ann");
    std::ofstream(dir + "/folders.csv") << "id,folder\nann,ann-final\ncy,cy-final\n";
    expect_usage_error(grade(grading, {ann}, {"--roster", dir + "/folders.csv", "--roster-column", "id", "--folder-column", "folder"}),
                       "student cy has no variant in " + grading);
    REQUIRE(run_cli({"exercise", "new", "rope-interleaved", dir + "/plain", "--hidden-seeds"}).status == 0);
    expect_usage_error({"exercise", "grade", "rope-interleaved", ann, "--grading", dir + "/plain.grading.json", "--unmatched", "skip"},
                       "--roster and --unmatched are for a grading file of exercise new --roster");
    expect_usage_error(grade(grading, {ann}, {"--unmatched", "maybe"}), "--unmatched");
}

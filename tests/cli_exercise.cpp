// attnlab exercise through the CLI: the list, the folder `new` writes, exercise.json, and
// the usage errors of new and solve. tests/python/exercise_check.py runs check.sh itself.
#include "cli_support.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>
#include <string>

namespace {

const std::string kExerciseDir = scratch("cli-exercise");

// A path for one test's exercise folder, where nothing is yet.
std::string unmade(const std::string& tag)
{
    const std::string dir = kExerciseDir + "-" + tag;
    REQUIRE(std::system(("rm -rf '" + dir + "'").c_str()) == 0);
    return dir;
}

}  // namespace

TEST_CASE("exercise list: each exercise's sizes, grading ranges and mistakes, in text, CSV and JSON")
{
    const auto r = run_cli({"exercise", "list", "--lang", "en"});
    CHECK(r.status == 0);
    CHECK(count_lines(r.out) == 3 * 18);
    // columns as wide as the longest name and subcommand, plus one space
    CHECK(r.out.find("attention            attend        the attention block from given x and weights\n"
                     "                     sizes (default, grading range): batch 1 (1..3), len 5 (1..10), dim 8 (2..16), heads 2 (1..4)\n"
                     "                     mistakes it names: ") != std::string::npos);
    CHECK(r.out.find("position-without-pe  nope          the causal output of equal scores") != std::string::npos);
    CHECK(r.out.find("pe                   pe            the sinusoidal table [L, D]\n                     sizes (default, grading range): len 16 (1..32), dim 16 (2..32)\n"
                     "                     mistakes it names: sin_cos_swapped, missing_factor_2, positions_from_1, concat_halves, transposed\n") == 0);
    const auto j = run_json({"exercise", "list", "--lang", "zh"});
    REQUIRE(j["exercises"].size() == 18);
    CHECK(j["exercises"][0] == nlohmann::json::parse(R"({"name": "pe", "title": "正弦位置编码表 [L, D]", "subcommand": "pe",
        "sizes": {"len": {"default": 16, "min": 1, "max": 32}, "dim": {"default": 16, "min": 2, "max": 32}},
        "mistakes": ["sin_cos_swapped", "missing_factor_2", "positions_from_1", "concat_halves", "transposed"]})"));
    const auto csv = run_cli({"exercise", "list", "--format", "csv", "--lang", "en"});
    CHECK(csv.status == 0);
    CHECK(count_lines(csv.out) == 19);
    CHECK(csv.out.rfind("name,subcommand,sizes,mistakes,title\n"
                        "pe,pe,len 16 (1..32); dim 16 (2..32),sin_cos_swapped missing_factor_2 positions_from_1 concat_halves transposed,"
                        "\"the sinusoidal table [L, D]\"\n", 0) == 0);
}

TEST_CASE("exercise new: the folder, and exercise.json with every option of the reference command")
{
    const std::string dir = unmade("new");
    const auto r = run_cli({"exercise", "new", "pe-module", dir, "--seed", "3", "--len", "5", "--lang", "en"});
    REQUIRE(r.status == 0);
    CHECK(r.out == "wrote " + dir + ": exercise pe-module (the module's forward, x + PE sliced to L, on given x [batch, L, D]).\n"
                   "next: cd " + dir + " && python3 starter.py && ./check.sh\n");
    const auto j = nlohmann::json::parse(slurp(dir + "/exercise.json"));
    CHECK(j["name"] == "pe-module");
    CHECK(j["subcommand"] == "pe");
    CHECK(j["params"]["len"] == 5);
    CHECK(j["params"]["dim"] == 8);
    CHECK(j["params"]["base"] == 10000.0);
    CHECK(j["params"]["layout"] == "interleaved");
    CHECK(j["params"]["max_len"] == 64);
    CHECK(j["params"]["embed"] == true);
    CHECK(j["params"]["scale_embed"] == false);
    CHECK(j["params"]["seed"] == 3);
    CHECK(j["params"]["dtype"] == "float64");
    CHECK_FALSE(j["params"].contains("format"));
    CHECK(j["command"] == nlohmann::json::array({"pe", "--len", "5", "--max-len", "64", "--embed", "--batch", "2", "--dtype", "float64",
                                                 "--seed", "3", "--input", "x=inputs/x.npy"}));
    CHECK(j["answer"] == nlohmann::json{{"file", "answer.npy"}, {"tensor", "h"}, {"shape", {2, 5, 8}}, {"axes", {"batch", "pos", "dim"}}, {"dtype", "float64"}});
    CHECK(j["inputs"] == nlohmann::json::array({{{"name", "x"}, {"file", "inputs/x.npy"}, {"shape", {2, 5, 8}}, {"axes", {"batch", "pos", "dim"}}, {"dtype", "float64"}}}));
    // The command in exercise.json, run from DIR, is the reference: its h is what solve writes.
    CHECK(slurp(dir + "/check.sh").find("exec attnlab pe --len 5") != std::string::npos);

    // A folder that is not empty is refused, unless --force.
    expect_usage_error({"exercise", "new", "pe", dir}, "exists and is not empty; give --force");
    CHECK(run_cli({"exercise", "new", "pe", dir, "--force"}).status == 0);
    CHECK(nlohmann::json::parse(slurp(dir + "/exercise.json"))["name"] == "pe");
}

TEST_CASE("exercise new --lang zh writes the task in Chinese")
{
    const std::string dir = unmade("zh");
    REQUIRE(run_cli({"exercise", "new", "causal-mask", dir, "--lang", "zh"}).status == 0);
    const std::string readme = slurp(dir + "/README.md");
    CHECK(readme.find("# 练习：加性因果掩码 [L, L]") == 0);
    CHECK(readme.find("在解码器中，查询 i 只能关注 j <= i 的键") != std::string::npos);
    CHECK(slurp(dir + "/check.sh").find("--lang zh") != std::string::npos);
}

TEST_CASE("exercise: usage errors say what is wrong on one line")
{
    const std::string dir = unmade("errors");
    expect_usage_error({"exercise", "new", "softmax", dir}, "no exercise 'softmax'; exercises: pe, pe-module");
    expect_usage_error({"exercise", "new", "pe", dir, "--heads", "2"}, "exercise pe takes --len, --dim; not --heads");
    expect_usage_error({"exercise", "new", "alibi-slopes", dir, "--heads", "16"}, "not a power of two");
    expect_usage_error({"exercise", "new", "pe", "/dev/null/hw"}, "");
    expect_usage_error({"exercise", "solve", "pe", dir}, "cannot read it; make the exercise first with attnlab exercise new");
    expect_usage_error({"exercise"}, "");
    REQUIRE(run_cli({"exercise", "new", "attention", dir}).status == 0);
    expect_usage_error({"exercise", "solve", "pe", dir}, "holds exercise 'attention', not pe");
    expect_usage_error({"exercise", "solve", "attention", dir, "--mistake", "typo"},
                       "exercise attention has no mistake 'typo'; it has linear_weight_transposed, scale_sqrt_E, no_scale, softmax_over_queries");
    std::ofstream(dir + "/exercise.json") << "{\"name\": 3}";
    expect_usage_error({"exercise", "solve", "attention", dir}, "exercise.json: \"name\" is of another type; make the exercise again with attnlab exercise new");
    std::ofstream(dir + "/exercise.json") << "[1, 2]";
    expect_usage_error({"exercise", "solve", "attention", dir}, "not an exercise file written by attnlab exercise new (not a JSON object)");
}

TEST_CASE("exercise solve writes the reference, or the catalogued mistake asked for")
{
    const std::string dir = unmade("solve");
    REQUIRE(run_cli({"exercise", "new", "alibi-slopes", dir}).status == 0);
    std::ofstream(dir + "/answer.npy") << "the student's own";
    const auto ref = run_cli({"exercise", "solve", "alibi-slopes", dir});
    CHECK(ref.status == 0);
    CHECK(ref.out == "wrote " + dir + "/solution/answer.npy: the reference answer, slopes [6]\n");
    CHECK(slurp(dir + "/answer.npy") == "the student's own");  // never overwritten without --force
    // The reference command of exercise.json grades it.
    CHECK(run_cli({"alibi", "--heads", "6", "--dtype", "float64", "--against", dir + "/solution/answer.npy", "--against-tensor", "slopes", "--quiet"}).status == 0);
    const auto wrong = run_cli({"exercise", "solve", "alibi-slopes", dir, "--mistake", "simple_slopes", "--force"});
    CHECK(wrong.status == 0);
    CHECK(wrong.out.find("the wrong answer of mistake simple_slopes") != std::string::npos);
    CHECK(run_cli({"alibi", "--heads", "6", "--dtype", "float64", "--against", dir + "/answer.npy", "--against-tensor", "slopes", "--quiet"}).status == 1);
    // An answer that cannot be written: exit 2, one line naming it.
    REQUIRE(std::system(("rm -f '" + dir + "/answer.npy' && mkdir '" + dir + "/answer.npy'").c_str()) == 0);
    expect_usage_error({"exercise", "solve", "alibi-slopes", dir, "--force"}, "exercise solve: cannot write " + dir + "/answer.npy");
}

TEST_CASE("exercise solve: a tampered exercise.json is refused with one line, never read outside the folder")
{
    const std::string dir = scratch("cli-tampered");
    std::filesystem::remove_all(dir);
    REQUIRE(run_cli({"exercise", "new", "attention", dir, "--lang", "en"}).status == 0);
    const std::string json_path = dir + "/exercise.json";
    std::ifstream in(json_path);
    const auto original = nlohmann::json::parse(in);
    in.close();
    auto tamper = [&](const std::function<void(nlohmann::json&)>& change) {
        nlohmann::json j = original;
        change(j);
        std::ofstream(json_path) << j.dump();
        return run_cli({"exercise", "solve", "attention", dir});
    };
    auto refused = [](const CliResult& r, const std::string& fragment) {
        CHECK(r.status == 2);
        CHECK(r.out.empty());
        CHECK(count_lines(r.err) == 1);
        CHECK(r.err.find(fragment) != std::string::npos);
    };
    refused(tamper([](nlohmann::json& j) { j["inputs"][0].erase("name"); }), "exercise.json: \"inputs\"[0].\"name\" is missing");
    refused(tamper([](nlohmann::json& j) { j["inputs"][1]["file"] = 3; }), "exercise.json: \"inputs\"[1].\"file\" is of another type");
    refused(tamper([](nlohmann::json& j) { j["sizes"]["len"] = -1; }), "exercise.json: \"sizes\".\"len\" is out of range");
    refused(tamper([](nlohmann::json& j) { j["inputs"][0]["file"] = "../outside.npy"; }), "is not a path inside the folder");
    const auto passwd = tamper([](nlohmann::json& j) { j["inputs"][0]["file"] = "/etc/passwd"; });
    refused(passwd, "is not a path inside the folder");
    CHECK(passwd.err.find("root:") == std::string::npos);
    refused(tamper([](nlohmann::json& j) { j.erase("seed"); }), "exercise.json: \"seed\" is missing");
    refused(tamper([](nlohmann::json& j) { j["name"] = std::string("\x1b]0;owned\x07") + "x"; }), "exercise.json: \"name\" holds a control character");
    // an input that is a link out of the folder
    nlohmann::json j = original;
    std::ofstream(json_path) << j.dump();
    const std::string linked = dir + "/" + j["inputs"][0]["file"].get<std::string>();
    std::filesystem::remove(linked);
    std::filesystem::create_symlink("/etc/passwd", linked);
    refused(run_cli({"exercise", "solve", "attention", dir}), "is not a path inside the folder");
    // a 2 MiB exercise.json
    std::ofstream(json_path) << std::string(2u << 20, ' ') << original.dump();
    refused(run_cli({"exercise", "solve", "attention", dir}), "not a regular file of at most 1 MiB");
}

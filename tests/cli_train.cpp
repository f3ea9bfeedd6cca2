#include "cli_support.hpp"

#include <doctest/doctest.h>

#include <map>

#include <cmath>
#include <filesystem>

namespace {
// A model small enough for a test: 16 dimensions, 2 heads, length 4, 4 sequences a step.
const std::vector<std::string> kSmall = {"--d-model", "16", "--heads", "2", "--train-len", "4", "--batch", "4"};
std::vector<std::string> small(std::vector<std::string> args)
{
    args.insert(args.end(), kSmall.begin(), kSmall.end());
    return args;
}
}  // namespace

TEST_CASE("train: the loss per step and the accuracy per length in JSON, the invariants holding")
{
    const auto j = run_json(small({"train", "--steps", "6", "--task", "copy", "--pe", "rope"}));
    CHECK(j["command"] == "train");
    CHECK(j["passed"] == true);
    CHECK(j["params"]["context"] == 8);  // copy: 2L positions
    CHECK(j["params"]["eval_lens"] == nlohmann::json::parse("[4, 8, 16]"));
    std::vector<std::string> names;
    for (const auto& t : j["tensors"]) names.push_back(t["name"]);
    CHECK(names == std::vector<std::string>{"eval_lens", "loss", "accuracy", "exact_match", "position_accuracy"});
    CHECK(j["tensors"][4]["shape"] == nlohmann::json::parse("[32]"));  // copy at the longest length, 16: 32 positions
    CHECK(j["tensors"][4]["data"][0] == "nan");  // the first copy is not scored: NaN, "nan" in JSON
    CHECK(j["tensors"][4]["data"][16].is_number());
    CHECK(j["tensors"][1]["shape"] == nlohmann::json::parse("[6]"));
    const double loss0 = j["tensors"][1]["data"][0].get<double>();
    CHECK(std::abs(loss0 - std::log(16.0)) < 0.1);
    std::vector<std::string> checks;
    for (const auto& c : j["checks"]) checks.push_back(c["name"]);
    CHECK(checks == std::vector<std::string>{"loss_at_step_0_near_ln_vocab", "steps_bit_identical_across_threads", "first_block_gradients_match_finite_differences"});
}

TEST_CASE("train: --compare-schemes gives the extrapolation table, NaN where the learned table ends, and demonstrations never decide the exit")
{
    const auto r = run_cli(small({"train", "--steps", "3", "--compare-schemes", "--tensor", "extrapolation", "--format", "csv"}));
    CHECK(r.status == 0);
    CHECK(count_lines(r.out) == 1 + 6 * 3);
    CHECK(r.out.rfind("scheme,length,value\n", 0) == 0);
    CHECK(r.out.find("\n2,1,nan\n2,2,nan\n") != std::string::npos);  // learned: no row past 4 positions
    const auto text = run_cli(small({"train", "--steps", "3", "--compare-schemes"}));
    CHECK(text.status == 0);
    CHECK(text.out.find("NOT SHOWN without any PE, a decoder still learns k-back") != std::string::npos);  // 3 steps learn nothing
    CHECK(text.out.find("rows none, sinusoidal, learned, rope, t5, alibi") != std::string::npos);
}

TEST_CASE("train: configurations it cannot run are usage errors")
{
    expect_usage_error({"train", "--d-model", "10", "--heads", "4"}, "--d-model 10 is not divisible by --heads 4");
    expect_usage_error({"train", "--k", "16"}, "--k 16 must be below --train-len 16");
    expect_usage_error(small({"train", "--steps", "2", "--dtype", "float16"}), "train runs in float32 or float64");
    expect_usage_error({"train", "--compare-schemes", "--pe", "rope"}, "--pe");
    expect_usage_error({"train", "--steps", "10", "--until-learned", "5"}, "--until-learned 5 is the cap on all steps; it must be at least --steps 10");
}

TEST_CASE("train: N steps saved, then resumed to 2N, write the same files as 2N steps in one run, bit for bit")
{
    for (const std::string pe : {"alibi", "learned", "t5", "shaw"}) {
        CAPTURE(pe);
        const std::string a = scratch("resume-a-" + pe), b = scratch("resume-b-" + pe), whole = scratch("resume-whole-" + pe);
        std::filesystem::remove_all(a), std::filesystem::remove_all(b), std::filesystem::remove_all(whole);
        REQUIRE(run_cli(small({"train", "--pe", pe, "--steps", "5", "--quiet", "--save", a})).status == 0);
        const auto resumed = run_cli(small({"train", "--pe", pe, "--steps", "10", "--threads", "1", "--quiet", "--resume", a, "--save", b}));
        REQUIRE(resumed.status == 0);
        REQUIRE(run_cli(small({"train", "--pe", pe, "--steps", "10", "--quiet", "--save", whole})).status == 0);
        for (const std::string f : {"model_params", "adam_m", "adam_v", "steps_done", "loss", "accuracy", "exact_match", "position_accuracy", "eval_lens"}) {
            CAPTURE(f);
            CHECK(slurp(b + "/" + f + ".npy") == slurp(whole + "/" + f + ".npy"));
        }
        CHECK(slurp(a + "/model_params.npy") != slurp(whole + "/model_params.npy"));  // five steps moved the weights
        const auto run = nlohmann::json::parse(slurp(b + "/run.json"));
        CHECK(run["params"]["resume"] == a);
        CHECK(run["measurements"].contains("train_seconds"));  // timings: in run.json, never in a tensor file
        const auto& last = run["layout"].back();
        CHECK(last["name"] == "w_u");
        CHECK(last["shape"] == nlohmann::json::parse("[16, 16]"));
        CHECK(run["tensors"][5]["name"] == "model_params");
        CHECK(last["offset"].get<long>() + 16 * 16 == run["tensors"][5]["shape"][0].get<long>());  // model_params' length
        const std::string done = slurp(b + "/steps_done.npy");
        CHECK(done.substr(done.size() - 8) == std::string("\x0a\0\0\0\0\0\0\0", 8));  // int64 10, little-endian
        std::filesystem::remove_all(a), std::filesystem::remove_all(b), std::filesystem::remove_all(whole);
    }
}

TEST_CASE("train: the checkpoint's tensors are saved, and printed only when named")
{
    const std::string dir = scratch("saved-only");
    std::filesystem::remove_all(dir);
    const auto saved = run_cli(small({"train", "--steps", "2", "--save", dir}));
    CHECK(saved.status == 0);
    CHECK(saved.out.find("model_params") == std::string::npos);
    CHECK(saved.out.find("loss  shape [2]") != std::string::npos);
    CHECK(std::filesystem::exists(dir + "/adam_v.npy"));
    const auto named = run_json(small({"train", "--steps", "2", "--show", "steps_done,model_params"}));
    CHECK(named["tensors"].size() == 2);
    CHECK(named["tensors"][0]["name"] == "model_params");
    CHECK(named["tensors"][1]["data"] == nlohmann::json::parse("[2]"));
    const auto plain = run_json(small({"train", "--steps", "2"}));
    for (const auto& t : plain["tensors"]) CHECK(t["name"] != "adam_m");
    std::filesystem::remove_all(dir);
}

TEST_CASE("train: a checkpoint of other options, too few --steps, or a folder that is no checkpoint is a usage error")
{
    const std::string a = scratch("resume-refused");
    std::filesystem::remove_all(a);
    REQUIRE(run_cli(small({"train", "--steps", "4", "--quiet", "--save", a})).status == 0);
    expect_usage_error(small({"train", "--steps", "8", "--lr", "0.01", "--resume", a}), "the checkpoint was trained with --lr 0.003, this run has 0.01");
    expect_usage_error(small({"train", "--steps", "8", "--seed", "5", "--resume", a}), "the checkpoint was trained with --seed 0, this run has 5");
    expect_usage_error(small({"train", "--steps", "8", "--dtype", "float64", "--resume", a}), "--dtype float32, this run has float64");
    expect_usage_error(small({"train", "--steps", "3", "--resume", a}), "the checkpoint has taken 4 steps; --steps 3 must be at least that");
    expect_usage_error(small({"train", "--steps", "8", "--resume", a, "--save", a}), "which this run reads; save to another folder");
    expect_usage_error(small({"train", "--compare-schemes", "--resume", a}), "does not combine with --compare-schemes");
    expect_usage_error(small({"train", "--resume", ""}), "--resume: is an empty path");
    expect_usage_error(small({"train", "--resume", a + "/nothing"}), "run.json");
    std::filesystem::remove(a + "/adam_m.npy");
    expect_usage_error(small({"train", "--steps", "8", "--resume", a}), "adam_m.npy");
    write_npy(a + "/adam_m.npy", {3}, {1, 2, 3});
    expect_usage_error(small({"train", "--steps", "8", "--resume", a}), "holds shape [3], the model has");
    std::filesystem::remove_all(a);
}

TEST_CASE("train --compare-schemes trains three seeds by default: the median table and its range in JSON, the seeds in the params")
{
    const auto j = run_json({"train", "--compare-schemes", "--steps", "2", "--d-model", "16", "--heads", "2", "--train-len", "6", "--batch", "4",
                             "--show", "extrapolation,extrapolation_min,extrapolation_max"});
    CHECK(j["params"]["seeds"] == 3);
    std::map<std::string, nlohmann::json> t;
    for (const auto& x : j["tensors"]) t[x["name"]] = x;
    REQUIRE(t.count("extrapolation_min") == 1);
    REQUIRE(t.count("extrapolation_max") == 1);
    CHECK(t["extrapolation_min"]["axes"] == nlohmann::json::array({"scheme", "length"}));
    const auto one = run_json({"train", "--compare-schemes", "--seeds", "1", "--steps", "2", "--d-model", "16", "--heads", "2", "--train-len", "6", "--batch", "4"});
    CHECK(one["params"]["seeds"] == 1);
    expect_usage_error({"train", "--seeds", "2"}, "--seeds trains several models per scheme for --compare-schemes");
    expect_usage_error({"train", "--compare-schemes", "--seeds", "0"}, "--seeds");
}

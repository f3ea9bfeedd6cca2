#include "cli_support.hpp"

#include <doctest/doctest.h>

#include <cmath>

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
    CHECK(names == std::vector<std::string>{"eval_lens", "loss", "accuracy"});
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
    CHECK(count_lines(r.out) == 1 + 5 * 3);
    CHECK(r.out.rfind("scheme,length,value\n", 0) == 0);
    CHECK(r.out.find("\n2,1,nan\n2,2,nan\n") != std::string::npos);  // learned: no row past 4 positions
    const auto text = run_cli(small({"train", "--steps", "3", "--compare-schemes"}));
    CHECK(text.status == 0);
    CHECK(text.out.find("NOT SHOWN without any PE, a decoder still learns k-back") != std::string::npos);  // 3 steps learn nothing
    CHECK(text.out.find("rows none, sinusoidal, learned, rope, alibi") != std::string::npos);
}

TEST_CASE("train: configurations it cannot run are usage errors")
{
    expect_usage_error({"train", "--d-model", "10", "--heads", "4"}, "--d-model 10 is not divisible by --heads 4");
    expect_usage_error({"train", "--k", "16"}, "--k 16 must be below --train-len 16");
    expect_usage_error(small({"train", "--steps", "2", "--dtype", "float16"}), "train runs in float32 or float64");
    expect_usage_error({"train", "--compare-schemes", "--pe", "rope"}, "--pe");
}

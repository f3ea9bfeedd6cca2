// The learner's side through the CLI: --save hands out exactly the run's tensors, --against
// grades an answer (exit 0 right, 1 wrong with the mistake named, 2 unreadable), in NPY, CSV
// and JSON. At least one wrong answer per subcommand is made here, by this file's own code
// or by another attnlab run, never by the catalogue that names it.
#include "cli_support.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

const std::string kAgainstDir = scratch("cli-against");

std::string saved(const std::vector<std::string>& run, const std::string& tag)
{
    std::vector<std::string> args = run;
    args.insert(args.end(), {"--save", kAgainstDir + "-" + tag, "--quiet"});
    REQUIRE(run_cli(args).status <= 1);
    return kAgainstDir + "-" + tag;
}

// The diagnosis ids of an --against run, and its exit status.
std::pair<int, std::vector<std::string>> grade(std::vector<std::string> args)
{
    args.insert(args.end(), {"--format", "json", "--quiet"});
    const auto r = run_cli(args);
    INFO(r.err);
    REQUIRE(r.status <= 1);
    const auto j = nlohmann::json::parse(r.out);
    std::vector<std::string> ids;
    for (const auto& d : j["against"]["diagnosis"]) ids.push_back(d["id"]);
    return {r.status, ids};
}

}  // namespace

TEST_CASE("--save writes every tensor as NPY and run.json, and the saved answer passes --against")
{
    const std::string dir = saved({"pe", "--len", "6", "--dim", "4"}, "pe");
    std::ifstream run(dir + "/run.json");
    const auto j = nlohmann::json::parse(run);
    CHECK(j["command"] == "pe");
    CHECK(j["params"]["len"] == 6);
    CHECK(j["tensors"].size() == 4);  // pe, freq, wavelength, angle_error
    CHECK(j["tensors"][0]["file"] == "pe.npy");
    const auto r = run_cli({"pe", "--len", "6", "--dim", "4", "--against", dir + "/pe.npy", "--quiet"});
    CHECK(r.status == 0);
    CHECK(r.out.find("against " + dir + "/pe.npy (tensor pe), judged at float32 precision:") != std::string::npos);
    CHECK(r.out.rfind("\nMATCH max |diff| = 0; 0 of 24 elements differ\n") + 47 == r.out.size());  // the last line
    // CSV and JSON answers too: attnlab's own CSV, and its JSON document
    const auto csv = run_cli({"pe", "--len", "6", "--dim", "4", "--format", "csv"});
    std::ofstream(kAgainstDir + "-pe.csv") << csv.out;
    CHECK(run_cli({"pe", "--len", "6", "--dim", "4", "--against", kAgainstDir + "-pe.csv"}).status == 0);
    const auto json = run_cli({"pe", "--len", "6", "--dim", "4", "--format", "json"});
    std::ofstream(kAgainstDir + "-pe.json") << json.out;
    CHECK(run_cli({"pe", "--len", "6", "--dim", "4", "--against", kAgainstDir + "-pe.json"}).status == 0);
}

TEST_CASE("--against names the mistake: wrong answers made independently, one per subcommand")
{
    // pe: sin and cos swapped, computed here
    std::vector<double> pe;
    for (int pos = 0; pos < 6; ++pos)
        for (int i = 0; i < 2; ++i) {
            const double w = std::pow(10000.0, -2.0 * i / 4.0);
            pe.push_back(std::cos(pos * w));
            pe.push_back(std::sin(pos * w));
        }
    write_npy(kAgainstDir + "-swapped.npy", {6, 4}, pe);
    CHECK(grade({"pe", "--len", "6", "--dim", "4", "--against", kAgainstDir + "-swapped.npy"}) ==
          std::pair<int, std::vector<std::string>>{1, {"sin_cos_swapped"}});
    // mask: the transposed causal mask (the future visible), computed here
    std::vector<double> mask;
    for (int i = 0; i < 5; ++i)
        for (int j = 0; j < 5; ++j) mask.push_back(j < i ? -INFINITY : 0.0);
    write_npy(kAgainstDir + "-future.npy", {5, 5}, mask);
    CHECK(grade({"mask", "--against", kAgainstDir + "-future.npy"}).second == std::vector<std::string>{"future_visible"});
    // rope, alibi, attend: another attnlab run with the other convention
    const std::string half = saved({"rope", "--style", "half"}, "half");
    CHECK(grade({"rope", "--against", half + "/q_rot.npy"}).second == std::vector<std::string>{"pairing_half"});
    const std::string simple = saved({"alibi", "--heads", "6", "--slopes", "paper-text"}, "simple");
    CHECK(grade({"alibi", "--heads", "6", "--against", simple + "/bias.npy"}).second == std::vector<std::string>{"simple_slopes"});
    const std::string unmasked = saved({"attend"}, "unmasked");
    CHECK(grade({"attend", "--mask", "causal", "--against", unmasked + "/out_merged.npy"}).second == std::vector<std::string>{"mask_ignored"});
    // with --against the exit status is the comparison alone: a right answer to a mask that
    // fails its own checks exits 0
    const std::string diag0 = saved({"mask", "--diagonal", "0"}, "diag0");
    CHECK(run_cli({"mask", "--diagonal", "0", "--against", diag0 + "/mask.npy", "--quiet"}).status == 0);
}

TEST_CASE("--against: a wrong shape is a wrong answer (1), an unreadable file is an input error (2)")
{
    write_npy(kAgainstDir + "-small.npy", {2, 2}, {0, 1, 0, 1});
    const auto r = run_cli({"pe", "--against", kAgainstDir + "-small.npy", "--format", "json"});
    CHECK(r.status == 1);
    CHECK(r.err == "attnlab: failed checks: against (" + kAgainstDir + "-small.npy, tensor pe)\n");
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["against"]["shape_expected"] == nlohmann::json::parse("[8,8]"));
    CHECK(j["against"]["shape_got"] == nlohmann::json::parse("[2,2]"));
    CHECK(j["against"]["passed"] == false);
    expect_usage_error({"pe", "--against", "/nonexistent/answer.npy"}, "/nonexistent/answer.npy: cannot be read");
    std::ofstream(kAgainstDir + "-text.csv") << "a,b\nx,y\n";
    expect_usage_error({"pe", "--against", kAgainstDir + "-text.csv"}, "line 2 holds no number ('x,y'); only the first line may be a header");
    expect_usage_error({"pe", "--against", kAgainstDir + "-small.npy", "--against-tensor", "nope"}, "unknown tensor 'nope'");
    expect_usage_error({"pe", "--against-tensor", "freq"}, "give --against FILE");
    expect_usage_error({"pe", "--save", "/nonexistent/dir/sub"}, "--save /nonexistent/dir/sub: cannot be made: its folder /nonexistent/dir does not exist");
}

TEST_CASE("--input replaces an input with the learner's own: the saved inputs under another seed give the same output")
{
    const std::string dir = saved({"attend"}, "inputs");
    const auto base = run_json({"attend", "--show", "out_merged"});
    const auto again = run_json({"attend", "--seed", "5", "--show", "out_merged", "--input", "x=" + dir + "/x.npy", "--input",
                                 "w_q=" + dir + "/w_q.npy", "--input", "w_k=" + dir + "/w_k.npy", "--input", "w_v=" + dir + "/w_v.npy"});
    CHECK(again["tensors"][0]["data"] == base["tensors"][0]["data"]);
    CHECK(run_json({"attend", "--seed", "5", "--show", "out_merged"})["tensors"][0]["data"] != base["tensors"][0]["data"]);
    // rope, alibi, mask, pe and permute-test take theirs the same way
    const std::string rope = saved({"rope"}, "rope-inputs");
    CHECK(run_json({"rope", "--seed", "9", "--input", "q=" + rope + "/q.npy", "--show", "q"})["tensors"][0]["data"] ==
          run_json({"rope", "--show", "q"})["tensors"][0]["data"]);
    const std::string mask = saved({"mask"}, "mask-inputs");
    CHECK(run_cli({"mask", "--seed", "9", "--input", "scores=" + mask + "/scores.npy", "--quiet"}).status == 0);
    expect_usage_error({"attend", "--input", "x=" + dir + "/w_q.npy"}, "--input x: the file holds shape [8, 8], the options imply [1, 6, 8]");
    // the sizes come from the file where the options leave them unset, and are reported
    std::vector<double> q16(64);
    for (std::size_t k = 0; k < q16.size(); ++k) q16[k] = 0.01 * static_cast<double>(k);
    write_npy(dir + "/q16.npy", {1, 1, 16, 4}, q16);
    const auto fitted = run_json({"rope", "--input", "q=" + dir + "/q16.npy", "--show", "q_rot"});
    CHECK(fitted["params"]["len"] == 16);
    CHECK(fitted["params"]["dim"] == 4);
    CHECK(fitted["notes"][0] == "sizes from the --input files: --len 16 --dim 4");
    CHECK(fitted["tensors"][0]["shape"] == nlohmann::json::parse("[1, 1, 16, 4]"));
    // a size given is kept: the refusal names the options that would fit
    expect_usage_error({"rope", "--len", "8", "--input", "q=" + dir + "/q16.npy"},
                       "--input q: the file holds shape [1, 1, 16, 4], the options given imply [1, 1, 8, 8]; --len 16 --dim 4 would fit it");
    // several inputs fit together, into the run that made them
    const std::string nine = saved({"attend", "--len", "9", "--dim", "12", "--seed", "4"}, "inputs-9");
    const auto both = run_json({"attend", "--input", "x=" + nine + "/x.npy", "--input", "w_q=" + nine + "/w_q.npy", "--input", "w_k=" + nine + "/w_k.npy",
                                "--input", "w_v=" + nine + "/w_v.npy", "--show", "out"});
    CHECK(both["params"]["len"] == 9);
    CHECK(both["params"]["dim"] == 12);
    CHECK(both["tensors"][0]["data"] == run_json({"attend", "--len", "9", "--dim", "12", "--seed", "4", "--show", "out"})["tensors"][0]["data"]);
    expect_usage_error({"attend", "--input", "nope=" + dir + "/x.npy"}, "attend takes no such input here; it takes x, x_kv, w_q, w_k, w_v");
    expect_usage_error({"attend", "--input", "x"}, "--input takes NAME=FILE");
    expect_usage_error({"pe", "--input", "x=" + dir + "/x.npy"}, "--input x: pe takes no such input here");  // x needs --embed
    // NaN is an input error naming the file and the element, not a kernel's failed check
    std::vector<double> values(48, 0.5);
    values[1 * 8 + 3] = std::nan("");
    write_npy(dir + "/x_nan.npy", {1, 6, 8}, values);
    expect_usage_error({"attend", "--input", "x=" + dir + "/x_nan.npy"}, "--input " + dir + "/x_nan.npy: element [0, 1, 3] is NaN");
}

TEST_CASE("against: a PyTorch file, a pickle and space-separated text are named, with how to save what attnlab reads")
{
    const std::string dir = scratch("against-forms");
    std::filesystem::create_directories(dir);
    const auto write = [&](const std::string& name, const std::string& bytes) {
        std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
        return dir + "/" + name;
    };
    expect_usage_error({"pe", "--len", "2", "--dim", "2", "--against", write("answer.pt", std::string("PK\x03\x04", 4) + "archive")},
                       "a zip archive: PyTorch's torch.save file (.pt) or NumPy's .npz; save one array with numpy.save(path, t.detach().cpu().numpy())");
    expect_usage_error({"pe", "--len", "2", "--dim", "2", "--against", write("old.pt", "\x80\x02rest")}, "a Python pickle (torch.save's older format, or pickle.dump)");
    expect_usage_error({"pe", "--len", "2", "--dim", "2", "--against", write("spaced.txt", "0 1\n0.84 0.54\n")},
                       "line 2 holds numbers separated by spaces or tabs ('0.84 0.54'); separate them with commas, e.g. numpy.savetxt(path, a, delimiter=',')");
    expect_usage_error({"pe", "--len", "2", "--dim", "2", "--against", write("row.txt", "0 1 0.84 0.54\n")},
                       "line 1 holds numbers separated by spaces or tabs ('0 1 0.84 0.54')");
    // the right values in one row: a reshape, not a permutation
    const auto flat = run_cli({"pe", "--len", "2", "--dim", "2", "--dtype", "float64", "--against", write("flat.csv", "0,1,0.8414709848078965,0.5403023058681398\n"), "--quiet"});
    CHECK(flat.out.find("note: your values are the reference's in the same order, in the shape [1, 4]: reshape it to [2, 2]") != std::string::npos);
    CHECK(flat.out.find("permuted") == std::string::npos);
    // a true header over comma-separated numbers still reads
    CHECK(run_cli({"pe", "--len", "1", "--dim", "2", "--against", write("header.csv", "a,b\n0,1\n"), "--quiet"}).status == 0);
}

namespace {

void flatten(const nlohmann::json& j, std::vector<double>& out)
{
    if (j.is_array()) {
        for (const auto& x : j) flatten(x, out);
    } else {
        out.push_back(j.get<double>());
    }
}

// The run's tensor NAME, flattened, from its JSON.
std::vector<double> run_values(std::vector<std::string> args, const std::string& name)
{
    args.insert(args.end(), {"--show", name, "--dtype", "float64"});
    std::vector<double> out;
    flatten(run_json(args)["tensors"][0]["data"], out);
    return out;
}

}  // namespace

TEST_CASE("against: a lead only where it leads: no far-off 'closest', and what the answer is, said instead")
{
    const std::string base = kAgainstDir + "-leads";
    const std::vector<std::string> mask = {"mask", "--len", "4", "--against-tensor", "mask", "--against", base + ".npy", "--quiet"};
    std::vector<double> hidden_ones(16), zeros(16, 0.0);
    for (std::size_t k = 0; k < 16; ++k) hidden_ones[k] = k % 4 > k / 4 ? 1.0 : 0.0;  // triu(ones, 1): True where hidden
    // the untouched starter: all zeros, said to be one, and no mistake 1e9 away named
    write_npy(base + ".npy", {4, 4}, zeros);
    auto r = run_cli(mask);
    CHECK(r.status == 1);
    CHECK(r.out.find("note: every element is 0, as the starter's placeholder np.zeros is") != std::string::npos);
    CHECK(r.out.find("closest") == std::string::npos);
    CHECK(r.out.find("boolean") == std::string::npos);  // zeros are not a 0/1 mask
    CHECK(r.out.find("; all_zero\n") != std::string::npos);
    // a boolean mask in either convention: the conversion named, no "closest"
    write_npy(base + ".npy", {4, 4}, hidden_ones);
    r = run_cli(mask);
    CHECK(r.out.find("True where hidden (the convention of nn.MultiheadAttention's attn_mask and key_padding_mask); this tensor is additive: "
                     "np.where(mask, -np.inf, 0.0)") != std::string::npos);
    CHECK(r.out.find("closest") == std::string::npos);
    std::vector<double> visible_ones(16);
    for (std::size_t k = 0; k < 16; ++k) visible_ones[k] = 1.0 - hidden_ones[k];
    write_npy(base + ".npy", {4, 4}, visible_ones);
    r = run_cli(mask);
    CHECK(r.out.find("True where a query may look (the convention of scaled_dot_product_attention's boolean attn_mask); this tensor is additive: "
                     "np.where(mask, 0.0, -np.inf)") != std::string::npos);
    // a constant answer is said to be one
    write_npy(base + ".npy", {4, 4}, std::vector<double>(16, -1.0));
    CHECK(run_cli(mask).out.find("note: every element is -1: the answer does not vary") != std::string::npos);
    // near a mistake, not on it: the unmasked output 2 % too large is led to mask_ignored (its
    // residual is 2 % of it), the all-zero output is not (as far from it as from the reference)
    const std::vector<std::string> attend = {"attend", "--mask", "causal", "--len", "5", "--heads", "2", "--dim", "8", "--seed", "3"};
    std::vector<double> unmasked = run_values({"attend", "--mask", "none", "--len", "5", "--heads", "2", "--dim", "8", "--seed", "3"}, "out_merged");
    for (double& v : unmasked) v *= 1.02;
    write_npy(base + "-out.npy", {1, 5, 8}, unmasked);
    auto judged = attend;
    judged.insert(judged.end(), {"--against-tensor", "out_merged", "--against", base + "-out.npy", "--quiet"});
    auto j = run_json(judged);
    REQUIRE(j["against"]["diagnosis"].size() == 1);
    CHECK(j["against"]["diagnosis"][0]["id"] == "mask_ignored");
    CHECK(j["against"]["diagnosis"][0]["certainty"] == "closest");
    write_npy(base + "-out.npy", {1, 5, 8}, std::vector<double>(40, 0.0));
    j = run_json(judged);
    CHECK(j["against"]["diagnosis"].empty());
    CHECK(j["against"]["kind"] == nlohmann::json::array({"all_zero"}));
    // NaN rows the reference lets see keys: the mask named, no safe softmax advised
    std::vector<double> inverted(18, std::nan(""));
    for (std::size_t k = 9; k < 18; ++k) inverted[k] = k % 3 == 2 ? 1.0 : 0.0;  // sequence 1 (length 2) sees only its padding key 2
    write_npy(base + "-inv.npy", {2, 3, 3}, inverted);
    r = run_cli({"mask", "--kind", "padding", "--lengths", "3,2", "--against-tensor", "weights", "--against", base + "-inv.npy", "--quiet"});
    CHECK(r.out.find("matches bool_inverted") != std::string::npos);
    CHECK(r.out.find("the NaN fill whole rows that should see keys: your mask hides every key of them") != std::string::npos);
    CHECK(r.out.find("safe softmax") == std::string::npos);
}

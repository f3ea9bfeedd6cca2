// The experiment contract as seen from the command line: help, version, exit status,
// formats, options shared by every subcommand. Run against `pe`, the first subcommand.
#include "cli_support.hpp"

#include "attnlab/version.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>

TEST_CASE("--version prints the configured version")
{
    const auto r = run_cli({"--version"});
    CHECK(r.status == 0);
    CHECK(r.out == std::string("attnlab ") + attnlab::kVersion + "\n");
}

TEST_CASE("--help lists the subcommands, one line each")
{
    const auto r = run_cli({"--help"});
    CHECK(r.status == 0);
    CHECK(r.out.find("\n  pe ") != std::string::npos);
}

TEST_CASE("a subcommand's --help shows defaults, allowed values and an example")
{
    const auto r = run_cli({"pe", "--help"});
    CHECK(r.status == 0);
    CHECK(r.out.find("--layout") != std::string::npos);
    CHECK(r.out.find("interleaved") != std::string::npos);
    CHECK(r.out.find("Example: attnlab pe") != std::string::npos);
}

TEST_CASE("usage errors: exit 2, one line naming the option, nothing on stdout")
{
    expect_usage_error({}, "subcommand is required");
    // the error lists the commands of --help, in its order
    const auto commands = help_subcommands();
    REQUIRE(commands.size() >= 10);
    std::string listed;
    for (const auto& c : commands) listed += (listed.empty() ? "" : ", ") + c;
    expect_usage_error({"nosuch"}, "unknown command 'nosuch'; commands: " + listed + "\n");
    expect_usage_error({"pe", "--bogus"}, "--bogus");
    expect_usage_error({"pe", "--len", "abc"}, "--len");
    expect_usage_error({"pe", "--len", "0"}, "--len");
    expect_usage_error({"pe", "--dtype", "float8"}, "--dtype");
    expect_usage_error({"pe", "--format", "xml"}, "--format");
    expect_usage_error({"pe", "--format", "csv", "--tensor", "nope"}, "unknown tensor 'nope'");
    expect_usage_error({"pe", "--show", "pe,nope"}, "unknown tensor 'nope'");
    expect_usage_error({"pe", "--format", "csv", "--tensor", "freq", "--wide"}, "--wide needs a rank-2");
    expect_usage_error({"pe", "--wide"}, "--wide applies to --format csv");
    expect_usage_error({"pe", "--format", "csv", "--quiet"}, "--quiet");
    expect_usage_error({"pe", "--tol", "-1"}, "--tol");
    expect_usage_error({"pe", "--tol", "nan"}, "--tol: must be a finite number >= 0 (got 'nan')");
    expect_usage_error({"pe", "--max-memory", "nan"}, "--max-memory");
    expect_usage_error({"pe", "--max-memory", "inf"}, "--max-memory");
    expect_usage_error({"pe", "--seed", "-1"}, "--seed");
    expect_usage_error({"pe", "--base", "inf"}, "--base: must be a finite number > 0");
    expect_usage_error({"pe", "--len", "1200000", "--dim", "16", "--format", "json", "--max-memory", "1"}, "(json for 20400016 numbers");
    expect_usage_error({"pe", "--max-memory", "0"}, "--max-memory");
    expect_usage_error({"pe", "--len", "100000", "--dim", "100000"}, "above the memory budget");
}

TEST_CASE("exit status 1 when a check fails (--tol 0 on a float32 figure that is not zero)")
{
    const auto r = run_cli({"pe", "--len", "64", "--dim", "16", "--tol", "0", "--quiet"});
    CHECK(r.status == 1);
    CHECK(r.out.find("FAIL  relative shift is linear") != std::string::npos);
    CHECK(r.err.rfind("attnlab: failed checks: relative_shift_linear", 0) == 0);
}

TEST_CASE("--quiet prints only the check lines")
{
    const auto r = run_cli({"pe", "--quiet"});
    CHECK(r.status == 0);
    std::istringstream lines(r.out);
    std::string line;
    int n = 0;
    while (std::getline(lines, line)) {
        ++n;
        CHECK((line.rfind("PASS  ", 0) == 0 || line.rfind("HOLDS ", 0) == 0 || line.rfind("WRONG ", 0) == 0 || line.rfind("IMPRECISE ", 0) == 0));
    }
    CHECK(n >= 5);
}

TEST_CASE("JSON document is complete: command, params, tensors, checks, passed")
{
    const auto j = run_json({"pe", "--len", "4", "--dim", "4"});
    CHECK(j["command"] == "pe");
    CHECK(j["params"]["len"] == 4);
    CHECK(j["params"]["dim"] == 4);
    CHECK(j["params"]["seed"] == 0);
    CHECK(j["params"]["dtype"] == "float32");
    CHECK(j["params"]["layout"] == "interleaved");
    REQUIRE(j["tensors"].size() == 4);  // pe, freq, wavelength, angle_error
    CHECK(j["tensors"][0]["name"] == "pe");
    CHECK(j["tensors"][0]["shape"] == nlohmann::json::array({4, 4}));
    CHECK(j["tensors"][0]["axes"] == nlohmann::json::array({"pos", "dim"}));
    CHECK(j["tensors"][0]["data"][0] == nlohmann::json::array({0.0, 1.0, 0.0, 1.0}));
    CHECK(j["tensors"][0]["data"][1][0] == doctest::Approx(0.84147098));
    for (const auto& c : j["checks"]) {
        for (const char* key : {"name", "claim", "metric", "measured", "tolerance", "comparison", "passed"})
            CHECK(c.contains(key));
    }
    CHECK(j["passed"] == true);
}

TEST_CASE("--quiet --format json keeps the checks and drops the tensors")
{
    const auto j = run_json({"pe", "--quiet"});
    CHECK(j["tensors"].empty());
    CHECK(!j["checks"].empty());
}

TEST_CASE("--show limits the tensors printed, in text and JSON")
{
    const auto j = run_json({"pe", "--show", "freq,wavelength"});
    REQUIRE(j["tensors"].size() == 2);
    CHECK(j["tensors"][0]["name"] == "freq");
    CHECK(j["tensors"][1]["name"] == "wavelength");
    const auto r = run_cli({"pe", "--show", "freq"});
    CHECK(r.out.rfind("freq  shape [4]  (pair)  float32\n", 0) == 0);
}

TEST_CASE("CSV: header names the axes, one row per element, and --wide prints rank 2 wide")
{
    auto r = run_cli({"pe", "--len", "5", "--dim", "6", "--format", "csv"});
    CHECK(r.status == 0);
    CHECK(r.out.rfind("pos,dim,value\n0,0,0\n0,1,1\n", 0) == 0);
    CHECK(count_lines(r.out) == 1 + 5 * 6);
    r = run_cli({"pe", "--len", "5", "--dim", "6", "--format", "csv", "--wide"});
    CHECK(r.out.rfind("pos,d0,d1,d2,d3,d4,d5\n0,0,1,0,1,0,1\n", 0) == 0);
    CHECK(count_lines(r.out) == 6);
    r = run_cli({"pe", "--dim", "6", "--format", "csv", "--tensor", "freq"});
    CHECK(r.out.rfind("pair,value\n0,1\n", 0) == 0);
    CHECK(count_lines(r.out) == 4);
}

TEST_CASE("--seed reproduces the random inputs and a different seed changes them")
{
    const std::vector<std::string> base = {"pe", "--embed", "--len", "3", "--dim", "4",
                                           "--format", "csv", "--tensor", "x"};
    auto with_seed = [&](const char* s) {
        auto args = base;
        args.push_back("--seed");
        args.push_back(s);
        return run_cli(args).out;
    };
    CHECK(with_seed("7") == with_seed("7"));
    CHECK(with_seed("7") != with_seed("8"));
}

TEST_CASE("--dtype float64 computes in double precision")
{
    const auto j = run_json({"pe", "--dtype", "float64", "--len", "2", "--dim", "2"});
    CHECK(j["tensors"][0]["dtype"] == "float64");
    CHECK(j["tensors"][0]["data"][1][0] == 0.8414709848078965);
    const auto f = run_json({"pe", "--len", "2", "--dim", "2"});
    CHECK(f["tensors"][0]["data"][1][0] == 0.84147096);  // sin(1) rounded to float32
}

TEST_CASE("every experiment, one random run each: JSON's tensors match their shapes, CSV is the main tensor, an unknown option exits 2")
{
    for (const auto& cmd : drawn_commands(3)) {
        CAPTURE(command_text(cmd));
        auto json_args = cmd;
        json_args.insert(json_args.end(), {"--format", "json"});
        const auto r = run_cli(json_args);
        CHECK(r.status == 0);  // the samplers draw runs whose checks hold (no --softmax plain rows without keys here)
        const auto j = nlohmann::json::parse(r.out);
        CHECK(j["command"] == cmd[0]);
        std::size_t main_size = 0;
        std::vector<std::string> main_axes;
        for (const auto& t : j["tensors"]) {
            CAPTURE(t["name"].get<std::string>());
            std::size_t size = 1;
            for (const auto& n : t["shape"]) size *= n.get<std::size_t>();
            CHECK(t["axes"].size() == t["shape"].size());
            CHECK(t["data"].flatten().size() == size);
            if (t["name"] == j["main_tensor"]) main_size = size, main_axes = t["axes"].get<std::vector<std::string>>();
        }
        REQUIRE(main_size > 0);
        auto csv_args = cmd;
        csv_args.insert(csv_args.end(), {"--format", "csv"});
        const auto csv = run_cli(csv_args);
        std::string header;
        for (const auto& axis : main_axes) header += axis + ",";
        CHECK(csv.out.rfind(header + "value\n", 0) == 0);
        CHECK(static_cast<std::size_t>(std::count(csv.out.begin(), csv.out.end(), '\n')) == main_size + 1);
        auto bad = cmd;
        bad.push_back("--no-such-option");
        const auto refused = run_cli(bad);
        CHECK(refused.status == 2);
        CHECK(refused.out.empty());
        CHECK(std::count(refused.err.begin(), refused.err.end(), '\n') == 1);
    }
}

TEST_CASE("--tol 0 fails every numeric check whose figure is not exactly 0, in every experiment")
{
    for (const auto& cmd : drawn_commands(1)) {
        auto args = cmd;
        args.insert(args.end(), {"--tol", "0", "--quiet", "--format", "json"});
        const auto r = run_cli(args);
        CAPTURE(command_text(cmd));
        const auto j = nlohmann::json::parse(r.out);
        bool any_failed = false;
        for (const auto& c : j["checks"]) {
            if (c["comparison"] != "<=" || c["role"] != "invariant" || !c["measured"].is_number() || c["tolerance"] != 0.0) continue;
            const double m = c["measured"];
            CAPTURE(c["name"].get<std::string>());
            CHECK(c["passed"] == (m == 0.0));
            any_failed = any_failed || m != 0.0;
        }
        CHECK(r.status == (any_failed ? 1 : 0));
    }
}

TEST_CASE("a failed write is an error (a full disk, a closed stdout, a broken pipe), and a closed stderr never aborts")
{
    for (auto [mode, fragment] : {std::pair{Stdout::dev_full, "No space left on device"},
                                  std::pair{Stdout::closed, "standard output is closed"},
                                  std::pair{Stdout::broken_pipe, "Broken pipe"}}) {
        CAPTURE(fragment);
        const auto r = run_cli_io({"pe"}, mode);
        CHECK(r.status == 2);
        CHECK(count_lines(r.err) == 1);
        CHECK(r.err.rfind("attnlab: error: cannot write the output: ", 0) == 0);
        CHECK(r.err.find(fragment) != std::string::npos);
    }
    CHECK(run_cli_io({"tour", "--section", "pe"}, Stdout::dev_full).status == 2);
    // the error printer itself must not throw when stderr is closed
    CHECK(run_cli_io({"pe", "--len", "0"}, Stdout::captured, true).status == 2);
}

TEST_CASE("exit 1 always says on stderr which checks failed, in one greppable line, in every format")
{
    for (const char* format : {"text", "csv", "json"}) {
        CAPTURE(format);
        const auto r = run_cli({"mask", "--diagonal", "0", "--format", format});
        CHECK(r.status == 1);
        // row 0 sees no key: its plain softmax is NaN, neither 0 at the masked keys nor a number
        CHECK(r.err == "attnlab: failed checks: masked_weights_exactly_zero, no_nan_weights\n");
    }
    const auto t = run_cli({"tour", "--section", "pe", "--tol", "0"});
    CHECK(t.status == 1);
    CHECK(count_lines(t.err) == 1);
    CHECK(t.err.rfind("attnlab: failed checks: relative_shift_linear, ", 0) == 0);
    CHECK(run_cli({"pe"}).err.empty());  // exit 0: nothing on stderr
}

TEST_CASE("usual CLI manners: not-a-number, did-you-mean, --perm sets the length, a CSV message that fits")
{
    expect_usage_error({"pe", "--len", "abc"}, "--len: must be a whole number (got 'abc')");
    expect_usage_error({"pe", "--len", "2.5"}, "must be a whole number");
    expect_usage_error({"pe", "--len", "0"}, "--len: must lie in 1..");
    expect_usage_error({"mask", "--kind", "padding", "--lengths", "3,x"}, "--lengths: must be a whole number (got 'x')");
    expect_usage_error({"pe", "--lenn", "3"}, "did you mean --len?");
    expect_usage_error({"rope", "--stlye", "half"}, "did you mean --style?");
    expect_usage_error({"pe", "--format", "csv", "--tensor", "pe", "--show", "freq"},
                       "--format csv prints one tensor, and --tensor and --show name pe, freq: keep one");
    const auto j = run_json({"permute-test", "--perm", "2,1,0,3"});
    CHECK(j["params"]["len"] == 4);
    CHECK(j["tensors"][1]["data"] == nlohmann::json::parse("[2,1,0,3]"));
    const auto help = run_cli({"permute-test", "--help"});
    CHECK(help.out.find("{none,causal}") != std::string::npos);
    CHECK(help.out.find("window") == std::string::npos);
    CHECK(help.out.find("out_perm [pos, dim] (main)") != std::string::npos);  // the tensors, with axes
}

TEST_CASE("the language follows POSIX order: LC_ALL, then LC_MESSAGES, then LANG")
{
    auto first_line = [](const std::vector<std::string>& env) {
        const auto r = run_cli({"tour", "--section", "order"}, env);
        return r.out.substr(0, r.out.find('\n'));
    };
    CHECK(first_line({"LANG=zh_CN.UTF-8", "LC_ALL=C"}).find("Order blindness") != std::string::npos);
    CHECK(first_line({"LANG=C", "LC_ALL=zh_CN.UTF-8"}).find("顺序盲区") != std::string::npos);
    CHECK(first_line({"LANG=C", "LC_MESSAGES=zh_TW.UTF-8"}).find("顺序盲区") != std::string::npos);
    CHECK(first_line({"LANG=zh_CN.UTF-8", "LC_ALL="}).find("顺序盲区") != std::string::npos);  // empty means unset
}

TEST_CASE("the memory estimate covers the measured peak of large runs, and refuses what it undercounted before")
{
    if (program_sanitized()) {
        MESSAGE("not measured under AddressSanitizer: its shadow memory is no part of the estimate");
        return;
    }
    for (auto args : std::vector<std::vector<std::string>>{
             {"mask", "--len", "1", "--kv-len", "4096", "--dk", "16384", "--quiet"},
             {"permute-test", "--len", "4", "--dim", "2048", "--quiet"},
             {"attend", "--len", "1024", "--heads", "8", "--dim", "512", "--quiet"},
             // the block's second runs: the causal check's, the cross-positions check's two, the
             // float64 check of a 16-bit run; RoPE's rotations, PE's table, padding
             {"attend", "--len", "2048", "--heads", "8", "--dim", "512", "--mask", "causal", "--pe", "rope", "--dtype", "float64", "--quiet"},
             {"attend", "--len", "2048", "--heads", "8", "--dim", "512", "--mask", "causal", "--pe", "sinusoidal", "--dtype", "bfloat16", "--quiet"},
             {"attend", "--len", "1024", "--kv-len", "2048", "--heads", "8", "--dim", "512", "--pe", "rope", "--dtype", "float16", "--quiet"},
             {"attend", "--len", "1024", "--kv-len", "2048", "--heads", "8", "--dim", "512", "--pe", "alibi", "--quiet"},
             {"attend", "--len", "2048", "--heads", "8", "--kv-heads", "2", "--dim", "512", "--mask", "both", "--lengths", "2048,1000", "--quiet"},
             // grad: the float64 passes kept for the checks, one more backward alive beside them
             {"grad", "--len", "256", "--heads", "4", "--dim", "256", "--mask", "causal", "--pe", "rope", "--quiet"},
             {"grad", "--len", "256", "--kv-len", "384", "--heads", "4", "--dim", "256", "--pe", "sinusoidal", "--dtype", "bfloat16", "--quiet"},
             {"rope", "--len", "4096", "--dim", "128", "--heads", "8", "--quiet"},
             {"pe", "--len", "8192", "--dim", "512", "--quiet"},
             {"alibi", "--len", "1024", "--heads", "8", "--quiet"}}) {
        CAPTURE(command_text(args));
        auto refused_args = args;
        refused_args.insert(refused_args.end(), {"--max-memory", "0.000001"});
        const auto refused = run_cli(refused_args);
        REQUIRE(refused.status == 2);
        const auto at = refused.err.find("needs about ");
        REQUIRE(at != std::string::npos);
        const double value = std::stod(refused.err.substr(at + 12));
        const std::string unit = refused.err.substr(refused.err.find(' ', at + 12) + 1, 3);
        const double estimate_kb = value * (unit == "GiB" ? 1024.0 * 1024.0 : unit == "MiB" ? 1024.0 : 1.0);
        const auto run = run_cli(args);
        CHECK(run.status == 0);
        CAPTURE(run.max_rss_kb);
        CAPTURE(estimate_kb);
        CHECK(estimate_kb >= static_cast<double>(run.max_rss_kb));
        CHECK(estimate_kb <= 4.0 * static_cast<double>(run.max_rss_kb));  // an estimate, not a wild guess
    }
    // The three requests that used to pass the guard and then take far more than it allowed.
    expect_usage_error({"mask", "--len", "1", "--kv-len", "16384", "--dk", "65536"}, "above the memory budget");
    expect_usage_error({"permute-test", "--len", "1", "--dim", "4096", "--max-memory", "0.01"}, "above the memory budget");
    expect_usage_error({"mask", "--kv-len", "4096", "--dk", "65536", "--max-memory", "0.01"}, "above the memory budget");
}

TEST_CASE("a work guard beside the memory guard: requests that would run for minutes are refused with the estimate")
{
    // A long causal request fits both default budgets: the memory guard passes (the work guard,
    // which comes second, is what refuses it here) and the work figure counts the tiles the
    // kernel skips (half of them), below the default 200 G.
    const auto long_causal = run_cli({"attend", "--len", "65536", "--heads", "8", "--dim", "512", "--mask", "causal", "--quiet", "--max-work", "0.001"});
    CHECK(long_causal.status == 2);
    const auto at = long_causal.err.find("needs about ");
    REQUIRE(at != std::string::npos);
    CHECK(long_causal.err.find("above the work budget of 0.001 G") != std::string::npos);
    const double work = std::stod(long_causal.err.substr(at + 12));
    CHECK(work > 150.0);  // 8 heads x 65536^2 / 2 x (2 x 64 + 20) / 16, the projections, the checks
    CHECK(work < 200.0);
    expect_usage_error({"attend", "--len", "1048576", "--heads", "1", "--dim", "1", "--quiet"}, "G multiply-adds (attention over");
    expect_usage_error({"alibi", "--len", "2000", "--dim", "65536", "--max-memory", "64"}, "above the work budget of 200 G");
    expect_usage_error({"permute-test", "--len", "1000", "--trials", "10000"}, "(10001 block runs over [1000, 8]");
    expect_usage_error({"mask", "--len", "3000", "--dk", "65536", "--max-memory", "64"}, "raise --max-work");
    expect_usage_error({"pe", "--max-work", "0"}, "--max-work");
    // the budget is an option: a small one refuses what the default accepts
    CHECK(run_cli({"attend", "--len", "256", "--quiet"}).status == 0);
    expect_usage_error({"attend", "--len", "256", "--max-work", "0.001"}, "above the work budget of 0.001 G");
}

TEST_CASE("--lang zh on every experiment: verdicts, claims and notes in Chinese, names, keys and options in English")
{
    for (auto args : drawn_commands(2)) {
        CAPTURE(command_text(args));
        args.push_back("--lang");
        args.push_back("zh");
        const auto r = run_cli(args);
        CHECK(r.status <= 1);
        CHECK(r.out.find("通过 ") != std::string::npos);
        CHECK(r.out.find("PASS") == std::string::npos);
        CHECK(r.out.find("shape [") != std::string::npos);  // tensor lines stay as they are
        const auto j = run_json(args);
        CHECK(j["checks"][0].contains("claim"));              // keys stay English
        CHECK(j["checks"][0]["claim"].get<std::string>().find_first_of("\xe4\xe5\xe6\xe7\xe8\xe9") != std::string::npos);
    }
    const auto wrong = run_cli({"alibi", "--heads", "6", "--quiet", "--lang", "zh"});
    CHECK(wrong.out.find("不成立 参考代码按奇偶头处理的规则使 H = 6 时斜率单调（文章的论断）") != std::string::npos);
    const auto imprecise = run_cli({"permute-test", "--example", "--no-proj", "--lang", "zh"});
    CHECK(imprecise.out.find("不严谨 打乱输入后输出“完全不变”（文章的论断）") != std::string::npos);
    CHECK(imprecise.out.find("      原文：“交换输入 token 的顺序，输出严格不变”；本意：没有位置信息时输出行跟着输入行走") != std::string::npos);
    const auto note = run_cli({"rope", "--example", "--lang", "zh"});
    CHECK(note.out.find("注：示例：每个查询和键都是 (1, 0, 1, 0)") != std::string::npos);
    // the locale chooses when --lang is not given; the failed-checks line stays greppable in English
    const auto env_zh = run_cli({"mask", "--diagonal", "0", "--quiet"}, {"LANG=zh_CN.UTF-8"});
    CHECK(env_zh.out.find("失败 ") != std::string::npos);
    CHECK(env_zh.err.rfind("attnlab: failed checks: masked_weights_exactly_zero", 0) == 0);
    expect_usage_error({"pe", "--lang", "fr"}, "--lang");
}

TEST_CASE("usage: a list option is given once and has no empty item, and a number has no blank around it")
{
    expect_usage_error({"mask", "--kind", "padding", "--len", "4", "--lengths", "1,,2"}, "--lengths: the list '1,,2' has an empty item");
    expect_usage_error({"mask", "--kind", "padding", "--len", "4", "--lengths=1,2,"}, "--lengths: the list '1,2,' has an empty item");
    expect_usage_error({"mask", "--kind", "padding", "--len", "4", "--lengths", "1", "--lengths", "2"},
                       "--lengths is given twice; give one comma-separated list");
    expect_usage_error({"pe", "--show", "pe", "--show", "freq"}, "--show is given twice; give one comma-separated list");
    expect_usage_error({"pe", "--len", " 4"}, "--len: must be a whole number (got ' 4')");
    expect_usage_error({"pe", "--len", "4 "}, "--len: must be a whole number (got '4 ')");
    expect_usage_error({"pe", "--base", " 100"}, "--base: must be a finite number > 0 (got ' 100')");
    CHECK(run_cli({"mask", "--kind", "padding", "--len", "4", "--lengths", "1,2", "--quiet"}).status == 0);
}

TEST_CASE("the memory refusal advises only what the command has, and counts no text that --quiet does not print")
{
    expect_usage_error({"exercise", "new", "attention", "/tmp/attnlab-cli-exercise-huge", "--len", "1024", "--dim", "1024", "--heads", "64", "--batch", "64"},
                       "above the memory budget of 2.0 GiB; reduce the exercise's sizes (exercise list shows which attention takes)");
    const auto refused = run_cli({"exercise", "new", "attention", "/tmp/attnlab-cli-exercise-huge", "--len", "1024", "--dim", "1024", "--heads", "64", "--batch", "64"});
    CHECK(refused.err.find("--show") == std::string::npos);
    CHECK(refused.err.find("--max-memory") == std::string::npos);
    // The same run printed as text counts its numbers, under --quiet it does not.
    const std::vector<std::string> big = {"attend", "--len", "1024", "--heads", "16", "--dim", "64", "--max-memory", "0.5"};
    auto text = big;
    text.push_back("--show");
    text.push_back("weights");
    expect_usage_error(text, "text for 16777216 numbers");
    auto quiet = big;
    for (const std::string& a : {std::string("--quiet"), std::string("--save"), scratch("cli-quiet-save")}) quiet.push_back(a);
    CHECK(run_cli(quiet).status == 0);
}

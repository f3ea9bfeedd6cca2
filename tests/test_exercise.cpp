// The exercise catalogue: its names, the reference answers against values worked out by hand,
// the mistakes each one recognises, the sizes it refuses, and the task texts.
#include "attnlab/exercise/exercise.hpp"
#include "attnlab/exercise/exercise_file.hpp"
#include "attnlab/experiments/command_line.hpp"
#include "attnlab/learner/compare.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

using namespace attnlab;

namespace {

MadeExercise made(const std::string& name, std::map<std::string, long> sizes = {}, std::uint64_t seed = 0)
{
    return make_exercise({name, std::move(sizes), seed, {}});
}

std::vector<std::string> mistake_ids(const MadeExercise& m)
{
    std::vector<std::string> ids;
    for (const auto& mistake : m.mistakes) ids.push_back(mistake.id);
    return ids;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The exercises docs/teach.md's table names, in its order: its rows' first cells.
std::vector<std::string> teach_table_names()
{
    std::ifstream in(std::string(ATTNLAB_DATA_DIR) + "/../docs/teach.md");
    REQUIRE(in);
    std::vector<std::string> names;
    for (std::string line; std::getline(in, line);)
        if (line.rfind("| `", 0) == 0 && line.find("` | ") != std::string::npos) {
            names.push_back(line.substr(3, line.find('`', 3) - 3));
        }
    return names;
}

}  // namespace

TEST_CASE("exercise: the catalogue is the manual's table, in its order")
{
    // The catalogue is the one list: exercise list shows it, the end-to-end tests read it from
    // the program, and the teacher's page lists it for the reader.
    std::vector<std::string> names;
    for (const auto& e : exercise_list()) names.push_back(e.name);
    CHECK(names.size() >= 18);
    CHECK(names == teach_table_names());
    CHECK(find_exercise("permutation").subcommand == "permute-test");
    CHECK_THROWS_WITH_AS(find_exercise("softmax"), doctest::Contains("no exercise 'softmax'; exercises: pe, pe-module"), InputError);
}

TEST_CASE("exercise: each one recognises exactly its catalogued mistakes")
{
    CHECK(mistake_ids(made("pe")) == std::vector<std::string>{"sin_cos_swapped", "missing_factor_2", "positions_from_1", "concat_halves", "transposed"});
    CHECK(mistake_ids(made("pe-module")) == std::vector<std::string>{"sliced_by_batch", "pe_not_added", "embedding_scaled"});
    // The pairing asked for is the answer, so only the other pairing is a mistake.
    CHECK(mistake_ids(made("rope-interleaved")) ==
          std::vector<std::string>{"pairing_half", "rotation_reversed", "missing_factor_2", "positions_from_1", "heads_and_positions_swapped"});
    CHECK(mistake_ids(made("rope-half")).front() == "pairing_interleaved");
    CHECK(mistake_ids(made("alibi-slopes")) == std::vector<std::string>{"simple_slopes", "slopes_reversed"});
    CHECK(mistake_ids(made("alibi-bias")) == std::vector<std::string>{"simple_slopes", "bias_positive", "slopes_reversed"});
    // With a power-of-two head count the simple formula is right, so it is no mistake there.
    CHECK(mistake_ids(made("alibi-bias", {{"heads", 4}})) == std::vector<std::string>{"bias_positive", "slopes_reversed"});
    CHECK(mistake_ids(made("causal-mask")) == std::vector<std::string>{"fill_minus_1e9", "mask_flipped", "future_visible", "diagonal_masked", "mask_off_by_one"});
    CHECK(mistake_ids(made("padding-mask")) == std::vector<std::string>{"bool_inverted", "padding_one_late"});
    CHECK(mistake_ids(made("learned-pe")) == std::vector<std::string>{"positions_from_1", "table_not_added"});
    CHECK(mistake_ids(made("shaw-scores")) == std::vector<std::string>{"rel_index_i_minus_j", "rel_k_missing"});
    CHECK(mistake_ids(made("t5-buckets")) == std::vector<std::string>{"sign_ignored", "no_log_buckets"});
    CHECK(mistake_ids(made("decode-step")) == std::vector<std::string>{"positions_restart_each_step", "cache_position_off_by_one"});
    CHECK(mistake_ids(made("position-without-pe")) == std::vector<std::string>{"mask_ignored", "diagonal_masked"});
    CHECK(mistake_ids(made("attention")) == std::vector<std::string>{"linear_weight_transposed", "scale_sqrt_E", "no_scale", "softmax_over_queries"});
    CHECK(mistake_ids(made("masked-attention")) == std::vector<std::string>{"linear_weight_transposed", "scale_sqrt_E", "no_scale", "softmax_over_queries",
                                                                          "mask_ignored", "mask_flipped", "future_visible", "diagonal_masked",
                                                                          "mask_off_by_one", "mask_multiplied", "mask_after_softmax"});
    // One head: 1/sqrt(E) is 1/sqrt(d), so that mistake gives the right answer and is left out.
    CHECK(mistake_ids(made("attention", {{"heads", 1}})) == std::vector<std::string>{"linear_weight_transposed", "no_scale", "softmax_over_queries"});
    CHECK(mistake_ids(made("softmax-backward")) == std::vector<std::string>{"softmax_grad_missing_subtraction"});
    CHECK(mistake_ids(made("attention-backward")) ==
          std::vector<std::string>{"softmax_grad_missing_subtraction", "scale_forgotten_in_backward", "d_k_transposed"});
    CHECK(mistake_ids(made("permutation")) == std::vector<std::string>{"inverse_permutation", "input_not_permuted", "linear_weight_transposed", "no_scale"});
}

TEST_CASE("exercise: reference answers against values worked out by hand")
{
    SUBCASE("pe: row 1 of a [2, 4] table is sin 1, cos 1, sin 0.01, cos 0.01")
    {
        const MadeExercise m = made("pe", {{"len", 2}, {"dim", 4}});
        REQUIRE(m.answer.shape == std::vector<std::size_t>{2, 4});
        CHECK(m.answer.values[4] == doctest::Approx(0.8414709848078965).epsilon(1e-15));
        CHECK(m.answer.values[5] == doctest::Approx(0.5403023058681398).epsilon(1e-15));
        CHECK(m.answer.values[6] == doctest::Approx(0.009999833334166664).epsilon(1e-14));
        CHECK(m.answer.values[7] == doctest::Approx(0.9999500004166653).epsilon(1e-15));
        CHECK(m.inputs.empty());
    }
    SUBCASE("alibi-slopes: H = 6 is 4's slopes, then 8's at indices 0 and 2")
    {
        const MadeExercise m = made("alibi-slopes");
        CHECK(m.answer.values == std::vector<double>{0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125});
    }
    SUBCASE("causal-mask: 0 on and below the diagonal, -inf above")
    {
        const MadeExercise m = made("causal-mask", {{"len", 3}});
        const double inf = INFINITY;
        CHECK(m.answer.values == std::vector<double>{0, -inf, -inf, 0, 0, -inf, 0, 0, 0});
    }
    SUBCASE("padding-mask: True from each length on, the longest length is L")
    {
        const MadeExercise m = made("padding-mask", {{"batch", 4}, {"len", 5}}, 9);
        REQUIRE(m.inputs.size() == 1);
        const auto& lengths = m.inputs[0].tensor.values;
        REQUIRE(lengths.size() == 4);
        CHECK(*std::max_element(lengths.begin(), lengths.end()) == 5.0);
        CHECK(m.answer.elem == Elem::boolean);
        for (std::size_t b = 0; b < 4; ++b)
            for (std::size_t j = 0; j < 5; ++j) CHECK(m.answer.values[b * 5 + j] == (static_cast<double>(j) >= lengths[b] ? 1.0 : 0.0));
    }
}

TEST_CASE("exercise: inputs are handed out, the answer never is")
{
    for (const auto& info : exercise_list()) {
        CAPTURE(info.name);
        const MadeExercise m = made(info.name);
        for (const auto& in : m.inputs) {
            CHECK(in.name != m.answer_tensor);
            CHECK(in.file == "inputs/" + in.name + ".npy");
            CHECK(in.tensor.values != m.answer.values);
        }
        // The command takes every input it can replace, by its path relative to DIR.
        for (const auto& in : m.inputs)
            if (in.replaces) CHECK(std::find(m.command.begin(), m.command.end(), in.name + "=" + in.file) != m.command.end());
        CHECK(m.command.front() == info.subcommand);
    }
}

TEST_CASE("exercise: the same seed and the inputs read back give the same answer")
{
    const MadeExercise first = made("attention", {}, 11);
    ExerciseRequest again{"attention", {}, 11, {}};
    for (const auto& in : first.inputs) again.inputs[in.name] = in.tensor;
    CHECK(make_exercise(again).answer.values == first.answer.values);
    CHECK(made("attention", {}, 12).answer.values != first.answer.values);
    // permutation: the answer is attention on x[perm], which is the unpermuted output reordered.
    const MadeExercise p = made("permutation");
    std::vector<double> perm;
    for (const auto& in : p.inputs)
        if (in.name == "perm") perm = in.tensor.values.to_vector();
    std::vector<double> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    CHECK(sorted == std::vector<double>{0, 1, 2, 3, 4, 5});
    CHECK(perm != sorted);
}

TEST_CASE("exercise: sizes it does not take, or cannot hold, are refused")
{
    CHECK_THROWS_WITH_AS(made("pe", {{"heads", 2}}), "exercise pe takes --len, --dim; not --heads", InputError);
    CHECK_THROWS_WITH_AS(made("pe", {{"len", 5000}}), "exercise pe: --len 5000 is outside 1..1024", InputError);
    CHECK_THROWS_WITH_AS(made("alibi-slopes", {{"heads", 8}}), doctest::Contains("not a power of two; --heads 8 is one"), InputError);
    CHECK_THROWS_WITH_AS(made("pe", {{"dim", 5}}), doctest::Contains("even"), InputError);
    CHECK_THROWS_AS(made("attention", {{"dim", 9}, {"heads", 2}}), InputError);
    CHECK(made("alibi-slopes", {{"heads", 12}}).answer.values.size() == 12);
}

TEST_CASE("exercise: the task text gives the formula, its source, the shapes and the check")
{
    const MadeExercise m = made("pe", {{"len", 10}, {"dim", 6}});
    const std::string en = exercise_readme(m, Lang::en), zh = exercise_readme(m, Lang::zh);
    CHECK(has(en, "PE(pos, 2i)   = sin(pos / 10000^(2i/D))"));
    CHECK(has(en, "§3.5"));
    CHECK(has(en, "[10, 6]"));
    CHECK(has(en, "attnlab pe --len 10 --dim 6 --dtype float64 --seed 0 --quiet --lang en --against-tensor pe --judged-at float32 --against answer.npy"));
    CHECK(has(en, "- `missing_factor_2`: the exponent lacks its factor 2"));
    CHECK(has(zh, "构造 Vaswani et al. 2017"));
    CHECK(has(zh, "检查能认出的错误"));
    CHECK(has(zh, "- `missing_factor_2`: 指数少了因子 2"));
    CHECK_FALSE(has(en, "构造"));
    const std::string starter = exercise_starter(m, Lang::en);
    // the sizes come from inputs/params.json (the hidden cases of grading have others), never constants
    CHECK(has(starter, "with open(os.path.join(HERE, \"inputs\", \"params.json\")) as f:\n    SIZES = json.load(f)"));
    CHECK(has(starter, "L = SIZES[\"len\"]\nD = SIZES[\"dim\"]\n"));
    CHECK_FALSE(has(starter, "L = 10"));
    CHECK(exercise_params_text(m) == "{\n  \"dim\": 6,\n  \"len\": 10\n}\n");
    CHECK(has(starter, "def sinusoidal_table(L, D):"));
    CHECK(has(starter, "    # --- your code: start ---\n    return np.zeros((L, D))\n    # --- your code: end ---\n"));
    CHECK(has(exercise_starter(m, Lang::zh), "你的代码"));
    const std::string check = exercise_check_script(m, Lang::zh);
    CHECK(has(check, "exec attnlab pe --len 10 --dim 6 --dtype float64 --seed 0 --quiet --lang zh --against-tensor pe --judged-at float32 --against \"$answer\""));
}

TEST_CASE("exercise: check.sh's command line is quoted for the shell, as the tour's commands are")
{
    CHECK(command_text({"pe", "--len", "8", "--input", "x=inputs/x.npy"}) == "attnlab pe --len 8 --input x=inputs/x.npy");
    CHECK(command_text({"mask", "--fill", "-1e9", "a b", "it's", "$HOME"}) == "attnlab mask --fill -1e9 'a b' 'it'\\''s' '$HOME'");
}

TEST_CASE("exercise: inputs are never degenerate, over seeds 0-99 of every exercise")
{
    // Every starter's stub returns zeros of the answer's shape: the untouched starter's answer.
    for (const auto& info : exercise_list()) {
        for (std::uint64_t seed = 0; seed < 100; ++seed) {
            CAPTURE(info.name);
            CAPTURE(seed);
            const MadeExercise m = made(info.name, {}, seed);
            auto nonzero = [](const Tensor& t) {
                for (double v : t.values)
                    if (v != 0.0) return true;
                return false;
            };
            CHECK(nonzero(m.answer));  // the untouched starter is wrong
            REQUIRE(!m.mistakes.empty());
            for (const auto& mistake : m.mistakes) {
                CAPTURE(mistake.id);
                CHECK(nonzero(mistake.answer));  // no mistake is the untouched starter's answer
                double diff = 0.0;
                const ReferenceError f32{measure_reference_error(m.answer, m.answer).max_abs, 0.0};
                CHECK(!tensors_match(m.answer, mistake.answer, judging_tolerance({DType::float32, DType::float32}, f32, 0.0), &diff));
            }
        }
    }
}

TEST_CASE("exercise: padding-mask refuses a batch or length that pads nothing")
{
    CHECK_THROWS_AS(made("padding-mask", {{"batch", 1}}), InputError);
    CHECK_THROWS_AS(made("padding-mask", {{"len", 2}}), InputError);
    // seed 0 drew lengths [6 5 6]: nothing for 'padding one late' to pad, so the starter matched it
    const MadeExercise m = made("padding-mask");
    long shortest = 99;
    for (const auto& in : m.inputs)
        if (in.name == "lengths")
            for (double v : in.tensor.values) shortest = std::min(shortest, static_cast<long>(v));
    CHECK(shortest <= 4);
}

TEST_CASE("exercise.json: read by its schema, every refusal naming the field")
{
    const std::string good = R"({"name": "attention", "seed": 3, "sizes": {"len": 5}, "inputs": [{"name": "x", "file": "inputs/x.npy"}]})";
    const ExerciseFile f = parse_exercise_file(good, "e.json");
    CHECK(f.name == "attention");
    CHECK(f.seed == 3);
    CHECK(f.sizes == std::map<std::string, long>{{"len", 5}});
    CHECK(f.inputs == std::vector<std::pair<std::string, std::string>>{{"x", "inputs/x.npy"}});
    auto refused = [](const std::string& text, const std::string& message) {
        CAPTURE(text);
        CHECK_THROWS_WITH_AS(parse_exercise_file(text, "e.json"), message.c_str(), InputError);
    };
    const std::string again = "; make the exercise again with attnlab exercise new";
    refused("[1]", "e.json: not an exercise file written by attnlab exercise new (not a JSON object)");
    refused(R"({"seed": 3, "sizes": {}, "inputs": []})", "e.json: \"name\" is missing" + again);
    refused(R"({"name": "", "seed": 3, "sizes": {}, "inputs": []})", "e.json: \"name\" is empty or too long" + again);
    refused(R"({"name": "a\u001b", "seed": 3, "sizes": {}, "inputs": []})", "e.json: \"name\" holds a control character" + again);
    refused(R"({"name": "a", "seed": -3, "sizes": {}, "inputs": []})", "e.json: \"seed\" is of another type" + again);
    refused(R"({"name": "a", "seed": 3, "sizes": {"len": 2.5}, "inputs": []})", "e.json: \"sizes\".\"len\" is not a whole number" + again);
    refused(R"({"name": "a", "seed": 3, "sizes": {"len": 4294967296}, "inputs": []})", "e.json: \"sizes\".\"len\" is out of range" + again);
    refused(R"({"name": "a", "seed": 3, "sizes": {}, "inputs": [7]})", "e.json: \"inputs\"[0] is not an object" + again);
    refused(R"({"name": "a", "seed": 3, "sizes": {}, "inputs": [{"name": "x"}]})", "e.json: \"inputs\"[0].\"file\" is missing" + again);
    for (const char* path : {"../x.npy", "/etc/passwd", "inputs//x.npy", "inputs/../../x"}) {
        refused(std::string(R"({"name": "a", "seed": 3, "sizes": {}, "inputs": [{"name": "x", "file": ")") + path + "\"}]}",
                std::string("e.json: input file '") + path + "' is not a path inside the folder");
    }
    std::string many = R"({"name": "a", "seed": 3, "sizes": {}, "inputs": [)";
    for (int i = 0; i < 65; ++i) many += std::string(i ? "," : "") + R"({"name": "x", "file": "x"})";
    refused(many + "]}", "e.json: \"inputs\" has more than 64 entries" + again);
    refused(std::string(65, '[') + std::string(65, ']'), "e.json: the document is nested more than 64 deep" + again);
    refused(std::string(kMaxExerciseFile + 1, ' '), "e.json: the file is larger than 1 MiB" + again);
}

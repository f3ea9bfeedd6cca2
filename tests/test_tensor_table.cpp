// The manual's tables of tensors and options (docs/experiments.md) are generated from the
// declared tensor lists and the registered option rows, and these tests hold them together: a
// tensor or an option added, renamed or changed must reach the manual. An option has one
// spelling everywhere: its flag in the manual and the reproduce command, its JSON name in the
// params.
#include "attnlab/core/params_json.hpp"
#include "attnlab/core/rng.hpp"
#include "attnlab/experiments/command_line.hpp"
#include "attnlab/registry/experiment_list.hpp"
#include "attnlab/registry/registry.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

using namespace attnlab;

namespace {

std::string readme_section(const std::string& name)
{
    std::ifstream in(std::string(ATTNLAB_DATA_DIR) + "/../docs/experiments.md");
    REQUIRE(in.good());
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string readme = ss.str();
    const std::string begin = "<!-- " + name + ":begin -->\n", end = "<!-- " + name + ":end -->";
    const auto a = readme.find(begin), b = readme.find(end);
    REQUIRE(a != std::string::npos);
    REQUIRE(b != std::string::npos);
    return readme.substr(a + begin.size(), b - a - begin.size());
}

// Sets an option to a value other than its default (valid or not: nothing runs).
void change(BoundOption o)
{
    std::visit([](auto& ref) {
        using R = std::decay_t<decltype(ref)>;
        if constexpr (std::is_same_v<R, ChoiceRef>) {
            const std::string now = ref.get();
            for (const auto& name : ref.names)
                if (name != now) return ref.set(name);
        } else if constexpr (std::is_same_v<R, bool*>) *ref = !*ref;
        else if constexpr (std::is_same_v<R, std::string*>) *ref += "0";
        else if constexpr (std::is_same_v<R, std::vector<long>*>) *ref = {1, 2};
        else if constexpr (std::is_same_v<R, std::optional<long>*>) *ref = 3;
        else if constexpr (std::is_same_v<R, std::optional<double>*>) *ref = 0.5;
        else *ref += 1;
    }, o.ref);
}

}  // namespace

TEST_CASE("the manual's tensor table is the declared tensor lists")
{
    std::vector<std::pair<std::string, std::vector<TensorInfo>>> lists;
    for (const auto& r : registered_experiments())
        if (!r.tensors.empty()) lists.emplace_back(r.name, r.tensors);
    const std::string expected = tensors_markdown(lists);
    INFO("the table docs/experiments.md should hold:\n" << expected);
    CHECK(readme_section("tensors") == expected);
}

TEST_CASE("the manual's options table is the registered option rows")
{
    const std::string expected = options_markdown();
    INFO("the table docs/experiments.md should hold:\n" << expected);
    CHECK(readme_section("options") == expected);
    for (const auto& r : registered_experiments())
        for (const auto& o : r.invoke()->options()) {
            CAPTURE(o.flag);
            CHECK(expected.find("| `" + r.name + "` | `" + o.flag + "` |") != std::string::npos);
        }
}

TEST_CASE("every option has one spelling: its JSON name in the params, its flag in the reproduce command")
{
    int options = 0;
    for (const auto& r : registered_experiments()) {
        CAPTURE(r.name);
        const auto names = r.invoke()->options();
        const ParamList params = r.invoke()->params();
        REQUIRE(params.size() >= names.size());
        for (std::size_t k = 0; k < names.size(); ++k) {
            CAPTURE(names[k].flag);
            CHECK(params[k].first == json_name(names[k].flag));
            CHECK(params[k].first.find('-') == std::string::npos);
            auto changed = r.invoke();
            const auto bound = changed->options();
            change(bound[k]);
            const auto args = changed->command();
            CHECK(args.front() == r.name);
            CHECK(std::find(args.begin(), args.end(), names[k].flag) != args.end());
            ++options;
        }
        CHECK(r.invoke()->command() == std::vector<std::string>{r.name});  // the defaults need no option
    }
    CHECK(options >= 70);
}

TEST_CASE("an option's JSON name is its flag with dashes as underscores")
{
    CHECK(json_name("--max-len") == "max_len");
    CHECK(json_name("--len") == "len");
    CHECK(json_name("--high-freq-factor") == "high_freq_factor");
}

TEST_CASE("params: a name set again keeps its place, a new one goes last, and the JSON keeps order and type")
{
    ParamList list{{"seed", std::uint64_t{18446744073709551615u}}, {"dtype", std::string("float32")}, {"tol", ParamValue()}};
    set_param(list, "dtype", std::string("float16"));
    set_params(list, {{"len", 8L}, {"scale", 0.125}, {"tol", 1e-3}});
    REQUIRE(list.size() == 5);
    CHECK(list[1].first == "dtype");
    CHECK(std::get<std::string>(list[1].second) == "float16");
    CHECK(list[2].first == "tol");
    CHECK(param_number(list, "tol") == 1e-3);
    CHECK(param_number(list, "len") == 8.0);
    CHECK(find_param(list, "nothing") == nullptr);
    CHECK_THROWS_AS(param_number(list, "dtype"), std::logic_error);
    CHECK(params_json(list).dump() == R"({"seed":18446744073709551615,"dtype":"float16","tol":0.001,"len":8,"scale":0.125})");
    CHECK(params_json({{"flag", true}, {"none", ParamValue()}, {"list", std::vector<long>{3, 1}}}).dump() ==
          R"({"flag":true,"none":null,"list":[3,1]})");
}

namespace {

// Each tensor a run produced is one it declares, with the declared axes (or the batched
// ones) and the shape its declaration gives for these parameters before computing anything:
// the memory estimate, --show and the manual's table all read that declaration.
template <class P>
void check_declared_shapes(const Experiment<P>& e, const P& given)
{
    const P p = resolved(e, given);
    const Run run = compute_all(e, p, RunContext{});
    const P q = settled(e, p, run);
    for (const Tensor& t : run.tensors) {
        CAPTURE(t.name);
        const TensorDecl<P>* d = e.decl(t.name);
        REQUIRE(d != nullptr);
        if (d->applies) CHECK(d->applies(q));
        CHECK((t.axes == d->axes || t.axes == d->alt_axes));
        std::vector<std::size_t> shape;
        for (double n : d->shape(q)) shape.push_back(static_cast<std::size_t>(n));
        INFO("produced [" << fmt::format("{}", fmt::join(t.shape, ", ")) << "], declared [" << fmt::format("{}", fmt::join(shape, ", ")) << "]");
        CHECK(t.shape == shape);
    }
}

}  // namespace

TEST_CASE("every tensor a run produces has the axes and the shape its declaration gives, for random configurations of every experiment")
{
    Rng rng(2026, 0);
    int sampled = 0;
    for_each_experiment([&](const auto& e) {
        CAPTURE(e.command);
        if (!e.sample) return;
        ++sampled;
        for (int draw = 0; draw < 4; ++draw) {
            const auto p = e.sample(rng);
            CAPTURE(fmt::format("{}", fmt::join(command_of(e, p), " ")));
            check_declared_shapes(e, p);
        }
    });
    CHECK(sampled >= 12);
    // train has no sampler (a training run is seconds, not milliseconds): small hand-picked runs
    TrainParams single;
    single.steps = 2, single.d_model = 8, single.heads = 2, single.train_len = 4, single.batch = 2, single.task = train::Task::count;
    single.pe = train::Scheme::shaw, single.until_learned = 3;
    check_declared_shapes(train_experiment(), single);
    TrainParams compare = single;
    compare.compare = true, compare.seeds = 2, compare.until_learned.reset(), compare.eval_lens = {4, 9};
    check_declared_shapes(train_experiment(), compare);
    compare.until_learned = 2, compare.task = train::Task::copy;
    check_declared_shapes(train_experiment(), compare);
}

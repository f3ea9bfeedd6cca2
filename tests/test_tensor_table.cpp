// The manual's tables of tensors and options (docs/experiments.md) are generated from the
// declared tensor lists and the registered option rows, and these tests hold them together: a
// tensor or an option added, renamed or changed must reach the manual. An option has one
// spelling everywhere: its flag in the manual and the reproduce command, its JSON name in the
// params.
#include "attnlab/core/params_json.hpp"
#include "attnlab/registry/registry.hpp"

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

#include "attnlab/experiments/tour.hpp"
#include "attnlab/render/tour.hpp"
#include "attnlab/render/render.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

using namespace attnlab;

namespace {

Tensor tensor(std::string name, std::vector<std::string> axes, Elem elem, std::vector<std::size_t> shape,
              std::vector<double> values)
{
    return Tensor{std::move(name), std::move(axes), elem, std::move(shape), std::move(values)};
}

Check named(std::string name, Check c)
{
    c.name = std::move(name);
    return c;
}

Report demo_report()
{
    Report r;
    r.command = "demo";
    r.main_tensor = "m";
    r.offered = {"m", "f", "b"};
    const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    r.tensors.push_back(tensor("m", {"query", "key"}, Elem::float64, {2, 2}, {0.5, -inf, nan, 2.0}));
    r.tensors.push_back(tensor("f", {"pair"}, Elem::float32, {2}, {static_cast<double>(0.1f), 1.0}));
    r.tensors.push_back(tensor("b", {"key"}, Elem::boolean, {2}, {1, 0}));
    r.checks.push_back(named("ok", at_most("a claim", "max |x|", 1e-7, 1e-5, 1.0)));
    r.checks.push_back(named("bad", at_most("another", "max |y|", 0.5, 1e-5, 1.0)));
    r.checks.push_back(named("art", article_claim("an article says", "leak", 0.3, 0.01)));
    return r;
}

}  // namespace

TEST_CASE("checks: verdicts, NaN never passes, and each builder says what kind of bound it has")
{
    CHECK(at_most("", "", 1.0, 1.0, 10.0).passed());
    CHECK_FALSE(less_than("", "", 1.0, 1.0).passed());
    CHECK(greater_than("", "", 2.0, 1.0).passed());
    CHECK_FALSE(at_most("", "", std::nan(""), 1.0, 10.0).passed());
    CHECK_FALSE(greater_than("", "", std::nan(""), 1.0).passed());
    CHECK_FALSE(exact_zero("", "", std::nan("")).passed());
    CHECK_FALSE(exact_zero("", "", 1e-300).passed());
    CHECK(at_most("", "", 0.0, 0.0, 1.0).tol_kind == TolKind::numeric);
    CHECK(bit_identical("", "", 0.0).tol_kind == TolKind::fixed);
    CHECK(exact_zero("", "", 0.0).tol_kind == TolKind::fixed);
    CHECK(within_bound("", "", 0.5, 1.0).tol_kind == TolKind::fixed);
    CHECK(article_claim("", "", 0.5, 1.0).role == Role::article);
    CHECK(article_claim_numeric("", "", 0.5, 1.0, 10.0).tol_kind == TolKind::numeric);
}

TEST_CASE("a rounding tolerance that reaches 1/8 of its scale makes the check untestable, a fixed bound never does")
{
    CHECK(untestable(at_most("", "", 0.0, 1.0, 8.0)));
    CHECK_FALSE(untestable(at_most("", "", 0.0, 0.99, 8.0)));
    CHECK_FALSE(untestable(at_most("", "", 0.0, 1e9, 0.0)));  // no yardstick
    CHECK(untestable(article_claim_numeric("", "", 5.0, 0.2, 1.0)));
    CHECK_FALSE(untestable(within_bound("", "", 0.5, 1.0)));
    CHECK_FALSE(untestable(article_claim("", "", 0.5, 1.0)));
    Check nan_tol = at_most("", "", 0.0, std::nan(""), 1.0);
    CHECK(untestable(nan_tol));  // a tolerance that is not a number cannot vouch for anything
}

TEST_CASE("a report passes when its invariants pass and article claims do not decide it")
{
    Report r = demo_report();
    CHECK_FALSE(r.passed());  // "bad" fails
    r.checks.erase(r.checks.begin() + 1);
    CHECK(r.passed());        // "art" is wrong but is an article's claim
}

TEST_CASE("check lines carry the measured figure, the comparison and the tolerance")
{
    const Report r = demo_report();
    CHECK(check_line(r.checks[0], false) == "PASS  a claim: max |x| = 1e-07 (needs <= 1e-05)");
    CHECK(check_line(r.checks[1], false) == "FAIL  another: max |y| = 0.5 (needs <= 1e-05)");
    CHECK(check_line(r.checks[2], false) ==
          "WRONG an article says (article's claim): leak = 0.3 (needs <= 0.01)");
}

TEST_CASE("CSV is tidy long form with non-finite spellings and a wide form for rank 2")
{
    const Report r = demo_report();
    RenderOptions o;
    o.format = Format::csv;
    CHECK(render(r, o) == "query,key,value\n0,0,0.5\n0,1,-inf\n1,0,nan\n1,1,2\n");
    o.wide = true;
    CHECK(render(r, o) == "query,k0,k1\n0,0.5,-inf\n1,nan,2\n");
    o.wide = false;
    o.tensor = "f";
    CHECK(render(r, o) == "pair,value\n0,0.1\n1,1\n");
    o.tensor = "b";
    CHECK(render(r, o) == "key,value\n0,1\n1,0\n");
    o.tensor = "nope";
    CHECK_THROWS_AS(render(r, o), InputError);
    o.tensor = "f";
    o.wide = true;
    CHECK_THROWS_AS(render(r, o), InputError);
}

TEST_CASE("JSON has the contract's keys, shortest float32 values and non-finite strings")
{
    const auto j = to_json(demo_report(), true);
    CHECK(j["command"] == "demo");
    CHECK(j["tensors"][0]["name"] == "m");
    CHECK(j["tensors"][0]["shape"] == nlohmann::json::array({2, 2}));
    CHECK(j["tensors"][0]["axes"] == nlohmann::json::array({"query", "key"}));
    CHECK(j["tensors"][0]["data"][0][1] == "-inf");
    CHECK(j["tensors"][0]["data"][1][0] == "nan");
    CHECK(j["tensors"][1]["data"].dump() == "[0.1,1.0]");
    CHECK(j["tensors"][2]["data"].dump() == "[true,false]");
    CHECK(j["checks"][1]["passed"] == false);
    CHECK(j["checks"][2]["role"] == "article");
    CHECK(j["passed"] == false);
}

TEST_CASE("text output names shape and axes, and summarises large tensors")
{
    Report r;
    std::vector<double> values(40 * 40, 0.0);
    values.back() = 1.5;
    r.tensors.push_back(tensor("big", {"row", "col"}, Elem::float64, {40, 40}, values));
    RenderOptions o;
    const std::string text = render(r, o);
    CHECK(text.find("big  shape [40, 40]  (row, col)  float64\n") == 0);
    CHECK(text.find("...") != std::string::npos);
    CHECK(text.find("1.5000") != std::string::npos);
    o.full = true;
    const std::string full = render(r, o);
    CHECK(full.find("...") == std::string::npos);
}

TEST_CASE("text output wraps a long vector at 100 columns, each line headed by its first index")
{
    Report r;
    r.tensors.push_back(tensor("short", {"pos"}, Elem::float64, {3}, {1, 2, 3}));
    std::vector<double> values;
    for (int i = 0; i < 25; ++i) values.push_back(i * 1.25);
    r.tensors.push_back(tensor("long", {"pos"}, Elem::float64, {25}, values));
    RenderOptions o;
    const std::string text = render(r, o);
    // 25 numbers of 7 characters ("30.0000"): 8 columns each, 11 to a line after "  [24]"
    CHECK(text == "short  shape [3]  (pos)  float64\n   1 2 3\n\n"
                  "long  shape [25]  (pos)  float64\n"
                  "  [ 0]       0  1.2500  2.5000  3.7500  5.0000  6.2500  7.5000  8.7500 10.0000 11.2500 12.5000\n"
                  "  [11] 13.7500 15.0000 16.2500 17.5000 18.7500 20.0000 21.2500 22.5000 23.7500 25.0000 26.2500\n"
                  "  [22] 27.5000 28.7500 30.0000\n\n");
    // a vector over the summary threshold keeps one summarised line; --full wraps all of it
    r.tensors = {tensor("huge", {"pos"}, Elem::float64, {2000}, std::vector<double>(2000, 1.0))};
    CHECK(render(r, o) == "huge  shape [2000]  (pos)  float64\n     1   1   1 ...   1   1   1\n\n");
    o.full = true;
    const std::string full = render(r, o);
    std::size_t lines = 0, longest = 0;
    for (std::size_t at = 0, nl; (nl = full.find('\n', at)) != std::string::npos; at = nl + 1) ++lines, longest = std::max(longest, nl - at);
    CHECK(longest <= 100);
    CHECK(lines == 2 + (2000 + 45) / 46);  // the title, 46 numbers a line ("  [1999]" then 46 of " 1"), the blank line
}

TEST_CASE("text output of rank 3 heads each matrix with its leading index")
{
    Report r;
    r.tensors.push_back(tensor("t", {"batch", "query", "key"}, Elem::float64, {2, 1, 2}, {0, 0, 0, 3}));
    const std::string text = render(r, RenderOptions{});
    CHECK(text == "t  shape [2, 1, 2]  (batch, query, key)  float64\n"
                  "  [batch=0]\n   0 0\n  [batch=1]\n   0 3\n\n");
}

TEST_CASE("memory guard refuses before allocating, naming the size")
{
    RunContext ctx;
    ctx.max_memory_bytes = 1024;
    CHECK_NOTHROW(require_memory(1000, ctx, "x"));
    CHECK_THROWS_WITH_AS(require_memory(4096, ctx, "x [32, 32]"),
                         doctest::Contains("needs about 4.0 KiB (x [32, 32])"), InputError);
}

TEST_CASE("the tour refuses a claim whose check an experiment does not make")
{
    Report r;
    r.command = "demo";
    r.checks.push_back(at_most("a claim", "x", 0.0, 1.0, 10.0));
    r.checks.back().name = "present";
    CHECK_NOTHROW(require_checks(r, {"present"}, "order"));
    CHECK_THROWS_WITH_AS(require_checks(r, {"present", "gone"}, "order"), "tour section order: demo has no check gone",
                         std::logic_error);
}

TEST_CASE("the work guard refuses past the budget and tells the caller about a long run")
{
    RunContext ctx;
    ctx.max_work = 1e9;
    double told = 0.0;
    ctx.on_long_run = [&](double work) { told = work; };
    CHECK_NOTHROW(require_work(1e6, ctx, "small"));
    CHECK(told == 0.0);  // short: nothing to say
    CHECK_THROWS_WITH_AS(require_work(2e9, ctx, "x [4, 4]"), doctest::Contains("needs about 2 G multiply-adds (x [4, 4]"), InputError);
    ctx.max_work = 1e12;
    require_work(5e9, ctx, "long");
    CHECK(told == 5e9);
}

TEST_CASE("check lines wrap at a terminal's width between words or Chinese characters, and not at 0")
{
    const std::string line = "PASS  every weights row that is not fully masked sums to 1: max |sum_j w - 1| = 1.02e-07 <= 1.91e-06";
    CHECK(wrap_text(line, 0, 6) == line);
    CHECK(wrap_text(line, 200, 6) == line);
    CHECK(wrap_text(line, 40, 6) == "PASS  every weights row that is not\n"          // 35 columns: "fully" would make 41
                                    "      fully masked sums to 1: max |sum_j\n"  // 40
                                    "      w - 1| = 1.02e-07 <= 1.91e-06");
    // Escapes take no column, and the padding after a verdict is kept.
    const std::string coloured = "\x1b[1mPASS \x1b[0m a b c d e f g h i j k l m n o p q r s t u v w x y z";
    CHECK(wrap_text(coloured, 30, 6) == "\x1b[1mPASS \x1b[0m a b c d e f g h i j k l\n      m n o p q r s t u v w x\n      y z");  // 29, 29
    // A Chinese character is two columns and a line may break between two of them.
    CHECK(wrap_text("通过 每一行之和为 1: 1e-07 <= 2e-06", 20, 2) == "通过 每一行之和为 1:\n  1e-07 <= 2e-06");
    CHECK(wrap_text("通过 每一行未被完全屏蔽的权重之和为一", 20, 5) == "通过 每一行未被完全\n     屏蔽的权重之和\n     为一");  // 19, 19
    // A text of several lines: each wrapped on its own.
    CHECK(wrap_text("aaaa bbbb cccc\ndd", 12, 0) == "aaaa bbbb\ncccc\ndd");
    // Leading spaces stay (the properties under a comparison).
    CHECK(wrap_text("    PASS  aaaa bbbb cccc dddd eeee", 22, 10) == "    PASS  aaaa bbbb\n          cccc dddd\n          eeee");
}

TEST_CASE("the tour's text wraps at a terminal's width in both languages, and stays as it was at width 0")
{
    const auto columns = [](const std::string& line) {
        std::size_t n = 0;
        for (std::size_t i = 0; i < line.size(); ++i) {
            const auto c = static_cast<unsigned char>(line[i]);
            if (c < 0x80 || c >= 0xC0) n += c >= 0xE0 ? 2 : 1;  // a lead byte; three-byte characters counted wide
        }
        return n;
    };
    for (Lang lang : {Lang::en, Lang::zh}) {
        TourParams p;
        p.section = "alibi";
        p.lang = lang;
        RunContext ctx;
        ctx.lang = lang;
        const TourReport t = run_tour(p, ctx);
        const std::string wide = render_tour_text(t, false, false, {}, 0), narrow = render_tour_text(t, false, false, {}, 72);
        std::size_t longest_wide = 0, lines = 0;
        for (std::size_t at = 0, nl; (nl = narrow.find('\n', at)) != std::string::npos; at = nl + 1, ++lines) {
            CAPTURE(narrow.substr(at, nl - at));
            CHECK(columns(narrow.substr(at, nl - at)) <= 72);
        }
        for (std::size_t at = 0, nl; (nl = wide.find('\n', at)) != std::string::npos; at = nl + 1) longest_wide = std::max(longest_wide, columns(wide.substr(at, nl - at)));
        CHECK(longest_wide > 100);  // unwrapped, some lines are long
        CHECK(lines > 20);
    }
}

TEST_CASE("xml_escape: markup and quotes escaped, an apostrophe kept, a control character XML cannot hold written as ?")
{
    CHECK(xml_escape("a<b & \"c\" it's\x01\td\n") == "a&lt;b &amp; &quot;c&quot; it's?\td\n");
    CHECK(xml_escape("狗 咬 人") == "狗 咬 人");
}

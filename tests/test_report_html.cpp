// The HTML report: one element per check and per picture, text escaped, nothing loaded, the
// page's language, the learner's verdict; the tour's page with its sections and claims.
#include "attnlab/render/report_html.hpp"

#include "attnlab/experiments/tour.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <string>

using namespace attnlab;

namespace {

std::size_t count(const std::string& s, const std::string& what)
{
    std::size_t n = 0;
    for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
}

Report mask_report()
{
    Report r;
    r.command = "mask";
    r.params = {{"len", 3L}, {"kind", std::string("causal")}};
    r.checks.push_back(exact_zero("every masked weight is exactly 0", "max |w| at <masked> keys", 0.0));
    Check wrong = at_most("the article's claim & more", "max |a - b|", 2.5, 1e-6, 1.0);
    wrong.role = Role::article;
    r.checks.push_back(wrong);
    Tensor w{"weights", {"query", "key"}, Elem::float32, {3, 3}, {1, 0, 0, 0.5, 0.5, 0, 0.25, 0.25, 0.5}};
    r.tensors.push_back(w);
    r.tensors.push_back(Tensor{"empty", {"pos"}, Elem::float64, {0}, {}});
    r.notes.push_back("a note <b>");
    return r;
}

}  // namespace

TEST_CASE("report page: one element per check and per tensor, escaped, self-contained")
{
    const std::string page = report_html(mask_report(), {Lang::en, "attnlab mask --len 3", false, std::nullopt});
    CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
    CHECK(page.find("<html lang=\"en\">") != std::string::npos);
    CHECK(count(page, "data-check=\"") == 2);
    CHECK(page.find("data-check=\"every_masked_weight\"") == std::string::npos);  // the check's own name, not its claim
    CHECK(count(page, "<figure data-tensor=\"") == 2);
    CHECK(page.find("<figure data-tensor=\"weights\">") != std::string::npos);
    CHECK(page.find("max |w| at &lt;masked&gt; keys = 0 (needs &lt;= 0)") != std::string::npos);
    CHECK(page.find("the article&#39;s claim") == std::string::npos);
    CHECK(page.find("the article's claim &amp; more") != std::string::npos);
    CHECK(page.find("<li class=\"check wrong\"") != std::string::npos);  // an article's claim measured wrong
    CHECK(page.find("a note &lt;b&gt;") != std::string::npos);
    CHECK(page.find("<svg xmlns") != std::string::npos);  // the picture inline
    CHECK(page.find("<td class=\"num\">0.25</td>") != std::string::npos);  // a small tensor's values
    CHECK(page.find("@media (max-width: 700px)") != std::string::npos);
    for (const char* loads : {"<script", "<link", "<img", "<iframe", "src=", "url(", "@import"}) CHECK_MESSAGE(page.find(loads) == std::string::npos, loads);
    CHECK(page.find("attnlab mask --len 3") != std::string::npos);
    CHECK(page.find("Every checked property holds (exit status 0).") != std::string::npos);
    CHECK(page.find("Measurements") == std::string::npos);
    Report timed = mask_report();
    timed.measurements = {{"seconds", 0.25}, {"blas", std::string("OpenBLAS")}};
    const std::string bench = report_html(timed, {Lang::en, "attnlab bench", false, std::nullopt});
    CHECK(bench.find("<details open><summary>Measurements</summary>") != std::string::npos);
    CHECK(bench.find("<tr><th>seconds</th><td><code>0.25</code></td></tr>") != std::string::npos);
    const std::string quiet = report_html(mask_report(), {Lang::en, "attnlab mask", true, std::nullopt});
    CHECK(count(quiet, "data-tensor=") == 0);  // as the run's JSON under --quiet
}

TEST_CASE("report page: in Chinese, and the learner's verdict with its diagnosis")
{
    Report r = mask_report();
    Comparison c;
    c.file = "mine.npy", c.tensor = "weights", c.passed = false, c.judged_at = "float32";
    c.shape_expected = c.shape_got = {3, 3};
    c.max_abs_diff = 0.5, c.mismatched = 3, c.total = 9;
    c.diagnosis.push_back({"mask_transposed", "掩码转置了", 0.0, Certainty::matches});
    r.against = c;
    const std::string page = report_html(r, {Lang::zh, "attnlab mask --against mine.npy", false, std::nullopt});
    CHECK(page.find("<html lang=\"zh-CN\">") != std::string::npos);
    CHECK(page.find("检查") != std::string::npos);
    CHECK(page.find("<p class=\"summary fail\">不一致: <code>mine.npy</code>") != std::string::npos);
    CHECK(page.find("data-mistake=\"mask_transposed\"") != std::string::npos);
    CHECK(page.find("有检查的性质不成立（退出码 1）。") != std::string::npos);  // --against decides the status
}

TEST_CASE("report page: the tour's sections, their pictures and the claims with sources")
{
    TourParams o;
    o.section = "alibi";
    RunContext ctx;
    const TourReport t = run_tour(o, ctx);
    const std::string page = tour_html(t, {Lang::en, "attnlab tour --section alibi", false, std::nullopt});
    std::size_t checks = 0;
    for (const auto& s : t.sections)
        for (const auto& run : s.runs) checks += run.checks.size();
    CHECK(count(page, "data-check=\"") == checks);
    CHECK(count(page, "data-claim=\"") == t.claims.size());
    CHECK(count(page, "<figure data-tensor=\"bias\">") == 1);
    CHECK(page.find("source: Press et al. 2022 (ALiBi), §3") != std::string::npos);
    CHECK(page.find("reproduce: <code>attnlab alibi --heads 6</code>") != std::string::npos);
}

#include "attnlab/core/report.hpp"
#include "attnlab/core/tour_report.hpp"

#include "attnlab/core/error_model.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <limits>
#include <map>

namespace attnlab {

bool RunContext::keeps(const std::string& name, const std::string& main_tensor) const
{
    if (keep_all) return true;
    if (keep_none) return false;
    if (!drawn.empty() && (name == drawn + "_min" || name == drawn + "_max")) return true;
    if (main_only) return name == main_tensor;
    if (show.empty()) return true;
    return std::find(show.begin(), show.end(), name) != show.end();
}

namespace {

bool compares(double measured, Compare cmp, double tolerance)
{
    if (std::isnan(measured)) return false;
    switch (cmp) {
    case Compare::le: return measured <= tolerance;
    case Compare::lt: return measured < tolerance;
    case Compare::ge: return measured >= tolerance;
    case Compare::gt: return measured > tolerance;
    }
    return false;
}

}  // namespace

bool Check::passed() const { return compares(measured, cmp, tolerance); }

bool Intended::holds() const { return compares(measured, cmp, tolerance); }

Verdict Check::verdict() const
{
    if (passed()) return Verdict::holds;
    return intended && intended->holds() ? Verdict::imprecise : Verdict::wrong;
}

Check quoting(Check c, std::string quote, std::string reading)
{
    c.quote = std::move(quote);
    c.reading = std::move(reading);
    return c;
}

Check meaning(Check c, std::string metric, double measured, double tolerance, Compare cmp)
{
    c.intended = Intended{std::move(metric), measured, tolerance, cmp};
    return c;
}

namespace {

Check make(std::string claim, std::string metric, double measured, double bound, Compare cmp,
           Role role, TolKind kind)
{
    Check c;
    c.claim = std::move(claim);
    c.metric = std::move(metric);
    c.measured = measured;
    c.tolerance = bound;
    c.cmp = cmp;
    c.role = role;
    c.tol_kind = kind;
    return c;
}

}  // namespace

Check at_most(std::string claim, std::string metric, double measured, double tol, double scale)
{
    Check c = make(std::move(claim), std::move(metric), measured, tol, Compare::le, Role::invariant, TolKind::numeric);
    c.scale = scale;
    return c;
}

Check within_bound(std::string claim, std::string metric, double measured, double bound)
{
    return make(std::move(claim), std::move(metric), measured, bound, Compare::le, Role::invariant,
                TolKind::fixed);
}

Check exact_zero(std::string claim, std::string metric, double measured)
{
    return within_bound(std::move(claim), std::move(metric), measured, 0.0);
}

Check bit_identical(std::string claim, std::string metric, double max_difference)
{
    return within_bound(std::move(claim), std::move(metric), max_difference, 0.0);
}

Check greater_than(std::string claim, std::string metric, double measured, double bound)
{
    return make(std::move(claim), std::move(metric), measured, bound, Compare::gt, Role::invariant,
                TolKind::fixed);
}

Check less_than(std::string claim, std::string metric, double measured, double bound)
{
    return make(std::move(claim), std::move(metric), measured, bound, Compare::lt, Role::invariant,
                TolKind::fixed);
}

Check article_claim(std::string claim, std::string metric, double measured, double bound, Compare cmp)
{
    return make(std::move(claim), std::move(metric), measured, bound, cmp, Role::article, TolKind::fixed);
}

Check article_claim_numeric(std::string claim, std::string metric, double measured, double tol, double scale)
{
    Check c = make(std::move(claim), std::move(metric), measured, tol, Compare::le, Role::article, TolKind::numeric);
    c.scale = scale;
    return c;
}

std::string untestable_note(const Check& c, DType dtype, Lang lang, UntestableBy by)
{
    const bool zh = lang == Lang::zh;
    std::string text = fmt::format(fmt::runtime(zh ? "{0} 不在 {1} 下检查：舍入本身就可能让 {2} 偏离 {3:.3g}，达到其自然大小 {4:.3g} 的 1/{5:.0f}（实测 {6:.3g}）"
                                                   : "{0} is not checked in {1}: rounding alone may move {2} by {3:.3g}, 1/{5:.0f} or more of its natural size {4:.3g} (measured {6:.3g})"),
                                   c.name, name_of(dtype), c.metric, c.tolerance, c.scale, 1.0 / kMaxToleranceFraction, c.measured);
    if (dtype == DType::float64) return text;
    const DType finer = dtype == DType::float32 ? DType::float64 : DType::float32;
    if (by == UntestableBy::file) {
        return text + fmt::format(fmt::runtime(zh ? "；把你的张量存为 {} 即可检查它" : "; save your tensor as {} to check it"), name_of(finer));
    }
    return text + fmt::format(fmt::runtime(zh ? "；用 --dtype {} 运行可检查它" : "; run with --dtype {} to check it"), name_of(finer));
}

bool untestable(const Check& c)
{
    return c.tol_kind == TolKind::numeric && c.scale > 0.0 && !(c.tolerance < kMaxToleranceFraction * c.scale);
}

Check demonstration(std::string claim, std::string metric, double measured, double bound, Compare cmp)
{
    return make(std::move(claim), std::move(metric), measured, bound, cmp, Role::demonstration, TolKind::fixed);
}

namespace {

std::string axes_text(const TensorInfo& t)
{
    std::string out = "[";
    for (std::size_t a = 0; a < t.axes.size(); ++a) out += (a ? ", " : "") + t.axes[a];
    out += "]";
    if (!t.alt_axes.empty()) {
        out += " or [";
        for (std::size_t a = 0; a < t.alt_axes.size(); ++a) out += (a ? ", " : "") + t.alt_axes[a];
        out += "]";
    }
    return out;
}

}  // namespace

std::string tensors_help(const std::vector<TensorInfo>& infos)
{
    std::string out = "Tensors (--show, --tensor), with their axes:\n";
    for (const auto& t : infos) {
        out += fmt::format("  {} {}{}{}\n", t.name, axes_text(t), t.main ? " (main)" : "",
                           t.on_demand ? " (computed when asked for)" : t.saved ? " (written by --save; printed when named)" : "");
    }
    return out;
}

std::string tensors_markdown(const std::vector<std::pair<std::string, std::vector<TensorInfo>>>& commands)
{
    std::string out = "| command | tensor | axes | computed |\n| --- | --- | --- | --- |\n";
    for (const auto& [command, infos] : commands)
        for (const auto& t : infos) {
            out += fmt::format("| `{}` | `{}`{} | {} | {} |\n", command, t.name, t.main ? " (main)" : "", axes_text(t),
                               t.on_demand ? "when asked for" : t.saved ? "by --save, or when named" : "always");
        }
    return out;
}

bool Report::passed() const
{
    return std::all_of(checks.begin(), checks.end(),
                       [](const Check& c) { return c.role != Role::invariant || c.passed(); });
}

const Tensor* Report::find(const std::string& name) const
{
    for (const auto& t : tensors) {
        if (t.name == name) return &t;
    }
    return nullptr;
}

const Check* Report::find_check(const std::string& name) const
{
    for (const auto& c : checks) {
        if (c.name == name) return &c;
    }
    return nullptr;
}

Lang lang_from_env()
{
    // POSIX: LC_ALL overrides LC_MESSAGES, which overrides LANG; the first one set decides.
    for (const char* name : {"LC_ALL", "LC_MESSAGES", "LANG"}) {
        const char* value = std::getenv(name);
        if (value == nullptr || value[0] == '\0') continue;
        return std::string_view(value).rfind("zh", 0) == 0 ? Lang::zh : Lang::en;
    }
    return Lang::en;
}

double eps_of(DType dtype)
{
    switch (dtype) {
    case DType::float32: return std::numeric_limits<float>::epsilon();
    case DType::float16: return std::numeric_limits<f16>::epsilon();
    case DType::bfloat16: return std::numeric_limits<bf16>::epsilon();
    case DType::float64: break;
    }
    return std::numeric_limits<double>::epsilon();
}

std::string human_bytes(double bytes)
{
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (bytes >= 1024.0 && u < 5) {
        bytes /= 1024.0;
        ++u;
    }
    return fmt::format("{:.1f} {}", bytes, units[u]);
}

void require_work(double multiply_adds, const RunContext& ctx, const std::string& what)
{
    if (multiply_adds > ctx.max_work) {
        throw InputError(fmt::format(
            "this request needs about {:.3g} G multiply-adds ({}; roughly {:.0f} s on one core), above the work budget "
            "of {:.3g} G; reduce the sizes or raise --max-work",
            multiply_adds / 1e9, what, multiply_adds / kWorkPerSecond, ctx.max_work / 1e9));
    }
    if (multiply_adds > 2.0 * kWorkPerSecond && ctx.on_long_run) ctx.on_long_run(multiply_adds);
}

void require_memory(double bytes, const RunContext& ctx, const std::string& what)
{
    if (bytes > ctx.max_memory_bytes) {
        throw InputError(fmt::format("this request needs about {} ({}), above the memory budget of {}; {}", human_bytes(bytes), what,
                                     human_bytes(ctx.max_memory_bytes), ctx.memory_advice));
    }
}

bool TourReport::passed() const
{
    return std::all_of(sections.begin(), sections.end(), [](const TourSection& s) { return s.passed; });
}

std::string fact_verdict_word(FactVerdict v, Lang lang)
{
    if (lang != Lang::zh) return std::string(name_of(v));
    switch (v) {
    case FactVerdict::confirmed: return "来源证实";
    case FactVerdict::contradicted: return "来源否定";
    case FactVerdict::ambiguous: return "说法含糊";
    case FactVerdict::not_in_source: return "来源中没有";
    }
    return {};
}

ArticleCount count_article_claims(const TourReport& t)
{
    std::map<std::string, Verdict> worst;  // wrong outranks imprecise, which outranks holds
    const auto rank = [](Verdict v) { return v == Verdict::wrong ? 2 : v == Verdict::imprecise ? 1 : 0; };
    for (const auto& c : t.claims) {
        if (c.check.role != Role::article) continue;
        const auto [it, added] = worst.emplace(c.check.name, c.check.verdict());
        if (!added && rank(c.check.verdict()) > rank(it->second)) it->second = c.check.verdict();
    }
    ArticleCount n;
    for (const auto& [name, v] : worst) {
        ++n.distinct;
        (v == Verdict::wrong ? n.wrong : v == Verdict::imprecise ? n.imprecise : n.holds) += 1;
    }
    return n;
}

std::string shape_text(const std::vector<std::size_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

}  // namespace attnlab

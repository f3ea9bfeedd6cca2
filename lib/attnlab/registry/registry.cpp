// The command line's entries, one per experiment of experiment_list.hpp.
//
// How to add an experiment `foo` (docs/develop.md, "How to add an experiment"): write
// experiments/foo_params.hpp and foo.cpp (`foo_experiment()`: option rows, tensors, checks,
// mistakes, a sampler), add `f(foo_experiment())` to registry/experiment_list.hpp, then its
// unit tests, its section in docs/experiments.md and its row in the README's table. The app binds the options; the runner does the rest.
#include "attnlab/registry/registry.hpp"

#include "attnlab/experiments/input_sizes.hpp"
#include "attnlab/learner/against.hpp"
#include "attnlab/registry/experiment_list.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>

namespace attnlab {

namespace {

template <class P>
class Bound final : public Invocation {
public:
    explicit Bound(const Experiment<P>& e) : e_(e) {}
    std::vector<BoundOption> options() override
    {
        std::vector<BoundOption> out;
        for (const auto& r : e_.options) {
            out.push_back({r.flag, r.help, r.field(p_), r.limits, r.only, r.excludes, r.sets_length_of, r.aliases, {}});
            out.back().old_spelling_given = [this, flag = r.flag](const std::string& old, const std::string& name) {
                old_spellings_.push_back({flag, old, name});
            };
        }
        return out;
    }
    std::vector<std::string> command() const override { return command_of(e_, p_); }
    ParamList params() const override { return params_of(e_, resolved(e_, p_)); }
    Report run(const RunContext& ctx) const override
    {
        std::string sizes;
        Report report = run_judged(e_, fit_input_sizes(e_, p_, ctx, sizes), ctx);
        if (!sizes.empty()) report.notes.insert(report.notes.begin(), sizes);
        note_old_spellings(old_spellings_, ctx.lang, report);
        return report;
    }

private:
    const Experiment<P>& e_;
    P p_;
};

template <class P>
Registered entry(const Experiment<P>& e)
{
    Registered r{e.command, e.summary, e.example, e.measurements_help, tensor_infos(e),
                 [&e] { return std::unique_ptr<Invocation>(new Bound<P>(e)); }, {}};
    if (e.sample)
        r.draw = [&e](Rng& rng) {
            const P p = e.sample(rng);
            return Registered::Drawn{command_of(e, p), params_of(e, resolved(e, p))};
        };
    return r;
}

}  // namespace

const std::vector<Registered>& registered_experiments()
{
    static const std::vector<Registered> list = [] {
        std::vector<Registered> out;
        for_each_experiment([&out](const auto& e) { out.push_back(entry(e)); });
        return out;
    }();
    return list;
}

const Registered& registered(const std::string& name)
{
    for (const auto& r : registered_experiments())
        if (r.name == name) return r;
    throw std::out_of_range("no experiment named " + name);
}

void Invocation::note_old_spellings(const std::vector<OldSpelling>& given, Lang lang, Report& report)
{
    std::vector<std::string> notes;
    for (const auto& s : given) {
        notes.push_back(lang == Lang::zh ? fmt::format("{0} {1} 是 {0} {2} 的旧写法", s.flag, s.old_name, s.name)
                                                : fmt::format("{0} {1} is the old spelling of {0} {2}", s.flag, s.old_name, s.name));
    }
    report.notes.insert(report.notes.begin(), notes.begin(), notes.end());
}

std::string option_takes(const BoundOption& o)
{
    const std::string range = o.limits.kind == Limits::Kind::whole_range ? fmt::format(" {}..{}", o.limits.lo, o.limits.hi) : "";
    if (std::holds_alternative<bool*>(o.ref)) return "flag";
    if (const auto* c = std::get_if<ChoiceRef>(&o.ref)) return fmt::format("{}", fmt::join(o.only.empty() ? c->names : o.only, "|"));
    if (std::holds_alternative<std::vector<long>*>(o.ref)) return "list of whole numbers" + range;
    if (std::holds_alternative<std::string*>(o.ref)) return "text";
    const bool real = std::holds_alternative<double*>(o.ref) || std::holds_alternative<std::optional<double>*>(o.ref);
    if (real) return o.limits.kind == Limits::Kind::positive ? "number > 0" : "number";
    return "whole number" + range;
}

std::string option_default(const BoundOption& o) { return detail::spelled(o.ref).value_or(""); }

std::string options_markdown()
{
    auto cell = [](std::string text) {
        std::string out;
        for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
        return out;
    };
    std::string out = "| command | option | takes | default | what it sets |\n| --- | --- | --- | --- | --- |\n";
    for (const auto& r : registered_experiments()) {
        const auto invocation = r.invoke();
        for (const auto& o : invocation->options()) {
            const std::string def = option_default(o);
            out += fmt::format("| `{}` | `{}` | {} | {} | {} |\n", r.name, o.flag, cell(option_takes(o)), def.empty() ? "" : "`" + def + "`",
                               cell(o.help));
        }
    }
    return out;
}

}  // namespace attnlab

// What every experiment is, and the one runner that runs any of them.
//
// An experiment is data (ggml's test-backend-ops does the same for its ops):
//   - a pure compute function, per dtype, that returns a Run: its tensors by name;
//   - a declared list of those tensors: name, axes, whether the checks always need it or it
//     is computed only when asked for, its shape as a function of the parameters (the
//     memory estimate, --show, --tensor and the manual's tensor table all read this list);
//   - a list of named checks. Each is a short function of the tensors it reads, with its
//     claim written beside its measurement. It does not care where a tensor came from, so
//     it runs as well on a tensor from a file as on our own compute;
//   - notes, params as JSON, and the validation of the parameters.
// The runner owns everything the six experiments share: validation, --show/--tensor, the
// memory estimate before anything is computed (rendering included), the dtype dispatch,
// --tol, and the Report.
#pragma once

#include "attnlab/core/report.hpp"
#include "attnlab/core/rng.hpp"
#include "attnlab/experiments/options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <any>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnlab {

// Every tensor a run computed, in declaration order, and figures derived on the way that
// the params report (the scale actually used, YaRN's attention factor, ...).
struct Run {
    std::vector<Tensor> tensors;
    ParamList derived;
    // Figures the compute measured on the way, for checks of a tensor it did not keep
    // (attention weights streamed row by row, say). A check reads the tensor when it is there.
    std::map<std::string, double> measured;
    // Figures reported as they are, not checked (the report's measurements).
    ParamList measurements;
    std::vector<std::string> read_files;  // files the compute read (Report::read_files)
    std::string save_info;                // Report::save_info

    // What the compute resolved from the params (the mask's rules, the block's configuration,
    // the frequencies), kept for the checks and notes to read rather than derive again.
    std::any resolved;

    const Tensor* find(const std::string& name) const;
    const Tensor& at(const std::string& name) const;  // a missing tensor is a programming error
    bool has(const std::string& name) const { return find(name) != nullptr; }
    void add(Tensor t) { tensors.push_back(std::move(t)); }
    template <class C>
    void keep(C c)
    {
        resolved = std::make_shared<const C>(std::move(c));
    }
};

// The C the compute kept (std::bad_any_cast if it kept another type, or nothing).
template <class C>
const C& resolved_as(const Run& run)
{
    return *std::any_cast<const std::shared_ptr<const C>&>(run.resolved);
}

// What one compute call is asked for: the dtype, the seed, and which of the on-demand
// tensors to compute.
struct Plan {
    DType dtype = DType::float32;
    std::uint64_t seed = 0;
    std::vector<std::string> wanted;
    const std::map<std::string, Tensor>* inputs = nullptr;  // --input: replacements of the run's inputs
    const std::function<void(const std::string&)>* progress = nullptr;  // RunContext::on_progress, when set
    bool wants(const std::string& name) const
    {
        return std::find(wanted.begin(), wanted.end(), name) != wanted.end();
    }
    const Tensor* input(const std::string& name) const
    {
        if (inputs == nullptr) return nullptr;
        const auto it = inputs->find(name);
        return it == inputs->end() ? nullptr : &it->second;
    }
};

// always:    the checks read it, so it is computed on every run (and printed when asked).
// on_demand: computed only when --show, --tensor or the format asks for it.
// saved:     computed for --save, or when --show or --tensor names it; printed only when named
//            (state a later run reads back, too big or too raw to print by default).
enum class Need { always, on_demand, saved };

template <class P>
struct TensorDecl {
    std::string name;
    std::vector<std::string> axes;
    Need need = Need::always;
    std::function<std::vector<double>(const P&)> shape;  // sizes before computing anything
    std::function<bool(const P&)> applies;               // null: produced by every run
    std::vector<std::string> alt_axes;  // the axes it takes in the configurations where it is batched
};

// What a check may know besides the tensors it reads.
struct CheckEnv {
    DType dtype = DType::float32;
    double eps = 0.0;
    std::uint64_t seed = 0;
    Lang lang = Lang::en;
};

// A claim or note in the run's language; the Chinese text takes the same fmt arguments.
template <class... Args>
std::string tr(const CheckEnv& env, const char* en, const char* zh, Args&&... args)
{
    return fmt::format(fmt::runtime(env.lang == Lang::zh ? zh : en), std::forward<Args>(args)...);
}

// A check: its name, the tensors it reads (those whose given replacement, a learner's under
// --against, it judges), and the function that measures it (nullopt when it does not apply to
// this configuration).
template <class P>
struct CheckDef {
    std::string name;
    std::vector<std::string> reads;
    std::function<std::optional<Check>(const P&, const Run&, const CheckEnv&)> fn;
};

template <class P>
using NoteFn = std::function<std::optional<std::string>(const P&, const Run&, const CheckEnv&)>;

// A usual mistake, as data: the tensor it affects, what it is in English and Chinese, and
// how to build the tensor a learner who makes it would get (in float64, from the params and
// the run's own inputs).
template <class P>
struct Mistake {
    std::string id;
    std::string tensor;
    std::string en;
    std::string zh;
    std::function<Tensor(const P&, const Run&)> build;
};

// What depends on the element type: the compute, the checks that recompute in T, the notes.
template <class P>
struct Typed {
    std::function<Run(const P&, const Plan&)> compute;
    std::vector<CheckDef<P>> checks;
    std::vector<NoteFn<P>> notes;
};

struct Float16Format;
struct BFloat16Format;
template <class Format>
class Narrow;
template <class T>
struct TypeTag {
    using type = T;
};

template <class P>
struct Experiment {
    std::string command;
    std::string summary;  // one line: what it shows (the subcommand's --help)
    std::string example;  // a command line worth trying, for --help
    // What --help says in place of the tensor list, for a command that prints no tensors.
    std::string measurements_help;
    std::string main_tensor;
    std::vector<OptionRow<P>> options;
    std::vector<TensorDecl<P>> tensors;
    std::function<P(const P&)> resolve;  // fills in what the options imply (null: as given)
    std::function<void(const P&)> validate;
    // Turns a given --input into parameters (a file of positions into --positions).
    std::function<void(P&, RunContext&)> adopt_inputs;
    // Params the run reports beside its options (head_dim, say).
    std::function<ParamList(const P&)> derived_params;
    // Work memory beyond the declared tensors, for the dtype of the run (detail::elem_bytes
    // gives the bytes of one stored element).
    std::function<double(const P&, DType)> scratch_bytes;
    // Whether the compute moves each tensor's storage into the run (attend's taken): a tensor
    // is then held once, not computed and copied, and at most one conversion (float64, or a
    // 16-bit type into floats) is in flight at a time.
    bool moves_tensors = false;
    // Multiply-adds of the compute and the checks (an exp counted as kExpWork), before computing.
    std::function<double(const P&, const Plan&)> work;
    // What dominates the work, for the refusal message.
    std::function<std::string(const P&)> work_what;
    // The tensors --input may replace (the inputs the compute would otherwise draw).
    std::vector<std::string> inputs;
    // What a run chose from its own results (permute-test keeps the worst of its random
    // permutations), written into the parameters: a recompute at another precision, for the
    // error model, then computes the same thing rather than choosing again by its own rounding.
    std::function<void(const Run&, P&)> settle;
    // --against: the catalogue of usual mistakes, and the absolute tolerance a correct answer
    // computed another way needs for a tensor (default 64 eps (1 + max |expected|)).
    std::vector<Mistake<P>> mistakes;
    std::function<double(const P&, const std::string& tensor, double eps, const Tensor& expected)> against_atol;
    // Random valid parameters, small enough for thousands of runs: what the random tests
    // (the mutation test over every tensor, dtype and file form) draw from. Every experiment
    // with a catalogue of mistakes has one.
    std::function<P(Rng&)> sample;
    Typed<P> f32, f64, f16, bf16;

    // The four typed parts from one template: make(TypeTag<T>{}) for each element type, e.g.
    // e.set_typed([](auto t) { return foo_typed<typename decltype(t)::type>(); }).
    template <class Make>
    void set_typed(Make make)
    {
        f32 = make(TypeTag<float>{});
        f64 = make(TypeTag<double>{});
        f16 = make(TypeTag<Narrow<Float16Format>>{});
        bf16 = make(TypeTag<Narrow<BFloat16Format>>{});
    }

    const Typed<P>& typed(DType dtype) const
    {
        switch (dtype) {
        case DType::float32: return f32;
        case DType::float16: return f16;
        case DType::bfloat16: return bf16;
        case DType::float64: break;
        }
        return f64;
    }
    const TensorDecl<P>* decl(const std::string& name) const
    {
        for (const auto& d : tensors)
            if (d.name == name) return &d;
        return nullptr;
    }
};

// --against's judge, handed to the runner from above (learner/against.hpp's compare_against).
template <class P>
using CompareFn = std::function<Comparison(const Experiment<P>&, const P&, const Run&, const RunContext&)>;

namespace detail {

// The program itself, its libraries and the allocator's slack, before any tensor.
constexpr double kProcessBytes = 16.0 * 1024 * 1024;

// The common parameters every report starts with.
ParamList common_params(const RunContext& ctx);
// --tol replaces a numeric upper bound.
void apply_tol(Check& c, const RunContext& ctx);
double elem_bytes(DType dtype);
// Throws InputError for a --show/--tensor name the command does not produce here.
void require_offered(const std::string& command, const std::vector<std::string>& offered,
                     const std::vector<std::string>& show);
// "json for 19200000 numbers; pe [1200000, 16] the largest tensor"
std::string memory_what(const RunContext& ctx, double rendered, const std::string& largest);
// Every tensor of the run is declared, with the declared axes.
void require_declared(const std::string& command, const Tensor& t, const std::vector<std::string>* axes,
                      const std::vector<std::string>* alt_axes);

}  // namespace detail

// The declared tensors, for --help and the manual.
template <class P>
std::vector<TensorInfo> tensor_infos(const Experiment<P>& e)
{
    std::vector<TensorInfo> out;
    for (const auto& d : e.tensors) out.push_back({d.name, d.axes, d.alt_axes, d.need == Need::on_demand, d.name == e.main_tensor, d.need == Need::saved});
    return out;
}

namespace detail {

// Each --input names an input this configuration takes, in the shape its options imply.
template <class P>
void require_inputs(const Experiment<P>& e, const P& p, const std::vector<std::string>& offered, const RunContext& ctx)
{
    for (const auto& [name, t] : ctx.inputs) {
        const bool declared = std::find(e.inputs.begin(), e.inputs.end(), name) != e.inputs.end() &&
                              std::find(offered.begin(), offered.end(), name) != offered.end();
        if (!declared) {
            throw InputError(fmt::format("--input {}: {} takes no such input here; it takes {}", name, e.command, fmt::join(e.inputs, ", ")));
        }
        std::vector<std::size_t> shape;
        for (double n : e.decl(name)->shape(p)) shape.push_back(static_cast<std::size_t>(n));
        if (t.shape != shape) {
            throw InputError(fmt::format("--input {}: the file holds shape [{}], the options imply [{}]", name, fmt::join(t.shape, ", "),
                                         fmt::join(shape, ", ")));
        }
    }
}

// Whether --show or --tensor names the tensor.
inline bool named(const RunContext& ctx, const std::string& name)
{
    return std::find(ctx.show.begin(), ctx.show.end(), name) != ctx.show.end();
}

// Whether a run keeps (computes, then reports) the declared tensor: a saved one only for --save,
// or when --show or --tensor names it.
template <class P>
bool keeps(const TensorDecl<P>& d, const RunContext& ctx, const std::string& main_tensor)
{
    if (d.need != Need::saved || ctx.keep_all) return ctx.keeps(d.name, main_tensor);
    return named(ctx, d.name) && ctx.keeps(d.name, main_tensor);
}

}  // namespace detail

// The tensors this configuration produces, in declaration order.
template <class P>
std::vector<std::string> offered_tensors(const Experiment<P>& e, const P& p)
{
    std::vector<std::string> names;
    for (const auto& d : e.tensors)
        if (!d.applies || d.applies(p)) names.push_back(d.name);
    return names;
}

// The estimate of the peak, from the declared shapes, before anything is computed.
template <class P>
void estimate_memory(const Experiment<P>& e, const P& p, const Plan& plan, const RunContext& ctx)
{
    // computed, then kept as a Tensor (floats or doubles); or, moved, held once
    const double per = (e.moves_tensors ? 1.0 : 2.0) * detail::elem_bytes(ctx.dtype);
    const double scratch = e.scratch_bytes ? e.scratch_bytes(p, ctx.dtype) : 0.0;
    double bytes = detail::kProcessBytes + scratch;
    double rendered = 0.0, largest_n = -1.0;
    std::string largest;
    std::vector<std::string> optional;  // on-demand tensors this request computes
    for (const auto& d : e.tensors) {
        if (d.applies && !d.applies(p)) continue;
        if (d.need != Need::always && !plan.wants(d.name)) continue;
        const auto shape = d.shape(p);
        double n = 1.0;
        for (double s : shape) n *= s;
        bytes += n * per;
        if (d.need == Need::on_demand) optional.push_back(d.name);
        if (ctx.keeps(d.name, e.main_tensor)) rendered += n;
        if (n > largest_n) {
            largest_n = n;
            largest = fmt::format("{} [{}]", d.name, fmt::join(shape, ", "));
        }
    }
    if (e.moves_tensors) bytes += largest_n * detail::elem_bytes(ctx.dtype);  // the conversion in flight
    bytes += rendered * ctx.render_bytes_per_element;
    std::string what = detail::memory_what(ctx, rendered, largest);
    if (scratch > 0.0 && !largest.empty()) what += fmt::format("; {} of working copies", human_bytes(scratch));
    if (!optional.empty() && ctx.advise_show) what += fmt::format("; --show can leave out {}", fmt::join(optional, ", "));
    require_memory(bytes, ctx, what);
}

// Runs the checks of a typed list on a run.
// env: what the checks know besides the tensors (the dtype and eps they judge at).
// A check whose tolerance reaches its scale is not shown: it goes to `untestable` instead
// (unless --tol set the tolerance: then it is the user's).
template <class P>
std::vector<Check> run_checks(const std::vector<CheckDef<P>>& defs, const P& p, const Run& run,
                              const RunContext& ctx, const CheckEnv& env, std::vector<Check>* untestable = nullptr)
{
    std::vector<Check> out;
    for (const auto& def : defs) {
        std::optional<Check> c = def.fn(p, run, env);
        if (!c) continue;
        c->name = def.name;
        detail::apply_tol(*c, ctx);
        if (!ctx.tol && attnlab::untestable(*c)) {
            if (untestable) untestable->push_back(std::move(*c));
            continue;
        }
        out.push_back(std::move(*c));
    }
    return out;
}
template <class P>
std::vector<Check> run_checks(const std::vector<CheckDef<P>>& defs, const P& p, const Run& run,
                              const RunContext& ctx, std::vector<Check>* untestable = nullptr)
{
    return run_checks(defs, p, run, ctx, CheckEnv{ctx.dtype, eps_of(ctx.dtype), ctx.seed, ctx.lang}, untestable);
}

// What one compute is asked for: the on-demand tensors `wanted` names, the inputs; refused
// up front when its memory or work estimate is past the budget.
template <class P>
Plan plan_for(const Experiment<P>& e, const P& p, const std::vector<std::string>& offered, const RunContext& ctx,
              const std::function<bool(const std::string&)>& wanted)
{
    detail::require_inputs(e, p, offered, ctx);
    Plan plan{ctx.dtype, ctx.seed, {}, &ctx.inputs, ctx.on_progress ? &ctx.on_progress : nullptr};
    for (const auto& d : e.tensors)
        if (d.need != Need::always && (!d.applies || d.applies(p)) && wanted(d.name)) plan.wanted.push_back(d.name);
    estimate_memory(e, p, plan, ctx);
    if (e.work) require_work(e.work(p, plan), ctx, e.work_what ? e.work_what(p) : e.command);
    return plan;
}

// The parameters a run computes with: the given ones, resolved (defaults that depend on others).
template <class P>
P resolved(const Experiment<P>& e, const P& given)
{
    return e.resolve ? e.resolve(given) : given;
}

// The parameters with what the run chose from its results written in (Experiment::settle): a
// recompute at another precision computes the same thing.
template <class P>
P settled(const Experiment<P>& e, const P& p, const Run& run)
{
    P out = p;
    if (e.settle) e.settle(run, out);
    return out;
}

// Every tensor a configuration produces, on-demand ones included: what a check can be run
// on after one of them is replaced (a doctored tensor in a test, a learner's file).
template <class P>
Run compute_all(const Experiment<P>& e, const P& given, const RunContext& ctx)
{
    const P p = resolved(e, given);
    if (e.validate) e.validate(p);
    const Plan plan = plan_for(e, p, offered_tensors(e, p), ctx, [](const std::string&) { return true; });
    return e.typed(ctx.dtype).compute(p, plan);
}

// The experiment's checks on a run that may not come from its own compute.
template <class P>
std::vector<Check> check_run(const Experiment<P>& e, const P& given, const Run& run, const RunContext& ctx)
{
    const P p = resolved(e, given);
    return run_checks(e.typed(ctx.dtype).checks, p, run, ctx);
}

// Replaces the tensor of that name in a run (its shape may differ: a check must cope).
inline void replace_tensor(Run& run, Tensor t)
{
    for (auto& existing : run.tensors)
        if (existing.name == t.name) {
            existing = std::move(t);
            return;
        }
    throw std::logic_error("run has no tensor " + t.name + " to replace");
}

// The options a run was given and the figures they imply, as the report and exercise.json
// hold them.
template <class P>
ParamList params_of(const Experiment<P>& e, const P& p)
{
    ParamList out = param_values(e.options, p);
    if (e.derived_params)
        for (auto& item : e.derived_params(p)) out.push_back(std::move(item));
    return out;
}

// The arguments that reproduce a run with these parameters.
template <class P>
std::vector<std::string> command_of(const Experiment<P>& e, const P& p)
{
    return command_args(e.command, e.options, p);
}

template <class P>
Report run_adopted(const Experiment<P>& e, const P& given, const RunContext& ctx, const CompareFn<P>& compare);

// Runs an experiment; `compare` answers --against (null: the run takes no --against).
template <class P>
Report run_experiment(const Experiment<P>& e, const P& given, const RunContext& ctx, const CompareFn<P>& compare = {})
{
    if (!e.adopt_inputs) return run_adopted(e, given, ctx, compare);
    P placed = given;
    RunContext rest = ctx;
    e.adopt_inputs(placed, rest);
    return run_adopted(e, placed, rest, compare);
}

template <class P>
Report run_adopted(const Experiment<P>& e, const P& given, const RunContext& ctx, const CompareFn<P>& compare)
{
    if (!e.typed(ctx.dtype).compute) {
        throw InputError(fmt::format("--dtype {}: {} runs in float32 and float64 only", name_of(ctx.dtype), e.command));
    }
    const P p = resolved(e, given);
    if (e.validate) e.validate(p);
    Report report;
    report.command = e.command;
    report.main_tensor = e.main_tensor;
    report.offered = offered_tensors(e, p);
    detail::require_offered(e.command, report.offered, ctx.show);

    const std::string against = ctx.against ? (ctx.against->tensor.empty() ? e.main_tensor : ctx.against->tensor) : "";
    if (!against.empty()) detail::require_offered(e.command, report.offered, {against});
    auto kept = [&](const TensorDecl<P>& d) { return detail::keeps(d, ctx, e.main_tensor); };
    const Plan plan = plan_for(e, p, report.offered, ctx, [&](const std::string& name) { return kept(*e.decl(name)) || name == against; });

    const Typed<P>& typed = e.typed(ctx.dtype);
    Run run = typed.compute(p, plan);
    report.params = detail::common_params(ctx);
    set_params(report.params, params_of(e, p));
    set_params(report.params, run.derived);
    report.measurements = run.measurements;
    report.read_files = run.read_files;
    report.save_info = run.save_info;
    std::vector<Check> untestable;
    report.checks = run_checks(typed.checks, p, run, ctx, &untestable);
    if (ctx.against && !compare) throw std::logic_error(e.command + " was run with --against and no judge");
    if (ctx.against) report.against = compare(e, p, run, ctx);
    const CheckEnv env{ctx.dtype, eps_of(ctx.dtype), ctx.seed, ctx.lang};
    for (const auto& note : typed.notes)
        if (auto text = note(p, run, env)) report.notes.push_back(std::move(*text));
    for (const Check& c : untestable) report.notes.push_back(untestable_note(c, ctx.dtype, ctx.lang));
    report.untestable = std::move(untestable);
    for (const auto& t : run.tensors) {
        const auto* d = e.decl(t.name);
        detail::require_declared(e.command, t, d ? &d->axes : nullptr, d ? &d->alt_axes : nullptr);
    }
    for (const auto& d : e.tensors) {  // in declaration order, whatever order the compute used
        auto it = std::find_if(run.tensors.begin(), run.tensors.end(), [&](const Tensor& t) { return t.name == d.name; });
        if (it == run.tensors.end() || !kept(d)) continue;
        report.tensors.push_back(std::move(*it));
        if (d.need == Need::saved && !detail::named(ctx, d.name)) report.saved_only.push_back(d.name);
    }
    return report;
}

// Shape helpers for the declarations: sizes as doubles, so that a product cannot overflow.
inline double dsize(long n) { return static_cast<double>(n); }

}  // namespace attnlab

// --against: a learner's tensor held against the run's under the error model of
// core/error_model.hpp, its properties checked with the experiment's own checks at the
// precision the file carries, and the catalogued mistakes it matches named.
#pragma once

#include "attnlab/core/error_model.hpp"
#include "attnlab/core/measure.hpp"
#include "attnlab/experiments/experiment.hpp"
#include "attnlab/io/read.hpp"
#include "attnlab/learner/compare.hpp"

#include <algorithm>
#include <map>

namespace attnlab {

namespace detail {

// The tensor under judgement computed in other dtypes on the same input, each once: the
// float64 reference and the plain references whose error sets the tolerance. What the run
// chose from its results is settled first (Experiment::settle), so each dtype computes it.
template <class P>
class References {
public:
    References(const Experiment<P>& e, const P& p, const Run& run, const RunContext& ctx, std::string name)
        : e_(e), p_(settled(e, p, run)), ctx_(ctx), name_(std::move(name))
    {
        cache_.emplace(ctx.dtype, run.at(name_));
    }
    bool available(DType dtype) const { return cache_.count(dtype) || static_cast<bool>(e_.typed(dtype).compute); }
    const Tensor& in(DType dtype)
    {
        auto it = cache_.find(dtype);
        if (it != cache_.end()) return it->second;
        RunContext c = ctx_;
        c.dtype = dtype;
        c.against.reset();
        const Plan plan = plan_for(e_, p_, offered_tensors(e_, p_), c, [&](const std::string& n) { return n == name_; });
        return cache_.emplace(dtype, e_.typed(dtype).compute(p_, plan).at(name_)).first->second;
    }
    // Measured once per dtype: the tolerance, the floor and the precision probe all read it.
    const ReferenceError& error(DType dtype)
    {
        auto it = errors_.find(dtype);
        if (it != errors_.end()) return it->second;
        const ReferenceError measured = measure_reference_error(in(dtype), in(DType::float64));
        return errors_.emplace(dtype, measured).first->second;
    }

private:
    const Experiment<P>& e_;
    P p_;
    const RunContext& ctx_;
    std::string name_;
    std::map<DType, Tensor> cache_;
    std::map<DType, ReferenceError> errors_;
};

std::string precision_text(Precision at, Lang lang);

// The tolerance of the error model at that precision, or the learner's own --rtol/--atol.
template <class P>
Tolerance tolerance_at(References<P>& refs, Precision at, DType run_dtype, const AgainstRequest& req)
{
    const double run_error = run_dtype == DType::float64 ? 0.0 : refs.error(run_dtype).error;
    Tolerance tol = judging_tolerance(at, refs.error(at.compute), run_error);
    if (req.rtol) tol.rtol = *req.rtol;
    if (req.atol) tol.atol = *req.atol;
    if (req.rtol || req.atol) tol.fill_rtol = tol.rtol;
    return tol;
}

// A plain CSV has rows and columns: a rank-1 answer written as one row or one column
// (np.savetxt) is read as the vector it is.
void accept_csv_vector(Tensor& got, const Tensor& expected);
// Under MATCH, a property that fails says nothing against the learner: it is judged more finely
// than the match, or fails for the reference run too. Such properties are left out, named in
// a note.
void drop_failed_properties(Comparison& c, Lang lang);
// A learner's tensor of another shape than the one compared: a note naming the run's tensors
// of its shape (they may have meant --against-tensor one of them).
void note_same_shape(const std::vector<std::pair<std::string, std::vector<std::size_t>>>& shapes, const Tensor& got, const std::string& compared, Lang lang,
                     std::vector<std::string>& notes);

// Every tensor the run can give, with its shape: the computed ones as they are, the ones
// computed on demand as their declaration sizes them.
template <class P>
std::vector<std::pair<std::string, std::vector<std::size_t>>> tensor_shapes(const Experiment<P>& e, const P& p, const Run& run)
{
    std::vector<std::pair<std::string, std::vector<std::size_t>>> out;
    for (const auto& d : e.tensors) {
        if (d.applies && !d.applies(p)) continue;
        if (const Tensor* t = run.find(d.name)) {
            out.emplace_back(d.name, t->shape);
        } else if (d.shape) {
            std::vector<std::size_t> shape;
            for (double n : d.shape(p)) shape.push_back(static_cast<std::size_t>(n));
            out.emplace_back(d.name, shape);
        }
    }
    return out;
}

// --judged-at: a file stored coarser (a larger unit roundoff) than JUDGED_AT differs whatever
// its values, as stored_below, with a note that says how to save it.
void hold_to_storage(Elem stored, DType judged_at, Lang lang, Comparison& c);

// Refuses a comparison whose tolerance reaches the size of the values it judges.
void require_meaningful(const Tolerance& tol, const ReferenceError& ref, Precision at, const std::string& tensor);

// Whether every value of t is a number of that 16-bit dtype (a float32 file of bfloat16
// values, say): only then is "precision only" a diagnosis rather than a coincidence.
bool carries(const Tensor& t, DType dtype);

// float32 arithmetic is accepted for a float32 or float64 file against a float64 run, with a
// note; a tensor whose values are all float16 or bfloat16 numbers, and that matches at that
// precision's arithmetic only (a float32 file of bfloat16 values, a float16 file computed in
// float16), is named precision_only: still DIFFERS, with the --dtype that judges it there.
// Returns the precision the comparison ended at.
template <class P>
Precision judge_precision(References<P>& refs, const Tensor& expected, const Tensor& got, Precision at, const RunContext& ctx,
                          Comparison& c)
{
    const bool zh = ctx.lang == Lang::zh;
    const double at_own = c.max_abs_diff;
    if (ctx.dtype == DType::float64 && at.storage != DType::float16 && at.storage != DType::bfloat16) {
        const Precision f32{DType::float32, DType::float32};
        Comparison c32 = c;
        compare_tensors(expected, got, tolerance_at(refs, f32, ctx.dtype, *ctx.against), c32);
        if (c32.passed) {
            c = c32;
            c.judged_at = precision_text(f32, ctx.lang);
            c.notes.push_back(fmt::format(zh ? "在 float32 精度下一致（最大差 {:.3g}）；在 float64 精度下不一致" : "matches at float32 precision (max diff {:.3g}); at float64 it differs", at_own));
            return f32;
        }
    }
    // bfloat16's values are float16's too (8 significant bits in 11) wherever float16 reaches, so
    // a file that holds bfloat16 values is tried at bfloat16 first: it was most likely made there
    const bool bf16_values = carries(got, DType::bfloat16);
    for (DType d : bf16_values ? std::array{DType::bfloat16, DType::float16} : std::array{DType::float16, DType::bfloat16}) {
        // a precision no finer than the file's storage and looser than the run's arithmetic: a
        // float16 file computed in float16 (PyTorch's half on the CPU) against a float32 run
        if (unit_roundoff(d) < unit_roundoff(at.storage) || unit_roundoff(d) <= unit_roundoff(at.compute)) continue;
        if (!refs.available(d) || !carries(got, d)) continue;
        double diff = 0.0;
        const Tolerance tol_d = tolerance_at(refs, {d, d}, ctx.dtype, *ctx.against);
        // a precision whose tolerance reaches the values cannot vouch for anything (the floor)
        if (tolerance_too_large(tol_d, refs.error(d).max_abs) || !tensors_match(expected, got, tol_d, &diff)) continue;
        c.kinds.push_back("precision_only");
        c.notes.push_back(fmt::format(zh ? "只差精度：在 {0} 精度下一致（最大差 {1:.3g}）；要按 {0} 评判，用 --dtype {0} 运行" : "precision only: it matches at {0} precision (max diff {1:.3g}); to judge it there, run with --dtype {0}",
                                      name_of(d), diff));
        break;
    }
    return at;
}

// The tolerance a catalogued mistake is named within: the comparison's own, except that
// against a float64 run, where an answer is accepted at float32 precision, a mistake is named
// at that precision too (a mistake computed in numpy's float64 differs from ours by rounding
// a few ulps, which float64's own tolerance does not cover).
template <class P>
Tolerance naming_tolerance(References<P>& refs, const Comparison& c, const Tolerance& tol, Precision at, bool exact, const RunContext& ctx)
{
    const AgainstRequest& req = *ctx.against;
    const bool half = at.storage == DType::float16 || at.storage == DType::bfloat16;
    if (ctx.dtype != DType::float64 || half || exact || req.rtol || req.atol) {
        return Tolerance{c.rtol, c.atol, tol.fill_rtol};
    }
    return tolerance_at(refs, {DType::float32, DType::float32}, ctx.dtype, req);
}

}  // namespace detail

// Whether a check may read `other` beside the learner's `name`: an input the learner was
// given, or a tensor declared before `name` (the declarations follow the data flow, so those
// are upstream of it). A tensor the run computed from ours (alibi's bias from its slopes)
// would pair the learner's tensor with our own consequences of it.
template <class P>
bool upstream_of(const Experiment<P>& e, const std::string& other, const std::string& name)
{
    if (std::find(e.inputs.begin(), e.inputs.end(), other) != e.inputs.end()) return true;
    for (const auto& d : e.tensors) {
        if (d.name == name) return false;
        if (d.name == other) return true;
    }
    return false;
}

// The run's invariants that read `name` and nothing downstream of it, run on the learner's
// tensor at the precision it carries.
template <class P>
std::vector<Check> learner_properties(const Experiment<P>& e, const P& p, Run run, Tensor got, const std::string& name,
                                      const RunContext& ctx, DType storage, std::vector<std::string>& notes)
{
    got.name = name;
    got.axes = run.at(name).axes;
    replace_tensor(run, std::move(got));
    auto given = [&](const std::string& read) { return read == name || upstream_of(e, read, name); };
    std::vector<CheckDef<P>> reading;
    for (const auto& def : e.typed(ctx.dtype).checks)
        if (std::find(def.reads.begin(), def.reads.end(), name) != def.reads.end() && std::all_of(def.reads.begin(), def.reads.end(), given))
            reading.push_back(def);
    const CheckEnv env{coarser(storage, ctx.dtype), eps_of(coarser(storage, ctx.dtype)), ctx.seed, ctx.lang};
    std::vector<Check> out;
    std::vector<Check> untestable;
    for (Check& c : run_checks(reading, p, run, ctx, env, &untestable))
        if (c.role == Role::invariant) out.push_back(std::move(c));
    const UntestableBy by = unit_roundoff(env.dtype) > unit_roundoff(ctx.dtype) ? UntestableBy::file : UntestableBy::run;
    for (const Check& c : untestable) notes.push_back(untestable_note(c, env.dtype, ctx.lang, by));
    return out;
}

// Every catalogued mistake for `name` that matches the learner's tensor within the
// comparison's tolerance, nearest first; when none does and `lead`, the nearest one that
// explains most of the difference (explains_most), marked "closest".
template <class P>
std::vector<Diagnosis> diagnose(const Experiment<P>& e, const P& p, const Run& run, const Tensor& got, const std::string& name,
                                const Tolerance& tol, bool lead, Lang lang)
{
    std::vector<Diagnosis> found;
    std::optional<Diagnosis> nearest;
    for (const auto& m : e.mistakes) {
        if (m.tensor != name) continue;
        const Tensor wrong = m.build(p, run);
        if (wrong.shape != got.shape) continue;
        double diff = 0.0;
        const bool match = tensors_match(wrong, got, tol, &diff);
        Diagnosis d{m.id, lang == Lang::zh ? m.zh : m.en, diff, match ? Certainty::matches : Certainty::closest};
        if (match) found.push_back(d);
        else if (lead && explains_most(wrong, run.at(name), got) && (!nearest || diff < nearest->max_abs_diff)) nearest = d;
    }
    std::stable_sort(found.begin(), found.end(), [](const Diagnosis& a, const Diagnosis& b) { return a.max_abs_diff < b.max_abs_diff; });
    if (found.empty() && nearest) found.push_back(*nearest);
    return found;
}

template <class P>
Comparison compare_against(const Experiment<P>& e, const P& p, const Run& run, const RunContext& ctx)
{
    const AgainstRequest& req = *ctx.against;
    Comparison c;
    c.file = req.file;
    c.tensor = req.tensor.empty() ? e.main_tensor : req.tensor;
    const Tensor& expected = run.at(c.tensor);
    Tensor got = read_tensor_file(req.file, c.tensor, ctx.max_memory_bytes, &c.read_notes);
    detail::accept_csv_vector(got, expected);
    detail::References<P> refs(e, p, run, ctx, c.tensor);
    const bool exact = !precision_of(expected.elem);
    Precision at{coarser(precision_of(got.elem).value_or(ctx.dtype), ctx.dtype), ctx.dtype};
    const Tolerance tol = exact ? Tolerance{} : detail::tolerance_at(refs, at, ctx.dtype, req);
    if (!exact && !req.rtol && !req.atol) detail::require_meaningful(tol, refs.error(ctx.dtype), at, c.tensor);
    c.judged_at = exact ? (ctx.lang == Lang::zh ? "精确" : "exact") : detail::precision_text(at, ctx.lang);
    compare_tensors(expected, got, tol, c);
    if (got.shape != expected.shape) detail::note_same_shape(detail::tensor_shapes(e, p, run), got, c.tensor, ctx.lang, c.notes);
    if (!c.passed && !exact && !req.rtol && !req.atol) at = detail::judge_precision(refs, expected, got, at, ctx, c);
    if (!c.passed) detect_kinds(expected, got, tol, ctx.lang, c);
    if (req.judged_at) detail::hold_to_storage(got.elem, *req.judged_at, ctx.lang, c);  // after the kinds: its values may be right
    if (got.shape == expected.shape) c.properties = learner_properties(e, p, run, got, c.tensor, ctx, coarser(at.storage, at.compute), c.notes);
    if (c.passed) detail::drop_failed_properties(c, ctx.lang);
    // an answer of one value throughout is said to be one, not led to the mistake it happens to lie near
    const bool lead = std::none_of(c.kinds.begin(), c.kinds.end(), [](const std::string& k) { return k == "all_zero" || k == "constant"; });
    if (!c.passed) c.diagnosis = diagnose(e, p, run, got, c.tensor, detail::naming_tolerance(refs, c, tol, at, exact, ctx), lead, ctx.lang);
    return c;
}

// Runs an experiment that answers --against.
template <class P>
Report run_judged(const Experiment<P>& e, const P& p, const RunContext& ctx)
{
    return run_experiment(e, p, ctx, CompareFn<P>(compare_against<P>));
}

}  // namespace attnlab

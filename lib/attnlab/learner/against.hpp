// --against: a learner's tensor held against the run's, its properties checked with the
// experiment's own checks, and the catalogued mistakes it matches named.
#pragma once

#include "attnlab/core/measure.hpp"
#include "attnlab/experiments/experiment.hpp"
#include "attnlab/io/read.hpp"
#include "attnlab/learner/compare.hpp"

#include <algorithm>

namespace attnlab {

namespace detail {

// The largest finite |x| (a mask's -inf must not make the tolerance infinite).
inline double max_finite_abs(const Tensor& t)
{
    double m = 0.0;
    for (double v : t.values)
        if (std::isfinite(v)) m = std::max(m, std::abs(v));
    return m;
}

// The coarser of the run's dtype and the file's: a float32 answer is held to float32, a
// float16 one to float16.
inline double against_eps(DType run, const Tensor& got)
{
    const double file = got.elem == Elem::float32    ? eps_of(DType::float32)
                        : got.elem == Elem::float16  ? eps_of(DType::float16)
                        : got.elem == Elem::bfloat16 ? eps_of(DType::bfloat16)
                                                     : 0.0;
    return std::max(eps_of(run), file);
}

}  // namespace detail

// The run's checks that read `name`, run on the learner's tensor in its place.
template <class P>
std::vector<Check> learner_properties(const Experiment<P>& e, const P& p, Run run, Tensor got, const std::string& name,
                                      const RunContext& ctx)
{
    got.name = name;
    got.axes = run.at(name).axes;
    replace_tensor(run, std::move(got));
    std::vector<CheckDef<P>> reading;
    for (const auto& def : e.typed(ctx.dtype).checks)
        if (std::find(def.reads.begin(), def.reads.end(), name) != def.reads.end()) reading.push_back(def);
    return run_checks(reading, p, run, ctx);
}

// Every catalogued mistake for `name` whose tensor matches the learner's.
template <class P>
std::vector<Diagnosis> diagnose(const Experiment<P>& e, const P& p, const Run& run, const Tensor& got, const std::string& name,
                                double rtol, double atol, Lang lang)
{
    std::vector<Diagnosis> found;
    for (const auto& m : e.mistakes) {
        if (m.tensor != name) continue;
        double diff = 0.0;
        if (tensors_match(m.build(p, run), got, rtol, atol, &diff)) found.push_back({m.id, lang == Lang::zh ? m.zh : m.en, diff});
    }
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
    const Tensor got = read_tensor_file(req.file, c.tensor, ctx.max_memory_bytes);
    const double eps = detail::against_eps(ctx.dtype, got);
    const double rtol = req.rtol.value_or(8.0 * eps);
    const double atol = req.atol ? *req.atol
                        : e.against_atol ? e.against_atol(p, c.tensor, eps, expected)
                                         : 64.0 * eps * (1.0 + detail::max_finite_abs(expected));
    compare_tensors(expected, got, rtol, atol, c);
    if (got.shape == expected.shape) c.properties = learner_properties(e, p, run, got, c.tensor, ctx);
    if (!c.passed) c.diagnosis = diagnose(e, p, run, got, c.tensor, rtol, atol, ctx.lang);
    return c;
}

// Lets an experiment answer --against.
template <class P>
void enable_against(Experiment<P>& e)
{
    e.compare = [](const Experiment<P>& self, const P& p, const Run& run, const RunContext& ctx) {
        return compare_against(self, p, run, ctx);
    };
}

}  // namespace attnlab

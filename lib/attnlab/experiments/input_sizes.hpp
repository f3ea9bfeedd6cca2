// --input takes its sizes from the files: the whole-number options the command line left
// unset are fitted so that every --input file holds the shape the options imply (`rope --input
// q=q16.npy` with q [1, 1, 16, 4] runs at --len 16 --dim 4). Where no fit leaves the given
// options as they are, the refusal names the options that would fit.
//
// The fit knows nothing of any one experiment: it tries, for each free option, the sizes the
// files hold (and their products, for a width made of heads times a head's size), keeps the
// change that makes the most axes agree, and repeats while that number grows. Every trial is
// resolved and validated as a run would be.
#pragma once

#include "attnlab/experiments/experiment.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace attnlab {

namespace input_detail {

// The whole-number options of the rows (a long or an optional long with a range), by flag.
template <class P>
std::vector<const OptionRow<P>*> size_rows(const Experiment<P>& e)
{
    std::vector<const OptionRow<P>*> out;
    P scratch;
    for (const auto& row : e.options) {
        const OptionRef ref = row.field(scratch);
        const bool whole = std::holds_alternative<long*>(ref) || std::holds_alternative<std::optional<long>*>(ref);
        if (whole && row.limits.kind == Limits::Kind::whole_range) out.push_back(&row);
    }
    return out;
}

template <class P>
void set_size(const OptionRow<P>& row, P& p, long value)
{
    const OptionRef ref = row.field(p);
    if (auto* v = std::get_if<long*>(&ref)) **v = value;
    if (auto* v = std::get_if<std::optional<long>*>(&ref)) **v = value;
}

// The disagreement of a parameter set that is not a valid run: more than any valid one's.
inline constexpr long kInvalid = std::numeric_limits<long>::max();

// How many axes of the --input files disagree with the shapes P implies (every axis of a file
// whose rank differs), or kInvalid where P is not a valid run.
template <class P>
long disagreeing(const Experiment<P>& e, const P& given, const RunContext& ctx)
{
    try {
        const P p = resolved(e, given);
        if (e.validate) e.validate(p);
        long out = 0;
        for (const auto& [name, t] : ctx.inputs) {
            const auto* d = e.decl(name);
            if (d == nullptr) continue;  // require_inputs names it
            const std::vector<double> shape = d->shape(p);
            if (shape.size() != t.shape.size()) {
                out += static_cast<long>(t.shape.size());
                continue;
            }
            for (std::size_t a = 0; a < shape.size(); ++a) out += shape[a] == static_cast<double>(t.shape[a]) ? 0 : 1;
        }
        return out;
    } catch (const InputError&) {
        return kInvalid;
    }
}

// The sizes the files hold, and the products of two of them.
inline std::vector<long> candidate_sizes(const RunContext& ctx)
{
    std::set<long> dims;
    for (const auto& [name, t] : ctx.inputs)
        for (std::size_t n : t.shape) dims.insert(static_cast<long>(n));
    std::set<long> out = dims;
    for (long a : dims)
        for (long b : dims) out.insert(a * b);
    return {out.begin(), out.end()};
}

// Greedy: the one change of one row in ROWS that makes the most axes agree, while that grows.
template <class P>
P fitted(const Experiment<P>& e, P p, const std::vector<const OptionRow<P>*>& rows, const RunContext& ctx)
{
    const std::vector<long> sizes = candidate_sizes(ctx);
    long now = disagreeing(e, p, ctx);
    for (std::size_t round = 0; now != 0 && round <= rows.size(); ++round) {
        P best = p;
        long best_count = now;
        for (const auto* row : rows)
            for (long v : sizes) {
                if (v < row->limits.lo || v > row->limits.hi) continue;
                P trial = p;
                set_size(*row, trial, v);
                const long count = disagreeing(e, trial, ctx);
                if (count < best_count) best = trial, best_count = count;
            }
        if (best_count == now) break;
        p = best;
        now = best_count;
    }
    return p;
}

template <class P>
std::optional<long> get_size(const OptionRow<P>& row, const P& p)
{
    P copy = p;
    const OptionRef ref = row.field(copy);
    if (auto* v = std::get_if<long*>(&ref)) return **v;
    if (auto* v = std::get_if<std::optional<long>*>(&ref)) return **v;
    return std::nullopt;
}

// "--len 16 --dim 4": the size rows whose values differ between two parameter sets.
template <class P>
std::string changed_flags(const Experiment<P>& e, const P& before, const P& after)
{
    std::vector<std::string> out;
    for (const auto* row : size_rows(e)) {
        const auto now = get_size(*row, after);
        if (now && now != get_size(*row, before)) out.push_back(fmt::format("{} {}", row->flag, *now));
    }
    return fmt::format("{}", fmt::join(out, " "));
}

}  // namespace input_detail

// The parameters with the sizes the --input files hold, where the command line left them unset
// (ctx.given_flags); NOTE gets "sizes from --input: --len 16 --dim 4" when any changed. A file
// no fit explains is refused, naming the options that would fit it.
template <class P>
P fit_input_sizes(const Experiment<P>& e, const P& given, const RunContext& ctx, std::string& note)
{
    if (ctx.inputs.empty() || input_detail::disagreeing(e, given, ctx) == 0) return given;
    std::vector<const OptionRow<P>*> free, all = input_detail::size_rows(e);
    for (const auto* row : all)
        if (std::find(ctx.given_flags.begin(), ctx.given_flags.end(), row->flag) == ctx.given_flags.end()) free.push_back(row);
    const P p = input_detail::fitted(e, given, free, ctx);
    if (input_detail::disagreeing(e, p, ctx) == 0) {
        note = fmt::format(ctx.lang == Lang::zh ? "尺寸取自 --input 的文件：{}" : "sizes from the --input files: {}", input_detail::changed_flags(e, given, p));
        return p;
    }
    const P any = input_detail::fitted(e, given, all, ctx);
    if (input_detail::disagreeing(e, any, ctx) != 0) return given;  // require_inputs says what the file holds
    for (const auto& [name, t] : ctx.inputs) {
        const std::vector<double> implied = e.decl(name)->shape(resolved(e, given));
        if (implied != std::vector<double>(t.shape.begin(), t.shape.end()))
            throw InputError(fmt::format("--input {}: the file holds shape [{}], the options given imply [{}]; {} would fit it", name, fmt::join(t.shape, ", "),
                                         fmt::join(implied, ", "), input_detail::changed_flags(e, given, any)));
    }
    return given;
}

}  // namespace attnlab

#include "attnlab/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace attnlab {

bool Check::passed() const
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

Recorder::Recorder(std::string command, std::string main_tensor, const RunContext& ctx)
    : ctx_(ctx)
{
    report_.command = std::move(command);
    report_.main_tensor = std::move(main_tensor);
    report_.params["seed"] = ctx.seed;
    report_.params["dtype"] = name_of(ctx.dtype);
    report_.params["tol"] = ctx.tol ? nlohmann::ordered_json(*ctx.tol) : nullptr;
    report_.params["max_memory_bytes"] = ctx.max_memory_bytes;
}

bool Recorder::wants(const std::string& name)
{
    if (std::find(report_.offered.begin(), report_.offered.end(), name) ==
        report_.offered.end()) {
        report_.offered.push_back(name);
    }
    if (ctx_.main_only) return name == report_.main_tensor;
    if (ctx_.show.empty()) return true;
    return std::find(ctx_.show.begin(), ctx_.show.end(), name) != ctx_.show.end();
}

void Recorder::add(Tensor t)
{
    if (t.axes.size() != t.values.dimension()) {
        throw std::logic_error(fmt::format("tensor {} has {} axis names for rank {}", t.name,
                                           t.axes.size(), t.values.dimension()));
    }
    report_.tensors.push_back(std::move(t));
}

void Recorder::check(Check c)
{
    const bool upper_bound = c.cmp == Compare::le || c.cmp == Compare::lt;
    if (ctx_.tol && c.tol_kind == TolKind::numeric && upper_bound) c.tolerance = *ctx_.tol;
    report_.checks.push_back(std::move(c));
}

void Recorder::note(std::string text) { report_.notes.push_back(std::move(text)); }

Report Recorder::finish()
{
    // A name asked for with --show/--tensor that this command never offered is a usage error.
    for (const auto& name : ctx_.show) {
        if (std::find(report_.offered.begin(), report_.offered.end(), name) ==
            report_.offered.end()) {
            throw InputError(fmt::format("unknown tensor '{}' for {}; it produces: {}", name,
                                         report_.command, fmt::join(report_.offered, ", ")));
        }
    }
    return std::move(report_);
}

double eps_of(DType dtype)
{
    return dtype == DType::float32 ? static_cast<double>(std::numeric_limits<float>::epsilon())
                                   : std::numeric_limits<double>::epsilon();
}

double tol_for(DType dtype, double ulps_f32, double ulps_f64)
{
    return eps_of(dtype) * (dtype == DType::float32 ? ulps_f32 : ulps_f64);
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

void require_memory(double bytes, const RunContext& ctx, const std::string& what)
{
    if (bytes > ctx.max_memory_bytes) {
        throw InputError(fmt::format(
            "this request needs about {} ({}), above the memory budget of {}; "
            "reduce the sizes or raise --max-memory",
            human_bytes(bytes), what, human_bytes(ctx.max_memory_bytes)));
    }
}

}  // namespace attnlab

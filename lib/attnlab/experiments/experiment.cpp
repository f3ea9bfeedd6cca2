#include "attnlab/experiments/experiment.hpp"

#include "attnlab/experiments/command_line.hpp"
#include "attnlab/core/error_model.hpp"

#include <fmt/format.h>

namespace attnlab {

const Tensor* Run::find(const std::string& name) const
{
    for (const auto& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

const Tensor& Run::at(const std::string& name) const
{
    if (const Tensor* t = find(name)) return *t;
    throw std::logic_error("run has no tensor " + name);
}

std::string shell_word(const std::string& a)
{
    const bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$*?;&|<>()`!#~[]{}") == std::string::npos;
    if (plain) return a;
    std::string out = "'";  // in single quotes, a single quote is closed, escaped and reopened
    for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string command_text(const std::vector<std::string>& args)
{
    std::string out = "attnlab";
    for (const auto& a : args) out += " " + shell_word(a);
    return out;
}

namespace detail {

ParamList common_params(const RunContext& ctx)
{
    return {{"seed", ctx.seed},
            {"dtype", std::string(name_of(ctx.dtype))},
            {"tol", ctx.tol ? ParamValue(*ctx.tol) : ParamValue()},
            {"max_memory_bytes", ctx.max_memory_bytes}};
}

void apply_tol(Check& c, const RunContext& ctx)
{
    const bool upper_bound = c.cmp == Compare::le || c.cmp == Compare::lt;
    if (ctx.tol && c.tol_kind == TolKind::numeric && upper_bound) c.tolerance = *ctx.tol;
}

double elem_bytes(DType dtype) { return dtype == DType::float64 ? 8.0 : 4.0; }  // 16-bit types are held in a float

void require_offered(const std::string& command, const std::vector<std::string>& offered,
                     const std::vector<std::string>& show)
{
    for (const auto& name : show) {
        if (std::find(offered.begin(), offered.end(), name) == offered.end()) {
            throw InputError(fmt::format("unknown tensor '{}' for {}; it produces: {}", name, command,
                                         fmt::join(offered, ", ")));
        }
    }
}

std::string memory_what(const RunContext& ctx, double rendered, const std::string& largest)
{
    if (largest.empty()) return "its working memory";  // a run that declares no tensor (bench)
    if (ctx.render_bytes_per_element == 0.0 || rendered == 0.0) return fmt::format("{} the largest tensor", largest);  // nothing printed
    return fmt::format("{} for {:.0f} numbers; {} the largest tensor", ctx.render_format, rendered, largest);
}

void require_declared(const std::string& command, const Tensor& t, const std::vector<std::string>* axes,
                      const std::vector<std::string>* alt_axes)
{
    if (axes == nullptr) throw std::logic_error(command + " computed an undeclared tensor " + t.name);
    if (t.axes != *axes && t.axes != *alt_axes) {
        throw std::logic_error(fmt::format("{}: tensor {} has axes ({}), declared ({})", command, t.name,
                                           fmt::join(t.axes, ", "), fmt::join(*axes, ", ")));
    }
}

}  // namespace detail

}  // namespace attnlab

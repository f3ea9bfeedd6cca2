// The experiment contract shared by every subcommand: an experiment takes its parameters and
// a RunContext, and returns a Report (named tensors with their axes, checks with measured
// figures, notes). One renderer (render.hpp) turns any Report into text, CSV or JSON.
#pragma once

#include "attnlab/enums.hpp"
#include "attnlab/tensor.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnlab {

// Bad input from the user: the program prints one line and exits with status 2.
struct InputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// How a tensor's values are to be read and printed.
enum class Elem { float32, float64, boolean, index };
constexpr auto enum_names(Elem)
{
    return std::array{std::pair{Elem::float32, std::string_view("float32")},
                      std::pair{Elem::float64, std::string_view("float64")},
                      std::pair{Elem::boolean, std::string_view("bool")},
                      std::pair{Elem::index, std::string_view("int64")}};
}

template <class T>
constexpr Elem elem_of()
{
    return sizeof(T) == sizeof(float) ? Elem::float32 : Elem::float64;
}

struct Tensor {
    std::string name;
    std::vector<std::string> axes;  // one name per dimension, e.g. {"pos", "dim"}
    Elem elem = Elem::float64;
    xt::xarray<double> values;      // float32 values are stored exactly (float -> double)
};

// How the measured figure is held against the tolerance.
enum class Compare { le, lt, ge, gt };
constexpr auto enum_names(Compare)
{
    return std::array{std::pair{Compare::le, std::string_view("<=")},
                      std::pair{Compare::lt, std::string_view("<")},
                      std::pair{Compare::ge, std::string_view(">=")},
                      std::pair{Compare::gt, std::string_view(">")}};
}

// invariant: the program's own mathematics; a failure makes the exit status 1.
// article:   a claim as an article words it; its verdict is reported, never the exit status.
enum class Role { invariant, article };
constexpr auto enum_names(Role)
{
    return std::array{std::pair{Role::invariant, std::string_view("invariant")},
                      std::pair{Role::article, std::string_view("article")}};
}

// numeric: a floating-point tolerance, replaced by --tol when given.
// fixed:   a bound that is part of the claim itself (|PE| <= 1, a count that must be 0).
enum class TolKind { numeric, fixed };

struct Check {
    std::string name;    // identifier for scripts, e.g. "relative_shift_linear"
    std::string claim;   // the sentence being checked
    std::string metric;  // what the measured figure is, e.g. "max |PE(p+k) - M(k)PE(p)|"
    double measured = 0.0;
    double tolerance = 0.0;
    Compare cmp = Compare::le;
    Role role = Role::invariant;
    TolKind tol_kind = TolKind::numeric;

    bool passed() const;  // NaN never passes
};

struct RunContext {
    DType dtype = DType::float32;
    std::uint64_t seed = 0;
    std::optional<double> tol;           // --tol: replaces every numeric tolerance
    double max_memory_bytes = 2.0 * 1024 * 1024 * 1024;
    std::vector<std::string> show;       // tensors to keep; empty keeps all
    bool main_only = false;              // keep only the command's main tensor (CSV default)
};

struct Report {
    std::string command;
    nlohmann::ordered_json params = nlohmann::ordered_json::object();
    std::string main_tensor;
    std::vector<std::string> offered;  // every tensor the command can produce, in order
    std::vector<Tensor> tensors;       // the ones kept
    std::vector<Check> checks;
    std::vector<std::string> notes;

    bool passed() const;  // every invariant passed
    const Tensor* find(const std::string& name) const;
};

// What experiments use to build a Report: it drops tensors nobody asked for, applies --tol,
// and records the common parameters.
class Recorder {
public:
    Recorder(std::string command, std::string main_tensor, const RunContext& ctx);

    const RunContext& ctx() const { return ctx_; }
    nlohmann::ordered_json& params() { return report_.params; }

    // Whether a tensor is wanted; also registers the name as one this command offers.
    bool wants(const std::string& name);

    template <class E>
    void tensor(const std::string& name, std::vector<std::string> axes, const E& values,
                Elem elem)
    {
        if (!wants(name)) return;
        Tensor t{name, std::move(axes), elem, xt::xarray<double>(xt::cast<double>(values))};
        add(std::move(t));
    }
    void add(Tensor t);

    // Adds a check; a numeric tolerance on an upper bound is replaced by --tol when given.
    void check(Check c);
    void note(std::string text);

    Report finish();

private:
    RunContext ctx_;
    Report report_;
};

// Default numeric tolerance: `ulps` machine epsilons of the chosen dtype.
double tol_for(DType dtype, double ulps_f32, double ulps_f64);
double eps_of(DType dtype);

// Refuses a request whose tensors would need more than --max-memory, before allocating.
// `bytes` is the experiment's own estimate of its peak; `what` names the sizes behind it.
void require_memory(double bytes, const RunContext& ctx, const std::string& what);

std::string human_bytes(double bytes);

}  // namespace attnlab

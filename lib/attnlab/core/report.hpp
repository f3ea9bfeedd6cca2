// The experiment contract shared by every subcommand: what a run is asked (RunContext) and
// what it returns (Report: named tensors with their axes, checks with measured figures,
// notes). One renderer (render/render.hpp) turns any Report into text, CSV or JSON.
// Light on purpose: no xtensor and no JSON here, so that what includes it compiles quickly.
#pragma once

#include "attnlab/core/check.hpp"
#include "attnlab/core/enums.hpp"
#include "attnlab/core/params.hpp"
#include "attnlab/core/tensor.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnlab {

// Bad input from the user: the program prints one line and exits with status 2.
struct InputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// --against: a learner's tensor in a file, held against the run's tensor of that name.
struct AgainstRequest {
    std::string file;
    std::string tensor;            // empty: the command's main tensor
    std::optional<double> rtol;    // given: replaces the error model's relative term
    std::optional<double> atol;    // given: replaces the error model's absolute term
    // given (an exercise's, check.sh and exercise grade alike): a file stored coarser than this
    // differs whatever its values, as stored_below; a grade is not bought with the tolerance of a
    // precision the student chose to store
    std::optional<DType> judged_at{};
};

// How sure a diagnosis is: "matches" within the comparison's own tolerance, or "closest" (no
// catalogued mistake matches; this one is nearer the learner's tensor than the reference is).
enum class Certainty { matches, closest };
constexpr auto enum_names(Certainty)
{
    return std::array{std::pair{Certainty::matches, std::string_view("matches")},
                      std::pair{Certainty::closest, std::string_view("closest")}};
}

// A catalogued mistake held against the learner's tensor.
struct Diagnosis {
    std::string id;
    std::string explanation;  // in the run's language
    double max_abs_diff = 0.0;
    Certainty certainty = Certainty::matches;
};

// The indices, along one axis, where the learner's tensor differs (first to last, inclusive).
struct AxisRange {
    std::string axis;
    std::size_t from = 0, to = 0;
    std::size_t size = 0;  // the axis's length: from 0 to size - 1 is "all"
};

struct NonFiniteCount {
    std::size_t nan = 0, posinf = 0, neginf = 0;
    std::size_t total() const { return nan + posinf + neginf; }
};

// The verdict on a learner's tensor: the comparison, the properties of the learner's tensor,
// and the known mistakes it matches.
struct Comparison {
    std::string file;
    std::string tensor;
    bool passed = false;
    std::vector<std::size_t> shape_expected, shape_got;
    double max_abs_diff = 0.0;
    std::size_t mismatched = 0, total = 0;
    double rtol = 0.0, atol = 0.0;
    std::string judged_at;           // "float16 storage, float32 arithmetic"
    std::vector<std::size_t> worst_index;
    double worst_expected = 0.0, worst_got = 0.0;
    Elem expected_elem = Elem::float64, got_elem = Elem::float64;
    std::vector<AxisRange> where;    // along every axis, the range where they differ
    NonFiniteCount nonfinite;        // non-finite values where the reference has numbers
    std::vector<std::string> kinds;  // precision_only, transposed, permuted, ...
    std::vector<std::string> notes;  // in the run's language: what the kinds mean, how to fix
    std::vector<std::string> read_notes;  // what the reader decided about the file (also on stderr)
    std::vector<Check> properties;   // the run's checks that read this tensor, on the learner's
    std::vector<Diagnosis> diagnosis;
};

struct RunContext {
    DType dtype = DType::float32;
    std::uint64_t seed = 0;
    std::optional<double> tol;           // --tol: replaces every numeric tolerance
    double max_memory_bytes = 2.0 * 1024 * 1024 * 1024;
    std::vector<std::string> show;       // tensors to keep; empty keeps all
    bool main_only = false;              // keep only the command's main tensor (CSV default)
    bool keep_none = false;              // keep no tensor (--quiet: nothing is printed or drawn)
    double render_bytes_per_element = 24.0;  // what the chosen output format costs per number
    std::string render_format = "text";      // named in the memory message
    // What a refusal for memory advises: the options this command has to lower it.
    std::string memory_advice = "reduce the sizes or raise --max-memory";
    bool advise_show = true;                 // the command has --show (on-demand tensors can be left out)
    double max_work = 200e9;                 // --max-work: multiply-adds a request may take
    Lang lang = Lang::en;                    // --lang: check lines and notes
    // Called before a run estimated to take more than about 2 s, with the estimate in
    // multiply-adds (the app shows it on a terminal's stderr); may be empty.
    std::function<void(double work)> on_long_run;
    // Called by a long compute with a one-line progress report ("" when it is done: the line is
    // cleared); the app shows it on a terminal's stderr, and leaves it empty when piped.
    std::function<void(const std::string& line)> on_progress;
    std::optional<AgainstRequest> against;
    bool keep_all = false;  // keep every tensor in the report (--save writes them all)
    std::string drawn;      // the tensor a picture draws: NAME_min and NAME_max are kept too (its bars)
    std::map<std::string, Tensor> inputs;  // --input NAME=FILE: tensors that replace the run's inputs
    // The options the command line gave (their flags): --input fits the sizes of the others.
    std::vector<std::string> given_flags;

    // Whether the report keeps tensor NAME (MAIN_TENSOR is the command's main one).
    bool keeps(const std::string& name, const std::string& main_tensor) const;
};

// A declared tensor, as --help and the manual's table show it.
struct TensorInfo {
    std::string name;
    std::vector<std::string> axes;
    std::vector<std::string> alt_axes;  // the batched layout some configurations use, if any
    bool on_demand = false;             // computed only when asked for
    bool main = false;                  // the command's main tensor
    bool saved = false;                 // computed for --save (or when named), printed only when named
};

// A shape as the reports write it: "[2, 8, 16]".
std::string shape_text(const std::vector<std::size_t>& shape);

// "pe [pos, dim] (main)" lines for --help: one per tensor, on-demand ones marked.
std::string tensors_help(const std::vector<TensorInfo>& infos);
// The manual's table (docs/experiments.md): one row per tensor of every command.
std::string tensors_markdown(const std::vector<std::pair<std::string, std::vector<TensorInfo>>>& commands);

// The note that replaces a check whose rounding tolerance reaches its scale (untestable()),
// naming the dtype that can check it: of the run, or of the learner's file when the file's
// precision is what limits it.
enum class UntestableBy { run, file };
std::string untestable_note(const Check& c, DType dtype, Lang lang, UntestableBy by = UntestableBy::run);

struct Report {
    std::string command;
    ParamList params;
    std::string main_tensor;
    std::vector<std::string> offered;  // every tensor the command can produce, in order
    std::vector<Tensor> tensors;       // the ones kept
    std::vector<Check> checks;
    std::vector<std::string> notes;
    // Checks not shown because their tolerance reaches their scale (a note says why).
    std::vector<Check> untestable;
    // Figures a run measures rather than checks (bench: seconds, GFLOP/s, peak memory).
    ParamList measurements;
    std::optional<Comparison> against;
    // Tensors kept only for --save: saved tensors (a model's weights, say) that --show and
    // --tensor do not name, written to files and never printed.
    std::vector<std::string> saved_only;
    // Files the compute itself read (a checkpoint): --save never replaces them.
    std::vector<std::string> read_files;
    // A JSON object whose members --save adds to run.json (what a flat saved tensor holds where);
    // empty when there is none.
    std::string save_info;

    bool passed() const;  // every invariant passed
    const Tensor* find(const std::string& name) const;
    const Check* find_check(const std::string& name) const;
};

// About how many multiply-adds one core does per second in the experiments' loops, for the
// time the work estimate is shown in (measured on the slower, scalar paths).
constexpr double kWorkPerSecond = 1e9;
// What one exp counts as in a work estimate, in multiply-adds.
constexpr double kExpWork = 20.0;
// How many times that rate the BLAS-backed attention kernel and projections reach, at the
// least (measured: 50 to 90 times on two cores with AVX-512; `attnlab bench` shows it): their
// multiply-adds count 1/kKernelSpeedup each in a work estimate.
constexpr double kKernelSpeedup = 16.0;

// Refuses a request whose estimated work exceeds --max-work, before computing, and tells
// ctx.on_long_run about one that will take more than about 2 s.
void require_work(double multiply_adds, const RunContext& ctx, const std::string& what);

// The language the locale asks for: the first of LC_ALL, LC_MESSAGES and LANG that is set,
// as POSIX orders them; zh for zh_*, en otherwise.
Lang lang_from_env();

// Machine epsilon of the chosen dtype.
double eps_of(DType dtype);

// Refuses a request whose tensors would need more than --max-memory, before allocating.
// `bytes` is the estimate of the peak; `what` names the sizes behind it.
void require_memory(double bytes, const RunContext& ctx, const std::string& what);

std::string human_bytes(double bytes);

}  // namespace attnlab

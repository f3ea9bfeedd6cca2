// Every experiment, registered once: the app binds each one's options and runs it, the
// manual's options table and the tests read the same list. How to add an experiment is at the
// top of registry.cpp.
#pragma once

#include "attnlab/core/report.hpp"
#include "attnlab/core/rng.hpp"
#include "attnlab/experiments/options.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace attnlab {

// One option of a command, bound to the parameters of one invocation.
struct BoundOption {
    std::string flag, help;
    OptionRef ref;
    Limits limits;
    std::vector<std::string> only, excludes;
    std::string sets_length_of;
    std::vector<std::pair<std::string, std::string>> aliases;  // old spelling -> name
    std::function<void(const std::string& old_spelling, const std::string& name)> old_spelling_given;
};

// One run's parameters, with its options bound to them.
class Invocation {
public:
    virtual ~Invocation() = default;
    virtual std::vector<BoundOption> options() = 0;
    // The arguments that reproduce the run, and its parameters as the report holds them.
    virtual std::vector<std::string> command() const = 0;
    virtual ParamList params() const = 0;
    // Runs it, --against included; the report's notes start with what any old spelling meant.
    virtual Report run(const RunContext& ctx) const = 0;

protected:
    struct OldSpelling {
        std::string flag, old_name, name;
    };
    std::vector<OldSpelling> old_spellings_;
    static void note_old_spellings(const std::vector<OldSpelling>& given, Lang lang, Report& report);
};

struct Registered {
    std::string name;
    std::string summary;
    std::string example;
    std::string measurements_help;  // bench: what it reports, in place of tensors
    std::vector<TensorInfo> tensors;
    std::function<std::unique_ptr<Invocation>()> invoke;  // the defaults, ready to be given options
    // A random valid run, drawn by the experiment's sampler: its arguments (the command
    // first) and its parameters as the report holds them. Empty for an experiment without a
    // sampler (a run that is timed or trained).
    struct Drawn {
        std::vector<std::string> args;
        ParamList params;
    };
    std::function<Drawn(Rng&)> draw;
};

// In the order --help lists them.
const std::vector<Registered>& registered_experiments();
// Throws std::out_of_range for a name that is not registered.
const Registered& registered(const std::string& name);

// What an option takes, as --help and the manual say it: "whole number 1..4096",
// "number > 0", "interleaved|half", "flag", "list of whole numbers", "text".
std::string option_takes(const BoundOption& o);
// Its default as the command line spells it ("" for none: an optional left out, a flag off).
std::string option_default(const BoundOption& o);
// The manual's table of every registered option, in docs/experiments.md
// (tests/test_tensor_table.cpp holds the two together; tests/python/cli_fuzz.py draws its
// command lines from it).
std::string options_markdown();

}  // namespace attnlab

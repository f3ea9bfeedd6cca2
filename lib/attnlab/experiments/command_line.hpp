// The run options of a command line that reproduces a run (--seed, --dtype, --tol when not the
// defaults), and the line itself as a shell takes it. An experiment's own options come from its
// rows (options.hpp, command_of); the tour prints the whole line beside every figure.
#pragma once

#include "attnlab/core/enums.hpp"
#include "attnlab/core/report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>
#include <string>
#include <vector>

namespace attnlab {

class CommandLine {
public:
    explicit CommandLine(std::string subcommand) { args_.push_back(std::move(subcommand)); }

    template <class V>
    void option(const char* flag, const V& value, const V& default_value)
    {
        if (!(value == default_value)) push(flag, text(value));
    }
    template <class V>
    void option(const char* flag, const std::optional<V>& value)
    {
        if (value) push(flag, text(*value));
    }
    // The run options of the context: --seed, --dtype, --tol when not the defaults.
    void context(const RunContext& ctx)
    {
        option("--seed", ctx.seed, std::uint64_t{0});
        option("--dtype", ctx.dtype, DType::float32);
        option("--tol", ctx.tol);
    }
    const std::vector<std::string>& args() const { return args_; }

private:
    void push(const char* flag, std::string value)
    {
        args_.emplace_back(flag);
        args_.push_back(std::move(value));
    }
    static std::string text(double v) { return fmt::format("{}", v); }
    static std::string text(std::uint64_t v) { return std::to_string(v); }
    template <class E, class = decltype(enum_names(E{}))>
    static std::string text(E v)
    {
        return name_of(v);
    }
    std::vector<std::string> args_;
};

// "attnlab pe --len 8": the arguments as one line a shell takes as they are (a word with a
// character the shell would read is single-quoted).
std::string command_text(const std::vector<std::string>& args);
// One word as the shell reads it back: as it is when plain, else single-quoted.
std::string shell_word(const std::string& word);

}  // namespace attnlab

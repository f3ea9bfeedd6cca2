// The subcommands: every registered experiment (cmd_experiment.cpp), the tour and the
// exercises.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace attnlab {
class Invocation;
struct BoundOption;
}  // namespace attnlab

namespace attnlab::app {

// Every registered experiment as a subcommand; only `bound` (the one being run) gets its
// options, which saves building some 80 options that a run does not read.
void setup_experiments(CLI::App& app, const std::string& bound);
void setup_exercise(CLI::App& app);
// exercise grade (cmd_grade.cpp), under the exercise subcommand.
void setup_grade(CLI::App& exercise);
void setup_tour(CLI::App& app);

// Binds an invocation's options to a subcommand's parser.
std::vector<BoundOption> bind_options(CLI::App& sub, Invocation& invocation);

}  // namespace attnlab::app

// The subcommands: every registered experiment (cmd_experiment.cpp), the tour and the
// exercises.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace attnlab {
class Invocation;
struct BoundOption;
}  // namespace attnlab

namespace attnlab::app {

// What each subcommand runs, and the exit status it gives: main parses the command line, then
// calls the one whose subcommand was chosen.
using Runners = std::vector<std::pair<const CLI::App*, std::function<int()>>>;

// Every registered experiment as a subcommand; only `bound` (the one being run) gets its
// options, which saves building some 80 options that a run does not read.
void setup_experiments(CLI::App& app, const std::string& bound, Runners& runners);
void setup_exercise(CLI::App& app, Runners& runners);
// exercise grade (cmd_grade.cpp), under the exercise subcommand.
void setup_grade(CLI::App& exercise, Runners& runners);
void setup_merge(CLI::App& exercise, Runners& runners);
void setup_tour(CLI::App& app, Runners& runners);

// Binds an invocation's options to a subcommand's parser.
std::vector<BoundOption> bind_options(CLI::App& sub, Invocation& invocation);

}  // namespace attnlab::app

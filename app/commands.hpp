// The subcommands: every registered experiment (cmd_experiment.cpp), the tour and the
// exercises.
#pragma once

#include <CLI/CLI.hpp>

#include <vector>

namespace attnlab {
class Invocation;
struct BoundOption;
}  // namespace attnlab

namespace attnlab::app {

void setup_experiments(CLI::App& app);
void setup_exercise(CLI::App& app);
void setup_tour(CLI::App& app);

// Binds an invocation's options to a subcommand's parser.
std::vector<BoundOption> bind_options(CLI::App& sub, Invocation& invocation);

}  // namespace attnlab::app

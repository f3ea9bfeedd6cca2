// One setup function per subcommand, each in its own file (cmd_<name>.cpp).
#pragma once

#include <CLI/CLI.hpp>

namespace attnlab::app {

void setup_alibi(CLI::App& app);
void setup_attend(CLI::App& app);
void setup_bench(CLI::App& app);
void setup_exercise(CLI::App& app);
void setup_mask(CLI::App& app);
void setup_pe(CLI::App& app);
void setup_permute(CLI::App& app);
void setup_rope(CLI::App& app);
void setup_tour(CLI::App& app);

}  // namespace attnlab::app

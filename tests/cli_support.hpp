// Runs the built attnlab as a user would and captures what it did.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

struct CliResult {
    int status = -1;  // exit status; 128 + signal if it was killed by one
    std::string out;
    std::string err;
    long max_rss_kb = 0;  // the child's peak resident memory
};

// The attnlab under test: $ATTNLAB_PROGRAM when set (the sanitizer build runs this driver,
// built once by the release build, against its own program), else the one built beside this
// driver. Read once, before main.
const std::string& program();
// Whether that program carries the sanitizers (its memory is then theirs to count):
// $ATTNLAB_PROGRAM_SANITIZED=1 or 0 when set, else what the build of this driver says.
bool program_sanitized();

// A scratch path of this process (two test runs on one machine never share a file).
std::string scratch(const std::string& name);
// A new empty folder at scratch(name), removed when the test program ends.
std::string fresh_dir(const std::string& name);

// env: extra NAME=VALUE entries for the child's environment.
CliResult run_cli(const std::vector<std::string>& args, const std::vector<std::string>& env = {});

// Where the child's standard output goes, for the tests of write errors.
enum class Stdout { captured, dev_full, closed, broken_pipe };
// Runs attnlab with stdout as given (SIGPIPE ignored for broken_pipe, so the write fails
// with EPIPE instead of killing it) and, with close_stderr, stderr closed. Only the exit
// status and the captured stderr are returned.
CliResult run_cli_io(const std::vector<std::string>& args, Stdout out, bool close_stderr = false);

// The JSON document printed by a successful --format json run (fails the test otherwise); env as
// run_cli's.
nlohmann::json run_json(std::vector<std::string> args, const std::vector<std::string>& env = {});

// An NPY file of '<f8' values, or '<f2' with NpyFloat::half (binary16 bits rounded to nearest
// even), written here from the format's definition, independently of the library's writer.
enum class NpyFloat { f8, half };
void write_npy(const std::string& path, const std::vector<std::size_t>& shape, const std::vector<double>& values,
               NpyFloat kind = NpyFloat::f8);

// The bytes of a file ("" when it cannot be read).
std::string slurp(const std::string& path);

// Number of lines in s.
std::size_t count_lines(const std::string& s);

// Asserts the usage-error contract: exit 2, nothing on stdout, one line on stderr that
// contains `fragment`.
void expect_usage_error(const std::vector<std::string>& args, const std::string& fragment);

// Arguments as one line, for a test's captured context: "pe --len 3".
std::string command_text(const std::vector<std::string>& args);

// The subcommands `attnlab --help` lists, in its order.
std::vector<std::string> help_subcommands();

// One random valid command line for each experiment with a sampler (every one but the timed
// and trained runs), drawn by the registry (tests/draw_commands.cpp), in --help's order.
std::vector<std::vector<std::string>> drawn_commands(unsigned seed);

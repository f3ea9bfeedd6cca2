// A student's program, run the way `exercise grade` runs it: a copy of its folder, its own
// process group, a time and a memory limit, an almost empty environment, no standard input.
// This bounds mistakes (a loop, a leak, a flood of output); it is not a security sandbox: the
// program runs as the grader's user and can read what that user can.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace attnlab {

struct ProgramLimits {
    double timeout_s = 20.0;
    double memory_bytes = 2.0 * 1024 * 1024 * 1024;  // address space (RLIMIT_AS)
    double file_bytes = 256.0 * 1024 * 1024;         // any one file it writes (RLIMIT_FSIZE)
    std::string path_prefix;  // a folder put first on PATH (where `python3` means --python)
    bool isolate = false;     // in a network namespace of its own: no network
};

struct ProgramOutcome {
    enum class End { exited, signaled, timed_out, not_started };
    End end = End::not_started;
    int code = 0;  // the exit status, or the signal
    double seconds = 0.0;
    std::string output_tail;  // the last line the program wrote to stdout or stderr, escaped
};

// Runs `sh -c COMMAND` in DIR; its stdout and stderr go to LOG (a file outside DIR). On the
// timeout the whole process group is killed, and so is anything of it left after it exits.
ProgramOutcome run_program(const std::string& command, const std::string& dir, const std::string& log, const ProgramLimits& limits);

// Whether --isolate can work here (root, or unprivileged user namespaces).
bool can_isolate();

// Copies the submission folder FROM into TO (made), for one run: regular files and folders
// only; a link is copied as what it points to only when that stays inside FROM, and special
// files (FIFOs, devices, sockets) are skipped. The top-level names in `skip` are left out (the
// answer and the inputs, which the grader writes). At most max_bytes in all; beyond that the
// rest is left out. Returns the names left out, for the report.
std::vector<std::string> copy_submission(const std::string& from, const std::string& to, const std::vector<std::string>& skip,
                                         std::size_t max_bytes = std::size_t{256} << 20);

// A fresh folder under $TMPDIR (or /tmp), removed with everything in it when this goes.
class TempFolder {
public:
    explicit TempFolder(const std::string& prefix);
    TempFolder(const TempFolder&) = delete;
    TempFolder& operator=(const TempFolder&) = delete;
    ~TempFolder();
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

}  // namespace attnlab

// A student's program, run the way `exercise grade` runs it: a copy of its folder, a time, a
// memory and a disk limit for the submission as a whole, an almost empty environment, no
// standard input, and nothing it started left running afterwards.
//
// Two ways, chosen by the grader (Sandbox):
// - bwrap: bubblewrap (Debian's `bubblewrap`) gives the run PID, network, mount, IPC, UTS and
//   cgroup namespaces of its own. It sees the system's /usr and /etc read-only, the
//   interpreter's installation read-only, its /proc, a read-only /dev, and two writable
//   tmpfs, both sized inside the disk limit: /tmp, where its copy is laid and it runs
//   (/tmp/run), and /dev/shm. Everything else is read-only. It cannot see the grader's files or
//   binary, and its path is the same for every case. When the program ends, every other process
//   of the run is killed, the grader opens the answer itself (through the sandbox's root, no
//   link followed), and then the namespace goes, and the kernel kills whatever is in it.
// - none: a process group, with the grader as the subreaper of whatever the program leaves
//   behind; limits per process (address space, file size, CPU time) and, polled, for the
//   whole run. This bounds mistakes (a loop, a leak, a flood of output); it is not a security
//   sandbox: the program can read what its uid can.
// In both, the run's identity and accounting come from the grading's RunHost
// (accounting.hpp): a uid of its own when the grader is root, a cgroup where one can be made.
// Its output goes through a pipe to the grader, which keeps the first kLogBytes in the log
// file and the last lines for the report.
#pragma once

#include "attnlab/core/enums.hpp"
#include "attnlab/exercise/accounting.hpp"

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnlab {

enum class Sandbox { bwrap, none };
constexpr auto enum_names(Sandbox)
{
    return std::array{std::pair{Sandbox::bwrap, std::string_view("bwrap")}, std::pair{Sandbox::none, std::string_view("none")}};
}

struct ProgramLimits {
    double timeout_s = 20.0;
    double memory_bytes = 2.0 * 1024 * 1024 * 1024;  // all its processes together (and each one's address space)
    double disk_bytes = 1.0 * 1024 * 1024 * 1024;    // all it writes together
    double file_bytes = 256.0 * 1024 * 1024;         // any one file it writes (RLIMIT_FSIZE)
    std::string bin_dir;                 // a folder put first on PATH (where `python3` means --python)
    std::vector<std::string> read_only;  // folders the sandbox shows read-only (the interpreter's prefix)
    bool isolate = false;                // no network (always so under bwrap)
    Sandbox sandbox = Sandbox::none;
    double cpu_seconds = 0.0;            // CPU time of all its processes together; 0: cpu_limit's default
    long processes = 256;                // processes and threads at once (where a cgroup or a uid of its own caps them)
    const RunHost* host = nullptr;       // the grading's identities and cgroups; none: polled, as the grader
};

// The CPU time a run may use, all its processes together: --cpu-time, else twice the timeout.
// Twice, so that a program on one core always meets the wall-clock limit first (its verdict
// says "still running"), while many busy processes meet this one well before it.
inline double cpu_limit(const ProgramLimits& l) { return l.cpu_seconds > 0 ? l.cpu_seconds : 2.0 * l.timeout_s; }

// The most of a run's output kept in its log file; the rest is counted and dropped.
inline constexpr std::size_t kLogBytes = std::size_t{1} << 20;
// How many of the last lines of stdout and of stderr a report keeps.
inline constexpr std::size_t kTailLines = 10;

// The ranges the limits are taken in (exit 2 outside them): a limit is converted to bytes and
// seconds without overflow anywhere in them.
struct LimitRange {
    double lo, hi;
};
inline constexpr LimitRange kTimeoutRange{0.01, 86400.0};  // seconds
inline constexpr LimitRange kMemoryRange{0.01, 1024.0};    // GiB
inline constexpr LimitRange kDiskRange{0.001, 1024.0};     // GiB
inline constexpr LimitRange kCpuRange{0.01, 86400.0};      // seconds
inline constexpr LimitRange kProcessRange{8, 65536};       // processes and threads

struct ProgramOutcome {
    enum class End { exited, signaled, timed_out, not_started, memory_exceeded, disk_exceeded, cpu_exceeded, interrupted };
    End end = End::not_started;
    int code = 0;  // the exit status, or the signal
    double seconds = 0.0;
    double cpu_seconds = 0.0;  // all its processes' CPU time, as counted
    double peak_bytes = 0.0;   // the most memory its processes held together (the cgroup's, or polled)
    bool process_cap = false;  // a fork or a thread was refused at the process cap
    Accounting accounting = Accounting::polled;
    std::string output_tail;  // the last line the program wrote to stderr (else stdout), escaped
    // The last kTailLines lines of each that hold anything, each escaped.
    std::vector<std::string> stdout_tail, stderr_tail;
    // The answer file it left: answer_path names where to read it when answer == regular.
    enum class Answer { absent, regular, other };
    Answer answer = Answer::absent;
    std::string answer_path;
};

struct ProgramRun {
    std::string command;      // run as `sh -c COMMAND`
    std::string dir;          // the laid-out folder: the submission's copy and its inputs
    std::string log;          // the first kLogBytes of stdout and stderr go here (a file outside DIR)
    std::string answer_name;  // the file the program writes, relative to DIR
    std::string answer_out;   // where the grader copies the answer out (outside DIR)
};

// Runs the program. On the timeout, the memory or the disk limit, or a SIGINT, SIGTERM or SIGHUP
// to the grader (GradingSignals), everything it started is killed; so is anything left after
// it exits.
ProgramOutcome run_program(const ProgramRun& run, const ProgramLimits& limits);

// Whether bubblewrap is installed and can make its namespaces here (tried once, then kept).
bool bwrap_works();
// Whether --isolate can work without bubblewrap (root, or unprivileged user namespaces).
bool can_isolate();
// One line: which isolation the runs have, their limits, accounting and identity, for the gradebook.
std::string isolation_text(const ProgramLimits& limits, Lang lang);

// While one lives, SIGINT, SIGTERM and SIGHUP (unless ignored, as under nohup) do not end the
// grader at once: every run in progress is killed, grading stops, and the signal is kept for
// the caller to raise once the temporary folders are gone.
class GradingSignals {
public:
    GradingSignals();
    GradingSignals(const GradingSignals&) = delete;
    GradingSignals& operator=(const GradingSignals&) = delete;
    ~GradingSignals();
    // The signal received, or 0.
    static int received();
};

// Copies the submission folder FROM into TO (made), for one run: regular files and folders
// only; a link is copied as what it points to only when that stays inside FROM, and special
// files (FIFOs, devices, sockets) are skipped, as are folders nested more than 32 deep. The
// top-level names in `skip` are left out (the answer and the inputs, which the grader writes).
// At most max_bytes and max_entries in all; beyond that the rest is left out. Returns the
// names left out, for the report.
inline constexpr std::size_t kMaxEntries = 4096;
std::vector<std::string> copy_submission(const std::string& from, const std::string& to, const std::vector<std::string>& skip,
                                         std::size_t max_bytes = std::size_t{256} << 20, std::size_t max_entries = kMaxEntries);

// Gives the folder DIR and everything in it to UID and GID (no link followed).
void give_to(const std::string& dir, uid_t uid, gid_t gid);

// A fresh folder under $TMPDIR (or /tmp), removed with everything in it when this goes.
// Reachable: made where every other user may pass through its parents (TMPDIR where it is so,
// else /tmp), with mode 0711, so that a run with a uid of its own reaches the folders laid
// out for it inside, and no more.
class TempFolder {
public:
    enum class Reach { owner, others };
    explicit TempFolder(const std::string& prefix, Reach reach = Reach::owner);
    TempFolder(const TempFolder&) = delete;
    TempFolder& operator=(const TempFolder&) = delete;
    ~TempFolder();
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

}  // namespace attnlab

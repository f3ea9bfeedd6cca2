// The parts of running a student's program that program.cpp (the run and its watch),
// run_tree.cpp (a run's processes: what they hold, and ending them) and sandbox.cpp (the
// program's world: its environment and bubblewrap) share.
#pragma once

#include "attnlab/exercise/program.hpp"

#include <sys/types.h>

#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace attnlab::run_detail {

// --- run_tree.cpp ---

// The runs' first processes, and the lock under which one is started or stray processes are
// reaped, so that a run just forked is never taken for a stray one.
std::mutex& runs_lock();
std::set<pid_t>& runs();

// What a run holds and has used, polled where no cgroup counts it.
struct Usage {
    double bytes = 0.0, cpu_seconds = 0.0;
};
// ROOT and its descendants (each added to SEEN): PSS, the memfd files they hold, the SysV
// segments the run made, and (with a uid of its own) its files in /dev/shm; their CPU time.
Usage polled_usage(pid_t root, const RunAccount& a, std::set<pid_t>& seen);
// SysV segments outlive their processes: a run's are removed when it ends.
void remove_shm(const RunAccount& a, const std::set<pid_t>& seen);
// Removes what UID left at the top of /dev/shm, /tmp and /var/tmp.
void remove_owned(uid_t uid);
// What the files under DIR take on disk (a folder of too many entries counts as over LIMIT).
double folder_bytes(const std::string& dir, double limit);
// Kills ROOT's group, its descendants and the strays until none is left (at most 5 s).
void kill_all(pid_t root);

// --- sandbox.cpp ---

// Inside bubblewrap: the run's folder; the descriptors of the ready, release and status pipes.
inline constexpr const char* kSandboxRun = "/tmp/run";
inline constexpr int kReadyFd = 3, kReleaseFd = 4, kStatusFd = 5;
// The shell that lays the copy out, runs the program and hands over (argument 1: the command).
extern const char* const kInside;

std::vector<std::string> program_environment(const ProgramLimits& limits, const std::string& tmp);
std::string find_bwrap();
std::vector<std::string> bwrap_arguments(const std::string& bwrap, const ProgramLimits& limits, const std::string& stage,
                                         const std::vector<std::string>& inner);
bool enter_own_network();

}  // namespace attnlab::run_detail

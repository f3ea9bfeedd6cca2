// Who a student's run is and what it is charged: one per grading (RunHost), one per run
// (RunAccount).
//
// Accounting. Where the grader can make cgroups, each run gets one of its own, and the kernel
// counts everything the run's processes allocate, whichever way they do it:
// - memory: anonymous pages, shared memory (memfd, SysV, POSIX shm) and tmpfs files, the
//   sandbox's /tmp and /dev/shm included, against --memory (memory.max, or v1's
//   memory.limit_in_bytes and memsw); a run over it is killed by the kernel's OOM killer, and
//   its memory.events (v1: memory.oom_control) say so;
// - processes and threads: pids.max, so a fork bomb stops at the cap;
// - CPU: every run's cgroup has the same weight (cpu.weight, v1 cpu.shares), so one student's
//   many busy processes take their share of the machine and not another's; the CPU time of
//   all its processes together is read from the cgroup (cpu.stat, v1 cpuacct.usage).
// cgroup v2 is used where the grader's own cgroup can give its children the memory and pids
// controllers (a delegated cgroup); cgroup v1 where the memory, pids, cpu and cpuacct
// hierarchies are mounted and the grader may make folders in them (root). Elsewhere the
// grader polls /proc: memory as PSS plus the memfd files its processes hold and the SysV
// segments they made; CPU time as the sum of its processes' times; processes capped by
// RLIMIT_NPROC only when the run has a uid of its own.
//
// Identity. A grader running as root gives each run a uid and gid of its own (from kUidBase,
// a block of 256 per grading, one per slot of --jobs), with no supplementary groups, as a
// container platform would: no owner or group bit of the host opens to it, two runs at once
// cannot signal or read each other, and whatever still runs as that uid after the grading is
// killed. A grader that is not root runs them as itself, and says so.
//
// The watchdog. A small process forked when the grading starts outlives a grader killed by
// SIGKILL, and then kills every process of its runs (by cgroup, and by uid) and removes the
// cgroups and the grading's temporary folder. Without a cgroup or a uid of its own, a run's
// processes that left its process group are the grader's to reap while it lives; after a
// SIGKILL to it, only the watchdog's reach (cgroup, uid) and PR_SET_PDEATHSIG on each run's
// first process remain.
#pragma once

#include "attnlab/core/enums.hpp"

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnlab {

enum class Accounting { cgroup_v2, cgroup_v1, polled };
constexpr auto enum_names(Accounting)
{
    return std::array{std::pair{Accounting::cgroup_v2, std::string_view("cgroup_v2")},
                      std::pair{Accounting::cgroup_v1, std::string_view("cgroup_v1")},
                      std::pair{Accounting::polled, std::string_view("polled")}};
}

// The first uid (and gid) a root grader gives its runs: 0x5A000000, far above the ranges that
// distributions, systemd's dynamic users and the usual subordinate-id blocks hand out.
inline constexpr std::uint32_t kUidBase = 0x5A000000u;
inline constexpr unsigned kUidsPerGrading = 256;

// What a run may use, beside time: the limits the kernel enforces where it can.
struct AccountLimits {
    double memory_bytes = 0.0;
    long processes = 0;  // processes and threads together
};

// One run's cgroup (one folder under v2, one per hierarchy under v1): made empty, removed
// (after everything in it is killed) when this goes.
class RunCgroup {
public:
    RunCgroup(Accounting kind, std::vector<std::string> dirs, double memory_bytes);
    RunCgroup(const RunCgroup&) = delete;
    RunCgroup& operator=(const RunCgroup&) = delete;
    ~RunCgroup();
    // The files the run's first process writes "0" to, between fork and exec, to join.
    const std::vector<std::string>& join_files() const { return join_files_; }
    // Sets the memory and process limits; false where the kernel refused them.
    bool set_limits(const AccountLimits& limits) const;
    double memory_bytes() const;  // now
    double peak_bytes() const;    // the most it held (v2 before 5.19 and v1 without it: now)
    bool oom_killed() const;      // the kernel killed one of its processes for the memory limit
    bool pids_capped() const;     // a fork or a thread failed at the process cap
    double cpu_seconds() const;   // all its processes' CPU time
    bool empty() const;
    // SIGKILL to every process in it, until none is left (at most 5 s).
    void kill_all() const;

private:
    std::string file(std::string_view controller, std::string_view name) const;
    Accounting kind_;
    std::vector<std::string> dirs_;  // v1: memory, pids, cpu, cpuacct (in that order)
    std::vector<std::string> join_files_;
    double memory_limit_;
};

// A run's identity and account, leased from the host for the run's duration.
struct RunAccount {
    uid_t uid = 0;
    gid_t gid = 0;
    bool own_uid = false;  // not the grader's: the run's first process drops to it
    std::unique_ptr<RunCgroup> cgroup;  // null: polled
    unsigned slot = 0;
};

// One per grading: the cgroups' parent, the uids, the watchdog.
class RunHost {
public:
    // slots: how many runs may be at once (--jobs). Makes the grading's parent cgroup where it
    // can, and starts the watchdog.
    RunHost(const AccountLimits& limits, unsigned slots);
    RunHost(const RunHost&) = delete;
    RunHost& operator=(const RunHost&) = delete;
    ~RunHost();
    Accounting accounting() const { return kind_; }
    bool own_uids() const { return own_uids_; }
    const AccountLimits& limits() const { return limits_; }
    // A free slot's uid and a fresh cgroup (waiting for a slot while every one is taken); give
    // it back with release.
    RunAccount lease() const;
    void release(RunAccount& account) const;
    // FOLDER (the grading's temporary folder) is removed by the watchdog if the grader dies.
    void remove_on_death(const std::string& folder) const;
    // The watchdog's pid (a child of the grader that is no run), or 0.
    pid_t watchdog() const { return watchdog_; }
    // One line for the gradebook: the accounting and the identity.
    std::string text(Lang lang) const;

private:
    void start_watchdog();
    AccountLimits limits_;
    unsigned slots_;
    Accounting kind_ = Accounting::polled;
    std::vector<std::string> parents_;  // the grading's cgroup folders (v1: one per hierarchy)
    bool own_uids_ = false;
    std::uint32_t uid_base_ = 0;
    pid_t watchdog_ = 0;
    int watchdog_pipe_ = -1;
    mutable std::mutex lock_;
    mutable std::vector<bool> busy_;
    mutable unsigned next_ = 0;
};

// Whether PID is a grading's watchdog (a child of the grader's that is no run's).
bool is_watchdog(pid_t pid);

// Kills every process running as UID (fork, drop to UID, kill(-1)): what a run with a uid of
// its own left, wherever it went.
void kill_uid(uid_t uid);

}  // namespace attnlab

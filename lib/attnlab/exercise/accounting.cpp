#include "attnlab/exercise/accounting.hpp"

#include <fmt/format.h>

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

namespace attnlab {

namespace {

// The controllers a run's cgroup is made in, in RunCgroup's order.
constexpr std::array<std::string_view, 4> kControllers{"memory", "pids", "cpu", "cpuacct"};
constexpr std::size_t kMemory = 0, kPids = 1, kCpu = 2, kCpuacct = 3;

std::string read_text(const std::string& path)
{
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

bool write_text(const std::string& path, std::string_view text)
{
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    return ::close(fd) == 0 && ok;
}

// The number after KEY in a file of "key value" lines (memory.events, cpu.stat, ...), or -1.
double keyed_value(const std::string& path, std::string_view key)
{
    std::ifstream in(path);
    std::string k;
    double v = 0.0;
    while (in >> k >> v)
        if (k == key) return v;
    return -1.0;
}

double number_in(const std::string& path)
{
    std::ifstream in(path);
    double v = -1.0;
    in >> v;
    return in ? v : -1.0;
}

bool exists(const std::string& path)
{
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

std::vector<pid_t> pids_in(const std::string& procs)
{
    std::ifstream in(procs);
    std::vector<pid_t> out;
    for (long p; in >> p;) out.push_back(static_cast<pid_t>(p));
    return out;
}

// Removes a cgroup folder, retrying while its last processes finish exiting.
void remove_cgroup(const std::string& dir)
{
    for (int i = 0; i < 200 && ::rmdir(dir.c_str()) != 0 && errno == EBUSY; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

// The grader's own cgroup folder for each controller under v1 (empty where that controller's
// hierarchy is not mounted), from /proc/self/mountinfo and /proc/self/cgroup.
// controller -> the grader's path in that controller's hierarchy, from /proc/self/cgroup.
std::map<std::string, std::string> own_v1_paths()
{
    std::map<std::string, std::string> own;
    std::ifstream cg("/proc/self/cgroup");
    for (std::string line; std::getline(cg, line);) {
        const auto a = line.find(':'), b = line.find(':', a + 1);
        if (a == std::string::npos || b == std::string::npos) continue;
        std::stringstream names(line.substr(a + 1, b - a - 1));
        for (std::string n; std::getline(names, n, ',');) own[n] = line.substr(b + 1);
    }
    return own;
}

std::array<std::string, 4> own_v1_folders()
{
    std::array<std::string, 4> out;
    const std::map<std::string, std::string> own_path = own_v1_paths();
    std::ifstream mi("/proc/self/mountinfo");
    for (std::string line; std::getline(mi, line);) {
        std::stringstream f(line);
        std::string id, parent, devno, root, point, word, fstype, source, super;
        f >> id >> parent >> devno >> root >> point;
        while (f >> word && word != "-") {}
        f >> fstype >> source >> super;
        if (fstype != "cgroup") continue;
        std::stringstream opts(super);
        for (std::string o; std::getline(opts, o, ',');) {
            const auto c = static_cast<std::size_t>(std::find(kControllers.begin(), kControllers.end(), o) - kControllers.begin());
            const auto path = own_path.find(o);
            // a mount of another part of the hierarchy does not hold the grader's cgroup
            if (c == kControllers.size() || !out[c].empty() || path == own_path.end() || path->second.rfind(root, 0) != 0) continue;
            out[c] = point + (root == "/" ? path->second : path->second.substr(root.size()));
            while (out[c].size() > 1 && out[c].back() == '/') out[c].pop_back();
        }
    }
    return out;
}

// The grading's parent cgroup(s), made, or nothing (and nothing left made).
std::vector<std::string> make_v1_parents(const std::string& name)
{
    const auto own = own_v1_folders();
    if (std::any_of(own.begin(), own.end(), [](const std::string& s) { return s.empty(); })) return {};
    std::vector<std::string> made, dirs;
    for (const auto& o : own) {
        const std::string dir = o + "/" + name;
        if (std::find(made.begin(), made.end(), dir) == made.end()) {
            if (::mkdir(dir.c_str(), 0755) != 0) {
                for (const auto& m : made) ::rmdir(m.c_str());
                return {};
            }
            made.push_back(dir);
        }
        dirs.push_back(dir);
    }
    return dirs;
}

// Under cgroup v2: the grading's parent under the grader's own cgroup, whose children get the
// memory, pids and (where it can) cpu controllers; nothing where the grader's cgroup does not
// delegate them.
std::vector<std::string> make_v2_parent(const std::string& name)
{
    if (!exists("/sys/fs/cgroup/cgroup.controllers")) return {};
    std::ifstream cg("/proc/self/cgroup");
    std::string line, own;
    while (std::getline(cg, line))
        if (line.rfind("0::", 0) == 0) own = line.substr(3);
    if (own.empty()) return {};
    const std::string parent = "/sys/fs/cgroup" + (own == "/" ? std::string() : own);
    const auto has = [](const std::string& file, std::string_view c) {
        std::stringstream s(read_text(file));
        for (std::string w; s >> w;)
            if (w == c) return true;
        return false;
    };
    if (!has(parent + "/cgroup.subtree_control", "memory") || !has(parent + "/cgroup.subtree_control", "pids")) {
        write_text(parent + "/cgroup.subtree_control", "+memory +pids");
        write_text(parent + "/cgroup.subtree_control", "+cpu");
    }
    if (!has(parent + "/cgroup.subtree_control", "memory") || !has(parent + "/cgroup.subtree_control", "pids")) return {};
    const std::string dir = parent + "/" + name;
    if (::mkdir(dir.c_str(), 0755) != 0) return {};
    if (!write_text(dir + "/cgroup.subtree_control", "+memory +pids")) {
        ::rmdir(dir.c_str());
        return {};
    }
    write_text(dir + "/cgroup.subtree_control", "+cpu");
    return std::vector<std::string>(4, dir);
}

// Kills and removes every run cgroup under the grading's parents, then the parents.
void clear_parents(const std::vector<std::string>& parents)
{
    std::set<std::string> unique(parents.begin(), parents.end());
    for (const auto& parent : unique) {
        DIR* d = ::opendir(parent.c_str());
        if (d == nullptr) continue;
        std::vector<std::string> children;
        while (const dirent* e = ::readdir(d))
            if (e->d_type == DT_DIR && e->d_name[0] != '.') children.push_back(parent + "/" + e->d_name);
        ::closedir(d);
        for (const auto& child : children) {
            for (int round = 0; round < 100; ++round) {
                const auto pids = pids_in(child + "/cgroup.procs");
                if (pids.empty()) break;
                for (pid_t p : pids) ::kill(p, SIGKILL);
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
            }
            remove_cgroup(child);
        }
    }
    for (const auto& parent : unique) remove_cgroup(parent);
}

std::mutex g_watchdogs_lock;
std::set<pid_t> g_watchdogs;

// The watchdog, in the child: it waits until the grader is done ("D") or gone (the socket's
// end), and in the second case kills what the runs left and removes the cgroups and the
// folders the grader named ("F<folder>").
[[noreturn]] void watchdog_main(int from_grader, const std::vector<std::string>& parents, const std::vector<uid_t>& uids)
{
    // its own session, so that a signal to the grader's group leaves it to clean up; no
    // descriptor of the grader's, so that nobody waits for its end of a pipe
    ::setsid();
    const int null = ::open("/dev/null", O_RDWR);
    for (int fd : {0, 1, 2}) ::dup2(null, fd);
    for (int fd = 3; fd < 1024; ++fd)
        if (fd != from_grader) ::close(fd);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) ::signal(sig, SIG_IGN);
    std::string said, line;
    char buf[4096];
    for (ssize_t got; (got = ::read(from_grader, buf, sizeof buf)) != 0;) {
        if (got < 0 && errno != EINTR) break;
        if (got > 0) said.append(buf, static_cast<std::size_t>(got));
    }
    std::vector<std::string> folders;
    std::stringstream lines(said);
    while (std::getline(lines, line)) {
        if (line == "D") ::_exit(0);  // the grader ended and cleaned up itself
        if (line.size() > 1 && line[0] == 'F') folders.push_back(line.substr(1));
    }
    clear_parents(parents);
    for (uid_t u : uids) kill_uid(u);
    for (const auto& f : folders) {
        std::error_code ec;
        std::filesystem::remove_all(f, ec);
    }
    ::_exit(0);
}

}  // namespace

bool is_watchdog(pid_t pid)
{
    const std::lock_guard<std::mutex> lock(g_watchdogs_lock);
    return g_watchdogs.count(pid) > 0;
}

void kill_uid(uid_t uid)
{
    const pid_t pid = ::fork();
    if (pid == 0) {
        // kill(-1) reaches every process whose real or saved uid is ours now, but this one;
        // twice, for what a process being killed had just forked
        if (::setgroups(0, nullptr) != 0 || ::setresgid(uid, uid, uid) != 0 || ::setresuid(uid, uid, uid) != 0) ::_exit(1);
        ::kill(-1, SIGKILL);
        ::kill(-1, SIGKILL);
        ::_exit(0);
    }
    if (pid < 0) return;
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {}
}

RunCgroup::RunCgroup(Accounting kind, std::vector<std::string> dirs, double memory_bytes)
    : kind_(kind), dirs_(std::move(dirs)), memory_limit_(memory_bytes)
{
    std::set<std::string> unique;
    for (const auto& d : dirs_)
        if (unique.insert(d).second) join_files_.push_back(d + "/cgroup.procs");
}

RunCgroup::~RunCgroup()
{
    kill_all();
    std::set<std::string> unique(dirs_.begin(), dirs_.end());
    for (const auto& d : unique) remove_cgroup(d);
}

std::string RunCgroup::file(std::string_view controller, std::string_view name) const
{
    const auto at = std::find(kControllers.begin(), kControllers.end(), controller) - kControllers.begin();
    return dirs_[static_cast<std::size_t>(at)] + "/" + std::string(name);
}

double RunCgroup::memory_bytes() const
{
    return number_in(file("memory", kind_ == Accounting::cgroup_v2 ? "memory.current" : "memory.usage_in_bytes"));
}

double RunCgroup::peak_bytes() const
{
    const double peak = number_in(file("memory", kind_ == Accounting::cgroup_v2 ? "memory.peak" : "memory.max_usage_in_bytes"));
    return peak >= 0.0 ? peak : memory_bytes();
}

bool RunCgroup::oom_killed() const
{
    if (kind_ == Accounting::cgroup_v2) return keyed_value(file("memory", "memory.events"), "oom_kill") > 0;
    // v1: oom_kill is counted since Linux 4.13; before it, a failed charge at the limit
    const double kills = keyed_value(file("memory", "memory.oom_control"), "oom_kill");
    return kills > 0 || (kills < 0 && number_in(file("memory", "memory.failcnt")) > 0 && peak_bytes() >= memory_limit_);
}

bool RunCgroup::set_limits(const AccountLimits& l) const
{
    const std::string bytes = fmt::format("{:.0f}", l.memory_bytes), procs = fmt::format("{}", l.processes);
    if (kind_ == Accounting::cgroup_v2) {
        write_text(file("memory", "memory.swap.max"), "0");  // absent without swap accounting
        return write_text(file("memory", "memory.max"), bytes) && write_text(file("pids", "pids.max"), procs);
    }
    // memsw (memory and swap together) is there only with swap accounting, and must not be
    // below the memory limit
    if (!write_text(file("memory", "memory.limit_in_bytes"), bytes)) return false;
    write_text(file("memory", "memory.memsw.limit_in_bytes"), bytes);
    return write_text(file("pids", "pids.max"), procs);
}

bool RunCgroup::pids_capped() const { return keyed_value(file("pids", "pids.events"), "max") > 0; }

double RunCgroup::cpu_seconds() const
{
    if (kind_ == Accounting::cgroup_v2) return std::max(0.0, keyed_value(file("cpu", "cpu.stat"), "usage_usec")) * 1e-6;
    return std::max(0.0, number_in(file("cpuacct", "cpuacct.usage"))) * 1e-9;
}

bool RunCgroup::empty() const { return pids_in(join_files_.front()).empty(); }

void RunCgroup::kill_all() const
{
    if (kind_ == Accounting::cgroup_v2) write_text(file("pids", "cgroup.kill"), "1");  // Linux 5.14 and later
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (;;) {
        const auto pids = pids_in(join_files_.front());
        if (pids.empty() || std::chrono::steady_clock::now() > deadline) return;
        for (pid_t p : pids) ::kill(p, SIGKILL);
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
}

RunHost::RunHost(const AccountLimits& limits, unsigned slots) : limits_(limits), slots_(std::max(1u, std::min(slots, kUidsPerGrading)))
{
    busy_.assign(slots_, false);
    own_uids_ = ::geteuid() == 0;
    uid_base_ = kUidBase + (static_cast<std::uint32_t>(::getpid()) % 65536u) * kUidsPerGrading;
    const std::string name = fmt::format("attnlab-grade-{}", ::getpid());
    parents_ = make_v2_parent(name);
    kind_ = parents_.empty() ? Accounting::polled : Accounting::cgroup_v2;
    if (parents_.empty()) {
        parents_ = make_v1_parents(name);
        if (!parents_.empty()) kind_ = Accounting::cgroup_v1;
    }
    start_watchdog();
}

RunHost::~RunHost()
{
    if (!parents_.empty()) clear_parents(parents_);
    if (own_uids_)
        for (unsigned s = 0; s < slots_; ++s) kill_uid(uid_base_ + s);
    if (watchdog_ > 0) {
        (void)!::send(watchdog_pipe_, "D\n", 2, MSG_NOSIGNAL);
        ::close(watchdog_pipe_);
        while (::waitpid(watchdog_, nullptr, 0) < 0 && errno == EINTR) {}
        const std::lock_guard<std::mutex> lock(g_watchdogs_lock);
        g_watchdogs.erase(watchdog_);
    }
}

void RunHost::start_watchdog()
{
    // a socket, not a pipe: a write to a watchdog that is gone must not raise SIGPIPE here
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return;
    // everything the watchdog needs, made before the fork
    const std::vector<std::string> parents = parents_;
    std::vector<uid_t> uids;
    if (own_uids_)
        for (unsigned s = 0; s < slots_; ++s) uids.push_back(uid_base_ + s);
    const std::lock_guard<std::mutex> lock(g_watchdogs_lock);
    const pid_t pid = ::fork();
    if (pid == 0) watchdog_main(fds[0], parents, uids);
    ::close(fds[0]);
    if (pid < 0) {
        ::close(fds[1]);
        return;
    }
    watchdog_ = pid;
    watchdog_pipe_ = fds[1];
    g_watchdogs.insert(pid);
}

void RunHost::remove_on_death(const std::string& folder) const
{
    if (watchdog_ <= 0 || folder.find('\n') != std::string::npos) return;
    const std::string line = "F" + folder + "\n";
    (void)!::send(watchdog_pipe_, line.data(), line.size(), MSG_NOSIGNAL);
}

RunAccount RunHost::lease() const
{
    RunAccount a;
    {
        // a free slot: two runs at once never share a uid (the end of one kills the uid's processes)
        std::unique_lock<std::mutex> lock(lock_);
        unsigned s = 0;
        for (;; s = 0) {
            while (s < slots_ && busy_[s]) ++s;
            if (s < slots_) break;
            lock.unlock();
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            lock.lock();
        }
        busy_[s] = true;
        a.slot = s;
        a.own_uid = own_uids_;
        a.uid = own_uids_ ? uid_base_ + s : ::getuid();
        a.gid = own_uids_ ? uid_base_ + s : ::getgid();
        if (kind_ == Accounting::polled) return a;
        std::vector<std::string> dirs;
        const std::string leaf = fmt::format("run-{}-{}", s, next_++);
        std::set<std::string> made;
        bool ok = true;
        for (const auto& p : parents_) {
            dirs.push_back(p + "/" + leaf);
            if (made.insert(dirs.back()).second && ::mkdir(dirs.back().c_str(), 0755) != 0) ok = false;
        }
        if (!ok) {
            for (const auto& d : made) ::rmdir(d.c_str());
            return a;  // polled, this run only
        }
        a.cgroup = std::make_unique<RunCgroup>(kind_, dirs, limits_.memory_bytes);
    }
    if (!a.cgroup->set_limits(limits_)) a.cgroup.reset();  // removed again: polled, this run only
    return a;
}

void RunHost::release(RunAccount& account) const
{
    account.cgroup.reset();  // kills whatever is left in it
    if (account.own_uid) kill_uid(account.uid);
    const std::lock_guard<std::mutex> lock(lock_);
    busy_[account.slot] = false;
}

std::string RunHost::text(Lang lang) const
{
    const bool zh = lang == Lang::zh;
    std::string count;
    switch (kind_) {
    case Accounting::cgroup_v2:
    case Accounting::cgroup_v1:
        count = fmt::format(zh ? "每次运行一个 cgroup（{}）：内存（含共享内存、memfd 与 tmpfs 文件）、进程数（上限 {}）与 CPU 时间由内核计量，CPU 按运行均分"
                               : "a cgroup per run ({}): memory (shared memory, memfd and tmpfs files included), processes (at most {}) and CPU time "
                                 "counted by the kernel, the CPU shared equally between runs",
                            kind_ == Accounting::cgroup_v2 ? "v2" : "v1", limits_.processes);
        break;
    case Accounting::polled:
        count = own_uids_ ? fmt::format(zh ? "轮询计量（无 cgroup）：内存为 PSS 加 memfd 与 SysV 共享内存，进程数上限 {}（RLIMIT_NPROC），CPU 不均分"
                                           : "polled (no cgroup): memory as PSS plus memfd and SysV shared memory, processes at most {} (RLIMIT_NPROC), "
                                             "the CPU not shared",
                                        limits_.processes)
                          : std::string(zh ? "轮询计量（无 cgroup）：内存为 PSS 加 memfd 与 SysV 共享内存；进程数无上限，CPU 不均分"
                                           : "polled (no cgroup): memory as PSS plus memfd and SysV shared memory; processes not capped, the CPU not shared");
        break;
    }
    const std::string who = own_uids_ ? std::string(zh ? "每次运行使用自己的 uid 与 gid，不属于主机的任何组" : "each run as a uid and gid of its own, in no group of the host's")
                                      : fmt::format(zh ? "以评分者的 uid {} 运行（评分者不是 root）" : "runs as the grader's uid {} (the grader is not root)", ::getuid());
    return count + (zh ? "；" : "; ") + who;
}

}  // namespace attnlab

// A run's processes: what they hold and have used (polled where no cgroup counts it), and
// ending every one of them.
#include "attnlab/exercise/program_internal.hpp"

#include <fmt/format.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <thread>

namespace attnlab::run_detail {

namespace fs = std::filesystem;

namespace {

std::mutex g_runs_lock;
std::set<pid_t> g_runs;

struct ProcessEntry {
    pid_t pid, ppid;
};

// Every process the grader can see, with its parent (from /proc/PID/stat).
// The first bytes of a small file under /proc (a process's stat line), read with one system
// call: a stream per process made each scan of /proc cost more than the run it followed.
std::string proc_line(const char* path)
{
    char buf[512];
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return "";
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
}

std::vector<ProcessEntry> processes()
{
    std::vector<ProcessEntry> out;
    DIR* proc = opendir("/proc");
    if (proc == nullptr) return out;
    while (const dirent* e = readdir(proc)) {
        char* end = nullptr;
        const long pid = std::strtol(e->d_name, &end, 10);
        if (pid <= 0 || *end != '\0') continue;
        char path[64];
        std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        const std::string line = proc_line(path);
        const auto paren = line.rfind(')');  // the command's name may hold spaces and parentheses
        if (paren == std::string::npos || paren + 4 >= line.size()) continue;
        const long ppid = std::strtol(line.c_str() + paren + 4, nullptr, 10);
        out.push_back({static_cast<pid_t>(pid), static_cast<pid_t>(ppid)});
    }
    closedir(proc);
    return out;
}

// ROOT's descendants (not ROOT itself), among ALL.
std::vector<pid_t> descendants_in(const std::vector<ProcessEntry>& all, pid_t root)
{
    std::multimap<pid_t, pid_t> children;
    for (const auto& p : all) children.emplace(p.ppid, p.pid);
    std::vector<pid_t> out, todo{root};
    while (!todo.empty()) {
        const pid_t parent = todo.back();
        todo.pop_back();
        const auto [from, to] = children.equal_range(parent);
        for (auto it = from; it != to; ++it) out.push_back(it->second), todo.push_back(it->second);
    }
    return out;
}

std::vector<pid_t> descendants(pid_t root) { return descendants_in(processes(), root); }

// The memory a process holds, its shared pages counted in proportion (PSS), in bytes.
double process_bytes(pid_t pid)
{
    std::ifstream in(fmt::format("/proc/{}/smaps_rollup", pid));
    std::string key;
    double kb = 0.0;
    while (in >> key) {
        if (key == "Pss:") {
            in >> kb;
            return kb * 1024.0;
        }
        in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
    }
    return 0.0;
}

// The memfd files PID holds open, by (device, inode), with their sizes: shared memory that no
// mapping may show in PSS.
void memfd_files(pid_t pid, std::map<std::pair<dev_t, ino_t>, double>& files)
{
    const std::string dir = fmt::format("/proc/{}/fd", pid);
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) return;
    while (const dirent* e = readdir(d)) {
        if (e->d_name[0] == '.') continue;
        char target[64] = {};
        const std::string link = dir + "/" + e->d_name;
        if (readlink(link.c_str(), target, sizeof target - 1) <= 0 || std::strncmp(target, "/memfd:", 7) != 0) continue;
        struct stat st {};
        if (::stat(link.c_str(), &st) == 0) files[{st.st_dev, st.st_ino}] = static_cast<double>(st.st_size);
    }
    closedir(d);
}

// The SysV shared memory segments a run made (by its uid where it has one of its own, else by
// the creator's pid), with their sizes. /proc/sysvipc/shm: key shmid perms size cpid lpid
// nattch uid gid cuid ...
struct ShmSegment {
    int id;
    double bytes;
};
std::vector<ShmSegment> shm_segments(const RunAccount& a, const std::set<pid_t>& pids)
{
    std::vector<ShmSegment> out;
    std::ifstream in("/proc/sysvipc/shm");
    std::string header;
    std::getline(in, header);
    for (std::string line; std::getline(in, line);) {
        std::stringstream f(line);
        long key = 0, id = 0, perms = 0, cpid = 0, lpid = 0, nattch = 0, uid = 0, gid = 0, cuid = 0;
        double size = 0.0;
        if (!(f >> key >> id >> perms >> size >> cpid >> lpid >> nattch >> uid >> gid >> cuid)) continue;
        const bool mine = a.own_uid ? static_cast<uid_t>(cuid) == a.uid : pids.count(static_cast<pid_t>(cpid)) > 0;
        if (mine) out.push_back({static_cast<int>(id), size});
    }
    return out;
}

// The CPU time PID has used, user and system, in seconds (fields 14 and 15 of its stat).
double process_cpu(pid_t pid)
{
    std::ifstream in(fmt::format("/proc/{}/stat", pid));
    std::string line;
    if (!std::getline(in, line)) return 0.0;
    const auto paren = line.rfind(')');
    if (paren == std::string::npos) return 0.0;
    std::stringstream f(line.substr(paren + 2));
    std::string field;
    double ticks = 0.0;
    for (int i = 3; i <= 15 && f >> field; ++i)
        if (i >= 14) ticks += std::strtod(field.c_str(), nullptr);
    static const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
    return ticks / hz;
}

// The shared folders anyone may write to; without a sandbox, a run with a uid of its own can
// leave files there, which outlive it (and /dev/shm's are memory).
constexpr const char* kSharedFolders[] = {"/dev/shm", "/tmp", "/var/tmp"};

// The bytes of the entries UID owns at the top of /dev/shm (memory, not disk).
double shm_files_bytes(uid_t uid)
{
    double sum = 0.0;
    std::error_code ec;
    for (fs::directory_iterator it("/dev/shm", ec), end; !ec && it != end; it.increment(ec)) {
        struct stat st {};
        if (::lstat(it->path().c_str(), &st) == 0 && st.st_uid == uid) sum += static_cast<double>(st.st_blocks) * 512.0;
    }
    return sum;
}

}  // namespace

// Removes what UID left at the top of the shared folders.
void remove_owned(uid_t uid)
{
    for (const char* dir : kSharedFolders) {
        std::error_code ec;
        std::vector<fs::path> doomed;
        for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
            struct stat st {};
            if (::lstat(it->path().c_str(), &st) == 0 && st.st_uid == uid) doomed.push_back(it->path());
        }
        for (const auto& p : doomed) fs::remove_all(p, ec);
    }
}


Usage polled_usage(pid_t root, const RunAccount& a, std::set<pid_t>& seen)
{
    std::vector<pid_t> tree = descendants(root);
    tree.push_back(root);
    Usage u;
    std::map<std::pair<dev_t, ino_t>, double> memfds;
    for (pid_t p : tree) {
        seen.insert(p);
        u.bytes += process_bytes(p);
        u.cpu_seconds += process_cpu(p);
        memfd_files(p, memfds);
    }
    for (const auto& [id, bytes] : memfds) u.bytes += bytes;
    for (const auto& seg : shm_segments(a, seen)) u.bytes += seg.bytes;
    if (a.own_uid) u.bytes += shm_files_bytes(a.uid);
    return u;
}


// SysV segments outlive their processes: a run's are removed when it ends.
void remove_shm(const RunAccount& a, const std::set<pid_t>& seen)
{
    for (const auto& seg : shm_segments(a, seen)) shmctl(seg.id, IPC_RMID, nullptr);
}


// What the files under DIR take on disk (at most max_entries entries are looked at; a folder
// holding more counts as full).
double folder_bytes(const std::string& dir, double limit)
{
    constexpr std::size_t max_entries = 100000;
    std::error_code ec;
    double sum = 0.0;
    std::size_t seen = 0;
    for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end; it.increment(ec)) {
        if (++seen > max_entries) return limit + 1.0;
        struct stat st {};
        if (::lstat(it->path().c_str(), &st) == 0) sum += static_cast<double>(st.st_blocks) * 512.0;
    }
    return sum;
}

namespace {


// Whether PID has ended: gone, or a zombie waiting to be reaped.
bool ended(pid_t pid)
{
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
    const std::string line = proc_line(path);
    if (line.empty()) return true;
    const auto paren = line.rfind(')');
    return paren == std::string::npos || paren + 2 >= line.size() || line[paren + 2] == 'Z';
}

// Kills and reaps the processes (of ALL) left to the grader (the subreaper) that are no run's
// first process and no grading's watchdog: only a run can have made them (a double fork that
// escaped its group, or under bwrap the namespace's first process once bwrap is gone, whose
// end waits for every process of its namespace). Returns how many there were.
std::size_t reap_strays(const std::vector<ProcessEntry>& all, pid_t root)
{
    const std::lock_guard<std::mutex> lock(g_runs_lock);
    std::size_t n = 0;
    for (const auto& p : all) {
        if (p.ppid != getpid() || g_runs.count(p.pid) || p.pid == root || is_watchdog(p.pid)) continue;
        kill(p.pid, SIGKILL);
        while (waitpid(p.pid, nullptr, 0) < 0 && errno == EINTR) {}
        ++n;
    }
    return n;
}

}  // namespace

// Kills ROOT's process group, every descendant and the strays, again and again until none is
// left (a fork chain makes new ones while the last are killed), at most 5 s, so that nothing
// of the run is alive when it is reported done.
void kill_all(pid_t root)
{
    kill(-root, SIGKILL);
    kill(root, SIGKILL);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (;;) {
        const std::vector<ProcessEntry> all = processes();  // one look at /proc for both
        const std::vector<pid_t> doomed = descendants_in(all, root);
        for (pid_t p : doomed) kill(p, SIGKILL);
        const std::size_t strays = reap_strays(all, root);
        if (strays == 0 && std::all_of(doomed.begin(), doomed.end(), ended)) {
            // those killed since the look may have been left to the grader, ended but not reaped
            if (!doomed.empty()) reap_strays(processes(), root);
            break;
        }
        if (std::chrono::steady_clock::now() > deadline) break;
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
}

std::mutex& runs_lock() { return g_runs_lock; }
std::set<pid_t>& runs() { return g_runs; }

}  // namespace attnlab::run_detail

#include "attnlab/exercise/program.hpp"

#include "attnlab/core/report.hpp"
#include "attnlab/io/files.hpp"

#include <fmt/format.h>

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

namespace attnlab {

namespace fs = std::filesystem;

namespace {

// --- the grader's signals ---

std::atomic<int> g_signal{0};

extern "C" void note_signal(int sig) { g_signal.store(sig); }

constexpr int kGradingSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_previous[3];
bool g_replaced[3] = {};

// --- the processes of the runs ---

// The runs' first processes, and the lock under which one is started or stray processes are
// reaped, so that a run just forked is never taken for a stray one.
std::mutex g_runs_lock;
std::set<pid_t> g_runs;

struct ProcessEntry {
    pid_t pid, ppid;
};

// Every process the grader can see, with its parent (from /proc/PID/stat).
std::vector<ProcessEntry> processes()
{
    std::vector<ProcessEntry> out;
    DIR* proc = opendir("/proc");
    if (proc == nullptr) return out;
    while (const dirent* e = readdir(proc)) {
        char* end = nullptr;
        const long pid = std::strtol(e->d_name, &end, 10);
        if (pid <= 0 || *end != '\0') continue;
        std::ifstream in(fmt::format("/proc/{}/stat", pid));
        std::string line;
        if (!std::getline(in, line)) continue;
        const auto paren = line.rfind(')');  // the command's name may hold spaces and parentheses
        if (paren == std::string::npos || paren + 4 >= line.size()) continue;
        const long ppid = std::strtol(line.c_str() + paren + 4, nullptr, 10);
        out.push_back({static_cast<pid_t>(pid), static_cast<pid_t>(ppid)});
    }
    closedir(proc);
    return out;
}

// ROOT's descendants (not ROOT itself).
std::vector<pid_t> descendants(pid_t root)
{
    const std::vector<ProcessEntry> all = processes();
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

// What a run holds and has used, polled where no cgroup counts it.
struct Usage {
    double bytes = 0.0, cpu_seconds = 0.0;
};

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

// Whether PID has ended: gone, or a zombie waiting to be reaped.
bool ended(pid_t pid)
{
    std::ifstream in(fmt::format("/proc/{}/stat", pid));
    std::string line;
    if (!std::getline(in, line)) return true;
    const auto paren = line.rfind(')');
    return paren == std::string::npos || paren + 2 >= line.size() || line[paren + 2] == 'Z';
}

// Kills and reaps the processes left to the grader (the subreaper) that are no run's first
// process and no grading's watchdog: only a run can have made them (a double fork that
// escaped its group, or under bwrap the namespace's first process once bwrap is gone, whose
// end waits for every process of its namespace). Returns how many there were.
std::size_t reap_strays(pid_t root)
{
    const std::lock_guard<std::mutex> lock(g_runs_lock);
    std::size_t n = 0;
    for (const auto& p : processes()) {
        if (p.ppid != getpid() || g_runs.count(p.pid) || p.pid == root || is_watchdog(p.pid)) continue;
        kill(p.pid, SIGKILL);
        while (waitpid(p.pid, nullptr, 0) < 0 && errno == EINTR) {}
        ++n;
    }
    return n;
}

// Kills ROOT's process group, every descendant and the strays, again and again until none is
// left (a fork chain makes new ones while the last are killed), at most 5 s, so that nothing
// of the run is alive when it is reported done.
void kill_all(pid_t root)
{
    kill(-root, SIGKILL);
    kill(root, SIGKILL);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (;;) {
        const std::vector<pid_t> doomed = descendants(root);
        for (pid_t p : doomed) kill(p, SIGKILL);
        const std::size_t strays = reap_strays(root);
        if ((strays == 0 && std::all_of(doomed.begin(), doomed.end(), ended)) || std::chrono::steady_clock::now() > deadline) break;
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
}

// --- the program's world ---

std::string host_path()
{
    const char* path = std::getenv("PATH");
    return path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
}

// Inside the sandbox: /tmp is its one writable tmpfs, the program runs in /tmp/run.
constexpr const char* kSandboxTmp = "/tmp";
constexpr const char* kSandboxRun = "/tmp/run";
constexpr const char* kSandboxStage = "/sandbox/stage";
constexpr const char* kSandboxBin = "/sandbox/bin";

// PATH (with the bin folder first), HOME, TMPDIR and the locale: nothing else of the grader's.
std::vector<std::string> program_environment(const ProgramLimits& limits, const std::string& tmp)
{
    const bool boxed = limits.sandbox == Sandbox::bwrap;
    std::string path = boxed ? "/usr/local/bin:/usr/bin:/bin" : host_path();
    if (!limits.bin_dir.empty()) path = (boxed ? std::string(kSandboxBin) : limits.bin_dir) + ":" + path;
    std::vector<std::string> env{"PATH=" + path, "TMPDIR=" + (boxed ? std::string(kSandboxTmp) : tmp)};
    if (boxed) env.push_back(std::string("HOME=") + kSandboxTmp);
    for (const char* name : {"HOME", "LANG", "LC_ALL", "LC_CTYPE"}) {
        if (boxed && std::string(name) == "HOME") continue;
        if (const char* value = std::getenv(name)) env.push_back(std::string(name) + "=" + value);
    }
    return env;
}

std::string find_bwrap()
{
    std::string path = host_path() + ":/usr/bin:/bin";
    for (std::size_t from = 0; from <= path.size();) {
        const auto colon = std::min(path.find(':', from), path.size());
        const std::string candidate = path.substr(from, colon - from) + "/bwrap";
        if (colon > from && access(candidate.c_str(), X_OK) == 0) return candidate;
        from = colon + 1;
    }
    return "";
}

// The system's folders, read-only; /bin, /lib and the others as they are here (links to /usr
// on a merged system).
void add_system(std::vector<std::string>& a)
{
    for (const char* dir : {"/usr", "/etc"}) a.insert(a.end(), {"--ro-bind", dir, dir});
    for (const char* top : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
        std::error_code ec;
        const auto st = fs::symlink_status(top, ec);
        if (ec) continue;
        if (fs::is_symlink(st)) a.insert(a.end(), {"--symlink", fs::read_symlink(top, ec).string(), top});
        else if (fs::is_directory(st)) a.insert(a.end(), {"--ro-bind", top, top});
    }
}

// Inside: the copy is laid into /tmp/run, the program runs there with the grader's pipes
// closed; when it ends, every other process of the run is killed (kill -1 reaches all of this
// uid's processes in the namespace but this shell and the namespace's init), the shell tells
// the grader on descriptor 3 and waits on descriptor 4 while the grader opens the answer.
constexpr const char* kInside =
    "cp -R /sandbox/stage/. /tmp/run/ 2>/dev/null || { echo 'the submission and its inputs do not fit the disk limit' >&2; exit 125; }\n"
    "cd /tmp/run || exit 125\n"
    "sh -c \"$1\" 3>&- 4<&- 5>&-\n"
    "status=$?\n"
    "kill -9 -1 2>/dev/null\n"
    "echo \"$status\" >&3\n"
    "read -r _ <&4\n"
    "exit $status\n";

// Descriptors inside bwrap: 3 the program ended, 4 the grader is done, 5 bwrap's status.
constexpr int kReadyFd = 3, kReleaseFd = 4, kStatusFd = 5;

// /dev/shm's tmpfs: a sixteenth of the disk limit, at most 64 MiB; /tmp has the rest.
double shm_bytes(double disk_bytes) { return std::min(disk_bytes / 16.0, 64.0 * 1024 * 1024); }

std::vector<std::string> bwrap_arguments(const std::string& bwrap, const ProgramLimits& limits, const std::string& stage,
                                         const std::vector<std::string>& inner)
{
    std::vector<std::string> a{bwrap, "--die-with-parent", "--new-session", "--unshare-all", "--cap-drop", "ALL"};
    a.insert(a.end(), {"--json-status-fd", std::to_string(kStatusFd)});
    add_system(a);
    a.insert(a.end(), {"--proc", "/proc", "--dev", "/dev"});
    a.insert(a.end(), {"--size", fmt::format("{:.0f}", shm_bytes(limits.disk_bytes)), "--tmpfs", "/dev/shm", "--remount-ro", "/dev"});
    a.insert(a.end(), {"--size", fmt::format("{:.0f}", limits.disk_bytes - shm_bytes(limits.disk_bytes)), "--tmpfs", kSandboxTmp, "--dir", kSandboxRun});
    for (const auto& dir : limits.read_only) a.insert(a.end(), {"--ro-bind", dir, dir});  // after /tmp: a venv may be under it
    a.insert(a.end(), {"--ro-bind", stage, kSandboxStage});
    if (!limits.bin_dir.empty()) a.insert(a.end(), {"--ro-bind", limits.bin_dir, kSandboxBin});
    a.insert(a.end(), {"--remount-ro", "/", "--chdir", kSandboxTmp, "--"});
    a.insert(a.end(), inner.begin(), inner.end());
    return a;
}

bool enter_own_network()
{
    if (unshare(CLONE_NEWNET) == 0) return true;
    return unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0;
}

void limit(int resource, double soft, double hard)
{
    const rlimit r{static_cast<rlim_t>(soft), static_cast<rlim_t>(hard)};  // the limits' ranges keep these far from overflow
    setrlimit(resource, &r);
}

// The descriptors a child is given: stdin, the log pipe (stdout and stderr), and under bwrap
// the ready, release and status pipes.
struct ChildFiles {
    int input = -1, log = -1, ready = -1, release = -1, status = -1;
};

// What the child does between fork and exec, all made before the fork.
struct ChildPlan {
    const std::string& dir;
    const ChildFiles& files;
    const ProgramLimits& limits;
    const RunAccount& account;
    pid_t grader;
};

// FROM onto TO; each source first moved above 9, so that no dup2 onto 0..5 overwrites another's
// source or meets its own (which would keep CLOEXEC).
struct FdMove {
    int from, to;
};
bool move_fds(const FdMove* moves, std::size_t n)
{
    int high[8];
    for (std::size_t i = 0; i < n; ++i) high[i] = fcntl(moves[i].from, F_DUPFD, 10);
    for (std::size_t i = 0; i < n; ++i)
        if (high[i] < 0 || dup2(high[i], moves[i].to) < 0) return false;
    return true;
}

// Joins the run's cgroup (writing 0 moves the writer), while still allowed to.
bool join_cgroup(const RunAccount& a)
{
    if (!a.cgroup) return true;
    for (const auto& f : a.cgroup->join_files()) {
        const int fd = open(f.c_str(), O_WRONLY | O_CLOEXEC);
        const bool ok = fd >= 0 && write(fd, "0", 1) == 1;
        if (fd >= 0) close(fd);
        if (!ok) return false;
    }
    return true;
}

// In the child, between fork and exec: async-signal-safe calls only.
[[noreturn]] void become_program(const ChildPlan& p, char* const argv[], char* const envp[])
{
    setpgid(0, 0);
    if (!join_cgroup(p.account)) _exit(126);
    if (p.limits.sandbox == Sandbox::none && p.limits.isolate && !enter_own_network()) _exit(126);
    if (chdir(p.dir.c_str()) != 0) _exit(127);
    const FdMove moves[] = {{p.files.input, 0}, {p.files.log, 1}, {p.files.log, 2}, {p.files.ready, kReadyFd}, {p.files.release, kReleaseFd}, {p.files.status, kStatusFd}};
    if (!move_fds(moves, p.files.ready >= 0 ? 6 : 3)) _exit(127);
    const double cpu = p.limits.cpu_seconds > 0 ? p.limits.cpu_seconds : p.limits.timeout_s;
    limit(RLIMIT_AS, p.limits.memory_bytes, p.limits.memory_bytes);
    limit(RLIMIT_FSIZE, p.limits.file_bytes, p.limits.file_bytes);
    limit(RLIMIT_CORE, 0, 0);
    limit(RLIMIT_CPU, std::ceil(cpu), std::ceil(cpu) + 1);  // one process's share; the sum is watched
    if (p.account.own_uid && !p.account.cgroup) limit(RLIMIT_NPROC, static_cast<double>(p.limits.processes), static_cast<double>(p.limits.processes));
    if (p.account.own_uid && (setgroups(0, nullptr) != 0 || setresgid(p.account.gid, p.account.gid, p.account.gid) != 0 ||
                              setresuid(p.account.uid, p.account.uid, p.account.uid) != 0))
        _exit(126);
    // after the uid changes, which clear it; a grader gone already is not waited for
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != p.grader) _exit(126);
    for (int sig : {SIGPIPE, SIGXFSZ, SIGXCPU, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execve(argv[0], argv, envp);
    _exit(127);
}

// The run's output, read from its pipe as it comes: the first kLogBytes into the log file,
// the last 4 KiB kept for the report, the rest counted.
class LogDrain {
public:
    LogDrain(int fd, int file) : fd_(fd), file_(file) {}
    void drain()
    {
        char buf[16384];
        for (;;) {
            const ssize_t n = read(fd_, buf, sizeof buf);
            if (n <= 0) return;
            const auto keep = static_cast<std::size_t>(std::min<double>(static_cast<double>(n), static_cast<double>(kLogBytes - std::min(kLogBytes, written_))));
            if (keep > 0 && file_ >= 0 && write(file_, buf, keep) == static_cast<ssize_t>(keep)) written_ += keep;
            dropped_ += static_cast<std::size_t>(n) - keep;
            tail_.append(buf, static_cast<std::size_t>(n));
            if (tail_.size() > 8192) tail_.erase(0, tail_.size() - 4096);
        }
    }
    // The last line that holds anything, escaped for one line of a report.
    std::string last_line() const
    {
        std::string tail = tail_.size() > 4096 ? tail_.substr(tail_.size() - 4096) : tail_;
        while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r' || tail.back() == ' ')) tail.pop_back();
        const auto nl = tail.find_last_of('\n');
        return excerpt(nl == std::string::npos ? tail : tail.substr(nl + 1), 160);
    }
    int fd() const { return fd_; }

private:
    int fd_, file_;
    std::size_t written_ = 0, dropped_ = 0;
    std::string tail_;
};

// The answer, opened once by the grader below the folder DIRFD (the sandbox's root, or the
// run's folder), no link followed anywhere on the way, and copied to OUT: a regular file of at
// most max_bytes, or what else it is.
ProgramOutcome::Answer take_answer(int dirfd, const std::string& relative, const std::string& out, double max_bytes)
{
    open_how how{};
    how.flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH;
    int fd = static_cast<int>(syscall(SYS_openat2, dirfd, relative.c_str(), &how, sizeof how));
    if (fd < 0 && errno == ENOSYS) fd = openat(dirfd, relative.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);  // before Linux 5.6
    if (fd < 0) return errno == ENOENT ? ProgramOutcome::Answer::absent : ProgramOutcome::Answer::other;
    struct stat st {};
    const int copy = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && static_cast<double>(st.st_size) <= max_bytes
                         ? open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)
                         : -1;
    bool ok = copy >= 0;
    char buf[65536];
    for (ssize_t n; ok && (n = read(fd, buf, sizeof buf)) > 0;) ok = write(copy, buf, static_cast<std::size_t>(n)) == n;
    close(fd);
    if (copy >= 0) ok = close(copy) == 0 && ok;
    return ok ? ProgramOutcome::Answer::regular : ProgramOutcome::Answer::other;
}

// The host pid of the sandbox's first process, from bwrap's status ("child-pid": N), once it is there.
pid_t sandbox_pid(int status_fd, std::string& seen)
{
    char buf[512];
    for (ssize_t n; (n = read(status_fd, buf, sizeof buf)) > 0;) seen.append(buf, static_cast<std::size_t>(n));
    const auto at = seen.find("\"child-pid\":");
    return at == std::string::npos ? 0 : static_cast<pid_t>(std::strtol(seen.c_str() + at + 12, nullptr, 10));
}

// What the run is watched for while it runs, and how its answer is taken.
struct Watch {
    const ProgramLimits& limits;
    const RunAccount& account;
    std::vector<std::string> folders;  // without a sandbox: what counts against the disk limit
    LogDrain& log;
    int ready = -1, release = -1, status = -1;  // under bwrap: the grader's ends
    int run_dir = -1;                           // without a sandbox: the run's folder, opened before it started
    const ProgramRun& run;
};

class Watcher {
public:
    Watcher(pid_t pid, Watch& w) : pid_(pid), w_(w) {}
    ProgramOutcome watch();

private:
    bool over_limits(std::chrono::steady_clock::time_point now);
    void stop(ProgramOutcome::End why);
    void take_boxed_answer();
    void measure();

    pid_t pid_;
    Watch& w_;
    ProgramOutcome out_;
    int status_ = 0;
    std::string status_text_;
    std::set<pid_t> seen_;
    std::chrono::steady_clock::time_point next_memory_{}, next_disk_{};
};

void Watcher::stop(ProgramOutcome::End why)
{
    kill_all(pid_);
    if (w_.account.cgroup) w_.account.cgroup->kill_all();
    while (waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {}
    out_.end = why;
}

void Watcher::measure()
{
    if (w_.account.cgroup) {
        out_.peak_bytes = std::max(out_.peak_bytes, w_.account.cgroup->peak_bytes());
        out_.cpu_seconds = w_.account.cgroup->cpu_seconds();
        return;
    }
    const Usage u = polled_usage(pid_, w_.account, seen_);
    out_.peak_bytes = std::max(out_.peak_bytes, u.bytes);
    out_.cpu_seconds = std::max(out_.cpu_seconds, u.cpu_seconds);
}

// Whether a limit was passed (and the run stopped for it).
bool Watcher::over_limits(std::chrono::steady_clock::time_point now)
{
    using End = ProgramOutcome::End;
    if (g_signal.load() != 0) return stop(End::interrupted), true;
    if (out_.seconds >= w_.limits.timeout_s) return stop(End::timed_out), true;
    if (now >= next_memory_) {
        measure();
        const double cpu = w_.limits.cpu_seconds > 0 ? w_.limits.cpu_seconds : w_.limits.timeout_s;
        if (out_.cpu_seconds > cpu) return stop(End::cpu_exceeded), true;
        // the kernel's OOM killer acted on the run's cgroup: the run is over its memory
        if (out_.peak_bytes > w_.limits.memory_bytes || (w_.account.cgroup && w_.account.cgroup->oom_killed())) return stop(End::memory_exceeded), true;
        next_memory_ = now + std::chrono::milliseconds(20);
    }
    if (!w_.folders.empty() && now >= next_disk_) {
        double used = 0.0;
        for (const auto& f : w_.folders) used += folder_bytes(f, w_.limits.disk_bytes);
        if (used > w_.limits.disk_bytes) return stop(End::disk_exceeded), true;
        next_disk_ = now + std::chrono::milliseconds(100);
    }
    return false;
}

// The program ended inside the sandbox and nothing else of it runs: the answer is taken
// through the sandbox's root, then the sandbox is let go.
void Watcher::take_boxed_answer()
{
    char buf[32];
    if (read(w_.ready, buf, sizeof buf) <= 0) return;
    const pid_t inside = sandbox_pid(w_.status, status_text_);
    const int root = inside > 0 ? open(fmt::format("/proc/{}/root", inside).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
    if (root >= 0) {
        out_.answer = take_answer(root, std::string(kSandboxRun + 1) + "/" + w_.run.answer_name, w_.run.answer_out, w_.limits.file_bytes);
        close(root);
    }
    close(w_.release);
    w_.release = -1;
}

ProgramOutcome Watcher::watch()
{
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    next_memory_ = next_disk_ = start;
    int pause_us = 200;
    bool log_open = true;  // until every writer has closed it: then poll would return at once
    for (;;) {
        w_.log.drain();
        const pid_t done = waitpid(pid_, &status_, WNOHANG);
        if (done == pid_ || (done < 0 && errno != EINTR)) break;
        out_.seconds = std::chrono::duration<double>(clock::now() - start).count();
        if (over_limits(clock::now())) break;
        if (w_.ready >= 0 && w_.release >= 0) take_boxed_answer();
        pollfd fds[2] = {{log_open ? w_.log.fd() : -1, POLLIN, 0}, {w_.release >= 0 ? w_.ready : -1, POLLIN, 0}};
        poll(fds, 2, std::max(1, pause_us / 1000));
        if (fds[0].revents & (POLLHUP | POLLERR)) log_open = false;
        pause_us = std::min(pause_us * 2, 20000);
    }
    measure();
    kill_all(pid_);  // whatever it left running in the background
    if (w_.account.cgroup) {
        w_.account.cgroup->kill_all();
        out_.peak_bytes = std::max(out_.peak_bytes, w_.account.cgroup->peak_bytes());
        out_.process_cap = w_.account.cgroup->pids_capped();
        if (out_.end == ProgramOutcome::End::not_started && w_.account.cgroup->oom_killed()) out_.end = ProgramOutcome::End::memory_exceeded;
    }
    remove_shm(w_.account, seen_);
    w_.log.drain();
    out_.seconds = std::chrono::duration<double>(clock::now() - start).count();
    if (w_.run_dir >= 0) out_.answer = take_answer(w_.run_dir, w_.run.answer_name, w_.run.answer_out, w_.limits.file_bytes);
    if (out_.end != ProgramOutcome::End::not_started) return out_;
    out_.end = WIFSIGNALED(status_) ? ProgramOutcome::End::signaled : ProgramOutcome::End::exited;
    out_.code = WIFSIGNALED(status_) ? WTERMSIG(status_) : WEXITSTATUS(status_);
    if (out_.end == ProgramOutcome::End::signaled && out_.code == SIGXCPU) out_.end = ProgramOutcome::End::cpu_exceeded;
    return out_;
}

int open_file(const std::string& path, int flags) { return open(path.c_str(), flags | O_CLOEXEC, 0600); }

void close_files(const ChildFiles& f)
{
    for (int fd : {f.input, f.log, f.ready, f.release, f.status})
        if (fd >= 0) close(fd);
}

// Forks the program under the runs' lock (so no other run's clean-up takes it for a stray
// process) and waits for it.
ProgramOutcome start_and_wait(const ChildPlan& plan, std::vector<std::string> argv_words, const std::vector<std::string>& env_words, Watch& watch)
{
    std::vector<char*> argv, envp;
    for (auto& w : argv_words) argv.push_back(w.data());
    argv.push_back(nullptr);
    std::vector<std::string> env = env_words;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = -1;
    {
        const std::lock_guard<std::mutex> lock(g_runs_lock);
        pid = fork();
        if (pid == 0) become_program(plan, argv.data(), envp.data());
        if (pid > 0) g_runs.insert(pid);
    }
    close_files(plan.files);
    ProgramOutcome outcome;
    if (pid < 0) {
        outcome.output_tail = fmt::format("cannot start a process: {}", std::strerror(errno));
        return outcome;
    }
    setpgid(pid, pid);
    outcome = Watcher(pid, watch).watch();
    const std::lock_guard<std::mutex> lock(g_runs_lock);
    g_runs.erase(pid);
    return outcome;
}

// A pipe whose ends close on exec; the grader's end (READ_END true: the read end) does not block.
bool make_pipe(int& read_end, int& write_end, bool grader_reads)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return false;
    read_end = fds[0];
    write_end = fds[1];
    const int mine = grader_reads ? read_end : write_end;
    return fcntl(mine, F_SETFL, O_NONBLOCK) == 0;
}

// The grader's ends of a run's pipes, closed when the run is over.
struct GraderEnds {
    int log = -1, log_file = -1, ready = -1, release = -1, status = -1, run_dir = -1;
    ~GraderEnds()
    {
        for (int fd : {log, log_file, ready, release, status, run_dir})
            if (fd >= 0) close(fd);
    }
};

bool open_pipes(bool boxed, ChildFiles& child, GraderEnds& mine)
{
    if (!make_pipe(mine.log, child.log, true)) return false;
    if (!boxed) return true;
    return make_pipe(mine.ready, child.ready, true) && make_pipe(child.release, mine.release, false) && make_pipe(mine.status, child.status, true);
}

ProgramOutcome run_with(const ProgramRun& run, const ProgramLimits& limits, const RunAccount& account)
{
    const bool boxed = limits.sandbox == Sandbox::bwrap;
    const std::string tmp = run.dir + ".tmp";
    std::error_code ec;
    if (!boxed) fs::create_directories(tmp, ec);
    if (account.own_uid) give_to(run.dir, account.uid, account.gid), give_to(tmp, account.uid, account.gid);
    ChildFiles files{open_file("/dev/null", O_RDONLY)};
    GraderEnds mine;
    mine.log_file = open_file(run.log, O_WRONLY | O_CREAT | O_TRUNC);
    if (!boxed) mine.run_dir = open(run.dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    ProgramOutcome outcome;
    if (files.input < 0 || mine.log_file < 0 || !open_pipes(boxed, files, mine) || (!boxed && mine.run_dir < 0)) {
        close_files(files);
        outcome.output_tail = "cannot open /dev/null, the log, the run's folder or a pipe";
        return outcome;
    }
    std::vector<std::string> argv{"/bin/sh", "-c", run.command};
    if (boxed) argv = bwrap_arguments(find_bwrap(), limits, run.dir, {"/bin/sh", "-c", kInside, "sh", run.command});
    LogDrain log(mine.log, mine.log_file);
    Watch watch{limits, account, boxed ? std::vector<std::string>{} : std::vector<std::string>{run.dir, tmp}, log, mine.ready, mine.release, mine.status,
                mine.run_dir, run};
    const ChildPlan plan{boxed ? "/" : run.dir, files, limits, account, getpid()};
    outcome = start_and_wait(plan, argv, program_environment(limits, tmp), watch);
    mine.release = watch.release;  // closed already once the answer was taken
    outcome.output_tail = log.last_line();
    outcome.answer_path = run.answer_out;
    outcome.accounting = account.cgroup ? limits.host->accounting() : Accounting::polled;
    fs::remove_all(tmp, ec);
    if (!boxed && account.own_uid) remove_owned(account.uid);
    return outcome;
}

}  // namespace

ProgramOutcome run_program(const ProgramRun& run, const ProgramLimits& limits)
{
    static const bool subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
    (void)subreaper;
    RunAccount account;
    account.uid = getuid();
    account.gid = getgid();
    if (limits.host) account = limits.host->lease();
    ProgramOutcome outcome = run_with(run, limits, account);
    if (limits.host) limits.host->release(account);
    return outcome;
}

bool bwrap_works()
{
    static const bool works = [] {
        const std::string bwrap = find_bwrap();
        if (bwrap.empty()) return false;
        std::vector<std::string> words{bwrap, "--die-with-parent", "--unshare-all", "--cap-drop", "ALL"};
        add_system(words);
        words.insert(words.end(), {"--proc", "/proc", "--dev", "/dev", "--size", "1048576", "--tmpfs", "/tmp", "--", "/bin/true"});
        std::vector<char*> argv;
        for (auto& w : words) argv.push_back(w.data());
        argv.push_back(nullptr);
        const pid_t pid = fork();
        if (pid == 0) {
            const int null = open("/dev/null", O_RDWR);
            for (int fd : {0, 1, 2}) dup2(null, fd);
            execv(argv[0], argv.data());
            _exit(127);
        }
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) != pid) return false;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }();
    return works;
}

bool can_isolate()
{
    const pid_t pid = fork();
    if (pid == 0) _exit(enter_own_network() ? 0 : 1);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return false;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string isolation_text(const ProgramLimits& l, Lang lang)
{
    const double gib = 1024.0 * 1024 * 1024;
    const bool zh = lang == Lang::zh;
    const double cpu = l.cpu_seconds > 0 ? l.cpu_seconds : l.timeout_s;
    std::string box;
    if (l.sandbox == Sandbox::bwrap) {
        box = fmt::format(zh ? "bubblewrap：独立的 PID、网络、挂载与 cgroup 命名空间，看不到评分者的文件，除 /tmp 与 /dev/shm 外全部只读；整个提交合计内存 {:g} GiB、磁盘 {:g} GiB、CPU 时间 {:g} s；结束后不留任何进程"
                             : "bubblewrap: own PID, network, mount and cgroup namespaces, no view of the grader's files, read-only but for /tmp and "
                               "/dev/shm; memory {:g} GiB, disk {:g} GiB and CPU time {:g} s for the whole submission; nothing left running",
                          l.memory_bytes / gib, l.disk_bytes / gib, cpu);
    } else {
        box = fmt::format(zh ? "无沙箱（进程组，评分者收养遗留进程；整个提交合计内存 {:g} GiB、磁盘 {:g} GiB、CPU 时间 {:g} s{}）：不是安全沙箱"
                             : "none (a process group, the grader reaping what it leaves; memory {:g} GiB, disk {:g} GiB and CPU time {:g} s for the whole "
                               "submission{}): not a security sandbox",
                          l.memory_bytes / gib, l.disk_bytes / gib, cpu, l.isolate ? (zh ? "；无网络" : "; no network") : "");
    }
    if (l.host == nullptr) return box;
    return box + (zh ? "；" : "; ") + l.host->text(lang);
}

GradingSignals::GradingSignals()
{
    g_signal.store(0);
    struct sigaction sa {};
    sa.sa_handler = note_signal;
    sigemptyset(&sa.sa_mask);
    for (std::size_t i = 0; i < 3; ++i) {
        g_replaced[i] = false;
        if (::sigaction(kGradingSignals[i], nullptr, &g_previous[i]) != 0 || g_previous[i].sa_handler == SIG_IGN) continue;  // nohup
        g_replaced[i] = ::sigaction(kGradingSignals[i], &sa, nullptr) == 0;
    }
}

GradingSignals::~GradingSignals()
{
    for (std::size_t i = 0; i < 3; ++i)
        if (g_replaced[i]) ::sigaction(kGradingSignals[i], &g_previous[i], nullptr);
}

int GradingSignals::received() { return g_signal.load(); }

namespace {

struct Copier {
    fs::path root;  // FROM, resolved
    std::vector<std::string> skip;  // top-level names
    std::size_t max_bytes = 0, copied = 0;
    std::size_t max_entries = 0, entries = 0, over = 0;  // over: entries past max_entries
    std::vector<std::string> left_out;

    // Whether one more entry may be copied; past the cap the rest is only counted.
    bool room()
    {
        if (++entries <= max_entries) return true;
        ++over;
        return false;
    }

    bool inside(const fs::path& p) const
    {
        const auto [end, _] = std::mismatch(root.begin(), root.end(), p.begin(), p.end());
        return end == root.end();
    }
    void file(const fs::path& from, const fs::path& to, const std::string& name)
    {
        std::error_code ec;
        const auto size = fs::file_size(from, ec);
        if (ec || copied + size > max_bytes || !fs::copy_file(from, to, ec) || ec) {
            left_out.push_back(name);
            return;
        }
        copied += size;
    }
    // One entry of a folder, copied as what it is.
    void entry(const fs::path& p, const fs::file_status& st, const fs::path& to, const std::string& name, int depth)
    {
        std::error_code ec;
        if (fs::is_directory(st) && depth >= 32) left_out.push_back(name + "/ (more than 32 folders deep)");
        else if (fs::is_directory(st)) folder(p, to / p.filename(), name + "/", depth + 1);
        else if (fs::is_regular_file(st)) file(p, to / p.filename(), name);
        else if (fs::is_symlink(st)) {
            const fs::path target = fs::canonical(p, ec);
            if (!ec && inside(target) && fs::is_regular_file(target, ec)) file(target, to / p.filename(), name);
            else left_out.push_back(name);
        } else left_out.push_back(name);
    }
    // A folder's files before its subfolders, each in name order, so that a folder of many
    // files beside the program never crowds the program out of the entry cap, and what is
    // left out is the same on every run.
    void folder(const fs::path& from, const fs::path& to, const std::string& prefix, int depth)
    {
        std::error_code ec;
        fs::create_directory(to, ec);
        if (ec) return;
        std::vector<std::pair<fs::path, fs::file_status>> listed;
        for (fs::directory_iterator it(from, ec), end; !ec && it != end; it.increment(ec)) {
            const std::string name = prefix + it->path().filename().string();
            if (depth == 0 && std::find(skip.begin(), skip.end(), name) != skip.end()) continue;
            std::error_code st_ec;
            listed.emplace_back(it->path(), fs::symlink_status(it->path(), st_ec));
        }
        std::sort(listed.begin(), listed.end(), [](const auto& a, const auto& b) {
            const bool da = fs::is_directory(a.second), db = fs::is_directory(b.second);
            return da != db ? db : a.first.filename() < b.first.filename();
        });
        for (const auto& [p, st] : listed)
            if (room()) entry(p, st, to, prefix + p.filename().string(), depth);
    }
};

}  // namespace

std::vector<std::string> copy_submission(const std::string& from, const std::string& to, const std::vector<std::string>& skip,
                                         std::size_t max_bytes, std::size_t max_entries)
{
    std::error_code ec;
    Copier c{fs::canonical(from, ec), skip, max_bytes, 0, max_entries, 0, 0, {}};
    if (ec || !fs::is_directory(c.root, ec)) throw InputError(fmt::format("{}: not a folder", excerpt(from)));
    c.folder(c.root, to, "", 0);
    if (c.over > 0) c.left_out.push_back(fmt::format("{} more files and folders (at most {} are copied)", c.over, max_entries));
    return c.left_out;
}

void give_to(const std::string& dir, uid_t uid, gid_t gid)
{
    std::error_code ec;
    if (::lchown(dir.c_str(), uid, gid) != 0) return;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) (void)!::lchown(it->path().c_str(), uid, gid);
}

namespace {

// Whether every folder from / down to DIR lets others pass (the execute bit for others).
bool others_pass(const fs::path& dir)
{
    std::error_code ec;
    const fs::path full = fs::absolute(dir, ec);
    fs::path at = "/";
    for (const auto& part : full.relative_path()) {
        at /= part;
        struct stat st {};
        if (::stat(at.c_str(), &st) != 0 || (st.st_mode & S_IXOTH) == 0) return false;
    }
    return !ec;
}

}  // namespace

TempFolder::TempFolder(const std::string& prefix, Reach reach)
{
    const char* tmp = std::getenv("TMPDIR");
    std::string base = tmp && *tmp ? tmp : "/tmp";
    if (reach == Reach::others && !others_pass(base)) base = "/tmp";
    std::string pattern = base + "/" + prefix + "XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) throw OutputError(fmt::format("cannot make a temporary folder {}: {}", pattern, std::strerror(errno)));
    path_ = pattern;
    if (reach == Reach::others) ::chmod(path_.c_str(), 0711);
}

TempFolder::~TempFolder()
{
    std::error_code ec;
    fs::remove_all(path_, ec);
}

}  // namespace attnlab

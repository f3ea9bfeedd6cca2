#include "attnlab/exercise/program.hpp"
#include "attnlab/exercise/program_internal.hpp"

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

using run_detail::kill_all;
using run_detail::kInside;
using run_detail::kReadyFd;
using run_detail::kReleaseFd;
using run_detail::kSandboxRun;
using run_detail::kStatusFd;

void limit(int resource, double soft, double hard)
{
    const rlimit r{static_cast<rlim_t>(soft), static_cast<rlim_t>(hard)};  // the limits' ranges keep these far from overflow
    setrlimit(resource, &r);
}

// The descriptors a child is given: stdin, the stdout and stderr pipes, and under bwrap the
// ready, release and status pipes.
struct ChildFiles {
    int input = -1, out = -1, err = -1, ready = -1, release = -1, status = -1;
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

// The child's limits, then its identity: a uid of its own drops every group and id, and
// RLIMIT_NPROC caps its processes where no cgroup does. False where a change was refused.
bool limit_and_drop(const ChildPlan& p)
{
    const double cpu = cpu_limit(p.limits);
    limit(RLIMIT_AS, p.limits.memory_bytes, p.limits.memory_bytes);
    limit(RLIMIT_FSIZE, p.limits.file_bytes, p.limits.file_bytes);
    limit(RLIMIT_CORE, 0, 0);
    limit(RLIMIT_CPU, std::ceil(cpu), std::ceil(cpu) + 1);  // one process's share; the sum is watched
    if (!p.account.own_uid) return true;
    const auto procs = static_cast<double>(p.limits.processes);
    if (!p.account.cgroup) limit(RLIMIT_NPROC, procs, procs);
    const gid_t g = p.account.gid;
    const uid_t u = p.account.uid;
    return setgroups(0, nullptr) == 0 && setresgid(g, g, g) == 0 && setresuid(u, u, u) == 0;
}

// In the child, between fork and exec: async-signal-safe calls only.
[[noreturn]] void become_program(const ChildPlan& p, char* const argv[], char* const envp[])
{
    setpgid(0, 0);
    if (!join_cgroup(p.account)) _exit(126);
    if (p.limits.sandbox == Sandbox::none && p.limits.isolate && !run_detail::enter_own_network()) _exit(126);
    if (chdir(p.dir.c_str()) != 0) _exit(127);
    const FdMove moves[] = {{p.files.input, 0}, {p.files.out, 1}, {p.files.err, 2}, {p.files.ready, kReadyFd}, {p.files.release, kReleaseFd}, {p.files.status, kStatusFd}};
    if (!move_fds(moves, p.files.ready >= 0 ? 6 : 3)) _exit(127);
    if (!limit_and_drop(p)) _exit(126);
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

// The run's output, read from its two pipes (stdout, stderr) as it comes: the first kLogBytes
// of both into the log file, in the order read; the last 4 KiB of each kept for the report; the
// rest counted.
class LogDrain {
public:
    // FOLDER: the run's folder as the program sees it, left out of the lines kept (a traceback's
    // paths read relative to the submission, the same in every run and sandbox)
    LogDrain(int out, int err, int file, std::string folder) : fds_{out, err}, file_(file), folder_(std::move(folder)) {}
    void drain()
    {
        for (int i = 0; i < 2; ++i) drain(fds_[i], tails_[i]);
    }
    // The last line that holds anything, of stderr if it holds one (a traceback ends there),
    // else of stdout; escaped for one line of a report.
    std::string last_line() const
    {
        auto err = tail_lines(1, 1);
        if (err.empty()) err = tail_lines(0, 1);
        return err.empty() ? "" : err.back();
    }
    // The last N lines of stdout (0) or stderr (1) that hold anything, each escaped.
    std::vector<std::string> tail_lines(int stream, std::size_t n) const
    {
        const std::string& t = tails_[stream];
        std::string tail = t.size() > 4096 ? t.substr(t.size() - 4096) : t;
        std::vector<std::string> lines;
        std::istringstream in(tail);
        for (std::string line; std::getline(in, line);) {
            for (auto at = line.find(folder_); at != std::string::npos; at = line.find(folder_, at)) line.erase(at, folder_.size());
            while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
            if (!line.empty()) lines.push_back(excerpt(line, 160));
        }
        if (lines.size() > n) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(n));
        return lines;
    }
    // The pipe still open for stream I, or -1 once every writer has closed it.
    int fd(int i) const { return open_[i] ? fds_[i] : -1; }
    void closed(int i) { open_[i] = false; }
    bool open() const { return open_[0] || open_[1]; }

private:
    void drain(int fd, std::string& tail)
    {
        char buf[16384];
        for (;;) {
            const ssize_t n = read(fd, buf, sizeof buf);
            if (n <= 0) return;
            const auto keep = static_cast<std::size_t>(std::min<double>(static_cast<double>(n), static_cast<double>(kLogBytes - std::min(kLogBytes, written_))));
            if (keep > 0 && file_ >= 0 && write(file_, buf, keep) == static_cast<ssize_t>(keep)) written_ += keep;
            dropped_ += static_cast<std::size_t>(n) - keep;
            tail.append(buf, static_cast<std::size_t>(n));
            if (tail.size() > 8192) tail.erase(0, tail.size() - 4096);
        }
    }

    int fds_[2];
    bool open_[2] = {true, true};
    int file_;
    std::string folder_;
    std::size_t written_ = 0, dropped_ = 0;
    std::string tails_[2];
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
    void finish();
    void wait_a_little(int pause_us) const;

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
    const run_detail::Usage u = run_detail::polled_usage(pid_, w_.account, seen_);
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
        const double cpu = cpu_limit(w_.limits);
        if (out_.cpu_seconds > cpu) return stop(End::cpu_exceeded), true;
        // the kernel's OOM killer acted on the run's cgroup: the run is over its memory
        if (out_.peak_bytes > w_.limits.memory_bytes || (w_.account.cgroup && w_.account.cgroup->oom_killed())) return stop(End::memory_exceeded), true;
        next_memory_ = now + std::chrono::milliseconds(20);
    }
    if (!w_.folders.empty() && now >= next_disk_) {
        double used = 0.0;
        for (const auto& f : w_.folders) used += run_detail::folder_bytes(f, w_.limits.disk_bytes);
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

// Waits at most PAUSE_US (at least 1 ms) for output or the sandbox's word; a pipe every writer
// has closed is left out from then on (poll would return at once).
void Watcher::wait_a_little(int pause_us) const
{
    pollfd fds[3] = {{w_.log.fd(0), POLLIN, 0}, {w_.log.fd(1), POLLIN, 0}, {w_.release >= 0 ? w_.ready : -1, POLLIN, 0}};
    poll(fds, 3, std::max(1, pause_us / 1000));
    for (int i = 0; i < 2; ++i)
        if ((fds[i].revents & (POLLHUP | POLLERR)) != 0) w_.log.closed(i);
}

ProgramOutcome Watcher::watch()
{
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    next_memory_ = next_disk_ = start;
    int pause_us = 200;
    for (;;) {
        w_.log.drain();
        const pid_t done = waitpid(pid_, &status_, WNOHANG);
        if (done == pid_ || (done < 0 && errno != EINTR)) break;
        out_.seconds = std::chrono::duration<double>(clock::now() - start).count();
        if (over_limits(clock::now())) break;
        if (w_.ready >= 0 && w_.release >= 0) take_boxed_answer();
        wait_a_little(pause_us);
        pause_us = std::min(pause_us * 2, 20000);
    }
    finish();
    out_.seconds = std::chrono::duration<double>(clock::now() - start).count();
    if (out_.end != ProgramOutcome::End::not_started) return out_;
    out_.end = WIFSIGNALED(status_) ? ProgramOutcome::End::signaled : ProgramOutcome::End::exited;
    out_.code = WIFSIGNALED(status_) ? WTERMSIG(status_) : WEXITSTATUS(status_);
    if (out_.end == ProgramOutcome::End::signaled && out_.code == SIGXCPU) out_.end = ProgramOutcome::End::cpu_exceeded;
    return out_;
}

// The run is over: whatever it left running is killed, its cgroup read a last time (the
// kernel's OOM killer, the process cap), its SysV segments removed, its last output read, and
// without a sandbox its answer taken.
void Watcher::finish()
{
    measure();
    kill_all(pid_);
    if (const auto& cg = w_.account.cgroup) {
        cg->kill_all();
        out_.peak_bytes = std::max(out_.peak_bytes, cg->peak_bytes());
        out_.process_cap = cg->pids_capped();
        if (out_.end == ProgramOutcome::End::not_started && cg->oom_killed()) out_.end = ProgramOutcome::End::memory_exceeded;
    }
    run_detail::remove_shm(w_.account, seen_);
    w_.log.drain();
    if (w_.run_dir >= 0) out_.answer = take_answer(w_.run_dir, w_.run.answer_name, w_.run.answer_out, w_.limits.file_bytes);
}

int open_file(const std::string& path, int flags) { return open(path.c_str(), flags | O_CLOEXEC, 0600); }

void close_files(const ChildFiles& f)
{
    for (int fd : {f.input, f.out, f.err, f.ready, f.release, f.status})
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
        const std::lock_guard<std::mutex> lock(run_detail::runs_lock());
        pid = fork();
        if (pid == 0) become_program(plan, argv.data(), envp.data());
        if (pid > 0) run_detail::runs().insert(pid);
    }
    close_files(plan.files);
    ProgramOutcome outcome;
    if (pid < 0) {
        outcome.output_tail = fmt::format("cannot start a process: {}", std::strerror(errno));
        return outcome;
    }
    setpgid(pid, pid);
    outcome = Watcher(pid, watch).watch();
    const std::lock_guard<std::mutex> lock(run_detail::runs_lock());
    run_detail::runs().erase(pid);
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
    int out = -1, err = -1, log_file = -1, ready = -1, release = -1, status = -1, run_dir = -1;
    ~GraderEnds()
    {
        for (int fd : {out, err, log_file, ready, release, status, run_dir})
            if (fd >= 0) close(fd);
    }
};

bool open_pipes(bool boxed, ChildFiles& child, GraderEnds& mine)
{
    if (!make_pipe(mine.out, child.out, true) || !make_pipe(mine.err, child.err, true)) return false;
    if (!boxed) return true;
    return make_pipe(mine.ready, child.ready, true) && make_pipe(child.release, mine.release, false) && make_pipe(mine.status, child.status, true);
}

// The run's folder as the program sees it, with its last slash.
std::string folder_seen(bool boxed, const ProgramRun& run) { return (boxed ? std::string(kSandboxRun) : run.dir) + "/"; }

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
    if (boxed) argv = run_detail::bwrap_arguments(run_detail::find_bwrap(), limits, run.dir, {"/bin/sh", "-c", kInside, "sh", run.command});
    LogDrain log(mine.out, mine.err, mine.log_file, folder_seen(boxed, run));
    Watch watch{limits, account, boxed ? std::vector<std::string>{} : std::vector<std::string>{run.dir, tmp}, log, mine.ready, mine.release, mine.status,
                mine.run_dir, run};
    const ChildPlan plan{boxed ? "/" : run.dir, files, limits, account, getpid()};
    outcome = start_and_wait(plan, argv, run_detail::program_environment(limits, tmp), watch);
    mine.release = watch.release;  // closed already once the answer was taken
    outcome.output_tail = log.last_line();
    outcome.stdout_tail = log.tail_lines(0, kTailLines);
    outcome.stderr_tail = log.tail_lines(1, kTailLines);
    outcome.answer_path = run.answer_out;
    outcome.accounting = account.cgroup ? limits.host->accounting() : Accounting::polled;
    fs::remove_all(tmp, ec);
    if (!boxed && account.own_uid) run_detail::remove_owned(account.uid);
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

}  // namespace attnlab

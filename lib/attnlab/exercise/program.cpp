#include "attnlab/exercise/program.hpp"

#include "attnlab/core/report.hpp"
#include "attnlab/io/files.hpp"

#include <fmt/format.h>

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
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

double tree_bytes(pid_t root)
{
    double sum = process_bytes(root);
    for (pid_t p : descendants(root)) sum += process_bytes(p);
    return sum;
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
// process: only a run can have made them (a double fork that escaped its group, or under
// bwrap the namespace's first process once bwrap is gone, whose end waits for every process
// of its namespace).
void reap_strays(pid_t root)
{
    const std::lock_guard<std::mutex> lock(g_runs_lock);
    for (const auto& p : processes()) {
        if (p.ppid != getpid() || g_runs.count(p.pid) || p.pid == root) continue;
        kill(p.pid, SIGKILL);
        while (waitpid(p.pid, nullptr, 0) < 0 && errno == EINTR) {}
    }
}

// Kills ROOT's process group, every descendant and the strays, and waits (at most 5 s) until
// each has ended, so that nothing of the run is alive when it is reported done.
void kill_all(pid_t root)
{
    const std::vector<pid_t> doomed = descendants(root);  // while they are still ROOT's
    kill(-root, SIGKILL);
    kill(root, SIGKILL);
    for (pid_t p : doomed) kill(p, SIGKILL);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (;;) {
        reap_strays(root);
        if (std::all_of(doomed.begin(), doomed.end(), ended) || std::chrono::steady_clock::now() > deadline) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

// --- the program's world ---

std::string host_path()
{
    const char* path = std::getenv("PATH");
    return path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
}

constexpr const char* kSandboxRun = "/sandbox/run";
constexpr const char* kSandboxTmp = "/sandbox/tmp";
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

// Inside: the copy is laid into the tmpfs, the program runs there with the answer's and the
// state's descriptors closed, then the answer (a regular file only) is copied out through
// descriptor 3 and what was found through descriptor 4.
constexpr const char* kInside =
    "cp -R /sandbox/stage/. /sandbox/run/ 2>/dev/null || { echo 'the submission and its inputs do not fit the disk limit' >&2; exit 125; }\n"
    "cd /sandbox/run || exit 125\n"
    "sh -c \"$1\" 3>&- 4>&-\n"
    "status=$?\n"
    "if [ -L \"$2\" ]; then printf other >&4\n"
    "elif [ -f \"$2\" ]; then printf regular >&4; cat -- \"$2\" >&3\n"
    "elif [ -e \"$2\" ]; then printf other >&4\n"
    "fi\n"
    "exit $status\n";

std::vector<std::string> bwrap_arguments(const std::string& bwrap, const ProgramLimits& limits, const std::string& stage,
                                         const std::vector<std::string>& inner)
{
    std::vector<std::string> a{bwrap, "--die-with-parent", "--new-session", "--unshare-all", "--cap-drop", "ALL"};
    add_system(a);
    for (const auto& dir : limits.read_only) a.insert(a.end(), {"--ro-bind", dir, dir});
    a.insert(a.end(), {"--proc", "/proc", "--dev", "/dev"});
    a.insert(a.end(), {"--size", fmt::format("{:.0f}", limits.disk_bytes), "--tmpfs", "/sandbox"});
    a.insert(a.end(), {"--dir", kSandboxRun, "--dir", kSandboxTmp, "--symlink", kSandboxTmp, "/tmp"});
    a.insert(a.end(), {"--ro-bind", stage, "/sandbox/stage"});
    if (!limits.bin_dir.empty()) a.insert(a.end(), {"--ro-bind", limits.bin_dir, kSandboxBin});
    a.insert(a.end(), {"--chdir", "/sandbox", "--"});
    a.insert(a.end(), inner.begin(), inner.end());
    return a;
}

bool enter_own_network()
{
    if (unshare(CLONE_NEWNET) == 0) return true;
    return unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0;
}

void limit(int resource, double bytes)
{
    const auto value = static_cast<rlim_t>(bytes);  // the limits' ranges keep this far from overflow
    const rlimit r{value, value};
    setrlimit(resource, &r);
}

// The descriptors a child is given: stdin, the log (stdout and stderr), and under bwrap the
// answer's and the state's files (3 and 4).
struct ChildFiles {
    int input = -1, log = -1, answer = -1, state = -1;
};

// In the child, between fork and exec: async-signal-safe calls only.
[[noreturn]] void become_program(const std::string& dir, const ChildFiles& f, const ProgramLimits& limits, char* const argv[],
                                 char* const envp[])
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (limits.sandbox == Sandbox::none && limits.isolate && !enter_own_network()) _exit(126);
    if (chdir(dir.c_str()) != 0) _exit(127);
    // each above 4 first, so that no dup2 onto 0..4 overwrites another's source (the parent's
    // descriptors may be 3 and 4) or meets its own (which would keep CLOEXEC)
    const int input = fcntl(f.input, F_DUPFD, 10), log = fcntl(f.log, F_DUPFD, 10);
    if (input < 0 || log < 0 || dup2(input, 0) < 0 || dup2(log, 1) < 0 || dup2(log, 2) < 0) _exit(127);
    if (f.answer >= 0) {
        const int answer = fcntl(f.answer, F_DUPFD, 10), state = fcntl(f.state, F_DUPFD, 10);
        if (answer < 0 || state < 0 || dup2(answer, 3) < 0 || dup2(state, 4) < 0) _exit(127);
    }
    limit(RLIMIT_AS, limits.memory_bytes);
    limit(RLIMIT_FSIZE, limits.file_bytes);
    limit(RLIMIT_CORE, 0);
    for (int sig : {SIGPIPE, SIGXFSZ, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execve(argv[0], argv, envp);
    _exit(127);
}

// The last line of LOG that holds anything, escaped for one line of a report.
std::string last_line(const std::string& log)
{
    std::ifstream in(log, std::ios::binary | std::ios::ate);
    if (!in) return "";
    const auto size = static_cast<std::streamoff>(in.tellg());
    const std::streamoff from = std::max<std::streamoff>(0, size - 4096);
    in.seekg(from);
    std::string tail(static_cast<std::size_t>(size - from), '\0');
    in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
    while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r' || tail.back() == ' ')) tail.pop_back();
    const auto nl = tail.find_last_of('\n');
    return excerpt(nl == std::string::npos ? tail : tail.substr(nl + 1), 160);
}

// What the run is watched for while it runs.
struct Watch {
    const ProgramLimits& limits;
    std::vector<std::string> folders;  // without a sandbox: what counts against the disk limit
};

// Waits for PID until the deadline, polling more slowly as time passes; every 20 ms the memory
// of all its processes and (without a sandbox, every 100 ms) its folders are measured.
ProgramOutcome wait_for(pid_t pid, const Watch& w)
{
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    auto next_memory = start, next_disk = start;
    ProgramOutcome out;
    auto pause = std::chrono::microseconds(200);
    int status = 0;
    const auto stop = [&](ProgramOutcome::End why) {
        kill_all(pid);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        out.end = why;
    };
    for (;;) {
        const pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid || (done < 0 && errno != EINTR)) break;
        const auto now = clock::now();
        if (g_signal.load() != 0) { stop(ProgramOutcome::End::interrupted); break; }
        if (std::chrono::duration<double>(now - start).count() >= w.limits.timeout_s) { stop(ProgramOutcome::End::timed_out); break; }
        if (now >= next_memory) {
            out.peak_bytes = std::max(out.peak_bytes, tree_bytes(pid));
            if (out.peak_bytes > w.limits.memory_bytes) { stop(ProgramOutcome::End::memory_exceeded); break; }
            next_memory = now + std::chrono::milliseconds(20);
        }
        if (!w.folders.empty() && now >= next_disk) {
            double used = 0.0;
            for (const auto& f : w.folders) used += folder_bytes(f, w.limits.disk_bytes);
            if (used > w.limits.disk_bytes) { stop(ProgramOutcome::End::disk_exceeded); break; }
            next_disk = now + std::chrono::milliseconds(100);
        }
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::microseconds(20000));
    }
    kill_all(pid);  // whatever it left running in the background
    out.seconds = std::chrono::duration<double>(clock::now() - start).count();
    if (out.end != ProgramOutcome::End::not_started) return out;
    out.end = WIFSIGNALED(status) ? ProgramOutcome::End::signaled : ProgramOutcome::End::exited;
    out.code = WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status);
    return out;
}

int open_file(const std::string& path, int flags) { return open(path.c_str(), flags | O_CLOEXEC, 0600); }

void close_files(const ChildFiles& f)
{
    for (int fd : {f.input, f.log, f.answer, f.state})
        if (fd >= 0) close(fd);
}

// Forks the program under the runs' lock (so no other run's clean-up takes it for a stray
// process) and waits for it.
ProgramOutcome start_and_wait(const std::string& dir, const ChildFiles& files, const ProgramLimits& limits, std::vector<std::string> argv_words,
                              const std::vector<std::string>& env_words, const Watch& watch)
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
        if (pid == 0) become_program(dir, files, limits, argv.data(), envp.data());
        if (pid > 0) g_runs.insert(pid);
    }
    close_files(files);
    ProgramOutcome outcome;
    if (pid < 0) {
        outcome.output_tail = fmt::format("cannot start a process: {}", std::strerror(errno));
        return outcome;
    }
    setpgid(pid, pid);
    outcome = wait_for(pid, watch);
    const std::lock_guard<std::mutex> lock(g_runs_lock);
    g_runs.erase(pid);
    return outcome;
}

std::string read_small(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::string s;
    std::getline(in, s);
    return s;
}

}  // namespace

ProgramOutcome run_program(const ProgramRun& run, const ProgramLimits& limits)
{
    static const bool subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
    (void)subreaper;
    const std::string tmp = run.dir + ".tmp";
    std::error_code ec;
    fs::create_directories(tmp, ec);
    ChildFiles files{open_file("/dev/null", O_RDONLY), open_file(run.log, O_WRONLY | O_CREAT | O_TRUNC)};
    const bool boxed = limits.sandbox == Sandbox::bwrap;
    const std::string state_file = run.answer_out + ".state";
    if (boxed) {
        files.answer = open_file(run.answer_out, O_WRONLY | O_CREAT | O_TRUNC);
        files.state = open_file(state_file, O_WRONLY | O_CREAT | O_TRUNC);
    }
    ProgramOutcome outcome;
    if (files.input < 0 || files.log < 0 || (boxed && (files.answer < 0 || files.state < 0))) {
        close_files(files);
        outcome.output_tail = "cannot open /dev/null, the log or the answer's file";
        return outcome;
    }
    std::vector<std::string> argv{"/bin/sh", "-c", run.command};
    if (boxed) argv = bwrap_arguments(find_bwrap(), limits, run.dir, {"/bin/sh", "-c", kInside, "sh", run.command, run.answer_name});
    const Watch watch{limits, boxed ? std::vector<std::string>{} : std::vector<std::string>{run.dir, tmp}};
    outcome = start_and_wait(boxed ? "/" : run.dir, files, limits, argv, program_environment(limits, tmp), watch);
    outcome.output_tail = last_line(run.log);
    fs::remove_all(tmp, ec);
    if (boxed) {
        const std::string state = read_small(state_file);
        outcome.answer = state == "regular" ? ProgramOutcome::Answer::regular : state == "other" ? ProgramOutcome::Answer::other : ProgramOutcome::Answer::absent;
        outcome.answer_path = run.answer_out;
        return outcome;
    }
    const std::string answer = run.dir + "/" + run.answer_name;
    struct stat st {};
    outcome.answer_path = answer;
    if (lstat(answer.c_str(), &st) == 0) outcome.answer = S_ISREG(st.st_mode) ? ProgramOutcome::Answer::regular : ProgramOutcome::Answer::other;
    return outcome;
}

bool bwrap_works()
{
    static const bool works = [] {
        const std::string bwrap = find_bwrap();
        if (bwrap.empty()) return false;
        std::vector<std::string> words{bwrap, "--die-with-parent", "--unshare-all", "--cap-drop", "ALL"};
        add_system(words);
        words.insert(words.end(), {"--proc", "/proc", "--dev", "/dev", "--size", "1048576", "--tmpfs", "/sandbox", "--", "/bin/true"});
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
    if (l.sandbox == Sandbox::bwrap) {
        return fmt::format(zh ? "bubblewrap：独立的 PID、网络与挂载命名空间，看不到评分者的文件；整个提交合计内存 {:g} GiB、磁盘 {:g} GiB；结束后不留任何进程"
                              : "bubblewrap: own PID, network and mount namespaces, no view of the grader's files; memory {:g} GiB and disk {:g} GiB "
                                "for the whole submission; nothing left running",
                           l.memory_bytes / gib, l.disk_bytes / gib);
    }
    return fmt::format(zh ? "无沙箱（进程组，评分者收养遗留进程；整个提交合计内存 {:g} GiB、磁盘 {:g} GiB，轮询测量{}）：不是安全沙箱"
                          : "none (a process group, the grader reaping what it leaves; memory {:g} GiB and disk {:g} GiB for the whole "
                            "submission, polled{}): not a security sandbox",
                       l.memory_bytes / gib, l.disk_bytes / gib, l.isolate ? (zh ? "；无网络" : "; no network") : "");
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
    std::vector<std::string> left_out;

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
    void folder(const fs::path& from, const fs::path& to, const std::string& prefix, int depth)
    {
        std::error_code ec;
        fs::create_directory(to, ec);
        if (ec) return;
        for (fs::directory_iterator it(from, ec), end; !ec && it != end; it.increment(ec)) {
            const fs::path& p = it->path();
            const std::string name = prefix + p.filename().string();
            if (depth == 0 && std::find(skip.begin(), skip.end(), name) != skip.end()) continue;
            const auto st = fs::symlink_status(p, ec);
            if (ec) break;
            if (fs::is_directory(st) && depth >= 32) left_out.push_back(name + "/ (more than 32 folders deep)");
            else if (fs::is_directory(st)) folder(p, to / p.filename(), name + "/", depth + 1);
            else if (fs::is_regular_file(st)) file(p, to / p.filename(), name);
            else if (fs::is_symlink(st)) {
                const fs::path target = fs::canonical(p, ec);
                if (!ec && inside(target) && fs::is_regular_file(target, ec)) file(target, to / p.filename(), name);
                else left_out.push_back(name), ec.clear();
            } else left_out.push_back(name);
        }
    }
};

}  // namespace

std::vector<std::string> copy_submission(const std::string& from, const std::string& to, const std::vector<std::string>& skip,
                                         std::size_t max_bytes)
{
    std::error_code ec;
    Copier c{fs::canonical(from, ec), skip, max_bytes, 0, {}};
    if (ec || !fs::is_directory(c.root, ec)) throw InputError(fmt::format("{}: not a folder", excerpt(from)));
    c.folder(c.root, to, "", 0);
    return c.left_out;
}

TempFolder::TempFolder(const std::string& prefix)
{
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) throw OutputError(fmt::format("cannot make a temporary folder {}: {}", pattern, std::strerror(errno)));
    path_ = pattern;
}

TempFolder::~TempFolder()
{
    std::error_code ec;
    fs::remove_all(path_, ec);
}

}  // namespace attnlab

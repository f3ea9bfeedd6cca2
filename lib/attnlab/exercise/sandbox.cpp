// The program's world: its environment, and bubblewrap's arguments.
#include "attnlab/exercise/program_internal.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace attnlab {

namespace run_detail {

namespace fs = std::filesystem;

namespace {


std::string host_path()
{
    const char* path = std::getenv("PATH");
    return path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
}

// Inside the sandbox: /tmp is its one writable tmpfs, the program runs in /tmp/run.
constexpr const char* kSandboxTmp = "/tmp";
constexpr const char* kSandboxStage = "/sandbox/stage";
constexpr const char* kSandboxBin = "/sandbox/bin";

}  // namespace

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

namespace {

// The system's folders, read-only; /bin, /lib and the others as they are here (links to /usr
// on a merged system).
void add_system_folders(std::vector<std::string>& a)
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

}  // namespace

// Inside: the copy is laid into /tmp/run, the program runs there with the grader's pipes
// closed; when it ends, every other process of the run is killed (kill -1 reaches all of this
// uid's processes in the namespace but this shell and the namespace's init), the shell tells
// the grader on descriptor 3 and waits on descriptor 4 while the grader opens the answer.
const char* const kInside =
    "cp -R /sandbox/stage/. /tmp/run/ 2>/dev/null || { echo 'the submission and its inputs do not fit the disk limit' >&2; exit 125; }\n"
    "cd /tmp/run || exit 125\n"
    "sh -c \"$1\" 3>&- 4<&- 5>&-\n"
    "status=$?\n"
    "kill -9 -1 2>/dev/null\n"
    "echo \"$status\" >&3\n"
    "read -r _ <&4\n"
    "exit $status\n";

namespace {

// /dev/shm's tmpfs: a sixteenth of the disk limit, at most 64 MiB; /tmp has the rest.
double shm_bytes(double disk_bytes) { return std::min(disk_bytes / 16.0, 64.0 * 1024 * 1024); }

}  // namespace

std::vector<std::string> bwrap_arguments(const std::string& bwrap, const ProgramLimits& limits, const std::string& stage,
                                         const std::vector<std::string>& inner)
{
    std::vector<std::string> a{bwrap, "--die-with-parent", "--new-session", "--unshare-all", "--cap-drop", "ALL"};
    a.insert(a.end(), {"--json-status-fd", std::to_string(kStatusFd)});
    add_system_folders(a);
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

}  // namespace run_detail

using run_detail::add_system_folders;
using run_detail::enter_own_network;
using run_detail::find_bwrap;

bool bwrap_works()
{
    static const bool works = [] {
        const std::string bwrap = find_bwrap();
        if (bwrap.empty()) return false;
        std::vector<std::string> words{bwrap, "--die-with-parent", "--unshare-all", "--cap-drop", "ALL"};
        add_system_folders(words);
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
    const double cpu = cpu_limit(l);
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

}  // namespace attnlab

#include "attnlab/exercise/program.hpp"

#include "attnlab/core/report.hpp"
#include "attnlab/io/files.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

namespace attnlab {

namespace fs = std::filesystem;

namespace {

// PATH (with the prefix first), HOME and the locale: nothing else of the grader's environment.
std::vector<std::string> program_environment(const std::string& prefix)
{
    const char* path = std::getenv("PATH");
    std::string p = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
    if (!prefix.empty()) p = prefix + ":" + p;
    std::vector<std::string> env{"PATH=" + p};
    for (const char* name : {"HOME", "LANG", "LC_ALL", "LC_CTYPE"})
        if (const char* value = std::getenv(name)) env.push_back(std::string(name) + "=" + value);
    return env;
}

bool enter_own_network()
{
    if (unshare(CLONE_NEWNET) == 0) return true;
    return unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0;
}

void limit(int resource, double bytes)
{
    const auto value = static_cast<rlim_t>(bytes);
    const rlimit r{value, value};
    setrlimit(resource, &r);
}

// In the child, between fork and exec: async-signal-safe calls only.
[[noreturn]] void become_program(const std::string& dir, int input, int log, const ProgramLimits& limits, char* const argv[], char* const envp[])
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (limits.isolate && !enter_own_network()) _exit(126);
    if (chdir(dir.c_str()) != 0) _exit(127);
    dup2(input, 0);
    dup2(log, 1);
    dup2(log, 2);
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

// Waits for PID until the deadline, polling more slowly as time passes; kills its group then.
ProgramOutcome wait_for(pid_t pid, double timeout_s)
{
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    ProgramOutcome out;
    auto pause = std::chrono::microseconds(200);
    int status = 0;
    for (;;) {
        const pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid || (done < 0 && errno != EINTR)) break;
        if (std::chrono::duration<double>(clock::now() - start).count() >= timeout_s) {
            kill(-pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
            out.end = ProgramOutcome::End::timed_out;
            break;
        }
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::microseconds(20000));
    }
    kill(-pid, SIGKILL);  // whatever it left running in the background
    out.seconds = std::chrono::duration<double>(clock::now() - start).count();
    if (out.end == ProgramOutcome::End::timed_out) return out;
    out.end = WIFSIGNALED(status) ? ProgramOutcome::End::signaled : ProgramOutcome::End::exited;
    out.code = WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status);
    return out;
}

}  // namespace

ProgramOutcome run_program(const std::string& command, const std::string& dir, const std::string& log, const ProgramLimits& limits)
{
    std::vector<std::string> env = program_environment(limits.path_prefix);
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string sh = "/bin/sh", dash_c = "-c", cmd = command;
    char* argv[] = {sh.data(), dash_c.data(), cmd.data(), nullptr};
    const int input = open("/dev/null", O_RDONLY | O_CLOEXEC);
    const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ProgramOutcome outcome;
    if (input < 0 || out < 0) {
        if (input >= 0) close(input);
        if (out >= 0) close(out);
        outcome.output_tail = "cannot open /dev/null or the log";
        return outcome;
    }
    const pid_t pid = fork();
    if (pid == 0) become_program(dir, input, out, limits, argv, envp.data());
    close(input);
    close(out);
    if (pid < 0) {
        outcome.output_tail = fmt::format("cannot start a process: {}", std::strerror(errno));
        return outcome;
    }
    setpgid(pid, pid);
    outcome = wait_for(pid, limits.timeout_s);
    outcome.output_tail = last_line(log);
    return outcome;
}

bool can_isolate()
{
    const pid_t pid = fork();
    if (pid == 0) _exit(enter_own_network() ? 0 : 1);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return false;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

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
        if (ec || depth > 32) return;
        for (fs::directory_iterator it(from, ec), end; !ec && it != end; it.increment(ec)) {
            const fs::path& p = it->path();
            const std::string name = prefix + p.filename().string();
            if (depth == 0 && std::find(skip.begin(), skip.end(), name) != skip.end()) continue;
            const auto st = fs::symlink_status(p, ec);
            if (ec) break;
            if (fs::is_directory(st)) folder(p, to / p.filename(), name + "/", depth + 1);
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

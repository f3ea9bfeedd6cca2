#include "cli_support.hpp"

#include <doctest/doctest.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

std::string slurp(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// In the child: becomes the built attnlab with these arguments (127 if it cannot).
[[noreturn]] void exec_attnlab(const std::vector<std::string>& args)
{
    std::vector<char*> argv;
    std::string exe = ATTNLAB_EXE;
    argv.push_back(exe.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(exe.c_str(), argv.data());
    _exit(127);
}

}  // namespace

CliResult run_cli(const std::vector<std::string>& args, const std::vector<std::string>& env)
{
    char out_path[] = "/tmp/attnlab-cli-out-XXXXXX";
    char err_path[] = "/tmp/attnlab-cli-err-XXXXXX";
    const int out_fd = mkstemp(out_path);
    const int err_fd = mkstemp(err_path);
    REQUIRE(out_fd >= 0);
    REQUIRE(err_fd >= 0);
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        dup2(out_fd, STDOUT_FILENO);
        dup2(err_fd, STDERR_FILENO);
        // English unless a test asks for another locale: the machine's own must not matter.
        unsetenv("LC_ALL");
        unsetenv("LC_MESSAGES");
        setenv("LANG", "C", 1);
        for (const auto& e : env) {
            const auto eq = e.find('=');
            setenv(e.substr(0, eq).c_str(), e.substr(eq + 1).c_str(), 1);
        }
        exec_attnlab(args);
    }
    int wstatus = 0;
    struct rusage usage {};
    wait4(pid, &wstatus, 0, &usage);
    close(out_fd);
    close(err_fd);
    CliResult r;
    r.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
    r.max_rss_kb = usage.ru_maxrss;
    r.out = slurp(out_path);
    r.err = slurp(err_path);
    std::remove(out_path);
    std::remove(err_path);
    return r;
}

CliResult run_cli_io(const std::vector<std::string>& args, Stdout out, bool close_stderr)
{
    char err_path[] = "/tmp/attnlab-cli-err-XXXXXX";
    const int err_fd = mkstemp(err_path);
    REQUIRE(err_fd >= 0);
    int pipe_fds[2] = {-1, -1};
    if (out == Stdout::broken_pipe) {
        REQUIRE(pipe(pipe_fds) == 0);
        close(pipe_fds[0]);  // no reader from the start: every write fails with EPIPE
    }
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        if (out == Stdout::dev_full) dup2(open("/dev/full", O_WRONLY), STDOUT_FILENO);
        if (out == Stdout::closed) close(STDOUT_FILENO);
        if (out == Stdout::broken_pipe) {
            signal(SIGPIPE, SIG_IGN);
            dup2(pipe_fds[1], STDOUT_FILENO);
        }
        if (close_stderr) {
            close(STDERR_FILENO);
        } else {
            dup2(err_fd, STDERR_FILENO);
        }
        exec_attnlab(args);
    }
    if (pipe_fds[1] >= 0) close(pipe_fds[1]);
    int wstatus = 0;
    waitpid(pid, &wstatus, 0);
    close(err_fd);
    CliResult r;
    r.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
    r.err = slurp(err_path);
    std::remove(err_path);
    return r;
}

nlohmann::json run_json(std::vector<std::string> args)
{
    args.push_back("--format");
    args.push_back("json");
    const CliResult r = run_cli(args);
    INFO("stderr: " << r.err);
    REQUIRE(r.status <= 1);
    return nlohmann::json::parse(r.out);  // throws (failing the test) if not valid JSON
}

std::size_t count_lines(const std::string& s)
{
    std::size_t n = 0;
    for (char c : s) n += c == '\n';
    return n;
}

void expect_usage_error(const std::vector<std::string>& args, const std::string& fragment)
{
    const CliResult r = run_cli(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    INFO("command: attnlab " << joined);
    INFO("stderr: " << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(count_lines(r.err) == 1);
    CHECK(r.err.rfind("attnlab: error: ", 0) == 0);
    CHECK(r.err.find(fragment) != std::string::npos);
}

#include "cli_support.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

std::string slurp(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

namespace {

std::string env_or(const char* name, const std::string& fallback)
{
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

const std::string kProgram = env_or("ATTNLAB_PROGRAM", ATTNLAB_EXE);
const bool kSanitized = env_or("ATTNLAB_PROGRAM_SANITIZED", ATTNLAB_PROGRAM_SANITIZED ? "1" : "0") == "1";

}  // namespace

const std::string& program() { return kProgram; }
bool program_sanitized() { return kSanitized; }

namespace {

// In the child: becomes the built attnlab with these arguments (127 if it cannot).
[[noreturn]] void exec_attnlab(const std::vector<std::string>& args)
{
    std::vector<char*> argv;
    std::string exe = kProgram;
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

nlohmann::json run_json(std::vector<std::string> args, const std::vector<std::string>& env)
{
    args.push_back("--format");
    args.push_back("json");
    const CliResult r = run_cli(args, env);
    INFO("stderr: " << r.err);
    REQUIRE(r.status <= 1);
    return nlohmann::json::parse(r.out);  // throws (failing the test) if not valid JSON
}

namespace {

// IEEE binary16 bits of a float, round to nearest even (normal and subnormal range; written
// here from the format's definition, independently of the library's converter).
std::uint16_t half_bits(float f)
{
    std::uint32_t x = 0;
    std::memcpy(&x, &f, 4);
    const std::uint32_t sign = (x >> 16) & 0x8000u;
    const float a = std::fabs(f);
    if (a >= 65520.0f) return static_cast<std::uint16_t>(sign | 0x7c00u);
    if (a < std::ldexp(1.0f, -14)) return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(std::nearbyint(a * std::ldexp(1.0f, 24))));
    int e = 0;
    const float m = std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1)
    auto mant = static_cast<std::uint32_t>(std::nearbyint((m * 2.0f - 1.0f) * 1024.0f));
    std::uint32_t exp = static_cast<std::uint32_t>(e - 1 + 15);
    if (mant == 1024) mant = 0, ++exp;
    return static_cast<std::uint16_t>(sign | (exp << 10) | mant);
}

}  // namespace

void write_npy(const std::string& path, const std::vector<std::size_t>& shape, const std::vector<double>& values, NpyFloat kind)
{
    const bool half = kind == NpyFloat::half;
    std::string dims;
    for (std::size_t n : shape) dims += std::to_string(n) + ",";
    std::string header = std::string("{'descr': '") + (half ? "<f2" : "<f8") + "', 'fortran_order': False, 'shape': (" + dims + "), }";
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::ofstream out(path, std::ios::binary);
    out.write("\x93NUMPY\x01\x00", 8);
    const char len[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
    out.write(len, 2);
    out << header;
    for (double v : values) {
        if (half) {
            const std::uint16_t h = half_bits(static_cast<float>(v));
            out.write(reinterpret_cast<const char*>(&h), 2);
        } else {
            out.write(reinterpret_cast<const char*>(&v), 8);
        }
    }
}

std::size_t count_lines(const std::string& s)
{
    std::size_t n = 0;
    for (char c : s) n += c == '\n';
    return n;
}

std::vector<std::string> help_subcommands()
{
    const std::string top = run_cli({"--help"}).out;
    std::vector<std::string> out;
    std::size_t at = top.find('\n', top.find("Subcommands:")) + 1;
    for (std::size_t end = top.find('\n', at); end != std::string::npos && end > at; at = end + 1, end = top.find('\n', at)) {
        const std::string line = top.substr(at, end - at);
        out.push_back(line.substr(2, line.find(' ', 2) - 2));
    }
    return out;
}

std::vector<std::vector<std::string>> drawn_commands(unsigned seed)
{
    FILE* pipe = popen(("'" ATTNLAB_DRAW_COMMANDS "' --each " + std::to_string(seed)).c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::string text;
    char buffer[4096];
    for (std::size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) text.append(buffer, n);
    REQUIRE(pclose(pipe) == 0);
    std::vector<std::vector<std::string>> out;
    for (std::size_t at = 0, end; (end = text.find('\n', at)) != std::string::npos; at = end + 1) {
        out.push_back(nlohmann::json::parse(text.substr(at, end - at))["args"].get<std::vector<std::string>>());
    }
    REQUIRE(out.size() >= 12);
    return out;
}

std::string command_text(const std::vector<std::string>& args)
{
    std::string joined;
    for (const auto& a : args) joined += (joined.empty() ? "" : " ") + a;
    return joined;
}

void expect_usage_error(const std::vector<std::string>& args, const std::string& fragment)
{
    const CliResult r = run_cli(args);
    INFO("command: attnlab " << command_text(args));
    INFO("stderr: " << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(count_lines(r.err) == 1);
    CHECK(r.err.rfind("attnlab: error: ", 0) == 0);
    CHECK(r.err.find(fragment) != std::string::npos);
}

std::string scratch(const std::string& name) { return "/tmp/attnlab-" + std::to_string(getpid()) + "-" + name; }

std::string fresh_dir(const std::string& name)
{
    struct Made {
        std::vector<std::string> dirs;
        ~Made()
        {
            std::error_code ec;
            for (const auto& d : dirs) std::filesystem::remove_all(d, ec);
        }
    };
    static Made made;
    const std::string dir = scratch(name);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    made.dirs.push_back(dir);
    return dir;
}

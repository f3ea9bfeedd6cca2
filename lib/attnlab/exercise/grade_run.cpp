// Running and judging: one case of one submission, the search for the smallest failing
// case, and the submissions on a pool of threads.
#include "attnlab/exercise/grade.hpp"

#include "attnlab/core/error_model.hpp"
#include "attnlab/core/parallel.hpp"
#include "attnlab/experiments/command_line.hpp"
#include "attnlab/io/files.hpp"
#include "attnlab/io/npy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sys/stat.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

namespace attnlab {

namespace fs = std::filesystem;

namespace {

// A file of the grader's own temporary folder. Not OutputFolder: its stack of temporary files
// for signal cleanup is one per process, and cases are laid out on several threads.
void write_bytes(const fs::path& path, const std::string& bytes)
{
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw OutputError(fmt::format("cannot write {}", path.string()));
}

// The case's folder: a copy of the submission, then the case's inputs/ (and params.json).
void lay_out(const PreparedCase& c, const std::string& submission, const fs::path& dir, double disk_bytes, SubmissionResult* result)
{
    // the copy counts against the run's disk: no more bytes than its limit, and entries capped
    const auto max_bytes = static_cast<std::size_t>(std::min(disk_bytes, 256.0 * 1024 * 1024));
    const auto left_out = copy_submission(submission, dir.string(), {c.made.answer_file, "inputs"}, max_bytes);
    if (result && result->left_out.empty()) result->left_out = left_out;
    fs::create_directories(dir / "inputs");
    for (const auto& in : c.made.inputs) {
        const auto bytes = write_npy(in.tensor);
        write_bytes(dir / in.file, std::string(bytes.begin(), bytes.end()));
    }
    write_bytes(dir / "inputs" / "params.json", exercise_params_text(c.made));
}

bool ended_badly(const ProgramOutcome& run, const ProgramLimits& limits, Lang lang, CaseResult& r);

// What else a crash's detail says: the process cap it reached, a module the interpreter lacks.
std::string crash_notes(const ProgramOutcome& run, const ProgramLimits& limits, Lang lang)
{
    const bool zh = lang == Lang::zh;
    std::string notes;
    if (run.process_cap) notes += fmt::format(zh ? "；进程数达到上限 {}" : "; it reached the cap of {} processes", limits.processes);
    if (run.output_tail.find("ModuleNotFoundError") != std::string::npos)
        notes += zh ? "（评分所用的解释器没有这个模块）" : " (the grading's interpreter does not have that module)";
    return notes;
}

// A program that exited or was killed by a signal: crash (or, for one process's CPU limit,
// timeout), unless it exited with 0.
bool exited_badly(const ProgramOutcome& run, const ProgramLimits& limits, Lang lang, CaseResult& r)
{
    const bool zh = lang == Lang::zh;
    const std::string tail = run.output_tail.empty() ? "" : fmt::format(zh ? "；最后一行输出：{}" : "; last output line: {}", run.output_tail);
    if (run.end == ProgramOutcome::End::exited && run.code == 0) return false;
    // the run command's shell reports a program a signal ended as 128 + the signal
    const bool by_signal = run.end == ProgramOutcome::End::signaled || (run.code > 128 && run.code < 128 + 65);
    const int sig = run.end == ProgramOutcome::End::signaled ? run.code : run.code - 128;
    if (by_signal && sig == SIGXCPU) {  // one process's CPU limit (RLIMIT_CPU), inside the sandbox
        ProgramOutcome cpu = run;
        cpu.end = ProgramOutcome::End::cpu_exceeded;
        return ended_badly(cpu, limits, lang, r);
    }
    r.verdict = CaseVerdict::crash;
    if (!(by_signal && run.output_tail == "Killed")) r.last_line = run.output_tail;
    const char* text = sigdescr_np(sig);
    // (the shell's own "Killed" line says nothing more)
    r.detail = by_signal ? fmt::format(zh ? "被信号 {}（{}）终止{}" : "killed by signal {} ({}){}", sig, text ? text : "?", run.output_tail == "Killed" ? "" : tail)
                         : fmt::format(zh ? "退出码 {}{}" : "exit status {}{}", run.code, tail);
    r.detail += crash_notes(run, limits, lang);
    return true;
}

// A program that did not end well: its verdict and why, or nothing when it exited with 0.
bool ended_badly(const ProgramOutcome& run, const ProgramLimits& limits, Lang lang, CaseResult& r)
{
    const bool zh = lang == Lang::zh;
    const std::string tail = run.output_tail.empty() ? "" : fmt::format(zh ? "；最后一行输出：{}" : "; last output line: {}", run.output_tail);
    const double gib = 1024.0 * 1024 * 1024;
    switch (run.end) {
    case ProgramOutcome::End::timed_out:
        r.verdict = CaseVerdict::timeout;
        r.detail = fmt::format(zh ? "{} s 后仍在运行，已终止{}" : "still running after {} s, killed{}", limits.timeout_s, tail);
        return true;
    case ProgramOutcome::End::memory_exceeded:
        r.verdict = CaseVerdict::crash;
        r.detail = fmt::format(zh ? "所有进程合计使用的内存超过 {:g} GiB，已终止{}" : "its processes together used more than {:g} GiB of memory, killed{}",
                               limits.memory_bytes / gib, tail);
        return true;
    case ProgramOutcome::End::cpu_exceeded:
        r.verdict = CaseVerdict::timeout;
        r.detail = fmt::format(zh ? "所有进程合计用了超过 {:g} s 的 CPU 时间，已终止{}" : "its processes together used more than {:g} s of CPU time, killed{}",
                               cpu_limit(limits), tail);
        return true;
    case ProgramOutcome::End::disk_exceeded:
        r.verdict = CaseVerdict::crash;
        r.detail = fmt::format(zh ? "写入磁盘超过 {:g} GiB，已终止{}" : "it wrote more than {:g} GiB to disk, killed{}", limits.disk_bytes / gib, tail);
        return true;
    case ProgramOutcome::End::interrupted:
        r.verdict = CaseVerdict::crash;
        r.detail = zh ? "评分被信号中断" : "grading was interrupted by a signal";
        return true;
    case ProgramOutcome::End::not_started:
        r.verdict = CaseVerdict::crash;
        r.detail = run.output_tail;
        return true;
    case ProgramOutcome::End::signaled:
    case ProgramOutcome::End::exited: return exited_badly(run, limits, lang, r);
    }
    return false;
}


// The answer file's bytes, as copied out (a regular file of at most 256 MiB, or nothing).
std::string read_file_bytes(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The files exercise new wrote beside the starter, which differ from student to student in a
// class with a roster (their sizes and seeds) and are nobody's code.
bool exercise_own_file(const fs::path& relative)
{
    const std::string top = relative.begin()->string();
    return top == "inputs" || top == "solution" || relative == "README.md" || relative == "exercise.json" || relative == "check.sh";
}

// A Python file's lines without their comments, trailing blanks and blank lines: the starter's
// comments differ from student to student in a class with a roster (each input's shape), and a
// comment changed is no code changed. A # inside a one-line string stays.
// One line of Python without its comment and trailing blanks. A # inside a string stays.
std::string without_comment(std::string_view line)
{
    std::string out;
    char quote = 0;  // the quote of the string the line is in, if any
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quote == 0 && c == '#') break;
        out += c;
        if (quote == 0) quote = c == '"' || c == '\'' ? c : 0;
        else if (c == '\\' && i + 1 < line.size()) out += line[++i];  // an escaped quote ends nothing
        else if (c == quote) quote = 0;
    }
    out.erase(out.find_last_not_of(" \t\r") + 1);
    return out;
}

std::string python_code(const std::string& text)
{
    std::string out;
    for (std::size_t start = 0; start < text.size();) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        const std::string line = without_comment(std::string_view(text).substr(start, end - start));
        if (!line.empty()) out += line + '\n';
        start = end + 1;
    }
    return out;
}

// A submission's code: its files but its tensors and the exercise's own, by name and bytes
// (.py files by python_code; at most 1000 files of at most 1 MiB each, in name order). Two
// submissions of the same digest hand in the same code.
std::string code_digest(const std::string& submission)
{
    std::error_code ec;
    std::vector<fs::path> files;
    for (fs::recursive_directory_iterator it(submission, ec), end; !ec && it != end && files.size() < 1000; it.increment(ec)) {
        if (it->is_regular_file(ec) && it->path().extension() != ".npy" && it->file_size(ec) <= (1u << 20) &&
            !exercise_own_file(fs::relative(it->path(), submission, ec)))
            files.push_back(it->path());
    }
    std::sort(files.begin(), files.end());
    std::string all;
    for (const auto& f : files) {
        const std::string bytes = read_file_bytes(f.string());
        all += fs::relative(f, submission, ec).string() + '\0' + (f.extension() == ".py" ? python_code(bytes) : bytes) + '\0';
    }
    return fnv1a64_hex(all);
}

// The answer file held against the reference, as check.sh would hold it.
void judge_answer(const PreparedCase& c, const ProgramOutcome& run, Lang lang, CaseResult& r)
{
    const bool zh = lang == Lang::zh;
    if (run.answer == ProgramOutcome::Answer::absent) {
        r.verdict = CaseVerdict::missing;
        r.detail = fmt::format(zh ? "程序正常结束，但没有写出 {}" : "the program ended without writing {}", c.made.answer_file);
        return;
    }
    if (run.answer == ProgramOutcome::Answer::other) {
        r.verdict = CaseVerdict::unreadable;
        r.detail = fmt::format(zh ? "{} 不是普通文件" : "{} is not a regular file", c.made.answer_file);
        return;
    }
    const fs::path answer = run.answer_path;
    RunContext ctx;
    ctx.dtype = DType::float64;
    ctx.seed = c.made.seed;
    ctx.lang = lang;
    ctx.keep_none = true;
    ctx.against = AgainstRequest{answer.string(), c.made.answer_tensor, std::nullopt, std::nullopt, c.made.info.judged_at};
    for (const auto& in : c.made.inputs)
        if (in.replaces) ctx.inputs[in.name] = in.tensor;
    Report report;
    try {
        report = c.made.judge(ctx);
    } catch (const InputError& e) {
        // the message names the file as the student wrote it, not where the grader keeps it
        std::string what = e.what();
        for (auto at = what.find(answer.string()); at != std::string::npos; at = what.find(answer.string(), at + 1))
            what.replace(at, answer.string().size(), c.made.answer_file);
        r.verdict = CaseVerdict::unreadable;
        r.detail = excerpt(what, 200);
        return;
    }
    const Comparison& cmp = *report.against;
    r.answer_digest = fnv1a64_hex(read_file_bytes(answer.string()));
    r.max_diff = cmp.max_abs_diff;
    r.diagnosis = cmp.diagnosis;
    if (std::find(cmp.kinds.begin(), cmp.kinds.end(), "stored_below") != cmp.kinds.end()) {
        // the comparison check.sh makes too (--judged-at)
        r.verdict = CaseVerdict::differs;
        r.detail = fmt::format(zh ? "以 {} 存储；本练习按 {} 精度评判" : "stored as {}; this exercise is judged at {}", name_of(cmp.got_elem), name_of(c.made.info.judged_at));
    } else if (cmp.passed) {
        r.verdict = CaseVerdict::match;
        r.detail = fmt::format(zh ? "最大差 {:.3g}，容差 rtol {:.3g}、atol {:.3g}" : "max |diff| {:.3g} within rtol {:.3g}, atol {:.3g}", cmp.max_abs_diff, cmp.rtol, cmp.atol);
    } else if (cmp.shape_got != cmp.shape_expected) {
        r.verdict = CaseVerdict::wrong_shape;
        r.max_diff.reset();
        r.detail = fmt::format(zh ? "形状 {}，应为 {}" : "shape {}, expected {}", shape_text(cmp.shape_got), shape_text(cmp.shape_expected));
    } else if (cmp.nonfinite.nan > 0) {
        r.verdict = CaseVerdict::nan;
        r.detail = fmt::format(zh ? "{} 个 NaN，参考答案在这些位置是数" : "{} NaN where the reference has numbers", cmp.nonfinite.nan);
    } else {
        r.verdict = CaseVerdict::differs;
        r.detail = fmt::format(zh ? "{} / {} 个元素超出容差；最大差 {:.3g} 在 {}（应为 {:.6g}，得到 {:.6g}），rtol {:.3g}、atol {:.3g}"
                                  : "{} of {} elements outside the tolerance; max |diff| {:.3g} at {} (expected {:.6g}, got {:.6g}), rtol {:.3g}, atol {:.3g}",
                               cmp.mismatched, cmp.total, cmp.max_abs_diff, shape_text(cmp.worst_index), cmp.worst_expected, cmp.worst_got, cmp.rtol, cmp.atol);
    }
}

struct Grader {
    const std::string& exercise;
    const GradeSettings& s;
    fs::path work;

    CaseResult run_case(const PreparedCase& c, const std::string& submission, SubmissionResult* result) const
    {
        CaseResult r;
        r.config = c.config;
        if (GradingSignals::received() != 0) return r;  // the grading ends; nothing more starts
        // a random name: a program that reads its own path or /proc/self/mountinfo cannot
        // tell a hidden case from the visible one
        std::string pattern = (work / "run-XXXXXX").string();
        if (mkdtemp(pattern.data()) == nullptr) throw OutputError(fmt::format("cannot make a folder in {}: {}", work.string(), std::strerror(errno)));
        const fs::path dir = pattern;
        ::chmod(dir.c_str(), 0711);
        lay_out(c, submission, dir / "run", s.limits.disk_bytes, result);
        const ProgramRun how{s.run, (dir / "run").string(), (dir / "output.log").string(), c.made.answer_file, (dir / "answer.out").string()};
        const ProgramOutcome run = run_program(how, s.limits);
        r.time_s = run.seconds;
        if (ended_badly(run, s.limits, s.lang, r)) {
            r.stdout_tail = run.stdout_tail;  // what the teacher (and, of the visible case, the student) reads
            r.stderr_tail = run.stderr_tail;
        } else {
            judge_answer(c, run, s.lang, r);
        }
        std::error_code ec;
        fs::remove_all(dir, ec);
        return r;
    }

    // From a failing hidden case, smaller sizes (the range's low end, halfway, one less) with
    // the same seed, one size at a time, while one still fails; at most 16 runs.
    std::optional<Shrunk> shrink(const CaseResult& failing, const std::string& submission) const
    {
        const ExerciseInfo& info = find_exercise(exercise);
        Shrunk best{failing.config, failing.verdict, "", 0};
        for (bool smaller = true; smaller && best.runs < 16;) {
            smaller = false;
            for (const auto& key : info.sizes) {
                const long lo = info.size_range.at(key).first, now = best.config.sizes.at(key);
                long tried = now;  // the candidates rise: one already tried is the one before
                for (long v : {lo, (lo + now) / 2, now - 1}) {
                    if (v >= now || v < lo || v == tried || smaller || best.runs >= 16) continue;
                    tried = v;
                    GradeCase c = best.config;
                    c.sizes[key] = v;
                    const std::optional<PreparedCase> made = prepare_case(exercise, c);
                    if (!made) continue;
                    const CaseResult r = run_case(*made, submission, nullptr);
                    ++best.runs;
                    if (r.verdict != CaseVerdict::match) best.config = c, best.verdict = r.verdict, smaller = true;
                }
                if (smaller) break;
            }
        }
        best.config.name = failing.config.name;
        best.command = case_command(exercise, best.config);
        return best;
    }
};

bool system_folder(const fs::path& p)
{
    for (const char* top : {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"})
        if (p == top || p.string().rfind(std::string(top) + "/", 0) == 0) return true;
    return false;
}

// The path to call the interpreter by: a virtual environment's python (a link beside
// ../pyvenv.cfg) by its own path, since that is how it finds its environment; any other link
// by what it resolves to, so that the link's folder need not be shown to the runs.
fs::path python_to_call(const fs::path& given)
{
    std::error_code ec;
    fs::path p = fs::absolute(given, ec);
    for (int hop = 0; hop < 40; ++hop) {
        if (fs::exists(p.parent_path() / "pyvenv.cfg", ec) || fs::exists(p.parent_path().parent_path() / "pyvenv.cfg", ec)) return p;
        if (!fs::is_symlink(p, ec)) break;
        const fs::path target = fs::read_symlink(p, ec);
        if (ec) break;
        p = target.is_absolute() ? target : p.parent_path() / target;
    }
    const fs::path resolved = fs::canonical(given, ec);
    return ec ? fs::absolute(given) : resolved;
}

// The interpreter's installation as it reports it: sys.prefix (a virtual environment's own
// folder) and sys.base_prefix, run here in isolated mode. Nothing where it does not run.
std::vector<std::string> python_prefixes(const fs::path& python)
{
    const std::string command = shell_word(python.string()) + " -I -c 'import sys; print(sys.prefix); print(sys.base_prefix)' 2>/dev/null";
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) return {};
    std::vector<std::string> out;
    char line[4096];
    while (std::fgets(line, sizeof line, pipe) != nullptr) {
        std::string text = line;
        while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
        if (!text.empty() && text.front() == '/') out.push_back(text);
    }
    ::pclose(pipe);
    return out;
}

// `python3` and `python` in the run command mean --python: a two-line script of each name in
// WORK/bin (a script, not a link, so that a virtual environment's python finds its
// pyvenv.cfg). The sandbox shows exactly the interpreter's installation, read-only: its
// sys.prefix and sys.base_prefix where they are not the system's folders, never the folder a
// link to it happens to be in.
void use_python(GradeSettings& s, const std::string& work)
{
    const fs::path python = python_to_call(s.python), bin = fs::path(work) / "bin";
    fs::create_directories(bin);
    for (const char* name : {"python3", "python"}) {
        const fs::path script = bin / name;
        write_bytes(script, fmt::format("#!/bin/sh\nexec {} \"$@\"\n", shell_word(python.string())));
        fs::permissions(script, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
    }
    ::chmod(bin.c_str(), 0755);
    s.limits.bin_dir = bin.string();
    for (const fs::path prefix : python_prefixes(python)) {
        if (prefix == "/" || system_folder(prefix)) continue;
        if (std::find(s.limits.read_only.begin(), s.limits.read_only.end(), prefix.string()) == s.limits.read_only.end())
            s.limits.read_only.push_back(prefix.string());
    }
}

// Before any grading: the interpreter the submissions will run imports numpy, run as they will
// be run (the same limits, sandbox and uid), so that a class is never given 0 for the
// teacher's interpreter. Other modules (torch) are each submission's own affair: one that
// imports what the interpreter lacks crashes with the import error, alone.
void check_interpreter(const GradeSettings& s, const std::string& work)
{
    if (s.python.empty() && s.run.find("python") == std::string::npos) return;
    const fs::path dir = fs::path(work) / "interpreter";
    fs::create_directories(dir / "run");
    ::chmod(dir.c_str(), 0711);
    const std::string who = s.python.empty() ? "python3 (the first on PATH; name another with --python)" : "--python " + excerpt(s.python);
    ProgramLimits limits = s.limits;
    limits.timeout_s = std::max(limits.timeout_s, 60.0);  // a first import on a cold disk
    limits.cpu_seconds = std::max(limits.cpu_seconds, 60.0);
    const ProgramRun how{"python3 -c 'import numpy'", (dir / "run").string(), (dir / "output.log").string(), "none", (dir / "none").string()};
    const ProgramOutcome run = run_program(how, limits);
    if (GradingSignals::received() != 0) throw Interrupted(GradingSignals::received());
    if (run.end == ProgramOutcome::End::exited && run.code == 0) return;
    if (run.output_tail.rfind("bwrap:", 0) == 0)  // the sandbox itself could not be made
        throw InputError(fmt::format("{}: the sandbox cannot be set up for the runs: {}", who, run.output_tail));
    throw InputError(fmt::format("{} cannot import numpy as the submissions run ({}){}; install it (Debian: python3-numpy) or name an interpreter "
                                 "that has it",
                                 who, s.limits.sandbox == Sandbox::bwrap ? "in the sandbox" : "under the grading's limits",
                                 run.output_tail.empty() ? "" : ": " + run.output_tail));
}

}  // namespace

namespace {

using SharedCases = std::shared_ptr<const std::vector<PreparedCase>>;

// The cases of one submission, made by the first of its runs to start and let go by the last.
struct CaseSlot {
    std::mutex lock;
    SharedCases cases;
    std::size_t done = 0;

    SharedCases take(const std::function<SharedCases()>& make)
    {
        const std::lock_guard<std::mutex> hold(lock);
        if (!cases) cases = make();
        return cases;
    }
    void finished(std::size_t count)
    {
        const std::lock_guard<std::mutex> hold(lock);
        if (++done == count) cases.reset();
    }
};

std::vector<SubmissionResult> grade_all(const std::string& exercise, const std::vector<std::string>& submissions, const std::vector<GradeCase>& names,
                                        const std::function<SharedCases(std::size_t)>& cases_of, const GradeSettings& settings)
{
    const GradingSignals signals;
    GradeSettings s = settings;
    std::optional<RunHost> own_host;  // where the caller gave none
    if (s.limits.host == nullptr) s.limits.host = &own_host.emplace(AccountLimits{s.limits.memory_bytes, s.limits.processes}, thread_count(static_cast<unsigned>(s.jobs)));
    TempFolder work("attnlab-grade-", s.limits.host->own_uids() ? TempFolder::Reach::others : TempFolder::Reach::owner);
    s.limits.host->remove_on_death(work.path());
    if (!s.python.empty()) use_python(s, work.path());
    check_interpreter(s, work.path());
    const Grader grader{exercise, s, work.path()};
    const std::vector<double> points = case_points(names, s);
    const std::size_t count = names.size();
    std::vector<SubmissionResult> results(submissions.size());
    for (auto& r : results) r.cases.resize(count);
    std::vector<CaseSlot> slots(submissions.size());
    parallel_for(submissions.size() * count, thread_count(static_cast<unsigned>(s.jobs)), [&](std::size_t t) {
        const std::size_t i = t / count, k = t % count;
        const SharedCases cases = slots[i].take([&] { return cases_of(i); });
        CaseResult r = grader.run_case(cases->at(k), submissions[i], k == 0 ? &results[i] : nullptr);
        slots[i].finished(count);
        r.max_points = points[k];
        r.points = r.verdict == CaseVerdict::match ? points[k] : 0.0;
        results[i].cases[k] = std::move(r);
    });
    parallel_for(submissions.size(), thread_count(static_cast<unsigned>(s.jobs)), [&](std::size_t i) {
        SubmissionResult& sub = results[i];
        sub.path = submissions[i];
        sub.code_digest = code_digest(submissions[i]);
        for (const auto& c : sub.cases) sub.score += c.points, sub.max_score += c.max_points, sub.time_s += c.time_s;
        for (const auto& c : sub.cases) {
            if (!c.config.hidden || c.verdict == CaseVerdict::match) continue;
            if (c.verdict != CaseVerdict::timeout) sub.smallest = grader.shrink(c, submissions[i]);
            break;
        }
    });
    if (GradingSignals::received() != 0) throw Interrupted(GradingSignals::received());
    return results;
}

}  // namespace

std::vector<SubmissionResult> grade_submissions(const std::string& exercise, const std::vector<std::string>& submissions,
                                                const std::vector<PreparedCase>& cases, const GradeSettings& settings)
{
    std::vector<GradeCase> names;
    for (const auto& c : cases) names.push_back(c.config);
    const SharedCases shared(SharedCases(), &cases);  // the caller's, for every submission
    return grade_all(exercise, submissions, names, [&](std::size_t) { return shared; }, settings);
}

std::vector<SubmissionResult> grade_submissions(const std::string& exercise, const std::vector<std::string>& submissions,
                                                const std::vector<GradeCase>& cases, const CasesOf& cases_of, const GradeSettings& settings)
{
    return grade_all(exercise, submissions, cases, [&](std::size_t i) {
        auto own = std::make_shared<const std::vector<PreparedCase>>(cases_of(i));
        if (own->size() != cases.size()) throw std::logic_error("grade_submissions: a submission's cases differ in number from the class's");
        return own;
    }, settings);
}

}  // namespace attnlab

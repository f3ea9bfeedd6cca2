// Running and judging: one case of one submission, the search for the smallest failing
// case, and the submissions on a pool of threads.
#include "attnlab/exercise/grade.hpp"

#include "attnlab/core/parallel.hpp"
#include "attnlab/io/files.hpp"
#include "attnlab/io/npy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <fstream>

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
void lay_out(const PreparedCase& c, const std::string& submission, const fs::path& dir, SubmissionResult* result)
{
    const auto left_out = copy_submission(submission, dir.string(), {c.made.answer_file, "inputs"});
    if (result && result->left_out.empty()) result->left_out = left_out;
    fs::create_directories(dir / "inputs");
    for (const auto& in : c.made.inputs) {
        const auto bytes = write_npy(in.tensor);
        write_bytes(dir / in.file, std::string(bytes.begin(), bytes.end()));
    }
    write_bytes(dir / "inputs" / "params.json", exercise_params_text(c.made));
}

// A program that did not end well: its verdict and why, or nothing when it exited with 0.
bool ended_badly(const ProgramOutcome& run, const ProgramLimits& limits, Lang lang, CaseResult& r)
{
    const bool zh = lang == Lang::zh;
    const std::string tail = run.output_tail.empty() ? "" : fmt::format(zh ? "；最后一行输出：{}" : "; last output line: {}", run.output_tail);
    switch (run.end) {
    case ProgramOutcome::End::timed_out:
        r.verdict = CaseVerdict::timeout;
        r.detail = fmt::format(zh ? "{} s 后仍在运行，已终止{}" : "still running after {} s, killed{}", limits.timeout_s, tail);
        return true;
    case ProgramOutcome::End::not_started:
        r.verdict = CaseVerdict::crash;
        r.detail = run.output_tail;
        return true;
    case ProgramOutcome::End::signaled:
    case ProgramOutcome::End::exited: {
        if (run.end == ProgramOutcome::End::exited && run.code == 0) return false;
        // the run command's shell reports a program a signal ended as 128 + the signal
        const bool by_signal = run.end == ProgramOutcome::End::signaled || (run.code > 128 && run.code < 128 + 65);
        const int sig = run.end == ProgramOutcome::End::signaled ? run.code : run.code - 128;
        r.verdict = CaseVerdict::crash;
        const char* text = sigdescr_np(sig);
        // (the shell's own "Killed" line says nothing more)
        r.detail = by_signal ? fmt::format(zh ? "被信号 {}（{}）终止{}" : "killed by signal {} ({}){}", sig, text ? text : "?", run.output_tail == "Killed" ? "" : tail)
                             : fmt::format(zh ? "退出码 {}{}" : "exit status {}{}", run.code, tail);
        return true;
    }
    }
    return false;
}

std::string shape_text(const std::vector<std::size_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

// The answer file held against the reference, as check.sh would hold it.
void judge_answer(const PreparedCase& c, const fs::path& answer, Lang lang, CaseResult& r)
{
    const bool zh = lang == Lang::zh;
    struct stat st{};
    if (lstat(answer.c_str(), &st) != 0) {
        r.verdict = CaseVerdict::missing;
        r.detail = fmt::format(zh ? "程序正常结束，但没有写出 {}" : "the program ended without writing {}", c.made.answer_file);
        return;
    }
    if (!S_ISREG(st.st_mode)) {
        r.verdict = CaseVerdict::unreadable;
        r.detail = fmt::format(zh ? "{} 不是普通文件" : "{} is not a regular file", c.made.answer_file);
        return;
    }
    RunContext ctx;
    ctx.dtype = DType::float64;
    ctx.seed = c.made.seed;
    ctx.lang = lang;
    ctx.keep_none = true;
    ctx.against = AgainstRequest{answer.string(), c.made.answer_tensor, std::nullopt, std::nullopt};
    for (const auto& in : c.made.inputs)
        if (in.replaces) ctx.inputs[in.name] = in.tensor;
    Report report;
    try {
        report = c.made.judge(ctx);
    } catch (const InputError& e) {
        r.verdict = CaseVerdict::unreadable;
        r.detail = excerpt(e.what(), 200);
        return;
    }
    const Comparison& cmp = *report.against;
    r.max_diff = cmp.max_abs_diff;
    r.diagnosis = cmp.diagnosis;
    if (cmp.passed) {
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

    CaseResult run_case(const PreparedCase& c, const std::string& submission, const std::string& folder, SubmissionResult* result) const
    {
        CaseResult r;
        r.config = c.config;
        const fs::path dir = work / folder;
        fs::create_directories(dir);
        lay_out(c, submission, dir / "run", result);
        const ProgramOutcome run = run_program(s.run, (dir / "run").string(), (dir / "output.log").string(), s.limits);
        r.time_s = run.seconds;
        if (!ended_badly(run, s.limits, s.lang, r)) judge_answer(c, dir / "run" / c.made.answer_file, s.lang, r);
        std::error_code ec;
        fs::remove_all(dir, ec);
        return r;
    }

    // From a failing hidden case, smaller sizes (the range's low end, halfway, one less) with
    // the same seed, one size at a time, while one still fails; at most 16 runs.
    std::optional<Shrunk> shrink(const CaseResult& failing, const std::string& submission, std::size_t index) const
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
                    const CaseResult r = run_case(*made, submission, fmt::format("s{}-shrink-{}", index, best.runs), nullptr);
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

}  // namespace

std::vector<SubmissionResult> grade_submissions(const std::string& exercise, const std::vector<std::string>& submissions,
                                                const std::vector<PreparedCase>& cases, const GradeSettings& settings)
{
    TempFolder work("attnlab-grade-");
    GradeSettings s = settings;
    if (!s.python.empty()) {
        fs::create_directories(fs::path(work.path()) / "bin");
        for (const char* name : {"python3", "python"}) fs::create_symlink(fs::absolute(s.python), fs::path(work.path()) / "bin" / name);
        s.limits.path_prefix = (fs::path(work.path()) / "bin").string();
    }
    const Grader grader{exercise, s, work.path()};
    const std::vector<double> points = case_points(cases, s);
    std::vector<SubmissionResult> results(submissions.size());
    for (auto& r : results) r.cases.resize(cases.size());
    parallel_for(submissions.size() * cases.size(), thread_count(static_cast<unsigned>(s.jobs)), [&](std::size_t t) {
        const std::size_t i = t / cases.size(), k = t % cases.size();
        CaseResult r = grader.run_case(cases[k], submissions[i], fmt::format("s{}-{}", i, cases[k].config.name), k == 0 ? &results[i] : nullptr);
        r.max_points = points[k];
        r.points = r.verdict == CaseVerdict::match ? points[k] : 0.0;
        results[i].cases[k] = std::move(r);
    });
    parallel_for(submissions.size(), thread_count(static_cast<unsigned>(s.jobs)), [&](std::size_t i) {
        SubmissionResult& sub = results[i];
        sub.path = submissions[i];
        for (const auto& c : sub.cases) sub.score += c.points, sub.max_score += c.max_points, sub.time_s += c.time_s;
        for (const auto& c : sub.cases) {
            if (!c.config.hidden || c.verdict == CaseVerdict::match) continue;
            if (c.verdict != CaseVerdict::timeout) sub.smallest = grader.shrink(c, submissions[i], i);
            break;
        }
    });
    return results;
}

}  // namespace attnlab

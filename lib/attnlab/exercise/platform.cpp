#include "attnlab/exercise/platform.hpp"

#include "attnlab/core/report.hpp"
#include "attnlab/io/files.hpp"

#include <fmt/format.h>

#include <zlib.h>

#include <cstdint>

namespace attnlab {

namespace {

// Gradescope runs setup.sh once, as root, in /autograder/source, when it builds the image.
constexpr const char* kGradescopeSetup =
    "#!/bin/sh\n"
    "# Gradescope runs this once, as root, when it builds the autograder's image: the runtime\n"
    "# packages the grading needs, and the program that made this bundle.\n"
    "set -e\n"
    "apt-get update\n"
    "DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-numpy bubblewrap\n"
    "install -m 0755 \"$(dirname \"$0\")/attnlab\" /usr/local/bin/attnlab\n";

// The grading, as a shell script: ROOT, the program, and the results file's name are the
// platform's; a grading that cannot run (exit 2) still leaves a results file that says why.
std::string grading_script(const std::string& header, const std::string& exercise, const std::string& root_var, const std::string& root,
                           const std::string& tests_dir, const std::string& submission_dir, const std::string& format, const std::string& on_error)
{
    return fmt::format(
        "#!/bin/sh\n{0}"
        "root=\"${{{1}:-{2}}}\"\n"
        "attnlab=\"${{ATTNLAB:-$root/{3}/attnlab}}\"\n"
        "[ -x \"$attnlab\" ] || attnlab=attnlab\n"
        "mkdir -p \"$root/results\"\n"
        "results=\"$root/results/results.json\"\n"
        "if \"$attnlab\" exercise grade {4} \"$root/{5}\" --grading \"$root/{3}/grading.json\" --format {6} > \"$results.tmp\" 2> \"$root/results/grader.err\"; then\n"
        "  mv \"$results.tmp\" \"$results\"\n"
        "else\n"
        "  why=$(head -c 300 \"$root/results/grader.err\" | tr -d '\\\\\"' | tr '\\n\\t' '  ')\n"
        "  {7}\n"
        "fi\n",
        header, root_var, root, tests_dir, exercise, submission_dir, format, on_error);
}

std::string gradescope_run(const std::string& exercise)
{
    return grading_script("# Gradescope runs this for each submission: /autograder/submission in,\n# /autograder/results/results.json out.\n", exercise,
                          "ATTNLAB_AUTOGRADER_ROOT", "/autograder", "source", "submission", "gradescope",
                          "printf '{\"score\": 0, \"output\": \"the autograder could not grade: %s\", \"tests\": []}\\n' \"$why\" > \"$results\"");
}

std::string prairielearn_run(const std::string& exercise)
{
    std::string script = grading_script(
        "# PrairieLearn's external grader runs this for each submission: /grade/student in,\n# /grade/results/results.json out.\n", exercise,
        "ATTNLAB_GRADE_ROOT", "/grade", "tests", "student", "prairielearn",
        "printf '{\"gradable\": false, \"message\": \"the grader could not grade: %s\", \"tests\": []}\\n' \"$why\" > \"$results\"");
    // a submission without a file is no attempt: not gradable, so none is charged
    const std::string empty =
        "if [ -z \"$(ls -A \"$root/student\" 2>/dev/null)\" ]; then\n"
        "  printf '{\"gradable\": false, \"message\": \"the submission holds no file: hand in your program\", \"tests\": []}\\n' > \"$results\"\n"
        "  exit 0\n"
        "fi\n";
    const auto at = script.find("if \"$attnlab\"");
    return script.insert(at, empty);
}

std::string prairielearn_info(const std::string& exercise)
{
    const nlohmann::ordered_json info{
        {"title", "attnlab exercise " + exercise},
        {"externalGradingOptions",
         {{"enabled", true}, {"image", "attnlab-grader"}, {"entrypoint", "/grade/tests/run.sh"}, {"timeout", 600}}}};
    return info.dump(2) + "\n";
}

void put16(std::string& out, unsigned v)
{
    out += static_cast<char>(v & 0xff);
    out += static_cast<char>((v >> 8) & 0xff);
}

void put32(std::string& out, std::uint32_t v)
{
    put16(out, v & 0xffff);
    put16(out, v >> 16);
}

// The part of a ZIP header that the local and the central headers share (APPNOTE 4.3.7).
std::string shared_header(const BundleFile& f, std::uint32_t crc)
{
    std::string h;
    put16(h, 20);  // version needed: 2.0
    put16(h, 0);   // flags
    put16(h, 0);   // stored
    put16(h, 0);   // time
    put16(h, 0x21);  // date: 1980-01-01, so that the same bundle is the same bytes
    put32(h, crc);
    put32(h, static_cast<std::uint32_t>(f.bytes.size()));
    put32(h, static_cast<std::uint32_t>(f.bytes.size()));
    put16(h, static_cast<unsigned>(f.name.size()));
    put16(h, 0);  // extra field
    return h;
}

}  // namespace

std::vector<BundleFile> platform_bundle(Platform platform, const std::string& exercise, const std::string& grading_json, const std::string& program)
{
    if (platform == Platform::gradescope)
        return {{"setup.sh", kGradescopeSetup, true}, {"run_autograder", gradescope_run(exercise), true}, {"grading.json", grading_json, false},
                {"attnlab", program, true}};
    return {{"tests/run.sh", prairielearn_run(exercise), true}, {"tests/grading.json", grading_json, false}, {"tests/attnlab", program, true},
            {"info.json", prairielearn_info(exercise), false}};
}

std::string zip_archive(const std::vector<BundleFile>& files)
{
    std::string out, central;
    for (const auto& f : files) {
        if (f.bytes.size() >= 0xffffffffu || out.size() >= 0xffffffffu) throw OutputError("a bundle file too large for a ZIP archive without ZIP64");
        const auto crc = static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(f.bytes.data()), static_cast<uInt>(f.bytes.size())));
        const auto offset = static_cast<std::uint32_t>(out.size());
        const std::string shared = shared_header(f, crc);
        put32(out, 0x04034b50);
        out += shared + f.name + f.bytes;
        put32(central, 0x02014b50);
        put16(central, (3u << 8) | 20);  // made by Unix, 2.0
        central += shared;
        put16(central, 0);  // comment
        put16(central, 0);  // disk
        put16(central, 0);  // internal attributes
        put32(central, (f.executable ? 0100755u : 0100644u) << 16);
        put32(central, offset);
        central += f.name;
    }
    const auto central_at = static_cast<std::uint32_t>(out.size());
    out += central;
    put32(out, 0x06054b50);
    put16(out, 0);
    put16(out, 0);
    put16(out, static_cast<unsigned>(files.size()));
    put16(out, static_cast<unsigned>(files.size()));
    put32(out, static_cast<std::uint32_t>(central.size()));
    put32(out, central_at);
    put16(out, 0);
    return out;
}

nlohmann::ordered_json prairielearn_results(const Gradebook& g, const SubmissionResult& s)
{
    nlohmann::ordered_json tests = nlohmann::ordered_json::array();
    for (const auto& c : s.cases) {
        const std::string message = valid_utf8(case_message_shown(g, c));
        tests.push_back({{"name", c.config.name}, {"description", c.config.hidden ? "a hidden case" : "the case handed out"}, {"points", c.points},
                         {"max_points", c.max_points}, {"message", message}, {"output", valid_utf8(case_output_shown(g, c))}});
    }
    return {{"gradable", true}, {"score", s.max_score > 0 ? s.score / s.max_score : 0.0}, {"message", ""}, {"output", ""}, {"tests", tests}};
}

}  // namespace attnlab

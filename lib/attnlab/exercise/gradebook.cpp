#include "attnlab/exercise/gradebook.hpp"

#include "attnlab/io/files.hpp"
#include "attnlab/render/render.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

namespace attnlab {

namespace {

// "seed 7, len 8, dim 8, heads 2": the sizes in the order the exercise takes them.
std::string config_text(const Gradebook& g, const GradeCase& c)
{
    std::vector<std::string> parts{fmt::format("seed {}", c.seed)};
    for (const auto& key : find_exercise(g.exercise).sizes) parts.push_back(fmt::format("{} {}", key, c.sizes.at(key)));
    return fmt::format("{}", fmt::join(parts, ", "));
}


std::string diagnosis_text(const std::vector<Diagnosis>& diagnosis, Lang lang)
{
    std::vector<std::string> ids;
    for (const auto& d : diagnosis) ids.push_back(d.certainty == Certainty::matches ? d.id : d.id + (lang == Lang::zh ? "（最接近）" : " (closest)"));
    if (ids.empty()) return "";
    return fmt::format(lang == Lang::zh ? "；已知错误：{}" : "; mistake: {}", fmt::join(ids, ", "));
}

bool shown(const Gradebook& g, const CaseResult& c) { return g.show_hidden || !c.config.hidden; }

// What a student sees of a hidden case: its verdict, the catalogued mistake it matches (not a
// closest guess) and a crash's exception line; nothing of its seed or sizes.
std::string hidden_view(const Gradebook& g, const CaseResult& c)
{
    std::string out = verdict_text(c.verdict, g.lang);
    if (g.hidden_verdict_only) return out;
    if (c.verdict == CaseVerdict::crash && !c.last_line.empty()) out += ": " + c.last_line;
    std::vector<Diagnosis> matched;
    std::copy_if(c.diagnosis.begin(), c.diagnosis.end(), std::back_inserter(matched), [](const Diagnosis& d) { return d.certainty == Certainty::matches; });
    return out + diagnosis_text(matched, g.lang);
}

// One line for a case: its verdict, why, and the catalogued mistake it matches; a hidden one's
// name and hidden_view, unless the gradebook shows hidden cases. A detail is one line already,
// its program's output escaped where it was read (ProgramOutcome::output_tail): escaped again,
// a terminal escape would read \\x1b.
std::string case_line(const Gradebook& g, const CaseResult& c)
{
    if (!shown(g, c)) return fmt::format("{}: {}", c.config.name, hidden_view(g, c));
    return fmt::format("{} ({}): {}: {}{}", c.config.name, config_text(g, c.config), verdict_text(c.verdict, g.lang), c.detail,
                       diagnosis_text(c.diagnosis, g.lang));
}

// A shown case's last lines of stdout and of stderr, indented under its line; nothing of a
// hidden case, unless the gradebook shows hidden cases.
std::string case_output(const Gradebook& g, const CaseResult& c, const std::string& indent)
{
    if (!shown(g, c)) return "";
    std::string out;
    const bool zh = g.lang == Lang::zh;
    for (const auto& [name, lines] : {std::pair{"stdout", &c.stdout_tail}, std::pair{"stderr", &c.stderr_tail}}) {
        if (lines->empty()) continue;
        out += fmt::format(zh ? "{}{} 最后 {} 行：\n" : "{}{}, last {} lines:\n", indent, name, lines->size());
        for (const auto& line : *lines) out += indent + "  " + line + "\n";
    }
    return out;
}

// The case's line, then its output's last lines where it has any (Gradescope's, JUnit's text).
std::string case_line_and_output(const Gradebook& g, const CaseResult& c)
{
    const std::string output = case_output(g, c, "");
    return output.empty() ? case_line(g, c) : case_line(g, c) + "\n" + output;
}

// The detail a student may see: nothing of a hidden case.
std::string case_message(const Gradebook& g, const CaseResult& c)
{
    return shown(g, c) ? c.detail + diagnosis_text(c.diagnosis, g.lang) : hidden_view(g, c);
}

// A name from outside on one line of text.
std::string one_line(const std::string& s) { return excerpt(s, std::string::npos); }

std::vector<std::string> one_line_each(const std::vector<std::string>& names)
{
    std::vector<std::string> out;
    for (const auto& n : names) out.push_back(one_line(n));
    return out;
}

std::vector<std::string> valid_each(const std::vector<std::string>& names)
{
    std::vector<std::string> out;
    for (const auto& n : names) out.push_back(valid_utf8(n));
    return out;
}

std::string smallest_line(const Shrunk& s, Lang lang)
{
    return fmt::format(lang == Lang::zh ? "最小的失败配置（{}，{} 次运行）：{}" : "smallest failing case ({}, {} runs): {}", name_of(s.verdict), s.runs,
                       s.command);
}

std::string number(double v) { return fmt::format("{:g}", v); }

bool is_error(CaseVerdict v) { return v == CaseVerdict::crash || v == CaseVerdict::timeout; }

std::string junit_suite(const Gradebook& g, const SubmissionResult& s, std::size_t id, const std::string& timestamp, const std::string& hostname)
{
    const auto errors = std::count_if(s.cases.begin(), s.cases.end(), [](const CaseResult& c) { return is_error(c.verdict); });
    const auto failures = std::count_if(s.cases.begin(), s.cases.end(), [](const CaseResult& c) { return c.verdict != CaseVerdict::match && !is_error(c.verdict); });
    std::string out = fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"0\" time=\"{:.3f}\" timestamp=\"{}\" hostname=\"{}\" id=\"{}\" package=\"{}\">\n",
        xml_escape(s.path), s.cases.size(), failures, errors, s.time_s, timestamp, xml_escape(hostname), id, xml_escape(g.exercise));
    out += fmt::format("    <properties>\n      <property name=\"score\" value=\"{}\"/>\n      <property name=\"max_score\" value=\"{}\"/>\n"
                       "      <property name=\"isolation\" value=\"{}\"/>\n    </properties>\n",
                       number(s.score), number(s.max_score), xml_escape(g.isolation));
    for (const auto& c : s.cases) {
        out += fmt::format("    <testcase name=\"{}\" classname=\"{}\" time=\"{:.3f}\"", c.config.name, xml_escape(g.exercise + "." + s.path), c.time_s);
        if (c.verdict == CaseVerdict::match) {
            out += "/>\n";
            continue;
        }
        const char* tag = is_error(c.verdict) ? "error" : "failure";
        out += fmt::format(">\n      <{0} type=\"{1}\" message=\"{2}\">{3}</{0}>\n    </testcase>\n", tag, name_of(c.verdict),
                           xml_escape(case_message(g, c)), xml_escape(case_line_and_output(g, c)));
    }
    out += fmt::format("    <system-out>{}</system-out>\n    <system-err></system-err>\n  </testsuite>\n",
                       s.smallest && g.show_hidden ? xml_escape(smallest_line(*s.smallest, g.lang)) : "");
    return out;
}

std::string quoted_cell(const std::string& s)
{
    std::string out = "\"";
    for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return out + "\"";
}

}  // namespace

CopyLeads copy_leads(const Gradebook& g)
{
    CopyLeads leads;
    for (std::size_t k = 0; k < g.cases.size(); ++k) {
        std::map<std::string, std::vector<std::string>> by_answer;
        for (const auto& s : g.submissions) {
            if (k >= s.cases.size()) continue;
            const CaseResult& c = s.cases[k];
            const bool explained = std::any_of(c.diagnosis.begin(), c.diagnosis.end(), [](const Diagnosis& d) { return d.certainty == Certainty::matches; });
            if (c.verdict != CaseVerdict::match && !c.answer_digest.empty() && !explained) by_answer[c.answer_digest].push_back(s.path);
        }
        for (auto& [digest, paths] : by_answer)
            if (paths.size() > 1) leads.same_wrong_answer.emplace_back(g.cases[k].name, std::move(paths));
    }
    std::map<std::string, std::vector<std::string>> by_files;
    for (const auto& s : g.submissions)
        if (!s.code_digest.empty()) by_files[s.code_digest].push_back(s.path);
    for (auto& [digest, paths] : by_files)
        if (paths.size() > 1) leads.same_code.push_back(std::move(paths));
    return leads;
}

namespace {

// The leads, in the teacher's report alone.
std::string leads_text(const Gradebook& g)
{
    if (!g.teacher) return "";
    const CopyLeads leads = copy_leads(g);
    const bool zh = g.lang == Lang::zh;
    std::string out = zh ? "线索，不是结论（只给老师看）：同一用例上逐字节相同、且没有已知错误能解释的错误答案\n"
                         : "leads, not verdicts (for the teacher alone): the same wrong answer on a case, byte for byte, where no catalogued mistake explains it\n";
    for (const auto& [name, paths] : leads.same_wrong_answer) out += fmt::format("  {}: {}\n", name, fmt::join(one_line_each(paths), ", "));
    if (leads.same_wrong_answer.empty()) out += zh ? "  （无）\n" : "  (none)\n";
    out += zh ? "相同的代码（注释和空行不计；练习自带的文件和 .npy 不计）\n" : "the same code (comments and blank lines aside; the exercise's own files and .npy files left out)\n";
    for (const auto& paths : leads.same_code) out += fmt::format("  {}\n", fmt::join(one_line_each(paths), ", "));
    if (leads.same_code.empty()) out += zh ? "  （无）\n" : "  (none)\n";
    return out;
}

nlohmann::ordered_json leads_json(const Gradebook& g)
{
    const CopyLeads leads = copy_leads(g);
    nlohmann::ordered_json wrong = nlohmann::ordered_json::array(), files = nlohmann::ordered_json::array();
    for (const auto& [name, paths] : leads.same_wrong_answer) wrong.push_back({{"case", name}, {"submissions", valid_each(paths)}});
    for (const auto& paths : leads.same_code) files.push_back(valid_each(paths));
    return {{"note", "leads, not verdicts: never shown to students"}, {"same_wrong_answer", wrong}, {"same_code", files}};
}

}  // namespace

nlohmann::ordered_json config_json(const GradeCase& c)
{
    nlohmann::ordered_json j{{"seed", c.seed}};
    for (const auto& [key, value] : c.sizes) j[key] = value;
    return j;
}

std::string csv_cell(const std::string& s) { return s.find_first_of(",\"\r\n") == std::string::npos ? s : quoted_cell(s); }

std::string csv_text_cell(const std::string& s)
{
    // one line, no control, bidirectional or separator character: escaped as in text
    const std::string text = excerpt(s, std::string::npos);
    // a formula character at the start of what any spreadsheet may take for a cell (after a
    // comma, or the semicolon or bar some locales split on) is put behind a '
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const bool cell_start = i == 0 || std::string_view(",;|").find(text[i - 1]) != std::string_view::npos;
        if (cell_start && std::string_view("=+-@").find(text[i]) != std::string_view::npos) out += '\'';
        out += text[i];
    }
    // quoted also where a semicolon or a bar might split it
    return out.find_first_of(",;|\"\r\n") == std::string::npos ? out : quoted_cell(out);
}

std::string case_message_shown(const Gradebook& g, const CaseResult& c) { return case_message(g, c); }

std::string case_output_shown(const Gradebook& g, const CaseResult& c) { return case_output(g, c, ""); }

std::string json_text(const nlohmann::ordered_json& j) { return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n"; }

namespace {

// ", student ID" where a roster's folder column gave the submission another name than its
// student's id.
std::string student_note(const SubmissionResult& s, Lang lang)
{
    std::string folder = s.path;
    while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
    folder = folder.substr(folder.find_last_of('/') == std::string::npos ? 0 : folder.find_last_of('/') + 1);
    if (s.student.empty() || s.student == folder) return "";
    return fmt::format(lang == Lang::zh ? "（学生 {}）" : " (student {})", s.student);
}

std::string not_graded_line(const Gradebook& g)
{
    if (g.not_graded.empty()) return "";
    return fmt::format(g.lang == Lang::zh ? "未评分（名单上没有交这个文件夹的学生）：{}\n" : "not graded (no student of the roster hands in this folder): {}\n",
                       fmt::join(one_line_each(g.not_graded), ", "));
}

}  // namespace

std::string gradebook_text(const Gradebook& g)
{
    const bool zh = g.lang == Lang::zh;
    const auto& cases = g.cases;
    std::string out = fmt::format(zh ? "练习 {}：1 个公开用例，{} 个隐藏用例\n" : "exercise {}: 1 visible case, {} hidden\n", g.exercise, cases.size() - 1);
    if (!g.isolation.empty()) out += fmt::format(zh ? "隔离：{}\n" : "isolation: {}\n", g.isolation);
    std::size_t width = zh ? 4 : 10;
    for (const auto& s : g.submissions) width = std::max(width, one_line(s.path).size());
    out += not_graded_line(g);
    out += fmt::format("{:<{}}  {}\n", zh ? "提交" : "submission", width, zh ? "得分" : "score");  // fmt pads by display width
    for (const auto& s : g.submissions) {
        out += fmt::format("{:<{}}  {}/{}{}\n", one_line(s.path), width, number(s.score), number(s.max_score), student_note(s, g.lang));
        for (const auto& c : s.cases)
            if (c.verdict != CaseVerdict::match) out += "  " + case_line(g, c) + "\n" + case_output(g, c, "    ");
        if (s.smallest && g.show_hidden) out += "  " + smallest_line(*s.smallest, g.lang) + "\n";
        if (!s.left_out.empty()) out += fmt::format(zh ? "  未复制：{}\n" : "  not copied: {}\n", fmt::join(one_line_each(s.left_out), ", "));
    }
    out += leads_text(g);
    return out;
}

std::string gradebook_csv(const Gradebook& g)
{
    std::vector<std::string> header{"submission", "score", "max_score"};
    for (const auto& c : g.cases) header.push_back(c.name);
    for (const auto& c : g.cases) header.push_back(c.name + "_verdict");
    // a class with a roster: the student each submission was graded as, last
    const bool roster = std::any_of(g.submissions.begin(), g.submissions.end(), [](const SubmissionResult& s) { return !s.student.empty(); });
    if (roster) header.push_back("student");
    std::string out = fmt::format("{}\n", fmt::join(header, ","));
    for (const auto& s : g.submissions) {
        std::vector<std::string> row{csv_text_cell(s.path), number(s.score), number(s.max_score)};
        for (const auto& c : s.cases) row.push_back(number(c.points));
        for (const auto& c : s.cases) row.push_back(name_of(c.verdict));
        if (roster) row.push_back(csv_text_cell(s.student));
        out += fmt::format("{}\n", fmt::join(row, ","));
    }
    return out;
}

nlohmann::ordered_json gradebook_json(const Gradebook& g)
{
    nlohmann::ordered_json j{{"exercise", g.exercise}, {"isolation", g.isolation}, {"submissions", nlohmann::ordered_json::array()}};
    for (const auto& s : g.submissions) {
        nlohmann::ordered_json sub{{"path", valid_utf8(s.path)},
                                   {"student", s.student.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(s.student)},
                                   {"score", s.score}, {"max_score", s.max_score}, {"time_s", s.time_s}, {"cases", nlohmann::ordered_json::array()}};
        for (const auto& c : s.cases) {
            nlohmann::ordered_json diagnosis = nlohmann::ordered_json::array();
            for (const auto& d : c.diagnosis)
                diagnosis.push_back({{"id", d.id}, {"what", d.explanation}, {"certainty", name_of(d.certainty)}, {"max_diff", d.max_abs_diff}});
            sub["cases"].push_back({{"name", c.config.name}, {"hidden", c.config.hidden}, {"config", config_json(c.config)}, {"verdict", name_of(c.verdict)},
                                    {"max_diff", c.max_diff ? nlohmann::ordered_json(*c.max_diff) : nlohmann::ordered_json()}, {"detail", valid_utf8(c.detail)},
                                    {"diagnosis", diagnosis}, {"points", c.points}, {"max_points", c.max_points}, {"time_s", c.time_s},
                                    {"answer_digest", c.answer_digest.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(c.answer_digest)},
                                    {"last_line", valid_utf8(c.last_line)},
                                    {"stdout_tail", valid_each(c.stdout_tail)},
                                    {"stderr_tail", valid_each(c.stderr_tail)}});
        }
        sub["smallest_failing"] = nullptr;
        if (s.smallest)
            sub["smallest_failing"] = {{"config", config_json(s.smallest->config)}, {"verdict", name_of(s.smallest->verdict)},
                                       {"command", s.smallest->command}, {"runs", s.smallest->runs}};
        sub["not_copied"] = valid_each(s.left_out);
        sub["code_digest"] = s.code_digest;
        j["submissions"].push_back(std::move(sub));
    }
    j["not_graded"] = valid_each(g.not_graded);
    j["leads"] = leads_json(g);
    return j;
}

std::string gradebook_junit(const Gradebook& g, const std::string& timestamp, const std::string& hostname)
{
    std::size_t tests = 0, errors = 0, failures = 0;
    double time = 0.0;
    for (const auto& s : g.submissions) {
        time += s.time_s;
        for (const auto& c : s.cases) ++tests, errors += is_error(c.verdict), failures += c.verdict != CaseVerdict::match && !is_error(c.verdict);
    }
    std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out += fmt::format("<testsuites name=\"attnlab exercise grade {}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{:.3f}\">\n", xml_escape(g.exercise),
                       tests, failures, errors, time);
    for (std::size_t i = 0; i < g.submissions.size(); ++i) out += junit_suite(g, g.submissions[i], i, timestamp, hostname);
    return out + "</testsuites>\n";
}

nlohmann::ordered_json gradescope_results(const Gradebook& g, const SubmissionResult& s)
{
    nlohmann::ordered_json j{{"score", s.score}, {"execution_time", s.time_s}};
    j["output"] = s.smallest && g.show_hidden ? smallest_line(*s.smallest, g.lang) : "";
    j["tests"] = nlohmann::ordered_json::array();
    for (const auto& c : s.cases) {
        j["tests"].push_back({{"name", c.config.name},
                              {"score", c.points},
                              {"max_score", c.max_points},
                              {"status", c.verdict == CaseVerdict::match ? "passed" : "failed"},
                              {"output", valid_utf8(case_line_and_output(g, c))},
                              {"visibility", c.config.hidden ? "after_published" : "visible"}});
    }
    return j;
}

}  // namespace attnlab

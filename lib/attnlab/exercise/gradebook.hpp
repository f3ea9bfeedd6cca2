// The gradebook of `exercise grade`, in the formats teachers' tools read: a text table, CSV
// (one row per submission), JSON (everything), JUnit XML (for CI systems; valid against the
// Jenkins/Ant JUnit schema) and Gradescope's results.json.
#pragma once

#include "attnlab/exercise/grade.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace attnlab {

// Everything a submission or its folder puts into a gradebook (its output, its file and folder
// names) is data: valid UTF-8 in every format, escaped for it, one line in text.
//
// Hidden means hidden: the formats a student may see (text, CSV, JUnit, Gradescope) give of a
// hidden case its name, its verdict, the catalogued mistake it matches and, for a crash, the
// program's last line of output (the exception); never its seed, sizes or detail, and no
// smallest failing case (it is made from a hidden one), unless show_hidden. With
// hidden_verdict_only, the verdict alone. JSON, the teacher's, gives everything.
struct Gradebook {
    std::string exercise;
    std::vector<GradeCase> cases;  // the configurations every submission was run on, in order
    std::vector<SubmissionResult> submissions;
    Lang lang = Lang::en;
    bool show_hidden = false;
    std::string isolation;  // isolation_text
    bool teacher = false;   // the teacher's report: with the leads on who copied whom
    bool hidden_verdict_only = false;  // --hidden-detail verdict: a hidden case's verdict alone
    std::vector<std::string> not_graded{};  // submissions no student of the roster hands in (--unmatched skip)
};

// Who may have copied whom, from what they handed in: submissions whose wrong answers on the
// same case are the same bytes where no catalogued mistake explains them, and submissions
// whose code is the same (grade.hpp: code_digest). A lead for the teacher, never a verdict, never shown to a
// student: only the teacher's report and the JSON gradebook carry it.
struct CopyLeads {
    std::vector<std::pair<std::string, std::vector<std::string>>> same_wrong_answer;  // case name, submissions
    std::vector<std::vector<std::string>> same_code;
};
CopyLeads copy_leads(const Gradebook& g);

// A CSV cell as RFC 4180 writes it: quoted when it holds a comma, a quote or a line break.
std::string csv_cell(const std::string& s);
// A cell of text from outside (a submission's folder name): one line, escaped as text is
// (controls, bidirectional and line-separator characters), a = + - @ at the start of anything
// a spreadsheet may take for a cell (the start, or after a comma, semicolon or bar) behind a '
// (OWASP's advice on CSV injection); quoted when it holds a separator, a quote or a newline.
std::string csv_text_cell(const std::string& s);

// A case's seed and sizes, as the JSON gradebook writes them: {"seed": S, "len": L, ...}.
nlohmann::ordered_json config_json(const GradeCase& c);

std::string gradebook_text(const Gradebook& g);
std::string gradebook_csv(const Gradebook& g);
nlohmann::ordered_json gradebook_json(const Gradebook& g);
// timestamp: ISO 8601 without a zone ("2026-12-02T15:00:00"), hostname: the machine's name.
std::string gradebook_junit(const Gradebook& g, const std::string& timestamp, const std::string& hostname);
// Gradescope's results.json for one submission: score, execution_time, output, and one test
// per case (name, score, max_score, status, output, visibility: "after_published" for a
// hidden case).
nlohmann::ordered_json gradescope_results(const Gradebook& g, const SubmissionResult& s);
// What a case says to the submission's author: its detail and the mistake it matches, or for a
// hidden case its verdict alone (unless the gradebook shows hidden cases).
std::string case_message_shown(const Gradebook& g, const CaseResult& c);

// A crash's or a timeout's last lines of stdout and of stderr, as its author may see them:
// nothing of a hidden case (unless the gradebook shows hidden cases).
std::string case_output_shown(const Gradebook& g, const CaseResult& c);

// A JSON document as text, whatever bytes it holds (any left that are not UTF-8 become U+FFFD).
std::string json_text(const nlohmann::ordered_json& j);

}  // namespace attnlab

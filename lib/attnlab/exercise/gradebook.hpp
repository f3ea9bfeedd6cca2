// The gradebook of `exercise grade`, in the formats teachers' tools read: a text table, CSV
// (one row per submission), JSON (everything), JUnit XML (for CI systems; valid against the
// Jenkins/Ant JUnit schema) and Gradescope's results.json.
#pragma once

#include "attnlab/exercise/grade.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace attnlab {

struct Gradebook {
    std::string exercise;
    std::vector<PreparedCase> const* cases = nullptr;
    std::vector<SubmissionResult> submissions;
    Lang lang = Lang::en;
};

// A CSV cell as RFC 4180 writes it: quoted when it holds a comma, a quote or a line break.
std::string csv_cell(const std::string& s);

std::string gradebook_text(const Gradebook& g);
std::string gradebook_csv(const Gradebook& g);
nlohmann::ordered_json gradebook_json(const Gradebook& g);
// timestamp: ISO 8601 without a zone ("2026-12-02T15:00:00"), hostname: the machine's name.
std::string gradebook_junit(const Gradebook& g, const std::string& timestamp, const std::string& hostname);
// Gradescope's results.json for one submission: score, execution_time, output, and one test
// per case (name, score, max_score, status, output).
nlohmann::ordered_json gradescope_results(const Gradebook& g, const SubmissionResult& s);

}  // namespace attnlab

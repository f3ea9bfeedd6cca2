#include "attnlab/exercise/shards.hpp"

#include "attnlab/io/files.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

namespace attnlab {

namespace {

constexpr const char* kPartKey = "attnlab_gradebook_part";
constexpr int kPartVersion = 1;

// A whole number from TEXT, or nothing (no sign, no space, nothing after it).
std::optional<long> whole(const std::string& text)
{
    if (text.empty() || text.size() > 12 || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    return std::strtol(text.c_str(), nullptr, 10);
}

long env_number(const std::function<const char*(const char*)>& getenv, const char* name, const std::string& spec)
{
    const char* value = getenv(name);
    const auto n = whole(value ? value : "");
    if (!n) throw InputError(fmt::format("--shard {}: {} is {}", spec, name, value ? fmt::format("'{}', not a whole number", excerpt(value)) : "not set"));
    return *n;
}

// The shard's index under Slurm (its array task id less the array's first) or Kubernetes.
long auto_index(const std::function<const char*(const char*)>& getenv, const std::string& spec)
{
    if (getenv("JOB_COMPLETION_INDEX") && !getenv("SLURM_ARRAY_TASK_ID")) return env_number(getenv, "JOB_COMPLETION_INDEX", spec);
    if (!getenv("SLURM_ARRAY_TASK_ID"))
        throw InputError(fmt::format("--shard {}: neither SLURM_ARRAY_TASK_ID (a Slurm array task) nor JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) is set; "
                                     "give --shard I/N",
                                     spec));
    const long first = getenv("SLURM_ARRAY_TASK_MIN") ? env_number(getenv, "SLURM_ARRAY_TASK_MIN", spec) : 0;
    return env_number(getenv, "SLURM_ARRAY_TASK_ID", spec) - first;
}

// A part's field, or an InputError naming the file.
const nlohmann::json& field(const nlohmann::json& j, const char* key, const std::string& file)
{
    if (!j.is_object() || !j.contains(key)) throw InputError(fmt::format("{}: not a part of `exercise grade --shard` (no \"{}\")", excerpt(file), key));
    return j.at(key);
}

GradeCase case_from_json(const nlohmann::json& c)
{
    GradeCase out;
    out.name = c.at("name").get<std::string>();
    out.hidden = c.at("hidden").get<bool>();
    for (const auto& [key, value] : c.at("config").items()) {
        if (key == "seed") out.seed = value.get<std::uint64_t>();
        else out.sizes[key] = value.get<long>();
    }
    return out;
}

template <class E>
E enum_named(const nlohmann::json& j)
{
    const auto names = enum_map<E>();
    const auto it = names.find(j.get<std::string>());
    if (it == names.end()) throw nlohmann::json::other_error::create(501, "unknown name " + j.get<std::string>(), &j);
    return it->second;
}

CaseResult case_result_from_json(const nlohmann::json& c)
{
    CaseResult r;
    r.config = case_from_json(c);
    r.verdict = enum_named<CaseVerdict>(c.at("verdict"));
    if (!c.at("max_diff").is_null()) r.max_diff = c.at("max_diff").get<double>();
    r.detail = c.at("detail").get<std::string>();
    for (const auto& d : c.at("diagnosis"))
        r.diagnosis.push_back({d.at("id").get<std::string>(), d.at("what").get<std::string>(), d.at("max_diff").get<double>(), enum_named<Certainty>(d.at("certainty"))});
    r.points = c.at("points").get<double>();
    r.max_points = c.at("max_points").get<double>();
    r.time_s = c.at("time_s").get<double>();
    if (c.contains("answer_digest") && !c.at("answer_digest").is_null()) r.answer_digest = c.at("answer_digest").get<std::string>();
    if (c.contains("last_line")) r.last_line = c.at("last_line").get<std::string>();
    if (c.contains("stdout_tail")) r.stdout_tail = c.at("stdout_tail").get<std::vector<std::string>>();
    if (c.contains("stderr_tail")) r.stderr_tail = c.at("stderr_tail").get<std::vector<std::string>>();
    return r;
}

SubmissionResult submission_from_json(const nlohmann::json& s)
{
    SubmissionResult out;
    out.path = s.at("path").get<std::string>();
    if (s.contains("student") && !s.at("student").is_null()) out.student = s.at("student").get<std::string>();
    for (const auto& c : s.at("cases")) out.cases.push_back(case_result_from_json(c));
    if (const auto& small = s.at("smallest_failing"); !small.is_null()) {
        Shrunk k;
        k.config = case_from_json({{"name", ""}, {"hidden", true}, {"config", small.at("config")}});
        k.verdict = enum_named<CaseVerdict>(small.at("verdict"));
        k.command = small.at("command").get<std::string>();
        k.runs = small.at("runs").get<int>();
        out.smallest = k;
    }
    out.left_out = s.at("not_copied").get<std::vector<std::string>>();
    out.score = s.at("score").get<double>();
    out.max_score = s.at("max_score").get<double>();
    out.time_s = s.at("time_s").get<double>();
    if (s.contains("code_digest")) out.code_digest = s.at("code_digest").get<std::string>();
    return out;
}

// One part read and checked on its own.
struct Part {
    std::string file, exercise, digest, isolation;
    Shard shard;
    std::size_t class_size = 0;
    std::vector<GradeCase> cases;
    std::vector<SubmissionResult> submissions;
    std::vector<std::string> not_graded;  // the class's, the same in every part
};

Part read_part(const std::string& file, const std::string& text)
{
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded()) throw InputError(fmt::format("{}: not JSON, so not a part of `exercise grade --shard`", excerpt(file)));
    if (field(j, kPartKey, file) != kPartVersion) throw InputError(fmt::format("{}: a part of another version ({})", excerpt(file), excerpt(field(j, kPartKey, file).dump())));
    Part p;
    p.file = file;
    try {
        p.exercise = field(j, "exercise", file).get<std::string>();
        p.digest = field(j, "grading", file).get<std::string>();
        p.shard = {field(j, "shard", file).at("index").get<long>(), field(j, "shard", file).at("count").get<long>()};
        p.class_size = field(j, "class_size", file).get<std::size_t>();
        for (const auto& c : field(j, "cases", file)) p.cases.push_back(case_from_json(c));
        const auto& book = field(j, "gradebook", file);
        p.isolation = book.at("isolation").get<std::string>();
        for (const auto& s : book.at("submissions")) p.submissions.push_back(submission_from_json(s));
        if (book.contains("not_graded")) p.not_graded = book.at("not_graded").get<std::vector<std::string>>();
    } catch (const nlohmann::json::exception& e) {
        throw InputError(fmt::format("{}: a part whose fields are not as `exercise grade --shard` writes them ({})", excerpt(file), excerpt(e.what())));
    }
    if (p.shard.count < 1 || p.shard.index < 0 || p.shard.index >= p.shard.count)
        throw InputError(fmt::format("{}: shard {}/{} is no shard", excerpt(file), p.shard.index, p.shard.count));
    return p;
}

// The parts agree with the first: one exercise, one grading, one class, one shard count.
void check_same_grading(const Part& first, const Part& p)
{
    if (p.exercise != first.exercise)
        throw InputError(fmt::format("{}: a part of exercise '{}', {} one of '{}'", excerpt(p.file), excerpt(p.exercise), excerpt(first.file), excerpt(first.exercise)));
    if (p.digest != first.digest)
        throw InputError(fmt::format("{}: graded otherwise than {} (grading {}, not {}): the cases, run command, limits or points differ", excerpt(p.file),
                                     excerpt(first.file), p.digest, first.digest));
    if (p.shard.count != first.shard.count || p.class_size != first.class_size)
        throw InputError(fmt::format("{}: shard {}/{} of a class of {}, {} shard {}/{} of a class of {}", excerpt(p.file), p.shard.index, p.shard.count,
                                     p.class_size, excerpt(first.file), first.shard.index, first.shard.count, first.class_size));
}

// Every shard once, no submission twice, and the class whole.
void check_whole(const std::vector<Part>& parts)
{
    std::map<long, std::string> seen;
    std::map<std::string, std::string> owner;
    std::size_t total = 0;
    for (const auto& p : parts) {
        if (!seen.emplace(p.shard.index, p.file).second)
            throw InputError(fmt::format("{}: shard {} is given twice (also {}); a shard graded again replaces its part", excerpt(p.file), p.shard.index, excerpt(seen[p.shard.index])));
        for (const auto& s : p.submissions) {
            if (!owner.emplace(s.path, p.file).second)
                throw InputError(fmt::format("{}: {} is also in {}", excerpt(p.file), excerpt(s.path), excerpt(owner[s.path])));
            ++total;
        }
    }
    const long count = parts.front().shard.count;
    std::vector<std::string> missing;
    for (long i = 0; i < count; ++i)
        if (!seen.count(i)) missing.push_back(std::to_string(i));
    if (!missing.empty())
        throw InputError(fmt::format("the parts lack shard{} {} of {} (give every part of the grading)", missing.size() > 1 ? "s" : "", fmt::join(missing, ", "), count));
    if (total != parts.front().class_size)
        throw InputError(fmt::format("the parts hold {} submissions, and the class {}", total, parts.front().class_size));
}

}  // namespace

Shard parse_shard(const std::string& spec, const std::function<const char*(const char*)>& getenv)
{
    Shard s;
    if (spec == "auto") {
        s.count = env_number(getenv, "SLURM_ARRAY_TASK_COUNT", spec);
        s.index = auto_index(getenv, spec);
    } else {
        const auto slash = spec.find('/');
        const auto count = slash == std::string::npos ? std::nullopt : whole(spec.substr(slash + 1));
        const auto index = slash == std::string::npos ? std::nullopt : spec.substr(0, slash) == "auto" ? std::optional<long>(auto_index(getenv, spec))
                                                                                                    : whole(spec.substr(0, slash));
        if (!count || !index) throw InputError(fmt::format("--shard takes I/N (from 0), auto (Slurm) or auto/N (got '{}')", excerpt(spec)));
        s = {*index, *count};
    }
    if (s.count < 1 || s.count > kMaxShards || s.index < 0 || s.index >= s.count)
        throw InputError(fmt::format("--shard {}: shard {} of {} is none (0 <= I < N <= {})", excerpt(spec), s.index, s.count, kMaxShards));
    return s;
}

std::vector<std::string> shard_of(std::vector<std::string> submissions, Shard shard)
{
    std::sort(submissions.begin(), submissions.end());
    const auto n = submissions.size(), count = static_cast<std::size_t>(shard.count), i = static_cast<std::size_t>(shard.index);
    const auto from = i * n / count, to = (i + 1) * n / count;
    return {submissions.begin() + static_cast<std::ptrdiff_t>(from), submissions.begin() + static_cast<std::ptrdiff_t>(to)};
}

nlohmann::ordered_json cases_json(const std::vector<GradeCase>& cases)
{
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& c : cases) out.push_back({{"name", c.name}, {"hidden", c.hidden}, {"config", config_json(c)}});
    return out;
}

std::string grading_digest(const std::string& exercise, const std::vector<GradeCase>& cases, const GradeSettings& s, const std::string& variants)
{
    const auto& l = s.limits;
    nlohmann::ordered_json what{{"exercise", exercise}, {"cases", cases_json(cases)}, {"run", s.run}, {"python", s.python},
                                {"limits", {l.timeout_s, l.cpu_seconds, l.memory_bytes, l.disk_bytes, l.processes, name_of(l.sandbox), l.isolate}},
                                {"max_score", s.max_score}, {"points", s.points}};
    if (!variants.empty()) what["variants"] = variants;
    return fnv1a64_hex(what.dump());
}

nlohmann::ordered_json part_json(const Gradebook& g, Shard shard, const std::string& digest, std::size_t class_size)
{
    nlohmann::ordered_json names = nlohmann::ordered_json::array();
    for (const auto& s : g.submissions) names.push_back(valid_utf8(s.path));
    return {{kPartKey, kPartVersion}, {"exercise", g.exercise}, {"grading", digest}, {"shard", {{"index", shard.index}, {"count", shard.count}}},
            {"class_size", class_size}, {"cases", cases_json(g.cases)}, {"submissions", names}, {"gradebook", gradebook_json(g)}};
}

Gradebook merge_parts(const std::vector<std::pair<std::string, std::string>>& texts, Lang lang, bool show_hidden)
{
    if (texts.empty()) throw InputError("exercise merge: give the parts to merge");
    std::vector<Part> parts;
    for (const auto& [file, text] : texts) {
        parts.push_back(read_part(file, text));
        check_same_grading(parts.front(), parts.back());
    }
    check_whole(parts);
    std::sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) { return a.shard.index < b.shard.index; });
    // the isolation of every shard's machine, once each
    std::vector<std::string> isolations;
    for (const auto& p : parts)
        if (std::find(isolations.begin(), isolations.end(), p.isolation) == isolations.end()) isolations.push_back(p.isolation);
    Gradebook g{parts.front().exercise, parts.front().cases, {}, lang, show_hidden, fmt::format("{}", fmt::join(isolations, " / "))};
    g.not_graded = parts.front().not_graded;
    for (auto& p : parts)
        for (auto& s : p.submissions) g.submissions.push_back(std::move(s));
    return g;
}

}  // namespace attnlab

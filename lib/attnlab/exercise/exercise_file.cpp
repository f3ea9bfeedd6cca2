#include "attnlab/exercise/exercise_file.hpp"


#include "attnlab/core/report.hpp"
#include "attnlab/io/files.hpp"
#include "attnlab/io/read.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

namespace attnlab {

namespace {

using json = nlohmann::json;

[[noreturn]] void refuse(const std::string& what, const std::string& field, const char* problem)
{
    throw InputError(fmt::format("{}: {} {}; make the exercise again with attnlab exercise new", what, field, problem));
}

nlohmann::json parse_object(const std::string& text, const std::string& what, std::size_t max_bytes = kMaxExerciseFile)
{
    if (text.size() > max_bytes) refuse(what, "the file", max_bytes == kMaxExerciseFile ? "is larger than 1 MiB" : "is larger than 8 MiB");
    if (json_nesting(text) > 64) refuse(what, "the document", "is nested more than 64 deep");
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_object()) throw InputError(fmt::format("{}: not an exercise file written by attnlab exercise new (not a JSON object)", what));
    return j;
}

// The member key of object (named field in messages) when it is there with the type asked for.
const json& member(const json& object, const char* key, json::value_t type, const std::string& what, const std::string& field)
{
    const auto it = object.find(key);
    if (it == object.end()) refuse(what, field, "is missing");
    const bool ok = type == json::value_t::number_unsigned ? it->is_number_unsigned()
                    : type == json::value_t::number_integer ? it->is_number_integer()
                                                            : it->type() == type;
    if (!ok) refuse(what, field, "is of another type");
    return *it;
}

// A plain string: short, no control characters.
std::string plain_string(const json& value, std::size_t max, const std::string& what, const std::string& field)
{
    const std::string s = value.get<std::string>();
    if (s.empty() || s.size() > max) refuse(what, field, "is empty or too long");
    for (unsigned char c : s)
        if (c < 0x20 || c == 0x7f) refuse(what, field, "holds a control character");
    return s;
}

// The string member KEY of object j, plain and at most max bytes.
std::string plain_member(const json& j, const char* key, std::size_t max, const std::string& what)
{
    const std::string field = fmt::format("\"{}\"", key);
    return plain_string(member(j, key, json::value_t::string, what, field), max, what, field);
}

std::uint64_t seed_member(const json& j, const std::string& what)
{
    return member(j, "seed", json::value_t::number_unsigned, what, "\"seed\"").get<std::uint64_t>();
}

// A relative path with no ".." part and no empty part.
bool relative_inside(const std::string& path)
{
    if (path.front() == '/') return false;
    for (std::size_t start = 0; start <= path.size();) {
        const std::size_t slash = std::min(path.find('/', start), path.size());
        const std::string part = path.substr(start, slash - start);
        if (part.empty() || part == "..") return false;
        start = slash + 1;
    }
    return true;
}

std::map<std::string, long> read_sizes(const json& j, const std::string& what)
{
    std::map<std::string, long> out;
    for (const auto& [key, size] : member(j, "sizes", json::value_t::object, what, "\"sizes\"").items()) {
        const std::string field = fmt::format("\"sizes\".\"{}\"", excerpt(key, 32));
        if (!size.is_number_integer()) refuse(what, field, "is not a whole number");
        const auto wide = size.is_number_unsigned() ? static_cast<double>(size.get<std::uint64_t>()) : static_cast<double>(size.get<std::int64_t>());
        if (wide < 0 || wide > static_cast<double>(std::numeric_limits<int>::max())) refuse(what, field, "is out of range");
        out[key] = size.get<long>();
    }
    return out;
}

void read_inputs(const json& inputs, const std::string& what, ExerciseFile& out)
{
    if (inputs.size() > 64) refuse(what, "\"inputs\"", "has more than 64 entries");
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const std::string at = fmt::format("\"inputs\"[{}]", i);
        if (!inputs[i].is_object()) refuse(what, at, "is not an object");
        const std::string name = plain_string(member(inputs[i], "name", json::value_t::string, what, at + ".\"name\""), 64, what, at + ".\"name\"");
        const std::string file = plain_string(member(inputs[i], "file", json::value_t::string, what, at + ".\"file\""), 256, what, at + ".\"file\"");
        if (!relative_inside(file)) throw InputError(fmt::format("{}: input file '{}' is not a path inside the folder", what, excerpt(file)));
        out.inputs.emplace_back(name, file);
    }
}

}  // namespace

ExerciseFile parse_exercise_file(const std::string& text, const std::string& what)
{
    const json j = parse_object(text, what);
    ExerciseFile out;
    out.name = plain_member(j, "name", 64, what);
    out.seed = seed_member(j, what);
    out.sizes = read_sizes(j, what);
    read_inputs(member(j, "inputs", json::value_t::array, what, "\"inputs\""), what, out);
    return out;
}

bool valid_student_id(std::string_view id)
{
    if (id.empty() || id.size() > 64 || id.front() == '.' || id.front() == '-') return false;
    for (unsigned char c : id)
        if (!std::isalnum(c) && std::strchr("._@+-", c) == nullptr) return false;
    return true;
}

std::string grading_file_text(const GradingFile& g)
{
    nlohmann::ordered_json j{{"exercise", g.exercise}, {"seed", g.seed}, {"sizes", g.sizes}, {"hidden_seeds", g.hidden_seeds}, {"run", g.run}};
    if (g.variants) j["variants"] = {{"secret", g.variants->secret}, {"fixed_sizes", g.variants->fixed}, {"students", g.variants->ids}};
    return j.dump(2) + "\n";
}

namespace {

// "variants": the secret, the sizes fixed for every student, the roster's ids.
Variants read_variants(const json& j, const std::string& what)
{
    Variants v;
    const std::string secret = plain_member(j, "secret", 32, what);
    if (secret.size() != 32 || secret.find_first_not_of("0123456789abcdef") != std::string::npos) refuse(what, "\"variants\".\"secret\"", "is not 32 hex digits");
    v.secret = secret;
    json sizes{{"sizes", member(j, "fixed_sizes", json::value_t::object, what, "\"variants\".\"fixed_sizes\"")}};
    v.fixed = read_sizes(sizes, what);
    const json& ids = member(j, "students", json::value_t::array, what, "\"variants\".\"students\"");
    if (ids.empty() || ids.size() > kMaxRoster) refuse(what, "\"variants\".\"students\"", "is empty or holds more than 50000");
    std::set<std::string> seen;
    for (const auto& id : ids) {
        if (!id.is_string() || !valid_student_id(id.get<std::string>())) refuse(what, "\"variants\".\"students\"", "holds something other than a student id");
        if (!seen.insert(id.get<std::string>()).second) refuse(what, "\"variants\".\"students\"", "holds a student twice");
        v.ids.push_back(id.get<std::string>());
    }
    return v;
}

}  // namespace

GradingFile parse_grading_file(const std::string& text, const std::string& what)
{
    const json j = parse_object(text, what, kMaxGradingFile);
    GradingFile out;
    out.exercise = plain_member(j, "exercise", 64, what);
    out.seed = seed_member(j, what);
    out.sizes = read_sizes(j, what);
    const json& seeds = member(j, "hidden_seeds", json::value_t::array, what, "\"hidden_seeds\"");
    if (seeds.size() > 100) refuse(what, "\"hidden_seeds\"", "has more than 100 entries");
    for (const auto& seed : seeds) {
        if (!seed.is_number_unsigned()) refuse(what, "\"hidden_seeds\"", "holds something other than a seed");
        out.hidden_seeds.push_back(seed.get<std::uint64_t>());
    }
    out.run = plain_member(j, "run", 1024, what);
    if (j.contains("variants")) out.variants = read_variants(member(j, "variants", json::value_t::object, what, "\"variants\""), what);
    return out;
}

std::map<std::string, double> parse_points(const std::string& text, const std::string& what)
{
    if (text.size() > (std::size_t{1} << 20) || json_nesting(text) > 8) throw InputError(fmt::format("{}: larger than 1 MiB or nested too deep", what));
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_object()) throw InputError(fmt::format("{}: not a JSON object of case name -> points", what));
    std::map<std::string, double> out;
    for (const auto& [name, value] : j.items()) {
        if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0) {
            throw InputError(fmt::format("{}: the points of \"{}\" are not a number >= 0", what, excerpt(name, 32)));
        }
        out[name] = value.get<double>();
    }
    return out;
}

}  // namespace attnlab

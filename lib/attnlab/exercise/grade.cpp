#include "attnlab/exercise/grade.hpp"

#include "attnlab/core/rng.hpp"
#include "attnlab/experiments/command_line.hpp"
#include "attnlab/io/files.hpp"
#include "attnlab/io/npy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sys/stat.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

namespace attnlab {

namespace fs = std::filesystem;

std::string verdict_text(CaseVerdict v, Lang lang)
{
    if (lang == Lang::en) return name_of(v);
    switch (v) {
    case CaseVerdict::match: return "正确（match）";
    case CaseVerdict::differs: return "不一致（differs）";
    case CaseVerdict::crash: return "程序出错（crash）";
    case CaseVerdict::timeout: return "超时（timeout）";
    case CaseVerdict::missing: return "没有答案（missing）";
    case CaseVerdict::unreadable: return "答案读不了（unreadable）";
    case CaseVerdict::wrong_shape: return "形状不对（wrong_shape）";
    case CaseVerdict::nan: return "有 NaN（nan）";
    }
    return name_of(v);
}

// --- the cases ---

std::uint64_t derived_hidden_seed(std::uint64_t seed, int i)
{
    Rng rng(seed, stream::hidden_cases);
    rng.advance(2 * static_cast<std::uint64_t>(i - 1));
    const std::uint64_t high = rng.next_u32();
    return (high << 32) | rng.next_u32();
}

namespace {

// The smallest sizes of the range that the exercise takes, raised together until it takes them.
std::optional<PreparedCase> smallest_case(const std::string& exercise, const ExerciseInfo& info, GradeCase c)
{
    for (long k = 0; k < 64; ++k) {
        for (const auto& [key, range] : info.size_range) c.sizes[key] = std::min(range.first + k, range.second);
        if (auto made = prepare_case(exercise, c)) return made;
    }
    return std::nullopt;
}

std::optional<PreparedCase> drawn_case(const std::string& exercise, const ExerciseInfo& info, GradeCase c,
                                       const std::map<std::string, long>& visible)
{
    Rng rng(c.seed, stream::hidden_cases);
    for (int attempt = 0; attempt < 500; ++attempt) {
        for (const auto& [key, range] : info.size_range)
            c.sizes[key] = range.first + static_cast<long>(rng.below(static_cast<std::uint32_t>(range.second - range.first + 1)));
        if (c.sizes == visible) continue;
        if (auto made = prepare_case(exercise, c)) return made;
    }
    return std::nullopt;
}

}  // namespace

std::optional<PreparedCase> prepare_case(const std::string& exercise, const GradeCase& c)
{
    try {
        return PreparedCase{c, make_exercise({exercise, c.sizes, c.seed, {}})};
    } catch (const InputError&) {
        return std::nullopt;  // sizes the exercise cannot hold together (dim not a multiple of heads, ...)
    }
}

std::vector<PreparedCase> grade_cases(const std::string& exercise, const GradeCase& visible, int hidden,
                                      const std::vector<std::uint64_t>& seeds)
{
    const ExerciseInfo& info = find_exercise(exercise);
    std::vector<PreparedCase> out;
    out.push_back({visible, make_exercise({exercise, visible.sizes, visible.seed, {}})});
    out.front().config.sizes.clear();
    for (const auto& key : info.sizes) out.front().config.sizes[key] = out.front().made.sizes.at(key);
    const std::map<std::string, long> shown = out.front().config.sizes;  // a copy: out grows
    for (int i = 1; i <= hidden; ++i) {
        GradeCase c{fmt::format("hidden-{}", i), true, seeds.empty() ? derived_hidden_seed(visible.seed, i) : seeds.at(i - 1), {}};
        std::optional<PreparedCase> made;
        if (i == 1) made = smallest_case(exercise, info, c);
        if (!made || made->config.sizes == shown) made = drawn_case(exercise, info, c, shown);
        if (!made) throw std::logic_error(fmt::format("exercise {}: no hidden case within its size_range", exercise));
        out.push_back(std::move(*made));
    }
    return out;
}

std::string case_command(const std::string& exercise, const GradeCase& c)
{
    std::vector<std::string> words{"exercise", "new", exercise, "DIR", "--seed", std::to_string(c.seed)};
    for (const auto& key : find_exercise(exercise).sizes) {
        words.push_back("--" + key);
        words.push_back(std::to_string(c.sizes.at(key)));
    }
    return command_text(words);
}

// --- points ---

std::vector<double> case_points(const std::vector<PreparedCase>& cases, const GradeSettings& s)
{
    for (const auto& [name, _] : s.points) {
        if (std::none_of(cases.begin(), cases.end(), [&](const PreparedCase& c) { return c.config.name == name; })) {
            throw InputError(fmt::format("--points: there is no case \"{}\"; the cases are visible and hidden-1 ... hidden-{}", excerpt(name, 32),
                                         cases.size() - 1));
        }
    }
    const double share = s.max_score > 0 ? s.max_score / static_cast<double>(cases.size()) : 1.0;
    std::vector<double> out;
    for (const auto& c : cases) {
        const auto it = s.points.find(c.config.name);
        out.push_back(it != s.points.end() ? it->second : share);
    }
    return out;
}

}  // namespace attnlab

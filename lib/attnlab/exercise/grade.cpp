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
#include <functional>
#include <set>
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

// The catalogued mistakes an exercise names at its default sizes: what `exercise list` shows.
std::set<std::string> named_mistakes(const std::string& exercise)
{
    std::set<std::string> ids;
    for (const auto& m : make_exercise({exercise, {}, 0, {}}).mistakes) ids.insert(m.id);
    return ids;
}

// No free points: a hidden case is one where every mistake the exercise names gives an answer
// other than the reference (at the smallest sizes, an interleaved RoPE is right for dim 2).
bool every_mistake_differs(const PreparedCase& c, const std::set<std::string>& named)
{
    std::set<std::string> here;
    for (const auto& m : c.made.mistakes) here.insert(m.id);
    return std::includes(here.begin(), here.end(), named.begin(), named.end());
}

// Every way to raise the sizes from the low ends of their ranges by `total` steps in all, in a
// fixed order (the first key raised least first).
void raisings(const std::vector<std::pair<std::string, std::pair<long, long>>>& ranges, std::size_t key, long total,
              std::map<std::string, long>& sizes, const std::function<bool(const std::map<std::string, long>&)>& visit, bool& done)
{
    if (done) return;
    const auto& [name, range] = ranges[key];
    if (key + 1 == ranges.size()) {
        if (range.first + total > range.second) return;
        sizes[name] = range.first + total;
        done = visit(sizes);
        return;
    }
    for (long step = 0; step <= total && range.first + step <= range.second && !done; ++step) {
        sizes[name] = range.first + step;
        raisings(ranges, key + 1, total - step, sizes, visit, done);
    }
}

// The smallest sizes (fewest steps above the low ends of the ranges) that the exercise takes
// and at which every named mistake differs; at most 4000 tried.
std::optional<PreparedCase> smallest_case(const std::string& exercise, const ExerciseInfo& info, GradeCase c, const std::set<std::string>& named)
{
    const std::vector<std::pair<std::string, std::pair<long, long>>> ranges(info.size_range.begin(), info.size_range.end());
    std::optional<PreparedCase> found;
    int tried = 0;
    bool done = false;
    const auto visit = [&](const std::map<std::string, long>& sizes) {
        c.sizes = sizes;
        auto made = prepare_case(exercise, c);
        if (made && every_mistake_differs(*made, named)) found = std::move(made);
        return found.has_value() || ++tried >= 4000;
    };
    std::map<std::string, long> sizes;
    for (long total = 0; total < 64 && !done; ++total) raisings(ranges, 0, total, sizes, visit, done);
    return found;
}

// Sizes drawn from the case's seed (those in FIXED kept), other than NOT_THESE, where the
// exercise holds and every named mistake differs; at most 500 draws.
std::optional<PreparedCase> draw_sizes(const std::string& exercise, const ExerciseInfo& info, GradeCase c, const std::map<std::string, long>& fixed,
                                       const std::map<std::string, long>& not_these, const std::set<std::string>& named)
{
    Rng rng(c.seed, stream::hidden_cases);
    for (const auto& [key, size] : fixed) c.sizes[key] = size;
    for (int attempt = 0; attempt < 500; ++attempt) {
        for (const auto& [key, range] : info.size_range) {
            const auto given = fixed.find(key);
            c.sizes[key] = given != fixed.end() ? given->second
                                                : range.first + static_cast<long>(rng.below(static_cast<std::uint32_t>(range.second - range.first + 1)));
        }
        if (c.sizes == not_these) continue;
        auto made = prepare_case(exercise, c);
        if (made && every_mistake_differs(*made, named)) return made;
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

std::optional<PreparedCase> drawn_case(const std::string& exercise, const GradeCase& c, const std::map<std::string, long>& fixed)
{
    return draw_sizes(exercise, find_exercise(exercise), c, fixed, {}, named_mistakes(exercise));
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
    const std::set<std::string> named = hidden > 0 ? named_mistakes(exercise) : std::set<std::string>{};
    for (int i = 1; i <= hidden; ++i) {
        GradeCase c{fmt::format("hidden-{}", i), true, seeds.empty() ? derived_hidden_seed(visible.seed, i) : seeds.at(i - 1), {}};
        std::optional<PreparedCase> made;
        if (i == 1) made = smallest_case(exercise, info, c, named);
        if (!made || made->config.sizes == shown) made = draw_sizes(exercise, info, c, {}, shown, named);
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
    std::vector<GradeCase> configs;
    for (const auto& c : cases) configs.push_back(c.config);
    return case_points(configs, s);
}

std::vector<double> case_points(const std::vector<GradeCase>& cases, const GradeSettings& s)
{
    for (const auto& [name, _] : s.points) {
        if (std::none_of(cases.begin(), cases.end(), [&](const GradeCase& c) { return c.name == name; })) {
            throw InputError(fmt::format("--points: there is no case \"{}\"; the cases are visible and hidden-1 ... hidden-{}", excerpt(name, 32),
                                         cases.size() - 1));
        }
    }
    const double share = s.max_score > 0 ? s.max_score / static_cast<double>(cases.size()) : 1.0;
    std::vector<double> out;
    for (const auto& c : cases) {
        const auto it = s.points.find(c.name);
        out.push_back(it != s.points.end() ? it->second : share);
    }
    return out;
}

}  // namespace attnlab

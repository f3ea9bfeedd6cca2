// libFuzzer harness for exercise.json as exercise solve reads it: every input is accepted as
// an exercise file whose input paths are relative with no ".." part, or refused with an
// InputError; nothing else (no crash, no other exception, no unbounded recursion). The same
// bytes go to exercise grade's readers of the teacher's files: DIR.grading.json and --points.
#include "attnlab/core/report.hpp"
#include "attnlab/exercise/exercise_file.hpp"

#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const attnlab::ExerciseFile file = attnlab::parse_exercise_file(text, "fuzz");
        for (const auto& [name, path] : file.inputs) {
            if (name.empty() || path.empty() || path[0] == '/') std::abort();
            for (std::size_t start = 0; start <= path.size();) {  // no part of the path is ".." or empty
                const std::size_t slash = std::min(path.find('/', start), path.size());
                if (slash == start || path.compare(start, slash - start, "..") == 0) std::abort();
                start = slash + 1;
            }
        }
    } catch (const attnlab::InputError&) {
    }
    try {
        const attnlab::GradingFile g = attnlab::parse_grading_file(text, "fuzz");
        if (g.exercise.empty() || g.run.empty() || g.hidden_seeds.size() > 100) std::abort();
    } catch (const attnlab::InputError&) {
    }
    try {
        for (const auto& [name, points] : attnlab::parse_points(text, "fuzz"))
            if (!(points >= 0)) std::abort();
    } catch (const attnlab::InputError&) {
    }
    return 0;
}

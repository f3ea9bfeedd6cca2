// attnlab exercise: ready-made, self-grading exercises (list, new, solve).
#include "commands.hpp"
#include "common.hpp"

#include "attnlab/core/params_json.hpp"
#include "attnlab/exercise/exercise.hpp"
#include "attnlab/exercise/exercise_file.hpp"
#include "attnlab/exercise/platform.hpp"
#include "attnlab/exercise/gradebook.hpp"
#include "attnlab/exercise/roster.hpp"
#include "attnlab/experiments/experiment.hpp"
#include "attnlab/registry/registry.hpp"
#include "attnlab/io/files.hpp"
#include "attnlab/io/read.hpp"

#include <fmt/format.h>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

namespace attnlab::app {

namespace {

namespace fs = std::filesystem;

struct ExerciseTexts {
    std::string readme, starter, check, json;
};

struct ExerciseOpts {
    std::string name;
    std::string dir;
    std::optional<Lang> lang;
    Format format = Format::text;
    std::uint64_t seed = 0;
    std::map<std::string, long> sizes;
    bool force = false;
    bool hidden_seeds = false;
    std::string mistake;
    std::optional<Platform> platform;
    std::string roster, roster_column;  // --roster FILE, --roster-column NAME
};

// --- the reference command's options ---

// Every option of the reference command, defaults included, as the report's params name and
// hold them (max_len, resolved), then the seed and dtype it runs at.
nlohmann::ordered_json reference_params(const std::vector<std::string>& command)
{
    const auto invocation = registered(command.front()).invoke();
    CLI::App scratch;
    bind_options(scratch, *invocation);
    std::uint64_t seed = 0;
    std::string dtype = name_of(DType::float32);
    scratch.add_option("--seed", seed);
    scratch.add_option("--dtype", dtype);
    std::vector<std::string> inputs;  // the exercise's given tensors, not parameters
    scratch.add_option("--input", inputs);
    std::vector<std::string> reversed(command.rbegin(), command.rend() - 1);  // as CLI11 takes them
    scratch.parse(reversed);
    nlohmann::ordered_json params = params_json(invocation->params());
    params["seed"] = seed;
    params["dtype"] = dtype;
    return params;
}

// --- files ---

// DIR is missing or empty, or --force allows writing into it; what can be checked before any
// work is.
bool fresh_dir(const fs::path& dir, bool force)
{
    std::error_code ec;
    const bool exists = fs::exists(dir, ec);
    if (exists && !fs::is_directory(dir, ec)) throw InputError(fmt::format("{} exists and is not a directory", dir.string()));
    const bool empty = !exists || fs::is_empty(dir, ec);
    if (!empty && !force) throw InputError(fmt::format("{} exists and is not empty; give --force to write into it", dir.string()));
    check_output_folder(dir.string(), "exercise new");
    return empty;
}

void write_exercise_files(const MadeExercise& m, const OutputFolder& root, const ExerciseTexts& texts)
{
    const OutputFolder inputs = root.subfolder("inputs");
    for (const auto& in : m.inputs) inputs.write(fs::path(in.file).filename().string(), npy_file_bytes(in.tensor));
    inputs.write("params.json", exercise_params_text(m));
    root.write("README.md", texts.readme);
    root.write("starter.py", texts.starter);
    root.write("exercise.json", texts.json);
    root.write("check.sh", texts.check, 0755);
}

// The folder whole or not at all: a new one is built beside DIR and renamed into place after
// the line saying so is written (a failed stdout leaves nothing); with --force into a folder
// that holds other files, each file is replaced whole.
void write_exercise(const MadeExercise& m, const fs::path& dir, Lang lang, bool fresh, const std::string& message)
{
    const ExerciseTexts texts{exercise_readme(m, lang), exercise_starter(m, lang), exercise_check_script(m, lang),
                              exercise_json(m, reference_params(m.command), lang).dump(2) + "\n"};
    if (!fresh) {
        write_exercise_files(m, OutputFolder(dir.string(), "exercise new", false), texts);
        write_stdout(message);
        return;
    }
    NewFolder folder(dir.string(), "exercise new");
    write_exercise_files(m, folder.root(), texts);
    write_stdout(message);
    folder.commit();
}

// exercise.json of DIR: a regular file (not a link) of at most 1 MiB, checked against its
// schema (exercise/exercise_file.hpp) before anything of it is used.
ExerciseFile read_exercise_file(const fs::path& dir)
{
    const fs::path path = dir / "exercise.json";
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(path, ec))) {
        throw InputError(fmt::format("{}: cannot read it; make the exercise first with attnlab exercise new", path.string()));
    }
    const auto text = OutputFolder(dir.string(), "exercise solve", false).read_small("exercise.json", kMaxExerciseFile);
    if (!text) throw InputError(fmt::format("{}: not a regular file of at most 1 MiB; make the exercise with attnlab exercise new", path.string()));
    return parse_exercise_file(*text, path.string());
}

// An input's file (relative, with no ".." part: parse_exercise_file saw to that) resolved
// with its links, which must keep it inside DIR.
fs::path input_path(const fs::path& dir, const std::string& file)
{
    std::error_code ec;
    const fs::path root = fs::canonical(dir, ec), resolved = fs::weakly_canonical(dir / file, ec);
    const auto [end, _] = std::mismatch(root.begin(), root.end(), resolved.begin(), resolved.end());
    if (ec || end != root.end()) {
        throw InputError(fmt::format("{}/exercise.json: input file '{}' is not a path inside the folder", dir.string(), excerpt(file)));
    }
    return resolved;
}

// The request that rebuilds the exercise of DIR, its inputs read back from DIR/inputs.
ExerciseRequest request_from(const std::string& name, const fs::path& dir)
{
    const ExerciseFile file = read_exercise_file(dir);
    if (file.name != name) throw InputError(fmt::format("{} holds exercise '{}', not {}", dir.string(), excerpt(file.name), name));
    const ExerciseInfo& info = find_exercise(name);
    ExerciseRequest req;
    req.name = name;
    req.seed = file.seed;
    for (const auto& key : info.sizes) {
        const auto size = file.sizes.find(key);
        if (size == file.sizes.end()) throw InputError(fmt::format("{}/exercise.json has no size {}", dir.string(), key));
        req.sizes[key] = size->second;
    }
    for (const auto& [in_name, in_file] : file.inputs) req.inputs[in_name] = read_tensor_file(input_path(dir, in_file).string(), "", 1e9);
    return req;
}

// --- the three subcommands ---

// "len 16 (1..32)": each size the exercise takes, its default and the range grading draws from.
std::vector<std::string> size_words(const ExerciseInfo& e)
{
    std::vector<std::string> out;
    for (const auto& key : e.sizes) {
        const auto& [lo, hi] = e.size_range.at(key);
        out.push_back(fmt::format("{} {} ({}..{})", key, e.defaults.at(key), lo, hi));
    }
    return out;
}

// The catalogued mistakes its check names at the default sizes.
std::vector<std::string> mistake_ids(const ExerciseInfo& e)
{
    std::vector<std::string> out;
    for (const auto& m : make_exercise({e.name, {}, 0, {}}).mistakes) out.push_back(m.id);
    return out;
}

std::string list_csv(Lang lang)
{
    std::string out = "name,subcommand,sizes,mistakes,title\n";
    for (const auto& e : exercise_list())
        out += fmt::format("{},{},{},{},{}\n", e.name, e.subcommand, csv_cell(fmt::format("{}", fmt::join(size_words(e), "; "))),
                           fmt::format("{}", fmt::join(mistake_ids(e), " ")), csv_cell(e.title(lang)));
    return out;
}

nlohmann::ordered_json list_json(Lang lang)
{
    nlohmann::ordered_json j;
    j["exercises"] = nlohmann::ordered_json::array();
    for (const auto& e : exercise_list()) {
        nlohmann::ordered_json sizes = nlohmann::ordered_json::object();
        for (const auto& key : e.sizes) sizes[key] = {{"default", e.defaults.at(key)}, {"min", e.size_range.at(key).first}, {"max", e.size_range.at(key).second}};
        j["exercises"].push_back({{"name", e.name}, {"title", e.title(lang)}, {"subcommand", e.subcommand}, {"sizes", sizes}, {"mistakes", mistake_ids(e)}});
    }
    return j;
}

void run_list(const ExerciseOpts& o)
{
    const Lang lang = o.lang.value_or(lang_from_env());
    if (o.format == Format::json) return write_stdout(list_json(lang).dump(2) + "\n");
    if (o.format == Format::csv) return write_stdout(list_csv(lang));
    std::size_t name_width = 0, command_width = 0;  // the columns fit the longest entries
    for (const auto& e : exercise_list()) name_width = std::max(name_width, e.name.size()), command_width = std::max(command_width, e.subcommand.size());
    const bool zh = lang == Lang::zh;
    std::string out;
    for (const auto& e : exercise_list()) {
        out += fmt::format("{:<{}} {:<{}} {}\n", e.name, name_width + 1, e.subcommand, command_width + 1, e.title(lang));
        out += fmt::format("{:<{}} {}{}\n", "", name_width + 1, zh ? "尺寸（默认值，评分范围）：" : "sizes (default, grading range): ", fmt::join(size_words(e), ", "));
        out += fmt::format("{:<{}} {}{}\n", "", name_width + 1, zh ? "能认出的错误：" : "mistakes it names: ", fmt::join(mistake_ids(e), ", "));
    }
    write_stdout(out);
}

// DIR.grading.json, beside DIR (never inside it, where the class would see it).
fs::path grading_path(const std::string& dir)
{
    const fs::path p = named_folder(dir);
    return p.parent_path() / (p.filename().string() + ".grading.json");
}

// Seeds nobody can work out from the folder: from the system's random source.
std::vector<std::uint64_t> secret_seeds(std::size_t n)
{
    std::random_device source;
    std::vector<std::uint64_t> out;
    for (std::size_t i = 0; i < n; ++i) out.push_back((std::uint64_t{source()} << 32) | source());
    return out;
}

// The platform's bundle beside DIR: DIR.autograder.zip (Gradescope) or DIR.prairielearn/
// (PrairieLearn's tests/ and info.json), with this program in it.
std::string write_bundle(Platform platform, const std::string& exercise, const std::string& grading, const std::string& dir, bool zh)
{
    const auto program = read_input_file("/proc/self/exe", [](std::string_view) { return ReadLimit{std::size_t{1} << 30, "the program"}; });
    const auto files = platform_bundle(platform, exercise, grading, std::string(program.begin(), program.end()));
    const fs::path p = named_folder(dir);
    if (platform == Platform::gradescope) {
        const std::string zip = (p.parent_path() / (p.filename().string() + ".autograder.zip")).string();
        write_file_atomic(zip, zip_archive(files), "exercise new --platform");
        return fmt::format(zh ? "Gradescope 的自动评分包：{}（上传为 autograder.zip）\n" : "Gradescope's autograder: {} (upload it as autograder.zip)\n", zip);
    }
    const std::string folder = (p.parent_path() / (p.filename().string() + ".prairielearn")).string();
    NewFolder made(folder, "exercise new --platform");
    const OutputFolder tests = made.root().subfolder("tests");
    for (const auto& f : files) {
        const bool in_tests = f.name.rfind("tests/", 0) == 0;
        (in_tests ? tests : made.root()).write(in_tests ? f.name.substr(6) : f.name, f.bytes, f.executable ? 0755 : 0644);
    }
    made.commit();
    return fmt::format(zh ? "PrairieLearn 的外部评分文件：{}（tests/ 放进题目文件夹，info.json 里是 externalGradingOptions）\n"
                          : "PrairieLearn's external grader: {} (tests/ goes into the question's folder; info.json holds its externalGradingOptions)\n",
                       folder);
}

std::string grading_message(const fs::path& file, const std::string& exercise, bool zh)
{
    return fmt::format(zh ? "隐藏用例的种子只保存在 {}（给老师，不要发给学生）：attnlab exercise grade {} SUBMISSION... --grading {}\n"
                          : "the hidden cases' seeds are only in {} (yours, not the class's): attnlab exercise grade {} SUBMISSION... --grading {}\n",
                       file.string(), exercise, file.string());
}

// --roster: DIR/<id>/ for every student, each an exercise of its own seed and sizes, written
// whole or not at all; the secret they come from, and the roster, in DIR.grading.json.
void run_new_roster(const ExerciseOpts& o, Lang lang)
{
    if (o.seed != 0) throw InputError("--roster draws each student's seed from the grading file's secret; give it without --seed");
    if (o.platform) throw InputError("--platform grades one exercise for the whole class; with --roster, grade with exercise grade --grading");
    const auto bytes = read_input_file(o.roster, [](std::string_view) { return ReadLimit{std::size_t{16} << 20, "a roster of at most 16 MiB"}; });
    const auto rows = parse_roster(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), o.roster, {o.roster_column, ""});
    const bool fresh = fresh_dir(o.dir, o.force);
    if (!fresh) throw InputError(fmt::format("{} is not empty: --roster writes a folder for each student into a new or empty DIR", o.dir));
    Variants v{new_secret(), o.sizes, {}};
    for (const auto& row : rows) v.ids.push_back(row.id);
    NewFolder folder(o.dir, "exercise new");
    std::set<std::string> answers;  // an exercise whose answer depends on its sizes alone has fewer than the class
    for (const auto& id : v.ids) {
        const GradeCase c = student_case(o.name, v, id);
        const MadeExercise m = make_exercise({o.name, c.sizes, c.seed, {}});
        answers.insert(fnv1a64_hex(npy_file_bytes(m.answer)));
        write_exercise_files(m, folder.root().subfolder(id),
                             {exercise_readme(m, lang), exercise_starter(m, lang), exercise_check_script(m, lang),
                              exercise_json(m, reference_params(m.command), lang).dump(2) + "\n"});
    }
    const fs::path file = grading_path(o.dir);
    write_file_atomic(file.string(), grading_file_text({o.name, 0, o.sizes, {}, kExerciseRun, v}), "exercise new");
    const bool zh = lang == Lang::zh;
    write_stdout(fmt::format(zh ? "已写入 {}：练习 {}（{}），{} 名学生各一个文件夹（{}/学号/），各有自己的种子和尺寸。\n"
                                : "wrote {}: exercise {} ({}), a folder for each of {} students ({}/ID/), each with a seed and sizes of its own.\n",
                             o.dir, o.name, find_exercise(o.name).title(lang), v.ids.size(), o.dir) +
                 fmt::format(zh ? "{} 个不同的参考答案{}\n" : "{} different reference answers{}\n", answers.size(),
                             answers.size() == v.ids.size() ? "" : zh ? "：这个练习的答案只取决于尺寸，尺寸相同的学生答案相同" : ": this exercise's answer depends on its sizes alone, and students of the same sizes share it") +
                 grading_message(file, o.name, zh));
    folder.commit();
}

void run_new(const ExerciseOpts& o)
{
    const Lang lang = o.lang.value_or(lang_from_env());
    find_exercise(o.name);
    if (!o.roster.empty()) return run_new_roster(o, lang);
    if (!o.roster_column.empty()) throw InputError("--roster-column names a column of --roster FILE; give the roster");
    const bool fresh = fresh_dir(o.dir, o.force);
    const MadeExercise m = make_exercise({o.name, o.sizes, o.seed, {}});
    const bool zh = lang == Lang::zh;
    std::string message = fmt::format(zh ? "已写入 {}：练习 {}（{}）。\n接下来：cd {} && python3 starter.py && ./check.sh\n"
                                         : "wrote {}: exercise {} ({}).\nnext: cd {} && python3 starter.py && ./check.sh\n",
                                      o.dir, m.info.name, m.info.title(lang), o.dir);
    if (o.hidden_seeds || o.platform) {
        const fs::path file = grading_path(o.dir);
        GradingFile g{m.info.name, m.seed, {}, secret_seeds(kKeptHiddenSeeds), kExerciseRun, std::nullopt};
        for (const auto& key : m.info.sizes) g.sizes[key] = m.sizes.at(key);
        write_file_atomic(file.string(), grading_file_text(g), "exercise new");
        if (o.platform) message += write_bundle(*o.platform, m.info.name, grading_file_text(g), o.dir, zh);
        message += grading_message(file, m.info.name, zh);
    }
    write_exercise(m, o.dir, lang, fresh, message);
}

void run_solve(const ExerciseOpts& o)
{
    const MadeExercise m = make_exercise(request_from(o.name, o.dir));
    const bool zh = o.lang.value_or(lang_from_env()) == Lang::zh;
    const Tensor* answer = &m.answer;
    std::string what = fmt::format(zh ? "参考答案 {} [{}]" : "the reference answer, {} [{}]", m.answer_tensor, fmt::join(m.answer.shape, ", "));
    if (!o.mistake.empty()) {
        answer = nullptr;
        std::vector<std::string> ids;
        for (const auto& mistake : m.mistakes) {
            ids.push_back(mistake.id);
            if (mistake.id == o.mistake) {
                answer = &mistake.answer;
                what = fmt::format(zh ? "错误 {} 的答案：{}" : "the wrong answer of mistake {}: {}", mistake.id, zh ? mistake.zh : mistake.en);
            }
        }
        if (answer == nullptr) throw InputError(fmt::format("exercise {} has no mistake '{}'; it has {}", m.info.name, o.mistake, fmt::join(ids, ", ")));
    }
    // the student's own answer file stays: the solution goes to DIR/solution/ unless --force
    const fs::path path = o.force ? fs::path(o.dir) / m.answer_file : fs::path(o.dir) / "solution" / m.answer_file;
    const OutputFolder dir(o.dir, "exercise solve", false);
    if (o.force) dir.write(m.answer_file, npy_file_bytes(*answer));
    else dir.subfolder("solution").write(m.answer_file, npy_file_bytes(*answer));
    write_stdout(fmt::format(zh ? "已写入 {}：{}\n" : "wrote {}: {}\n", path.string(), what));
}

void add_sizes(CLI::App& sub, ExerciseOpts& o)
{
    for (const char* key : {"len", "dim", "heads", "batch"}) {
        sub.add_option_function<long>(
               std::string("--") + key, [&o, key](long v) { o.sizes[key] = v; }, "Size of the exercise (exercise list: which it takes)")
            ->check(whole_number);
    }
}

}  // namespace

void setup_exercise(CLI::App& app, Runners& runners)
{
    auto opts = std::make_shared<ExerciseOpts>();
    auto* ex = app.add_subcommand("exercise", "Ready-made, self-grading exercises: list them, make one in a folder, solve one");
    ex->require_subcommand(1);
    auto* list = ex->add_subcommand("list", "Each exercise's name, the subcommand that checks it, and its title");
    add_enum_option(*list, "--format", opts->format, "Output format: text, csv or json");
    add_optional_enum(*list, "--lang", opts->lang, "Language of the titles, en or zh (default: from the locale)");
    runners.emplace_back(list, [opts] { return run_list(*opts), 0; });

    auto* made = ex->add_subcommand("new", "Write DIR: README.md (the task), inputs/*.npy, starter.py, check.sh, exercise.json");
    made->add_option("NAME", opts->name, "Exercise name (attnlab exercise list)")->required();
    made->add_option("DIR", opts->dir, "Folder to create (refused when it exists and is not empty)")->required()->check(non_empty_path);
    add_optional_enum(*made, "--lang", opts->lang, "Language of the task, en or zh (default: from the locale)");
    made->add_option("--seed", opts->seed, "Seed of the inputs")->check(seed_number);
    add_sizes(*made, *opts);
    made->add_flag("--force", opts->force, "Write into DIR even when it is not empty");
    made->add_flag("--hidden-seeds", opts->hidden_seeds,
                   "Keep the seeds of the hidden cases of grading in DIR.grading.json, beside DIR (for exercise grade --grading)");
    add_optional_enum(*made, "--platform", opts->platform,
                      "Also write the bundle a platform grades with, beside DIR: gradescope (DIR.autograder.zip) or prairielearn (DIR.prairielearn/); "
                      "implies --hidden-seeds");
    made->add_option("--roster", opts->roster,
                     "CSV file, one student a row: write DIR/ID/ for each, with a seed and sizes of its own (those given with --len ... are kept), "
                     "and the secret they come from in DIR.grading.json")
        ->check(non_empty_path);
    made->add_option("--roster-column", opts->roster_column, "The column of --roster that holds the ids, named by its first row (default: the first column, no header)");
    runners.emplace_back(made, [opts] { return run_new(*opts), 0; });

    auto* solve = ex->add_subcommand("solve", "For teachers: write the reference answer (or a catalogued mistake) into DIR/solution/");
    solve->add_option("NAME", opts->name, "Exercise name")->required();
    solve->add_option("DIR", opts->dir, "The exercise's folder (made by exercise new)")->required()->check(non_empty_path);
    solve->add_flag("--force", opts->force, "Write the answer into DIR itself, over the student's (default: DIR/solution/)");
    solve->add_option("--mistake", opts->mistake, "Write the wrong answer of this catalogued mistake (its README lists them)");
    add_optional_enum(*solve, "--lang", opts->lang, "Language of the line it prints, en or zh (default: from the locale)");
    runners.emplace_back(solve, [opts] { return run_solve(*opts), 0; });
    setup_grade(*ex, runners);
    setup_merge(*ex, runners);
    ex->footer("Example:\n  attnlab exercise new attention hw1 --lang en\n  cd hw1 && python3 starter.py && ./check.sh\n"
               "  attnlab exercise solve attention hw1 --mistake no_scale && hw1/check.sh hw1/solution/answer.npy");
}

}  // namespace attnlab::app

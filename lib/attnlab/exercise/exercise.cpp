#include "attnlab/exercise/exercise.hpp"

#include "attnlab/exercise/catalogue.hpp"
#include "attnlab/experiments/command_line.hpp"

#include <fmt/args.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace attnlab {

using exercise_detail::exercise_def;
using exercise_detail::exercise_defs;
using exercise_detail::ExerciseText;

namespace {

// Sizes an exercise takes, and how large each may be: the files stay small enough to read.
struct SizeRule {
    const char* key;
    const char* flag;
    long lo, hi;
};
constexpr SizeRule kSizeRules[] = {{"len", "--len", 1, 1024}, {"dim", "--dim", 1, 1024}, {"heads", "--heads", 1, 64}, {"batch", "--batch", 1, 64}};

const SizeRule& size_rule(const std::string& key)
{
    for (const auto& r : kSizeRules)
        if (key == r.key) return r;
    throw InputError(fmt::format("exercise sizes are --len, --dim, --heads and --batch; not '{}'", key));
}

std::map<std::string, long> resolve_sizes(const ExerciseInfo& info, const std::map<std::string, long>& given)
{
    std::map<std::string, long> sizes = info.defaults;
    for (const auto& [key, value] : given) {
        const SizeRule& rule = size_rule(key);
        if (std::find(info.sizes.begin(), info.sizes.end(), key) == info.sizes.end()) {
            std::vector<std::string> flags;
            for (const auto& k : info.sizes) flags.push_back(std::string("--") + k);
            throw InputError(fmt::format("exercise {} takes {}; not {}", info.name, fmt::join(flags, ", "), rule.flag));
        }
        if (value < rule.lo || value > rule.hi) {
            throw InputError(fmt::format("exercise {}: {} {} is outside {}..{}", info.name, rule.flag, value, rule.lo, rule.hi));
        }
        sizes[key] = value;
    }
    return sizes;
}

// The task's text with its sizes in place of {len}, {dim}, ..., and whatever else the
// exercise's builder recorded in its sizes ({max_len}, {buckets}, ...); a size the exercise
// does not take reads 0.
std::string with_sizes(const std::string& text, const MadeExercise& m)
{
    std::map<std::string, long> all{{"len", 0}, {"dim", 0}, {"heads", 0}, {"batch", 0}, {"max_len", 0}};
    for (const auto& [key, value] : m.sizes) all[key] = value;
    all["head_dim"] = all["heads"] > 0 ? all["dim"] / all["heads"] : 0L;
    fmt::dynamic_format_arg_store<fmt::format_context> args;
    for (const auto& [key, value] : all) args.push_back(fmt::arg(key.c_str(), value));
    return fmt::vformat(text, args);
}


std::string dtype_text(const Tensor& t) { return t.elem == Elem::boolean ? "bool" : t.elem == Elem::index ? "int64" : "float64"; }

// check.sh's command line, "attnlab" and all, quoted for the shell.
std::string check_command(const MadeExercise& m, Lang lang)
{
    std::vector<std::string> words = m.command;
    for (const char* w : {"--quiet", "--lang"}) words.emplace_back(w);
    words.emplace_back(lang == Lang::zh ? "zh" : "en");
    words.emplace_back("--against-tensor");
    words.push_back(m.answer_tensor);
    words.emplace_back("--judged-at");  // as exercise grade judges it
    words.emplace_back(name_of(m.info.judged_at));
    return command_text(words);
}

}  // namespace

const std::vector<ExerciseInfo>& exercise_list()
{
    static const std::vector<ExerciseInfo> list = [] {
        std::vector<ExerciseInfo> out;
        for (const auto& d : exercise_defs()) out.push_back(d.info);
        return out;
    }();
    return list;
}

const ExerciseInfo& find_exercise(const std::string& name) { return exercise_def(name).info; }

MadeExercise make_exercise(const ExerciseRequest& request)
{
    const auto& def = exercise_def(request.name);
    MadeExercise m;
    m.info = def.info;
    m.sizes = resolve_sizes(def.info, request.sizes);
    m.seed = request.seed;
    def.build(m, request.inputs);
    return m;
}

std::string exercise_readme(const MadeExercise& m, Lang lang)
{
    const ExerciseText& t = exercise_def(m.info.name).text;
    const bool zh = lang == Lang::zh;
    std::string out = fmt::format(zh ? "# 练习：{}\n\n" : "# Exercise: {}\n\n", m.info.title(lang));
    out += with_sizes(zh ? t.task_zh : t.task_en, m) + "\n\n";
    out += zh ? "## 你拿到的\n\n" : "## What you get\n\n";
    for (const auto& in : m.inputs)
        out += fmt::format(zh ? "- `{}`：{}，形状 {}（{}），{}\n" : "- `{}`: {}, shape {} ({}), {}\n", in.file, in.name,
                           shape_text(in.tensor.shape), fmt::join(in.tensor.axes, ", "), dtype_text(in.tensor));
    out += zh ? "- `inputs/params.json`：本例的各个尺寸（starter.py 从这里读取，不写成常数：评分时的隐藏用例用别的尺寸）。\n"
              : "- `inputs/params.json`: this case's sizes (starter.py reads them from there, never as constants: the hidden "
                "cases of grading have other sizes).\n";
    out += zh ? "- `starter.py`：只用 numpy，可直接运行。它读入输入，留出一个待你填写的函数，并把答案保存到 `answer.npy`。\n"
              : "- `starter.py`: numpy only, runnable as it is. It loads the inputs, holds the function you fill in, and "
                "saves the answer to `answer.npy`.\n";
    out += zh ? "- `check.sh`：检查你的答案。\n- `exercise.json`：给评分脚本用的同样信息。\n\n"
              : "- `check.sh`: checks your answer.\n- `exercise.json`: the same facts, for grading scripts.\n\n";
    out += zh ? "## 你要写的\n\n" : "## What you write\n\n";
    out += fmt::format(zh ? "`{}`：{}，形状 {}（{}），{}（float32 也可以）。\n\n" : "`{}`: {}, shape {} ({}), {} (float32 will do too).\n\n",
                       m.answer_file, m.answer_tensor, shape_text(m.answer.shape), fmt::join(m.answer.axes, ", "), dtype_text(m.answer));
    out += zh ? "## 检查\n\n" : "## Check it\n\n";
    out += fmt::format("```sh\npython3 starter.py\n./check.sh            # {}\n```\n\n",
                       zh ? "或 ./check.sh path/to/answer.npy" : "or ./check.sh path/to/answer.npy");
    out += zh ? "`check.sh` 需要 `attnlab` 在 PATH 上。退出码 0：正确；1：不正确，并给出哪里不同，若是已知错误则说出是哪一个；"
                "2：答案文件或 attnlab 找不到，或答案读不了。它运行的是：\n\n"
              : "`check.sh` needs `attnlab` on the PATH. Exit status 0: right; 1: wrong, with where it differs and, when "
                "it is a known mistake, which one; 2: the answer file or attnlab is missing, or the answer cannot be "
                "read. It runs:\n\n";
    out += fmt::format("```sh\n{} --against answer.npy\n```\n\n", check_command(m, lang));
    out += zh ? "## 检查能认出的错误\n\n" : "## Mistakes the check recognises\n\n";
    for (const auto& mistake : m.mistakes) out += fmt::format("- `{}`: {}\n", mistake.id, zh ? mistake.zh : mistake.en);
    if (m.mistakes.empty()) out += zh ? "- （没有登记的错误；检查会指出第一个不同的元素）\n" : "- (none catalogued; the check points at the first element that differs)\n";
    return out;
}

std::string exercise_starter(const MadeExercise& m, Lang lang)
{
    const ExerciseText& t = exercise_def(m.info.name).text;
    const bool zh = lang == Lang::zh;
    std::string out = "#!/usr/bin/env python3\n";
    out += fmt::format("\"\"\"attnlab exercise '{}': {}.\n\n{}\n\"\"\"\n", m.info.name, m.info.title(lang),
                       zh ? "填写下面的函数，运行本文件（python3 starter.py），然后运行 ./check.sh。"
                          : "Fill in the function below, run this file (python3 starter.py), then ./check.sh.");
    out += "import json\nimport os\n\nimport numpy as np\n\nHERE = os.path.dirname(os.path.abspath(__file__))\n\n";
    if (!t.constants.empty()) {
        out += fmt::format("with open(os.path.join(HERE, \"inputs\", \"params.json\")) as f:\n    SIZES = json.load(f)  # {}\n",
                           zh ? "本例的尺寸；评分时的隐藏用例用别的尺寸" : "this case's sizes; the hidden cases of grading have others");
    }
    for (const auto& [name, key] : t.constants) out += fmt::format("{} = SIZES[\"{}\"]\n", name, key);
    for (const auto& in : m.inputs)
        out += fmt::format("{} = np.load(os.path.join(HERE, \"inputs\", \"{}.npy\"))  # {} ({})\n", in.name, in.name,
                           shape_text(in.tensor.shape), fmt::join(in.tensor.axes, ", "));
    out += fmt::format("\n\n{}\n    \"\"\"{}\n    \"\"\"\n", t.signature, with_sizes(zh ? t.doc_zh : t.doc_en, m));
    out += fmt::format("    # {}\n", zh ? "--- 你的代码：开始 ---" : "--- your code: start ---");
    out += fmt::format("    {}\n", t.stub);
    out += fmt::format("    # {}\n", zh ? "--- 你的代码：结束 ---" : "--- your code: end ---");
    out += fmt::format("\n\nif __name__ == \"__main__\":\n    answer = np.asarray({})\n", t.call);
    out += fmt::format("    np.save(os.path.join(HERE, \"{}\"), answer)\n", m.answer_file);
    out += fmt::format("    print(\"{} {} shape\", answer.shape, \"{}\")\n", zh ? "已保存" : "saved", m.answer_file,
                       zh ? "; 现在运行 ./check.sh" : "; now run ./check.sh");
    return out;
}

std::string exercise_check_script(const MadeExercise& m, Lang lang)
{
    std::string out = "#!/bin/sh\n";
    const bool zh = lang == Lang::zh;
    out += fmt::format(zh ? "# 检查 attnlab 练习 '{}' 的答案。\n" : "# Checks an answer to the attnlab exercise '{}'.\n", m.info.name);
    out += zh ? "# 用法：./check.sh [答案]    （默认：练习文件夹里的 answer.npy）\n"
                "# 退出码：0 正确；1 不正确（哪里不同，若是已知错误则说出是哪一个）；\n"
                "# 2 没有答案文件或 attnlab，或答案读不出来。\n"
              : "# Usage: ./check.sh [ANSWER]    (default: answer.npy in the exercise's folder)\n"
                "# Exit status: 0 right; 1 wrong (what differs, and the mistake when it is a known one);\n"
                "# 2 the answer file or attnlab is missing, or the answer cannot be read.\n";
    out += "self=$0\n";
    out += zh ? "while [ -L \"$self\" ]; do  # 指向本脚本的链接：文件夹是脚本本身所在的文件夹\n"
              : "while [ -L \"$self\" ]; do  # a link to this script: the folder is where the script is\n";
    out += "    link=$(readlink -- \"$self\") || exit 2\n"
           "    case $link in /*) self=$link ;; *) self=$(dirname -- \"$self\")/$link ;; esac\n"
           "done\n"
           "here=$(CDPATH= cd -- \"$(dirname -- \"$self\")\" && pwd) || exit 2\n"
           "answer=${1:-\"$here/answer.npy\"}\n"
           "case $answer in /*) ;; *) answer=\"$PWD/$answer\" ;; esac\n"
           "if ! command -v attnlab >/dev/null 2>&1; then\n";
    out += zh ? "    echo \"check.sh: PATH 中没有 attnlab；把它所在的文件夹加进去：export PATH=/path/to/attnlab/build/release:\\$PATH\" >&2\n"
              : "    echo \"check.sh: attnlab is not on PATH; add the folder that holds it: export PATH=/path/to/attnlab/build/release:\\$PATH\" >&2\n";
    out += "    exit 2\n"
           "fi\n"
           "if [ ! -f \"$answer\" ]; then\n";
    out += zh ? "    echo \"check.sh: $answer 处没有答案；先运行 python3 starter.py，或给出答案的路径\" >&2\n"
              : "    echo \"check.sh: no answer at $answer; run python3 starter.py first, or give the answer's path\" >&2\n";
    out += "    exit 2\n"
           "fi\n"
           "if [ -L \"$answer\" ]; then";
    out += zh ? "  # 链接可能在报错行里露出评分者自己的文件\n" : "  # a link could show the grader's own files in the error line\n";
    out += zh ? "    echo \"check.sh: $answer 是一个符号链接；请给出文件本身\" >&2\n"
              : "    echo \"check.sh: $answer is a symbolic link; give the file itself\" >&2\n";
    out += "    exit 2\n"
           "fi\n"
           "cd \"$here\" || exit 2\n";
    out += fmt::format("exec {} --against \"$answer\"\n", check_command(m, lang));
    return out;
}

std::string exercise_params_text(const MadeExercise& m) { return nlohmann::ordered_json(m.sizes).dump(2) + "\n"; }

nlohmann::ordered_json exercise_json(const MadeExercise& m, const nlohmann::ordered_json& params, Lang lang)
{
    nlohmann::ordered_json j;
    j["name"] = m.info.name;
    j["title"] = m.info.title(lang);
    j["subcommand"] = m.info.subcommand;
    j["params"] = params;
    j["command"] = m.command;
    j["answer"] = {{"file", m.answer_file}, {"tensor", m.answer_tensor}, {"shape", m.answer.shape}, {"axes", m.answer.axes},
                   {"dtype", dtype_text(m.answer)}};
    j["inputs"] = nlohmann::ordered_json::array();
    for (const auto& in : m.inputs)
        j["inputs"].push_back({{"name", in.name}, {"file", in.file}, {"shape", in.tensor.shape}, {"axes", in.tensor.axes},
                               {"dtype", dtype_text(in.tensor)}});
    j["mistakes"] = nlohmann::ordered_json::array();
    for (const auto& mistake : m.mistakes) j["mistakes"].push_back({{"id", mistake.id}, {"what", lang == Lang::zh ? mistake.zh : mistake.en}});
    j["sizes"] = m.sizes;
    j["size_range"] = nlohmann::ordered_json::object();
    for (const auto& [key, range] : m.info.size_range) j["size_range"][key] = {range.first, range.second};
    j["judged_at"] = name_of(m.info.judged_at);
    j["run"] = kExerciseRun;
    j["seed"] = m.seed;
    j["lang"] = lang == Lang::zh ? "zh" : "en";
    return j;
}

}  // namespace attnlab

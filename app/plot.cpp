#include "plot.hpp"

#include "common.hpp"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <tuple>

namespace attnlab::app {

namespace {

bool utf8_locale()
{
    for (const char* var : {"LC_ALL", "LC_CTYPE", "LANG"}) {
        const char* v = std::getenv(var);
        if (v == nullptr || v[0] == '\0') continue;
        std::string s(v);
        for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return s.find("utf-8") != std::string::npos || s.find("utf8") != std::string::npos;
    }
    return false;
}

std::size_t terminal_width()
{
    if (const char* cols = std::getenv("COLUMNS")) {
        const long n = std::strtol(cols, nullptr, 10);
        if (n >= 20 && n <= 1000) return static_cast<std::size_t>(n);
    }
    winsize ws{};
    if (isatty(STDOUT_FILENO) == 1 && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) return ws.ws_col;
    return 80;
}

PlotKind kind_of(const std::string& text) { return text.empty() ? PlotKind::automatic : enum_map<PlotKind>().at(text); }

constexpr const char* kLearner = "against";

// --tokens: the words between spaces.
std::vector<std::string> words_of(const std::string& text)
{
    std::vector<std::string> words;
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t end = std::min(text.find(' ', at), text.size());
        if (end > at) words.push_back(text.substr(at, end - at));
        at = end + 1;
    }
    return words;
}

// --compare A,B: exactly two different names.
std::vector<std::string> compare_names(const std::string& compare)
{
    const std::size_t comma = compare.find(',');
    const std::vector<std::string> names{compare.substr(0, comma), comma == std::string::npos ? "" : compare.substr(comma + 1)};
    if (names[0].empty() || names[1].empty() || names[1].find(',') != std::string::npos || names[0] == names[1]) {
        throw InputError(fmt::format("--compare takes two different tensor names A,B (got '{}')", compare));
    }
    return names;
}

const Tensor& tensor_to_draw(const Report& report, const std::string& name)
{
    const Tensor* t = report.find(name);
    if (t == nullptr) throw InputError(fmt::format("--plot: {} has no tensor {} to draw here", report.command, name));
    return *t;
}

// What a run draws: the tensor, or --compare's pair; the learner's tensor is read from its
// file once, within the run's memory budget, for the file and the terminal alike.
class Drawn {
public:
    Drawn(const Report& report, const std::string& tensor, const PlotOpts& o, const std::string& against_file, double budget)
    {
        if (o.compare.empty()) {
            tensors_.push_back(&tensor_to_draw(report, tensor.empty() ? report.main_tensor : tensor));
            lo_ = report.find(tensors_[0]->name + "_min"), hi_ = report.find(tensors_[0]->name + "_max");  // a range over seeds, drawn as bars
            return;
        }
        for (const auto& n : compare_names(o.compare)) {
            if (n != kLearner) {
                tensors_.push_back(&tensor_to_draw(report, n));
                continue;
            }
            yours_ = read_tensor_file(against_file, report.against ? report.against->tensor : "", budget, nullptr);  // its notes were said
            yours_->name = "yours";
            tensors_.push_back(&*yours_);
        }
        if (!yours_) return;
        const Tensor& other = *tensors_[tensors_[0] == &*yours_ ? 1 : 0];
        if (yours_->shape == other.shape) yours_->axes = other.axes;  // a file's axes are a0, a1, ...
    }
    Drawn(const Drawn&) = delete;
    Drawn& operator=(const Drawn&) = delete;

    Picture picture(const PlotOpts& o, const PictureLabels& labels) const
    {
        if (tensors_.size() == 1) {
            Picture pic = make_labelled_picture(*tensors_[0], kind_of(o.plot.value_or("")), labels);
            if (lo_ != nullptr && hi_ != nullptr) add_ranges(pic, *lo_, *hi_);
            return pic;
        }
        return make_compare_picture(*tensors_[0], *tensors_[1], labels, yours_.has_value());  // the learner's: with the difference
    }

private:
    std::optional<Tensor> yours_;
    std::vector<const Tensor*> tensors_;  // into the report, or yours_
    const Tensor *lo_ = nullptr, *hi_ = nullptr;  // NAME_min and NAME_max of the one tensor drawn, where the run has them
};

}  // namespace

std::vector<std::string> PlotOpts::compared_tensors() const
{
    std::vector<std::string> names;
    if (compare.empty()) return names;
    for (const auto& n : compare_names(compare))
        if (n != kLearner) names.push_back(n);
    return names;
}

std::size_t wrap_width() { return isatty(STDOUT_FILENO) == 1 ? terminal_width() : 0; }

void add_plot_options(CLI::App& sub, PlotOpts& o)
{
    sub.add_option("--plot", o.plot, "Draw the tensor (--tensor, or the main one) in the terminal: auto (default), heatmap or lines")
        ->expected(0, 1)
        ->check(CLI::IsMember({"", "auto", "heatmap", "lines"}))
        ->type_name("[auto|heatmap|lines]");
    add_optional_enum(sub, "--plot-style", o.style, "Glyphs of --plot: unicode or ascii (default: unicode in a UTF-8 locale)");
    sub.add_option("--plot-file", o.file, "Write the same picture to PATH.png or PATH.svg (the folder must exist)")->type_name("PATH")->check(non_empty_path);
    sub.add_option("--plot-scale", o.scale, "A --plot-file PNG at this many times 1280 x 720 pixels (2 for slides)")->check(CLI::Range(1.0, 4.0));
    sub.add_option("--tokens", o.tokens, "Label the position axes (pos, query, key) of the picture with these tokens, separated by spaces")
        ->type_name("\"T1 T2 ...\"");
    sub.add_option("--compare", o.compare, "Draw two tensors side by side on one colour scale; 'against' is your --against tensor "
                                           "(a third panel shows the difference)")
        ->type_name("A,B");
}

PlotOptions terminal_plot_options(const PlotOpts& o, Lang lang)
{
    PlotOptions p;
    p.style = o.style.value_or(utf8_locale() ? PlotStyle::unicode : PlotStyle::ascii);
    if (use_color()) {
        const char* ct = std::getenv("COLORTERM");
        const bool truecolor = ct != nullptr && (std::strcmp(ct, "truecolor") == 0 || std::strcmp(ct, "24bit") == 0);
        p.color = truecolor ? ColorMode::truecolor : ColorMode::c256;
    }
    p.width = terminal_width();
    p.lang = lang;
    return p;
}

namespace {

// --compare's own rules: it draws a picture, and "against" needs the learner's tensor.
void check_compare_request(const PlotOpts& o, bool against)
{
    if (o.compare.empty()) return;
    if (!o.drawn()) throw InputError("--compare draws a picture; give --plot or --plot-file");
    const auto names = compare_names(o.compare);
    if (!against && (names[0] == kLearner || names[1] == kLearner)) throw InputError("--compare against draws your --against tensor; give --against FILE");
}

}  // namespace

void check_plot_request(const PlotOpts& o, bool text_format, bool against)
{
    if (o.plot && !text_format) throw InputError("--plot draws in the text output; with --format json or csv, use --plot-file PATH.png|PATH.svg");
    if (o.style && !o.plot) throw InputError("--plot-style chooses the glyphs of --plot; give --plot too");
    if (!o.file.empty()) require_plot_path(o.file);
    if (o.scale != 1.0 && (o.file.empty() || picture_format(o.file) != PictureFormat::png)) throw InputError("--plot-scale sizes a PNG; give --plot-file PATH.png");
    if (!o.tokens.empty() && !o.drawn()) throw InputError("--tokens labels a picture; give --plot or --plot-file");
    if (!o.tokens.empty() && words_of(o.tokens).empty()) throw InputError("--tokens: no tokens given");
    check_compare_request(o, against);
}

std::string plot_report(const Report& report, const std::string& tensor, const PlotOpts& o, Lang lang, const std::string& against_file, double budget)
{
    if (!o.drawn()) return "";
    const Drawn drawn(report, tensor, o, against_file, budget);
    const PictureLabels labels{lang, picture_context(report.params, lang), words_of(o.tokens)};
    if (!o.file.empty()) plot_file(drawn.picture(o, labels), o.file, lang, o.scale);
    if (!o.plot) return "";
    const PlotOptions term = terminal_plot_options(o, lang);
    PictureLabels fitted = labels;
    std::tie(fitted.max_cols, fitted.max_rows) = terminal_cells(term);
    return "\n" + plot_text(drawn.picture(o, fitted), term);
}

}  // namespace attnlab::app

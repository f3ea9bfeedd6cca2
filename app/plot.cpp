#include "plot.hpp"

#include "common.hpp"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

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

}  // namespace

void add_plot_options(CLI::App& sub, PlotOpts& o)
{
    sub.add_option("--plot", o.plot, "Draw the tensor (--tensor, or the main one) in the terminal: auto (default), heatmap or lines")
        ->expected(0, 1)
        ->check(CLI::IsMember({"", "auto", "heatmap", "lines"}))
        ->type_name("[auto|heatmap|lines]");
    add_optional_enum(sub, "--plot-style", o.style, "Glyphs of --plot: unicode or ascii (default: unicode in a UTF-8 locale)");
    sub.add_option("--plot-file", o.file, "Write the same picture to PATH.png or PATH.svg (the folder must exist)")->type_name("PATH")->check(non_empty_path);
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

void check_plot_request(const PlotOpts& o, bool text_format)
{
    if (o.plot && !text_format) throw InputError("--plot draws in the text output; with --format json or csv, use --plot-file PATH.png|PATH.svg");
    if (o.style && !o.plot) throw InputError("--plot-style chooses the glyphs of --plot; give --plot too");
    if (!o.file.empty()) require_plot_path(o.file);
}

std::string plot_report(const Report& report, const std::string& tensor, const PlotOpts& o, Lang lang)
{
    if (!o.plot && o.file.empty()) return "";
    const std::string name = tensor.empty() ? report.main_tensor : tensor;
    const Tensor* t = report.find(name);
    if (t == nullptr) throw InputError(fmt::format("--plot: {} has no tensor {} to draw here", report.command, name));
    const PlotKind kind = kind_of(o.plot.value_or(""));
    if (!o.file.empty()) plot_file(make_picture(*t, kind, 160, 160), o.file, lang);
    if (!o.plot) return "";
    return "\n" + plot_tensor_text(*t, kind, terminal_plot_options(o, lang));
}

}  // namespace attnlab::app

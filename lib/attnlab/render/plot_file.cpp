// Picture files: the path checks and the whole-or-nothing write here; SVG written directly
// (figure_svg.cpp), PNG drawn by the picture module (picture_cairo.cpp), loaded the first time
// a run asks for one.
#include "attnlab/render/figure.hpp"
#include "attnlab/render/picture_module.hpp"
#include "attnlab/render/plot.hpp"

#include "attnlab/core/report.hpp"
#include "attnlab/io/files.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace attnlab {

namespace {

// Whether s ends in tail (lower case) in any case: the path's character is the one lowered.
bool ends_with(const std::string& s, const std::string& tail)
{
    return s.size() >= tail.size() &&
           std::equal(tail.rbegin(), tail.rend(), s.rbegin(), [](char t, char c) { return std::tolower(static_cast<unsigned char>(c)) == t; });
}

// The module beside the program (build/release/attnlab and its libattnlab_picture.so), then
// where the build put it (for the test programs, which live in a folder below).
std::vector<std::string> module_places()
{
    std::vector<std::string> places;
    char self[4096];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        const std::string program(self, static_cast<std::size_t>(n));
        places.push_back(program.substr(0, program.rfind('/') + 1) + kPictureModule);
    }
    places.emplace_back(ATTNLAB_PICTURE_MODULE);
    return places;
}

PictureBytesFn picture_module()
{
    static PictureBytesFn loaded = nullptr;
    if (loaded) return loaded;
    std::string why;
    for (const std::string& place : module_places()) {
        void* handle = dlopen(place.c_str(), RTLD_NOW | RTLD_LOCAL);
        void* symbol = handle ? dlsym(handle, kPictureSymbol) : nullptr;
        if (symbol) {
            std::memcpy(&loaded, &symbol, sizeof loaded);  // a data pointer to a function pointer, as POSIX allows
            return loaded;
        }
        if (why.empty()) why = dlerror();
    }
    throw OutputError(fmt::format("--plot-file: cannot load the picture module {} ({}); build it with the program", kPictureModule, why));
}

}  // namespace

PictureFormat picture_format(const std::string& path)
{
    if (ends_with(path, ".png")) return PictureFormat::png;
    if (ends_with(path, ".svg")) return PictureFormat::svg;
    throw InputError(fmt::format("--plot-file {}: the name must end in .png or .svg", path));
}

void require_plot_path(const std::string& path)
{
    const PictureFormat format = picture_format(path);
    check_output_file(path, "--plot-file");
    if (format == PictureFormat::png) picture_module();  // a missing module is refused before any work
}

std::string picture_file_bytes(const Picture& pic, PictureFormat format, Lang lang, double scale)
{
    const Figure fig = lay_out(pic, lang);
    if (format == PictureFormat::svg) return figure_svg(fig);
    std::string bytes, error;
    if (!picture_module()(&fig, scale, &bytes, &error)) throw OutputError(fmt::format("--plot-file: cannot draw the picture: {}", error));
    return bytes;
}

void plot_file(const Picture& pic, const std::string& path, Lang lang, double scale)
{
    require_plot_path(path);
    write_file_atomic(path, picture_file_bytes(pic, picture_format(path), lang, scale), "--plot-file");
}

}  // namespace attnlab

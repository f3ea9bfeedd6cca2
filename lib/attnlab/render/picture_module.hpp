// The picture module's entry point (picture_cairo.cpp, built as libattnlab_picture.so and
// loaded with dlopen by plot_file.cpp when a run writes a PNG).
#pragma once

#include <string>

namespace attnlab {

struct Figure;

// Draws the figure as a PNG file's bytes into *out, scale times its size in points; returns 0
// with the reason in *error when cairo cannot.
using PictureBytesFn = int (*)(const Figure* fig, double scale, std::string* out, std::string* error);
constexpr const char* kPictureModule = "libattnlab_picture.so";
constexpr const char* kPictureSymbol = "attnlab_picture_bytes";

}  // namespace attnlab

extern "C" int attnlab_picture_bytes(const attnlab::Figure* fig, double scale, std::string* out, std::string* error);

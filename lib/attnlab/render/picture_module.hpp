// The picture module's entry point (picture_cairo.cpp, built as libattnlab_picture.so and
// loaded with dlopen by plot_file.cpp).
#pragma once

#include <string>

namespace attnlab {

struct Picture;

// Draws the picture as a PNG (svg = 0) or SVG file's bytes into *out, its text in Chinese
// when zh; returns 0 with the reason in *error when cairo cannot.
using PictureBytesFn = int (*)(const Picture* pic, int svg, int zh, std::string* out, std::string* error);
constexpr const char* kPictureModule = "libattnlab_picture.so";
constexpr const char* kPictureSymbol = "attnlab_picture_bytes";

}  // namespace attnlab

extern "C" int attnlab_picture_bytes(const attnlab::Picture* pic, int svg, int zh, std::string* out, std::string* error);

// Wrapping terminal text at a width (render.hpp: wrap_text): display columns counted with
// Chinese characters two wide and colour escapes none.
#include "attnlab/render/render.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace attnlab {

namespace {

// The pieces a line may break between: a word with the spaces before it, or one wide
// (three-byte UTF-8, CJK) character. Escapes have no width; the spaces before a piece are kept
// as they are (a verdict padded to its column stays padded).
struct Piece {
    std::string text;
    std::size_t columns = 0;
    std::size_t spaces = 0;
};

std::vector<Piece> pieces(const std::string& line)
{
    std::vector<Piece> out;
    Piece cur;
    std::size_t pending = 0;
    auto start = [&] {
        if (cur.text.empty()) cur.spaces = pending, pending = 0;
    };
    auto flush = [&] {
        if (!cur.text.empty()) out.push_back(cur);
        cur = Piece{};
    };
    for (std::size_t i = 0; i < line.size();) {
        const auto c = static_cast<unsigned char>(line[i]);
        if (c == 0x1b) {  // an escape, up to its final letter
            const std::size_t end = line.find('m', i), stop = end == std::string::npos ? line.size() : end + 1;
            start(), cur.text += line.substr(i, stop - i), i = stop;
        } else if (c == ' ') {
            flush(), ++pending, ++i;
        } else if (c >= 0xE0) {  // a wide character: a piece of its own
            const std::size_t n = c >= 0xF0 ? 4 : 3;
            if (cur.columns > 0) flush();
            start(), cur.text += line.substr(i, n), cur.columns += 2, i += n;
            flush();
        } else {
            const std::size_t n = c >= 0xC0 ? 2 : 1;  // a two-byte character takes one column
            start(), cur.text += line.substr(i, n), cur.columns += 1, i += n;
        }
    }
    flush();
    return out;
}

}  // namespace

std::string wrap_text(const std::string& line, std::size_t width, std::size_t indent)
{
    if (width == 0 || width <= indent + 10) return line;
    if (const std::size_t nl = line.find('\n'); nl != std::string::npos) {  // each line of a text on its own
        return wrap_text(line.substr(0, nl), width, indent) + "\n" + wrap_text(line.substr(nl + 1), width, indent);
    }
    std::string out;
    std::size_t col = 0;
    for (const Piece& p : pieces(line)) {
        if (col > indent && p.columns > 0 && col + p.spaces + p.columns > width) {
            out += "\n" + std::string(indent, ' ');
            col = indent;
        } else {
            out += std::string(p.spaces, ' ');
            col += p.spaces;
        }
        out += p.text, col += p.columns;
    }
    return out;
}

}  // namespace attnlab

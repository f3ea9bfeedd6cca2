#include "attnlab/io/npy.hpp"

#include "attnlab/io/files.hpp"

#include "attnlab/core/half.hpp"
#include "attnlab/core/report.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace attnlab {

namespace {

struct Header {
    char order = '<';    // '<' little, '>' big, '|' not applicable
    char kind = 'f';     // f, i, u, b
    std::size_t itemsize = 8;
    bool fortran = false;
    std::vector<std::size_t> shape;
};

// The value of key in the header dict, as written between its ':' and the next ',' or '}'
// (a tuple is taken whole).
std::string dict_value(const std::string& dict, const std::string& key, const std::string& what)
{
    const auto at = dict.find("'" + key + "'");
    if (at == std::string::npos) throw InputError(fmt::format("{}: the NPY header has no '{}'", what, key));
    // numpy's reader (a Python dict) keeps a repeated key's last value, this one its first:
    // the file is refused rather than read otherwise than numpy reads it
    if (dict.find("'" + key + "'", at + 1) != std::string::npos) throw InputError(fmt::format("{}: the NPY header gives '{}' twice", what, key));
    const auto colon = dict.find(':', at);
    if (colon == std::string::npos) throw InputError(fmt::format("{}: the NPY header is not a dict", what));
    std::size_t end = colon + 1;
    while (end < dict.size() && dict[end] == ' ') ++end;
    const std::size_t start = end;
    if (end < dict.size() && dict[end] == '(') {
        end = dict.find(')', end);
        if (end == std::string::npos) throw InputError(fmt::format("{}: the NPY shape is not closed", what));
        return dict.substr(start, end - start + 1);
    }
    while (end < dict.size() && dict[end] != ',' && dict[end] != '}') ++end;
    return dict.substr(start, end - start);
}

std::vector<std::size_t> parse_shape(const std::string& tuple, const std::string& what)
{
    std::vector<std::size_t> shape;
    std::size_t i = 1;
    while (i + 1 < tuple.size()) {
        while (i < tuple.size() && (tuple[i] == ' ' || tuple[i] == ',')) ++i;
        if (i + 1 >= tuple.size()) break;
        std::size_t n = 0, digits = 0;
        for (; i < tuple.size() && tuple[i] >= '0' && tuple[i] <= '9'; ++i, ++digits) {
            if (n > (std::numeric_limits<std::size_t>::max() - 9) / 10) throw InputError(fmt::format("{}: an NPY dimension overflows", what));
            n = n * 10 + static_cast<std::size_t>(tuple[i] - '0');
        }
        if (digits == 0) throw InputError(fmt::format("{}: the NPY shape {} is not a tuple of sizes", what, excerpt(tuple)));
        shape.push_back(n);
    }
    return shape;
}

Header parse_header(const std::string& dict, const std::string& what)
{
    Header h;
    const std::string descr = dict_value(dict, "descr", what);
    if (descr.size() != 5 || descr.front() != '\'' || descr.back() != '\'') {
        throw InputError(fmt::format("{}: unsupported NPY dtype {}", what, excerpt(descr)));
    }
    h.order = descr[1];
    h.kind = descr[2];
    h.itemsize = static_cast<std::size_t>(descr[3] - '0');
    const bool ok = (h.kind == 'f' && (h.itemsize == 2 || h.itemsize == 4 || h.itemsize == 8)) ||
                    ((h.kind == 'i' || h.kind == 'u') && (h.itemsize == 1 || h.itemsize == 2 || h.itemsize == 4 || h.itemsize == 8)) ||
                    (h.kind == 'b' && h.itemsize == 1);
    if (!ok || (h.order != '<' && h.order != '>' && h.order != '|')) {
        throw InputError(fmt::format("{}: unsupported NPY dtype {}", what, excerpt(descr)));
    }
    const std::string fortran = dict_value(dict, "fortran_order", what);
    if (fortran != "False" && fortran != "True") throw InputError(fmt::format("{}: bad fortran_order {}", what, excerpt(fortran)));
    h.fortran = fortran == "True";
    h.shape = parse_shape(dict_value(dict, "shape", what), what);
    return h;
}

double element(const unsigned char* p, const Header& h)
{
    unsigned char b[8];
    for (std::size_t i = 0; i < h.itemsize; ++i) b[i] = h.order == '>' ? p[h.itemsize - 1 - i] : p[i];  // to little-endian
    std::uint64_t u = 0;
    for (std::size_t i = h.itemsize; i-- > 0;) u = (u << 8) | b[i];
    if (h.kind == 'b') return u != 0 ? 1.0 : 0.0;
    if (h.kind == 'u') return static_cast<double>(u);
    if (h.kind == 'i') {
        const unsigned bits = static_cast<unsigned>(h.itemsize * 8);
        const std::int64_t s = bits == 64 ? static_cast<std::int64_t>(u) : static_cast<std::int64_t>(u << (64 - bits)) >> (64 - bits);
        return static_cast<double>(s);
    }
    if (h.itemsize == 2) return from_half_bits(static_cast<std::uint16_t>(u));
    if (h.itemsize == 4) {
        float f;
        const auto u32 = static_cast<std::uint32_t>(u);
        std::memcpy(&f, &u32, 4);
        return f;
    }
    double d;
    std::memcpy(&d, &u, 8);
    return d;
}

}  // namespace

Tensor parse_npy(const std::vector<unsigned char>& bytes, const std::string& what)
{
    static const unsigned char magic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    if (bytes.size() < 10 || std::memcmp(bytes.data(), magic, 6) != 0) throw InputError(fmt::format("{}: not an NPY file (bad magic)", what));
    const unsigned version = bytes[6];
    if (version < 1 || version > 3) throw InputError(fmt::format("{}: unsupported NPY version {}", what, version));
    const std::size_t len_bytes = version == 1 ? 2 : 4, start = 8 + len_bytes;
    if (bytes.size() < start) throw InputError(fmt::format("{}: truncated NPY header", what));
    std::size_t header_len = 0;
    for (std::size_t i = len_bytes; i-- > 0;) header_len = (header_len << 8) | bytes[8 + i];
    if (header_len > bytes.size() - start) throw InputError(fmt::format("{}: truncated NPY header", what));
    const Header h = parse_header(std::string(bytes.begin() + static_cast<long>(start), bytes.begin() + static_cast<long>(start + header_len)), what);
    std::size_t count = 1;
    for (std::size_t n : h.shape) {
        if (n != 0 && count > std::numeric_limits<std::size_t>::max() / n) throw InputError(fmt::format("{}: the NPY shape overflows", what));
        count *= n;
    }
    const std::size_t data = start + header_len, available = (bytes.size() - data) / h.itemsize;
    if (count != available || (bytes.size() - data) % h.itemsize != 0) {
        throw InputError(fmt::format("{}: the NPY shape holds {} elements but the file has {}", what, count, available));
    }
    Tensor t;
    t.elem = h.kind == 'b'   ? Elem::boolean
             : h.kind != 'f' ? Elem::index
             : h.itemsize == 8 ? Elem::float64
             : h.itemsize == 2 ? Elem::float16
                               : Elem::float32;
    t.shape = h.shape;
    t.values.resize(count);
    std::vector<std::size_t> strides(h.shape.size(), 1);  // C-order strides of the result
    for (std::size_t a = h.shape.size(); a-- > 1;) strides[a - 1] = strides[a] * h.shape[a];
    for (std::size_t k = 0; k < count; ++k) {
        std::size_t at = k;
        if (h.fortran) {  // element k of the file is at Fortran index: first axis fastest
            std::size_t rest = k;
            at = 0;
            for (std::size_t a = 0; a < h.shape.size(); ++a) {
                at += (rest % h.shape[a]) * strides[a];
                rest /= h.shape[a];
            }
        }
        t.values[at] = element(bytes.data() + data + k * h.itemsize, h);
    }
    for (std::size_t a = 0; a < t.shape.size(); ++a) t.axes.push_back("a" + std::to_string(a));
    return t;
}

}  // namespace attnlab

namespace attnlab {

namespace {

template <class V>
void append(std::vector<unsigned char>& out, V v)
{
    unsigned char b[sizeof(V)];
    std::memcpy(b, &v, sizeof(V));
    out.insert(out.end(), b, b + sizeof(V));  // the machine is little-endian, as '<' says
}

// bfloat16 has no NPY type: it is written as float32 holding exactly the bfloat16 values.
const char* npy_descr(Elem elem)
{
    switch (elem) {
    case Elem::float16: return "<f2";
    case Elem::float32:
    case Elem::bfloat16: return "<f4";
    case Elem::float64: return "<f8";
    case Elem::boolean: return "|b1";
    case Elem::index: break;
    }
    return "<i8";
}

}  // namespace

std::vector<unsigned char> write_npy(const Tensor& t)
{
    const char* descr = npy_descr(t.elem);
    std::string shape;
    for (std::size_t n : t.shape) shape += std::to_string(n) + ", ";
    if (t.shape.size() > 1) shape.erase(shape.size() - 2);
    else if (t.shape.size() == 1) shape.erase(shape.size() - 1);
    std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, shape);
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::vector<unsigned char> out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    out.push_back(static_cast<unsigned char>(header.size() & 0xff));
    out.push_back(static_cast<unsigned char>(header.size() >> 8));
    out.insert(out.end(), header.begin(), header.end());
    for (double v : t.values) {
        switch (t.elem) {
        case Elem::float32:
        case Elem::bfloat16: append(out, static_cast<float>(v)); break;
        case Elem::float16: append(out, half_bits(static_cast<float>(v))); break;
        case Elem::float64: append(out, v); break;
        case Elem::boolean: out.push_back(v != 0.0 ? 1 : 0); break;
        case Elem::index: append(out, static_cast<std::int64_t>(v)); break;
        }
    }
    return out;
}

}  // namespace attnlab

// The NPY reader: every dtype and order it takes, against bytes written by hand, and the
// hostile files it must refuse with a message instead of crashing or over-allocating.
#include "attnlab/core/report.hpp"
#include "attnlab/io/embedded.hpp"
#include "attnlab/io/npy.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <string>

using namespace attnlab;

namespace {

// An NPY v1 file: the magic, the header padded with spaces to a multiple of 64, the data.
std::vector<unsigned char> npy(const std::string& dict, const std::vector<unsigned char>& data, unsigned char version = 1)
{
    std::string header = dict;
    const std::size_t prefix = version == 1 ? 10 : 12;
    while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::vector<unsigned char> out = {0x93, 'N', 'U', 'M', 'P', 'Y', version, 0};
    const std::size_t n = header.size();
    out.push_back(static_cast<unsigned char>(n & 0xff));
    out.push_back(static_cast<unsigned char>((n >> 8) & 0xff));
    if (version > 1) out.insert(out.end(), {0, 0});
    out.insert(out.end(), header.begin(), header.end());
    out.insert(out.end(), data.begin(), data.end());
    return out;
}

template <class T>
std::vector<unsigned char> bytes_of(std::initializer_list<T> values)
{
    std::vector<unsigned char> out;
    for (T v : values) {
        unsigned char b[sizeof(T)];
        std::memcpy(b, &v, sizeof(T));
        out.insert(out.end(), b, b + sizeof(T));
    }
    return out;
}

}  // namespace

TEST_CASE("NPY: float64, float32, float16, big-endian, integers, bool, Fortran order, version 2")
{
    auto t = parse_npy(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", bytes_of<double>({1, -2.5, 0.125, 4})), "t");
    CHECK(t.shape == std::vector<std::size_t>{2, 2});
    CHECK(t.values == std::vector<double>{1, -2.5, 0.125, 4});
    t = parse_npy(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", bytes_of<float>({0.1f, 2, -1})), "t");
    CHECK(t.values[0] == static_cast<double>(0.1f));
    // float16: 1.0 = 0x3c00, -2.0 = 0xc000, 65504 = 0x7bff, the smallest subnormal 2^-24 = 0x0001, inf = 0x7c00
    t = parse_npy(npy("{'descr': '<f2', 'fortran_order': False, 'shape': (5,), }", bytes_of<std::uint16_t>({0x3c00, 0xc000, 0x7bff, 0x0001, 0x7c00})), "t");
    CHECK(t.values == std::vector<double>{1.0, -2.0, 65504.0, std::ldexp(1.0, -24), INFINITY});
    t = parse_npy(npy("{'descr': '>f8', 'fortran_order': False, 'shape': (1,), }", {0x3f, 0xf0, 0, 0, 0, 0, 0, 0}), "t");
    CHECK(t.values[0] == 1.0);
    t = parse_npy(npy("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", bytes_of<std::int64_t>({-3, 7})), "t");
    CHECK(t.values == std::vector<double>{-3, 7});
    t = parse_npy(npy("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", {1, 0}), "t");
    CHECK(t.values == std::vector<double>{1, 0});
    CHECK(t.elem == Elem::boolean);
    // Fortran order [[1, 2, 3], [4, 5, 6]] is stored 1, 4, 2, 5, 3, 6
    t = parse_npy(npy("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", bytes_of<double>({1, 4, 2, 5, 3, 6}), 2), "t");
    CHECK(t.values == std::vector<double>{1, 2, 3, 4, 5, 6});
    t = parse_npy(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", bytes_of<double>({3})), "t");
    CHECK(t.shape.empty());
    CHECK(t.values == std::vector<double>{3});
}

TEST_CASE("NPY: hostile files are refused with a message, before anything is allocated")
{
    const auto good = npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", bytes_of<double>({1, 2}));
    auto refused = [](std::vector<unsigned char> bytes, const std::string& fragment) {
        CAPTURE(fragment);
        CHECK_THROWS_WITH_AS(parse_npy(bytes, "f.npy"), doctest::Contains(fragment.c_str()), InputError);
    };
    refused({}, "bad magic");
    refused({'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0, 0, 0}, "bad magic");
    std::vector<unsigned char> truncated(good.begin(), good.end() - 3);
    refused(truncated, "the file has 1");
    std::vector<unsigned char> header_cut(good.begin(), good.begin() + 20);
    refused(header_cut, "truncated NPY header");
    refused(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", bytes_of<double>({1, 2})), "holds 3 elements but the file has 2");
    refused(npy("{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }", {}), "unsupported NPY dtype");
    refused(npy("{'descr': '<f8', 'shape': (1,), }", bytes_of<double>({1})), "no 'fortran_order'");
    refused(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (a,), }", {}), "not a tuple of sizes");
    refused(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }", {}), "overflows");
    refused(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }", {}), "holds 1000000000000 elements");
    // a key given twice: numpy keeps the last value (a Python dict), so no reading is safe
    refused(npy("{'descr': '<f8', 'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", bytes_of<double>({1})), "gives 'descr' twice");
    refused(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'shape': (1,), }", bytes_of<double>({1, 2})), "gives 'shape' twice");
    std::vector<unsigned char> bad_version = good;
    bad_version[6] = 9;
    refused(bad_version, "unsupported NPY version 9");
}

TEST_CASE("the embedded nn.Transformer fixture: PyTorch's encoder output is the permuted output to rounding")
{
    const Tensor f = parse_npy(nn_transformer_encoder_npy(), "fixture");
    REQUIRE(f.shape == std::vector<std::size_t>{3, 5, 8});
    const long perm[5] = {2, 0, 4, 1, 3};
    double worst = 0.0, moved = 0.0;
    for (std::size_t i = 0; i < 5; ++i)
        for (std::size_t c = 0; c < 8; ++c) {
            worst = std::max(worst, std::abs(f.values[80 + i * 8 + c] - f.values[40 + static_cast<std::size_t>(perm[i]) * 8 + c]));
            moved = std::max(moved, std::abs(f.values[80 + i * 8 + c] - f.values[40 + i * 8 + c]));
        }
    CHECK(worst < 1e-14);  // no position entered
    CHECK(moved > 0.1);    // and the permutation did move the rows
}

TEST_CASE("NPY: what the writer writes, the reader reads back exactly, for every element type")
{
    for (Elem elem : {Elem::float32, Elem::float64, Elem::boolean, Elem::index}) {
        CAPTURE(name_of(elem));
        Tensor t{"t", {"a", "b"}, elem, {2, 3}, {}};
        for (int i = 0; i < 6; ++i) {
            const double v = elem == Elem::boolean ? (i % 2) : elem == Elem::index ? i - 2 : (i - 2.5) / 3.0;
            t.values.push_back(elem == Elem::float32 ? static_cast<double>(static_cast<float>(v)) : v);
        }
        if (elem == Elem::float32) t.values[1] = -INFINITY;
        const Tensor back = parse_npy(write_npy(t), "round trip");
        CHECK(back.shape == t.shape);
        CHECK(back.values == t.values);
        CHECK(back.elem == elem);
    }
    Tensor scalar{"s", {}, Elem::float64, {}, {2.5}};
    CHECK(parse_npy(write_npy(scalar), "scalar").values == std::vector<double>{2.5});
    Tensor vec{"v", {"a"}, Elem::float64, {1}, {7}};
    CHECK(parse_npy(write_npy(vec), "one").shape == std::vector<std::size_t>{1});
}

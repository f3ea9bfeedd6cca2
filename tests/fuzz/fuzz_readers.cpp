// libFuzzer harness for the readers of a learner's file (NPY, CSV, JSON). Every input must
// be read or refused with an InputError: no crash, no hang, no other exception, no
// allocation beyond what the bytes can hold. Built and run by tests/fuzz/run.sh, not by CI;
// CI reads every file of tests/fuzz/corpus/ as a regression test (test_read.cpp).
#include "attnlab/core/report.hpp"
#include "attnlab/io/npy.hpp"
#include "attnlab/io/read.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::vector<unsigned char> bytes(data, data + size);
    const std::string text(bytes.begin(), bytes.end());
    try {
        attnlab::read_tensor_bytes(bytes, "fuzz", "");
    } catch (const attnlab::InputError&) {
    }
    try {
        attnlab::parse_npy(bytes, "fuzz");
    } catch (const attnlab::InputError&) {
    }
    try {
        attnlab::parse_csv_tensor(text, "fuzz");
    } catch (const attnlab::InputError&) {
    }
    try {
        attnlab::parse_json_tensor(text, "fuzz", "pe");
    } catch (const attnlab::InputError&) {
    }
    return 0;
}

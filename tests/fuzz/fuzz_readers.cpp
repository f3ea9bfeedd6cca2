// libFuzzer harness for the readers of a learner's file (NPY, CSV, JSON). Every input must
// be read or refused with an InputError: no crash, no hang, no other exception, no
// allocation beyond what the bytes can hold. The same bytes also go through the file path:
// written to a file and read back under a small memory budget (from the first byte), so the
// size guard is reached; one input in 16 is read as a special file (a directory, a FIFO with
// no writer, /dev/zero) instead, which must be refused without waiting.
// Built and run by tests/fuzz/run.sh (a short run is part of ./setup.sh test); test_read.cpp
// reads every file of tests/fuzz/corpus/ as a regression test.
#include "attnlab/core/report.hpp"
#include "attnlab/io/npy.hpp"
#include "attnlab/io/read.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {

const std::string& scratch_dir()
{
    static const std::string dir = [] {
        char tmpl[] = "/tmp/attnlab-fuzz-XXXXXX";
        const char* made = ::mkdtemp(tmpl);
        if (made == nullptr) std::abort();
        const std::string d(made);
        ::mkfifo((d + "/fifo").c_str(), 0600);
        return d;
    }();
    return dir;
}

void read_as_file(const std::vector<unsigned char>& bytes)
{
    const unsigned mode = bytes.empty() ? 0u : bytes[0];
    std::string path = scratch_dir() + "/input";
    switch (mode % 16) {
        case 13: path = scratch_dir(); break;
        case 14: path = scratch_dir() + "/fifo"; break;
        case 15: path = "/dev/zero"; break;
        default: std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    }
    std::vector<std::string> notes;
    try {
        attnlab::read_tensor_file(path, "", 64.0 * (1 + mode), &notes);
    } catch (const attnlab::InputError&) {
    }
}

}  // namespace

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
        std::vector<std::string> notes;
        attnlab::parse_csv_tensor(text, "fuzz", &notes);
    } catch (const attnlab::InputError&) {
    }
    try {
        attnlab::parse_json_tensor(text, "fuzz", "pe");
    } catch (const attnlab::InputError&) {
    }
    read_as_file(bytes);
    return 0;
}

// The one way attnlab reads and writes files: whole or absent, never through a link, special
// files refused up front, bytes never echoed raw.
#include "attnlab/core/report.hpp"
#include "attnlab/io/files.hpp"

#include <doctest/doctest.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

using namespace attnlab;
namespace fs = std::filesystem;

namespace {

std::string fresh_dir(const std::string& tag)
{
    const fs::path dir = fs::temp_directory_path() / ("attnlab-files-" + tag + "-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir.string();
}

std::string contents(const std::string& path)
{
    std::ifstream f(path, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

// The names in dir, hidden ones (temporary files) included.
std::vector<std::string> names_in(const std::string& dir)
{
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

ReadLimit limit_of(double bytes)
{
    return ReadLimit{bytes, "a test's limit"};
}

}  // namespace

TEST_CASE("excerpt: control characters escaped, long text cut at 80 characters")
{
    CHECK(excerpt("plain") == "plain");
    CHECK(excerpt("a\x1b]0;t\x07" "b\r\n") == "a\\x1b]0;t\\x07b\\x0d\\x0a");
    CHECK(excerpt(std::string("a\0b", 3)) == "a\\x00b");
    CHECK(excerpt("back\\slash") == "back\\\\slash");
    CHECK(excerpt(std::string(200, 'x')) == std::string(80, 'x') + "...");
    CHECK(excerpt("abcdef", 3) == "abc...");
}

TEST_CASE("OutputFolder: a file is replaced whole, a link at its name is replaced and never followed")
{
    const std::string dir = fresh_dir("write");
    const OutputFolder folder(dir, "test", false);
    folder.write("a.txt", "first");
    folder.write("a.txt", "second");
    CHECK(contents(dir + "/a.txt") == "second");
    std::ofstream(dir + "/../attnlab-files-outside.txt") << "outside";
    fs::create_symlink("../attnlab-files-outside.txt", dir + "/link.txt");
    fs::create_symlink("../attnlab-files-created.txt", dir + "/dangling.txt");
    folder.write("link.txt", "inside");
    folder.write("dangling.txt", "inside");
    CHECK(contents(dir + "/../attnlab-files-outside.txt") == "outside");
    CHECK_FALSE(fs::exists(dir + "/../attnlab-files-created.txt"));
    CHECK(fs::is_regular_file(fs::symlink_status(dir + "/link.txt")));
    CHECK(contents(dir + "/link.txt") == "inside");
    CHECK(names_in(dir) == std::vector<std::string>{"a.txt", "dangling.txt", "link.txt"});  // no temporary left
    fs::create_directory_symlink("..", dir + "/up");
    CHECK_THROWS_WITH_AS(folder.subfolder("up"), doctest::Contains("it is a symbolic link"), OutputError);
    folder.remove("link.txt");
    folder.remove("missing.txt");
    CHECK(fs::exists(dir + "/../attnlab-files-outside.txt"));
    CHECK(folder.read_small("a.txt", 100) == std::optional<std::string>("second"));
    CHECK_FALSE(folder.read_small("a.txt", 3));          // larger than allowed
    CHECK_FALSE(folder.read_small("dangling.txt", 100) == std::nullopt);  // a regular file now
    fs::remove(dir + "/../attnlab-files-outside.txt");
}

TEST_CASE("OutputFolder: a write past the file-size limit fails with its reason and leaves no file")
{
    const std::string dir = fresh_dir("limit");
    install_write_cleanup();  // SIGXFSZ ignored: the write fails with EFBIG instead of killing
    rlimit old{};
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
    rlimit small = old;
    small.rlim_cur = 4096;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
    const OutputFolder folder(dir, "test", false);
    folder.write("kept.bin", "old");
    CHECK_THROWS_WITH_AS(folder.write("kept.bin", std::string(10000, 'x')), doctest::Contains(("test: cannot write " + dir + "/kept.bin: File too large").c_str()), OutputError);
    ::setrlimit(RLIMIT_FSIZE, &old);
    CHECK(contents(dir + "/kept.bin") == "old");  // the old file, whole
    CHECK(names_in(dir) == std::vector<std::string>{"kept.bin"});
}

TEST_CASE("NewFolder: renamed into place whole, or nothing at all")
{
    const std::string base = fresh_dir("new");
    {
        NewFolder made(base + "/ex", "test");
        made.root().write("README.md", "task");
        made.root().subfolder("inputs").write("x.npy", "bytes");
        CHECK_FALSE(fs::exists(base + "/ex"));
        made.commit();
    }
    CHECK(contents(base + "/ex/README.md") == "task");
    CHECK(contents(base + "/ex/inputs/x.npy") == "bytes");
    {
        NewFolder abandoned(base + "/gone", "test");  // destroyed without commit, as by an exception
        abandoned.root().write("README.md", "task");
        abandoned.root().subfolder("inputs").write("x.npy", "bytes");
    }
    CHECK(names_in(base) == std::vector<std::string>{"ex"});
    {
        NewFolder late(base + "/ex", "test");  // someone filled the place meanwhile
        late.root().write("README.md", "other");
        CHECK_THROWS_WITH_AS(late.commit(), doctest::Contains(("cannot put the folder in place at " + base + "/ex: it is not empty").c_str()), OutputError);
    }
    CHECK(names_in(base) == std::vector<std::string>{"ex"});
    CHECK(contents(base + "/ex/README.md") == "task");
    fs::create_directory(base + "/empty");
    {
        NewFolder into_empty(base + "/empty", "test");
        into_empty.root().write("a", "b");
        into_empty.commit();
    }
    CHECK(contents(base + "/empty/a") == "b");
}

TEST_CASE("check_output_folder and check_output_file: refused before any work, naming why")
{
    const std::string dir = fresh_dir("check");
    CHECK_NOTHROW(check_output_folder(dir, "--save"));
    CHECK_NOTHROW(check_output_folder(dir + "/new", "--save"));
    CHECK_FALSE(fs::exists(dir + "/new"));  // checked, not made
    CHECK_THROWS_WITH_AS(check_output_folder(dir + "/a/b", "--save"), ("--save " + dir + "/a/b: cannot be made: its folder " + dir + "/a does not exist").c_str(), InputError);
    std::ofstream(dir + "/file") << "x";
    CHECK_THROWS_WITH_AS(check_output_folder(dir + "/file", "--save"), ("--save " + dir + "/file: not a directory").c_str(), InputError);
    CHECK_NOTHROW(check_output_file(dir + "/p.png", "--plot-file"));
    CHECK_THROWS_WITH_AS(check_output_file(dir, "--plot-file"), ("--plot-file " + dir + ": is a directory").c_str(), InputError);
    CHECK_THROWS_WITH_AS(check_output_file(dir + "/no/p.png", "--plot-file"), ("--plot-file " + dir + "/no/p.png: the folder " + dir + "/no does not exist").c_str(), InputError);
}

TEST_CASE("read_input_file: regular files within the limit, special files refused up front, naming what they are")
{
    const std::string dir = fresh_dir("read");
    std::ofstream(dir + "/a.csv") << "1,2\n";
    const auto bytes = read_input_file(dir + "/a.csv", [](std::string_view head) {
        CHECK(head == "1,2\n");
        return limit_of(100);
    });
    CHECK(std::string(bytes.begin(), bytes.end()) == "1,2\n");
    CHECK_THROWS_WITH_AS(read_input_file(dir + "/a.csv", [](std::string_view) { return limit_of(3); }),
                         (dir + "/a.csv: 4.0 B is too large for the memory budget (a test's limit; at most 3.0 B here)").c_str(), InputError);
    CHECK_THROWS_WITH_AS(read_input_file(dir, [](std::string_view) { return limit_of(1e9); }), (dir + ": cannot be read: it is a directory").c_str(), InputError);
    REQUIRE(::mkfifo((dir + "/fifo").c_str(), 0600) == 0);  // no writer: opening it must not wait
    CHECK_THROWS_WITH_AS(read_input_file(dir + "/fifo", [](std::string_view) { return limit_of(1e9); }),
                         (dir + "/fifo: cannot be read: it is a pipe (FIFO); to read a pipe, give - and send it on standard input").c_str(), InputError);
    CHECK_THROWS_WITH_AS(read_input_file("/dev/zero", [](std::string_view) { return limit_of(1e9); }), "/dev/zero: cannot be read: it is a character device", InputError);
    CHECK_THROWS_WITH_AS(read_input_file(dir + "/none", [](std::string_view) { return limit_of(1e9); }), (dir + "/none: cannot be read: No such file or directory").c_str(), InputError);
}

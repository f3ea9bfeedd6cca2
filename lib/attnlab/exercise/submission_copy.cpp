// A submission's copy for one run, who owns it, and the grader's temporary folders.
#include "attnlab/exercise/program.hpp"

#include "attnlab/core/report.hpp"
#include "attnlab/io/files.hpp"

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace attnlab {

namespace fs = std::filesystem;

namespace {

struct Copier {
    fs::path root;  // FROM, resolved
    std::vector<std::string> skip;  // top-level names
    std::size_t max_bytes = 0, copied = 0;
    std::size_t max_entries = 0, entries = 0, over = 0;  // over: entries past max_entries
    std::vector<std::string> left_out;

    // Whether one more entry may be copied; past the cap the rest is only counted.
    bool room()
    {
        if (++entries <= max_entries) return true;
        ++over;
        return false;
    }

    bool inside(const fs::path& p) const
    {
        const auto [end, _] = std::mismatch(root.begin(), root.end(), p.begin(), p.end());
        return end == root.end();
    }
    void file(const fs::path& from, const fs::path& to, const std::string& name)
    {
        std::error_code ec;
        const auto size = fs::file_size(from, ec);
        if (ec || copied + size > max_bytes || !fs::copy_file(from, to, ec) || ec) {
            left_out.push_back(name);
            return;
        }
        copied += size;
    }
    // One entry of a folder, copied as what it is.
    void entry(const fs::path& p, const fs::file_status& st, const fs::path& to, const std::string& name, int depth)
    {
        std::error_code ec;
        if (fs::is_directory(st) && depth >= 32) left_out.push_back(name + "/ (more than 32 folders deep)");
        else if (fs::is_directory(st)) folder(p, to / p.filename(), name + "/", depth + 1);
        else if (fs::is_regular_file(st)) file(p, to / p.filename(), name);
        else if (fs::is_symlink(st)) {
            const fs::path target = fs::canonical(p, ec);
            if (!ec && inside(target) && fs::is_regular_file(target, ec)) file(target, to / p.filename(), name);
            else left_out.push_back(name);
        } else left_out.push_back(name);
    }
    // A folder's files before its subfolders, each in name order, so that a folder of many
    // files beside the program never crowds the program out of the entry cap, and what is
    // left out is the same on every run.
    void folder(const fs::path& from, const fs::path& to, const std::string& prefix, int depth)
    {
        std::error_code ec;
        fs::create_directory(to, ec);
        if (ec) return;
        std::vector<std::pair<fs::path, fs::file_status>> listed;
        for (fs::directory_iterator it(from, ec), end; !ec && it != end; it.increment(ec)) {
            const std::string name = prefix + it->path().filename().string();
            if (depth == 0 && std::find(skip.begin(), skip.end(), name) != skip.end()) continue;
            std::error_code st_ec;
            listed.emplace_back(it->path(), fs::symlink_status(it->path(), st_ec));
        }
        std::sort(listed.begin(), listed.end(), [](const auto& a, const auto& b) {
            const bool da = fs::is_directory(a.second), db = fs::is_directory(b.second);
            return da != db ? db : a.first.filename() < b.first.filename();
        });
        for (const auto& [p, st] : listed)
            if (room()) entry(p, st, to, prefix + p.filename().string(), depth);
    }
};

}  // namespace

std::vector<std::string> copy_submission(const std::string& from, const std::string& to, const std::vector<std::string>& skip,
                                         std::size_t max_bytes, std::size_t max_entries)
{
    std::error_code ec;
    Copier c{fs::canonical(from, ec), skip, max_bytes, 0, max_entries, 0, 0, {}};
    if (ec || !fs::is_directory(c.root, ec)) throw InputError(fmt::format("{}: not a folder", excerpt(from)));
    c.folder(c.root, to, "", 0);
    if (c.over > 0) c.left_out.push_back(fmt::format("{} more files and folders (at most {} are copied)", c.over, max_entries));
    return c.left_out;
}

void give_to(const std::string& dir, uid_t uid, gid_t gid)
{
    std::error_code ec;
    if (::lchown(dir.c_str(), uid, gid) != 0) return;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) (void)!::lchown(it->path().c_str(), uid, gid);
}

namespace {

// Whether every folder from / down to DIR lets others pass (the execute bit for others).
bool others_pass(const fs::path& dir)
{
    std::error_code ec;
    const fs::path full = fs::absolute(dir, ec);
    fs::path at = "/";
    for (const auto& part : full.relative_path()) {
        at /= part;
        struct stat st {};
        if (::stat(at.c_str(), &st) != 0 || (st.st_mode & S_IXOTH) == 0) return false;
    }
    return !ec;
}

}  // namespace

TempFolder::TempFolder(const std::string& prefix, Reach reach)
{
    const char* tmp = std::getenv("TMPDIR");
    std::string base = tmp && *tmp ? tmp : "/tmp";
    if (reach == Reach::others && !others_pass(base)) base = "/tmp";
    std::string pattern = base + "/" + prefix + "XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) throw OutputError(fmt::format("cannot make a temporary folder {}: {}", pattern, std::strerror(errno)));
    path_ = pattern;
    if (reach == Reach::others) ::chmod(path_.c_str(), 0711);
}

TempFolder::~TempFolder()
{
    std::error_code ec;
    fs::remove_all(path_, ec);
}

}  // namespace attnlab

#include "attnlab/io/files.hpp"

#include "attnlab/core/report.hpp"

#include <fmt/format.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <thread>
#include <cerrno>
#include <csignal>
#include <cstring>

namespace attnlab {

std::size_t utf8_sequence(std::string_view bytes, std::size_t i)
{
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(bytes[k]); };
    const unsigned char lead = byte(i);
    if (lead < 0x80) return 1;
    // RFC 3629, table 3-7 of the Unicode standard: the second byte's range depends on the lead
    // (no overlong forms, no surrogates, nothing past U+10FFFF); later bytes are 80..BF.
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) n = 2;
    else if (lead >= 0xE0 && lead <= 0xEF) n = 3, lo = lead == 0xE0 ? 0xA0 : 0x80, hi = lead == 0xED ? 0x9F : 0xBF;
    else if (lead >= 0xF0 && lead <= 0xF4) n = 4, lo = lead == 0xF0 ? 0x90 : 0x80, hi = lead == 0xF4 ? 0x8F : 0xBF;
    else return 0;
    if (i + n > bytes.size() || byte(i + 1) < lo || byte(i + 1) > hi) return 0;
    for (std::size_t k = 2; k < n; ++k)
        if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
    return n;
}

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The code point of the valid three-byte sequence at I.
char32_t code_point3(std::string_view bytes, std::size_t i)
{
    const auto b = [&](std::size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(bytes[i + k])); };
    return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
}

// LRM, RLM, the line and paragraph separators, the embeddings and overrides (U+202A..U+202E),
// the isolates (U+2066..U+2069) and the byte order mark.
bool is_format_control(char32_t cp)
{
    return cp == 0x200E || cp == 0x200F || (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xFEFF;
}

}  // namespace

std::string valid_utf8(std::string_view bytes)
{
    std::string out;
    out.reserve(bytes.size());
    for (std::size_t i = 0; i < bytes.size();) {
        const std::size_t n = utf8_sequence(bytes, i);
        if (n == 0) out += kReplacement, ++i;
        else out.append(bytes.substr(i, n)), i += n;
    }
    return out;
}

std::string excerpt(std::string_view bytes, std::size_t max)
{
    std::string out;
    for (std::size_t i = 0; i < bytes.size();) {
        if (out.size() >= max) return out + "...";
        const auto c = static_cast<unsigned char>(bytes[i]);
        const std::size_t n = utf8_sequence(bytes, i);
        if (c == '\\') out += "\\\\";
        else if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
        else if (n == 0) out += kReplacement;
        // C1 controls (U+0080..U+009F) drive a terminal as ESC sequences do
        else if (n == 2 && c == 0xC2 && static_cast<unsigned char>(bytes[i + 1]) < 0xA0) out += fmt::format("\\u{:04x}", static_cast<unsigned char>(bytes[i + 1]));
        // bidirectional controls reorder what a reader sees, line and paragraph separators break
        // a line where no newline is
        else if (const char32_t cp = n == 3 ? code_point3(bytes, i) : 0; is_format_control(cp)) out += fmt::format("\\u{:04x}", static_cast<unsigned>(cp));
        else out.append(bytes.substr(i, n));
        i += n == 0 ? 1 : n;
    }
    return out;
}

std::optional<FileId> file_id(const std::string& path)
{
    struct stat st {};
    if (path == "-" || ::stat(path.c_str(), &st) != 0) return std::nullopt;
    return FileId{st.st_dev, st.st_ino};
}

// --- reading ---

namespace {

const char* special_kind(mode_t mode)
{
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a pipe (FIFO); to read a pipe, give - and send it on standard input";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

// Reads from fd into bytes until end of file; false once more than max bytes arrived.
bool read_until(int fd, std::vector<unsigned char>& bytes, double max, const std::string& path)
{
    unsigned char chunk[65536];
    for (;;) {
        const ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw InputError(fmt::format("{}: cannot be read: {}", path, std::strerror(errno)));
        if (n == 0) return true;
        bytes.insert(bytes.end(), chunk, chunk + n);
        if (static_cast<double>(bytes.size()) > max) return false;
    }
}

struct Fd {
    int fd = -1;
    ~Fd()
    {
        if (fd > 2) ::close(fd);
    }
};

bool g_stdin_taken = false;

}  // namespace

std::vector<unsigned char> read_input_file(const std::string& path, const LimitOf& limit)
{
    Fd f;
    std::optional<double> size;  // known for a regular file, not for standard input
    if (path == "-") {
        if (g_stdin_taken) throw InputError("standard input (-) is read once; give - to one file option only");
        g_stdin_taken = true;
        f.fd = STDIN_FILENO;
    } else {
        // O_NONBLOCK: opening a FIFO with no writer must not wait; it is refused just below.
        f.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (f.fd < 0) throw InputError(fmt::format("{}: cannot be read: {}", path, std::strerror(errno)));
        struct stat st {};
        if (::fstat(f.fd, &st) != 0) throw InputError(fmt::format("{}: cannot be read: {}", path, std::strerror(errno)));
        if (!S_ISREG(st.st_mode)) throw InputError(fmt::format("{}: cannot be read: it is {}", path, special_kind(st.st_mode)));
        size = static_cast<double>(st.st_size);
        ::fcntl(f.fd, F_SETFL, ::fcntl(f.fd, F_GETFL) & ~O_NONBLOCK);
    }
    std::vector<unsigned char> bytes;
    const std::string shown = path == "-" ? "standard input" : path;
    unsigned char head[64];
    ssize_t n = 0;
    do n = ::read(f.fd, head, sizeof head);
    while (n < 0 && errno == EINTR);
    if (n < 0) throw InputError(fmt::format("{}: cannot be read: {}", shown, std::strerror(errno)));
    bytes.assign(head, head + n);
    const ReadLimit lim = limit(std::string_view(reinterpret_cast<const char*>(head), static_cast<std::size_t>(n)));
    if ((size && *size > lim.max_bytes) || !read_until(f.fd, bytes, lim.max_bytes, shown)) {
        throw InputError(fmt::format("{}: {}{} is too large for the memory budget ({}; at most {} here)", shown, size ? "" : "more than ",
                                     human_bytes(size.value_or(static_cast<double>(bytes.size()))), lim.why, human_bytes(lim.max_bytes)));
    }
    return bytes;
}

// --- writing: the temporary files a signal removes ---

namespace {

// A stack of paths to remove, fixed in size so that a signal handler can walk it. An entry is
// written whole before the count that publishes it is raised.
struct CleanupEntry {
    char path[4096];
    bool folder;
    bool with_files;  // a folder whose files go with it (a set being made, or the set it replaced)
};
constexpr std::size_t kCleanupSlots = 64;
CleanupEntry g_cleanup[kCleanupSlots];
volatile std::sig_atomic_t g_cleanup_count = 0;

std::size_t cleanup_push(const std::string& path, bool folder, bool with_files = false)
{
    const auto at = static_cast<std::size_t>(g_cleanup_count);
    if (at >= kCleanupSlots || path.size() >= sizeof g_cleanup[0].path) throw OutputError(fmt::format("cannot write {}: too many files at once", path));
    std::memcpy(g_cleanup[at].path, path.c_str(), path.size() + 1);
    g_cleanup[at].folder = folder;
    g_cleanup[at].with_files = with_files;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    g_cleanup_count = static_cast<std::sig_atomic_t>(at + 1);
    return at;
}

// One entry as getdents64 returns it (the kernel's struct linux_dirent64).
struct linux_dirent64 {
    std::uint64_t d_ino;
    std::int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[1];
};

// Removes everything in the folder FD (its subfolders with theirs, to DEPTH levels, links never
// followed), with system calls alone (async-signal-safe); closes FD.
void remove_tree_at(int fd, int depth)
{
    alignas(8) char buf[4096];
    for (long n; (n = ::syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0;) {
        for (long at = 0; at < n;) {
            const auto* d = reinterpret_cast<const linux_dirent64*>(buf + at);
            at += d->d_reclen;
            const bool dot = d->d_name[0] == '.' && (d->d_name[1] == '\0' || (d->d_name[1] == '.' && d->d_name[2] == '\0'));
            if (dot) continue;
            if (d->d_type != DT_DIR) {
                ::unlinkat(fd, d->d_name, 0);
                continue;
            }
            const int sub = depth > 0 ? ::openat(fd, d->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
            if (sub >= 0) remove_tree_at(sub, depth - 1);
            ::unlinkat(fd, d->d_name, AT_REMOVEDIR);
        }
    }
    ::close(fd);
}

// Removes what the folder PATH holds, subfolders included (a folder being made is a few levels
// deep: an exercise per student, its inputs).
void remove_files_in(const char* path)
{
    const int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) remove_tree_at(fd, 8);
}

// Removes the entries from the top down to `from` (async-signal-safe when remove is true).
void cleanup_down_to(std::size_t from, bool remove)
{
    while (static_cast<std::size_t>(g_cleanup_count) > from) {
        const auto at = static_cast<std::size_t>(g_cleanup_count) - 1;
        if (remove && g_cleanup[at].with_files) remove_files_in(g_cleanup[at].path);
        if (remove) g_cleanup[at].folder ? ::rmdir(g_cleanup[at].path) : ::unlink(g_cleanup[at].path);
        g_cleanup_count = static_cast<std::sig_atomic_t>(at);
    }
}

extern "C" void remove_temporaries_and_die(int sig)
{
    cleanup_down_to(0, true);
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

std::string temp_name(const std::string& name)
{
    return fmt::format(".{}.attnlab-{}.tmp", name.substr(0, 100), static_cast<long>(::getpid()));
}

void plain_name(const std::string& name, const std::string& who)
{
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos)
        throw std::logic_error(fmt::format("{}: '{}' is not a plain file name", who, name));
}

std::string why(int err) { return std::strerror(err); }

// A path without its trailing slashes, its folder and its last part: "a/b/" is "a/b", "a" and
// "b"; "b" is "b", "." and "b"; "/b" is "/b", "/" and "b".
struct PathParts {
    std::string path, folder, name;
};
PathParts split_path(std::string path)
{
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) return {path, ".", path};
    return {path, slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

// 0, or the errno of the write that failed.
int write_all(int fd, std::string_view bytes)
{
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return n < 0 ? errno : EIO;
        done += static_cast<std::size_t>(n);
    }
    return 0;
}

}  // namespace

void install_write_cleanup()
{
    struct sigaction sa {};
    sa.sa_handler = remove_temporaries_and_die;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&sa.sa_mask, sig);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
        struct sigaction old {};
        if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;  // nohup keeps its meaning
        ::sigaction(sig, &sa, nullptr);
    }
    std::signal(SIGXFSZ, SIG_IGN);
}

// --- writing: folders and files ---

void check_output_folder(const std::string& dir, const std::string& who)
{
    struct stat st {};
    if (::stat(dir.c_str(), &st) == 0) {
        if (!S_ISDIR(st.st_mode)) throw InputError(fmt::format("{} {}: not a directory", who, dir));
        if (::access(dir.c_str(), W_OK | X_OK) != 0) throw InputError(fmt::format("{} {}: cannot be written: {}", who, dir, why(errno)));
        return;
    }
    if (errno != ENOENT) throw InputError(fmt::format("{} {}: {}", who, dir, why(errno)));
    const std::string parent = split_path(dir).folder;
    if (::stat(parent.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        throw InputError(fmt::format("{} {}: cannot be made: its folder {} does not exist", who, dir, parent));
    if (::access(parent.c_str(), W_OK | X_OK) != 0) throw InputError(fmt::format("{} {}: cannot be made in {}: {}", who, dir, parent, why(errno)));
}

void check_output_file(const std::string& path, const std::string& who)
{
    const std::string dir = split_path(path).folder;
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) throw InputError(fmt::format("{} {}: the folder {} does not exist", who, path, dir));
    if (::access(dir.c_str(), W_OK | X_OK) != 0) throw InputError(fmt::format("{} {}: the folder {} cannot be written: {}", who, path, dir, why(errno)));
    if (path.back() == '/' || (::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)))
        throw InputError(fmt::format("{} {}: is a directory", who, path));
}

OutputFolder::OutputFolder(int fd, std::string path, std::string who) : fd_(fd), path_(std::move(path)), shown_(path_), who_(std::move(who))
{
}

OutputFolder::OutputFolder(const std::string& dir, const std::string& who, bool create) : path_(dir), shown_(dir), who_(who)
{
    if (create && ::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST) throw OutputError(fmt::format("{}: cannot make {}: {}", who, dir, why(errno)));
    fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0) throw OutputError(fmt::format("{}: cannot open the folder {}: {}", who, dir, why(errno)));
}

OutputFolder::OutputFolder(OutputFolder&& other) noexcept
    : fd_(other.fd_), path_(std::move(other.path_)), shown_(std::move(other.shown_)), who_(std::move(other.who_))
{
    other.fd_ = -1;
}

OutputFolder::~OutputFolder()
{
    if (fd_ >= 0) ::close(fd_);
}

void OutputFolder::write(const std::string& name, std::string_view bytes, mode_t mode) const
{
    plain_name(name, who_);
    const std::string temp = temp_name(name), shown = shown_ + "/" + name;
    const std::size_t entry = cleanup_push(path_ + "/" + temp, false);
    int err = 0;
    const int fd = ::openat(fd_, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0) err = errno;
    else {
        err = write_all(fd, bytes);
        if (::close(fd) != 0 && err == 0) err = errno;
        if (err == 0 && ::renameat(fd_, temp.c_str(), fd_, name.c_str()) != 0) err = errno;
    }
    if (err != 0) {
        cleanup_down_to(entry, true);
        throw OutputError(fmt::format("{}: cannot write {}: {}", who_, shown, why(err)));
    }
    cleanup_down_to(entry, false);
}

void OutputFolder::remove(const std::string& name) const
{
    plain_name(name, who_);
    if (::unlinkat(fd_, name.c_str(), 0) != 0 && errno != ENOENT)
        throw OutputError(fmt::format("{}: cannot remove {}/{}: {}", who_, shown_, name, why(errno)));
}

std::optional<FileId> OutputFolder::id_of(const std::string& name) const
{
    struct stat st {};
    if (::fstatat(fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
    return FileId{st.st_dev, st.st_ino};
}

std::optional<std::string> OutputFolder::read_small(const std::string& name, std::size_t max) const
{
    Fd f;
    f.fd = ::openat(fd_, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st {};
    if (f.fd < 0 || ::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::size_t>(st.st_size) > max) return std::nullopt;
    std::vector<unsigned char> bytes;
    if (!read_until(f.fd, bytes, static_cast<double>(max), path_ + "/" + name)) return std::nullopt;
    return std::string(bytes.begin(), bytes.end());
}

OutputFolder OutputFolder::subfolder(const std::string& name) const
{
    plain_name(name, who_);
    const bool made = ::mkdirat(fd_, name.c_str(), 0777) == 0;
    if (!made && errno != EEXIST) throw OutputError(fmt::format("{}: cannot make {}/{}: {}", who_, shown_, name, why(errno)));
    const int fd = ::openat(fd_, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        struct stat st {};
        const bool link = ::fstatat(fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
        throw OutputError(fmt::format("{}: cannot write into {}/{}: {}", who_, shown_, name, link ? "it is a symbolic link" : why(err)));
    }
    OutputFolder sub(fd, path_ + "/" + name, who_);
    sub.shown_ = shown_ + "/" + name;
    return sub;
}

NewFolder::NewFolder(const std::string& dir, const std::string& who) : who_(who)
{
    const PathParts parts = split_path(dir);
    dir_ = parts.path;
    temp_ = dir_.substr(0, dir_.size() - parts.name.size()) + temp_name(parts.name);  // beside DIR, in its folder
    first_entry_ = static_cast<std::size_t>(g_cleanup_count);
    // known to the cleanup before it exists: a signal between the two would leave it behind
    cleanup_push(temp_, true, true);
    if (::mkdir(temp_.c_str(), 0777) != 0) {
        const int err = errno;
        cleanup_down_to(first_entry_, false);
        throw OutputError(fmt::format("{}: cannot make {}: {}", who, temp_, why(err)));
    }
    try {
        root_.emplace(OutputFolder(temp_, who, false));
    } catch (...) {
        cleanup_down_to(first_entry_, true);
        throw;
    }
    root_->shown_ = dir_;  // messages name the folder being made, not its temporary name
}

NewFolder::~NewFolder()
{
    root_.reset();
    cleanup_down_to(first_entry_, !committed_);
}

void NewFolder::commit()
{
    if (::rename(temp_.c_str(), dir_.c_str()) != 0) {
        const int err = errno;
        throw OutputError(fmt::format("{}: cannot put the folder in place at {}: {}", who_,
                                      dir_, err == ENOTEMPTY || err == EEXIST ? "it is not empty" : why(err)));
    }
    committed_ = true;
}

void NewFolder::exchange()
{
    if (::syscall(SYS_renameat2, AT_FDCWD, temp_.c_str(), AT_FDCWD, dir_.c_str(), RENAME_EXCHANGE) != 0)
        throw OutputError(fmt::format("{}: cannot put the new files in place at {}: {}", who_, dir_, why(errno)));
    // the temporary name now holds the set replaced (and links to the files kept): it goes, as
    // an uncommitted folder does
}

namespace {

// Whether DIR holds a folder (a set with folders beside it is replaced file by file).
bool holds_folder(int dir_fd)
{
    const int fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR* d = fd >= 0 ? ::fdopendir(fd) : nullptr;
    if (d == nullptr) return true;
    bool folder = false;
    while (const dirent* e = ::readdir(d)) {
        if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
        struct stat st {};
        if (::fstatat(dir_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) folder = true;
    }
    ::closedir(d);
    return folder;
}

// Whether the current folder is DIR or below it: a shell there keeps DIR's inode, which an
// exchange would take away.
bool holds_current_folder(const std::string& dir)
{
    char real[PATH_MAX], here[PATH_MAX];
    if (::realpath(dir.c_str(), real) == nullptr || ::getcwd(here, sizeof here) == nullptr) return true;
    const std::string d = real, h = here;
    return h == d || (h.rfind(d == "/" ? d : d + "/", 0) == 0);
}

}  // namespace

FileSet::FileSet(const std::string& dir, const std::string& who) : who_(who)
{
    // the folder locked is the one DIR names once the lock is held: an exchange by another
    // save in between leaves it holding the lock of the folder that went
    for (int attempt = 0;; ++attempt) {
        current_.emplace(OutputFolder(dir, who, true));
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (::flock(current_->fd_, LOCK_EX | LOCK_NB) != 0) {
            if (errno != EWOULDBLOCK || std::chrono::steady_clock::now() > deadline)
                throw OutputError(fmt::format("{}: another program has been writing into {} for a minute: {}", who, dir, why(errno)));
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        struct stat named {}, held {};
        if (::stat(dir.c_str(), &named) == 0 && ::fstat(current_->fd_, &held) == 0 && named.st_ino == held.st_ino && named.st_dev == held.st_dev) break;
        if (attempt > 100) throw OutputError(fmt::format("{}: {} keeps being replaced", who, dir));
    }
    // file by file, in place: a folder inside, a shell's current folder, or DIR a link (the
    // exchange would replace the link, not the folder it names)
    struct stat named {};
    const bool link = ::lstat(dir.c_str(), &named) == 0 && S_ISLNK(named.st_mode);
    if (link || holds_folder(current_->fd_) || holds_current_folder(dir)) return;
    const PathParts parts = split_path(dir);
    staged_.emplace(parts.path, who);
}

FileSet::~FileSet() = default;

const OutputFolder& FileSet::target() const { return staged_ ? staged_->root() : *current_; }

void FileSet::commit(const std::set<std::string>& old_names, const std::set<std::string>& new_names)
{
    if (!staged_) {
        for (const auto& name : old_names)
            if (!new_names.count(name)) current_->remove(name);
        return;
    }
    const OutputFolder& next = staged_->root();
    std::vector<std::string> others;
    {
        const int fd = ::openat(current_->fd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR* d = fd >= 0 ? ::fdopendir(fd) : nullptr;
        if (d == nullptr) throw OutputError(fmt::format("{}: cannot list {}: {}", who_, current_->path(), why(errno)));
        while (const dirent* e = ::readdir(d)) {
            const std::string name = e->d_name;
            if (name != "." && name != ".." && !old_names.count(name) && !new_names.count(name)) others.push_back(name);
        }
        ::closedir(d);
    }
    for (const auto& name : others)  // DIR's other files, kept: linked, not copied
        if (::linkat(current_->fd_, name.c_str(), next.fd_, name.c_str(), 0) != 0)
            throw OutputError(fmt::format("{}: cannot keep {}/{} beside the new files: {}", who_, current_->path(), name, why(errno)));
    struct stat st {};
    if (::fstat(current_->fd_, &st) == 0) {
        (void)!::fchmod(next.fd_, st.st_mode & 07777);
        if (::geteuid() == 0) (void)!::fchown(next.fd_, st.st_uid, st.st_gid);
    }
    staged_->exchange();
}

std::string fnv1a64_hex(std::string_view bytes)
{
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
    return fmt::format("fnv1a64:{:016x}", h);
}

void write_file_atomic(const std::string& path, std::string_view bytes, const std::string& who)
{
    const PathParts parts = split_path(path);
    OutputFolder(parts.folder, who, false).write(parts.name, bytes);
}

}  // namespace attnlab

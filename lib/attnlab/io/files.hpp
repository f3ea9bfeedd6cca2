// One way to read files and one way to write them, for files other people made and folders
// that go round a class.
//
// Reading: regular files only, or standard input for "-". A directory, a FIFO, a device or a
// socket is refused up front, naming what it is; nothing waits on it. The size allowed
// depends on what the file holds (its first bytes say), so that parsing it stays inside the
// memory budget.
//
// Writing: a file is whole or absent. It is written to a temporary name in its folder and
// renamed over the old one; the names written in a folder are never followed as symlinks; on
// SIGINT, SIGTERM and SIGHUP the temporary files are removed. A new folder is built beside its
// place and renamed into it, so that after a failure it is absent, never half-made.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace attnlab {

// A file could not be written (a full disk, a read-only folder, a closed pipe): exit status 2.
struct OutputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// At most about max bytes of text, for an error line or a report: control characters and
// bytes that would drive a terminal are escaped (\r, \x1b, \u009b, ...), bytes that are not
// UTF-8 become U+FFFD, and a longer text is cut at a character's boundary and ends in "...".
std::string excerpt(std::string_view bytes, std::size_t max = 80);

// The length of the well-formed UTF-8 sequence that starts at bytes[i] (1 to 4), or 0.
std::size_t utf8_sequence(std::string_view bytes, std::size_t i);
// bytes with each byte that is not part of a well-formed UTF-8 sequence replaced by U+FFFD,
// so that any JSON, XML or CSV reader takes it; nothing else is changed.
std::string valid_utf8(std::string_view bytes);

// Which file a path names (links followed), to tell whether a write would replace a file
// that the same run reads.
struct FileId {
    dev_t dev = 0;
    ino_t ino = 0;
    bool operator==(const FileId& o) const { return dev == o.dev && ino == o.ino; }
};
std::optional<FileId> file_id(const std::string& path);

// --- reading ---

// The largest file accepted, from its first bytes (at most 64 of them): a format's parse
// cost divides the memory budget. why names the format and its cost for the refusal.
struct ReadLimit {
    double max_bytes = 0.0;
    std::string why;
};
using LimitOf = std::function<ReadLimit(std::string_view head)>;

// PATH's bytes: a regular file, or standard input for "-" (read once per run, refused once
// more than limit bytes have arrived). Throws InputError naming who and what is wrong.
std::vector<unsigned char> read_input_file(const std::string& path, const LimitOf& limit);

// --- writing ---

// Before any work: DIR is a writable folder, or is missing and can be made (its parent is a
// writable folder). PATH's folder exists and can be written, and PATH is not a folder.
void check_output_folder(const std::string& dir, const std::string& who);
void check_output_file(const std::string& path, const std::string& who);

// An open folder to write in. Names written in it are plain names, never followed as links.
class OutputFolder {
public:
    // DIR itself may be a link (the user named it); create makes it (one level) when missing.
    OutputFolder(const std::string& dir, const std::string& who, bool create);
    OutputFolder(OutputFolder&& other) noexcept;
    OutputFolder& operator=(OutputFolder&&) = delete;
    OutputFolder(const OutputFolder&) = delete;
    ~OutputFolder();

    // NAME whole or absent: written to a temporary name, then renamed over NAME (a link at
    // NAME is replaced, never followed).
    void write(const std::string& name, std::string_view bytes, mode_t mode = 0644) const;
    // NAME removed when it is there (a link is removed, not what it points to).
    void remove(const std::string& name) const;
    // The file NAME is (not following a link), when there is one.
    std::optional<FileId> id_of(const std::string& name) const;
    // NAME's bytes when it is a regular file (not a link) of at most max bytes.
    std::optional<std::string> read_small(const std::string& name, std::size_t max) const;
    // The folder NAME inside this one, made when missing; a link there is refused.
    OutputFolder subfolder(const std::string& name) const;

    const std::string& path() const { return path_; }

private:
    OutputFolder(int fd, std::string path, std::string who);
    int fd_ = -1;
    std::string path_, shown_, who_;  // shown_: the path messages name (a folder being made: where it will be)
    friend class NewFolder;
    friend class FileSet;
};

// A folder made whole: its files are written into a temporary folder beside DIR, which
// commit() renames to DIR (missing or empty). Destroyed without commit, it removes everything
// it wrote.
class NewFolder {
public:
    NewFolder(const std::string& dir, const std::string& who);
    NewFolder(const NewFolder&) = delete;
    NewFolder& operator=(const NewFolder&) = delete;
    ~NewFolder();
    const OutputFolder& root() const { return *root_; }
    void commit();
    // Swaps the folder with DIR (existing) in one rename; what DIR held is then removed with
    // the temporary folder.
    void exchange();

private:
    std::string dir_, temp_, who_;
    std::size_t first_entry_ = 0;
    std::optional<OutputFolder> root_;
    bool committed_ = false;
};

// A set of files in the folder DIR (--save's tensors and run.json) replaced as one. DIR is made
// when missing and locked (flock) while this lives, so that two programs saving into it never
// mix their files. The new set is written into a folder beside DIR (target()), which commit()
// gives a hard link to each of DIR's other files and then swaps with DIR in one rename
// (RENAME_EXCHANGE): an interruption at any point leaves the old set whole or the new set
// whole. Where DIR holds a folder, is a link, or is the current folder or above it (a shell
// there would keep the folder that goes), the files are replaced one by one in DIR, each whole.
class FileSet {
public:
    FileSet(const std::string& dir, const std::string& who);
    FileSet(const FileSet&) = delete;
    FileSet& operator=(const FileSet&) = delete;
    ~FileSet();
    const OutputFolder& current() const { return *current_; }
    const OutputFolder& target() const;
    // OLD_NAMES: the set replaced (those not in NEW_NAMES go); NEW_NAMES: what was written.
    void commit(const std::set<std::string>& old_names, const std::set<std::string>& new_names);

private:
    std::string who_;
    std::optional<OutputFolder> current_;
    std::optional<NewFolder> staged_;
};

// SIGINT, SIGTERM and SIGHUP remove the temporary files and folders being written, then end
// the program as the signal would have; SIGXFSZ is ignored, so that a file-size limit is a
// failed write (EFBIG) with a message rather than a silent kill.
void install_write_cleanup();

// FNV-1a (64 bits) of BYTES, as 16 hex digits after "fnv1a64:": a name for what the bytes are,
// to tell equal files apart from different ones (not against someone who forges a collision).
std::string fnv1a64_hex(std::string_view bytes);

// Writes PATH whole or not at all (its folder opened, PATH's last part written as a plain name).
void write_file_atomic(const std::string& path, std::string_view bytes, const std::string& who);

}  // namespace attnlab

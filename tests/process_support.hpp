// What the tests of exercise grade ask of the machine's processes.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <string>

// Whether a process whose command line holds MARKER is alive (a zombie, already dead, is not).
// The shells that started it (sh -c, run.sh), whose command lines hold the marker too, are passed over.
inline bool process_alive(const std::string& marker)
{
    // A process may end while its files are read: the read then fails (ESRCH), which std::ifstream
    // turns into an exception; plain reads give what was read, maybe nothing.
    const auto read = [](const std::string& path) {
        std::string text;
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return text;
        char buffer[4096];
        for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<size_t>(n));
        ::close(fd);
        return text;
    };
    std::error_code ignored;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ignored)) {
        const std::string name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::string cmdline = read(entry.path().string() + "/cmdline");
        for (char& c : cmdline) c = c == '\0' ? ' ' : c;
        if (cmdline.find(marker) == std::string::npos || cmdline.find("sh -c") != std::string::npos || cmdline.find("run.sh") != std::string::npos)
            continue;
        const std::string stat = read(entry.path().string() + "/stat");
        const auto paren = stat.rfind(')');
        if (paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z') return true;
    }
    return false;
}

#include "attnlab/exercise/roster.hpp"

#include "attnlab/core/report.hpp"
#include "attnlab/io/files.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sys/random.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <set>

namespace attnlab {

namespace {

std::uint64_t rotl(std::uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

void sip_round(std::uint64_t& v0, std::uint64_t& v1, std::uint64_t& v2, std::uint64_t& v3)
{
    v0 += v1, v1 = rotl(v1, 13), v1 ^= v0, v0 = rotl(v0, 32);
    v2 += v3, v3 = rotl(v3, 16), v3 ^= v2;
    v0 += v3, v3 = rotl(v3, 21), v3 ^= v0;
    v2 += v1, v1 = rotl(v1, 17), v1 ^= v2, v2 = rotl(v2, 32);
}

std::uint64_t little_endian(const std::uint8_t* p, std::size_t n)
{
    std::uint64_t out = 0;
    for (std::size_t i = 0; i < n; ++i) out |= std::uint64_t{p[i]} << (8 * i);
    return out;
}

}  // namespace

std::uint64_t siphash24(const std::array<std::uint8_t, 16>& key, std::string_view message)
{
    const std::uint64_t k0 = little_endian(key.data(), 8), k1 = little_endian(key.data() + 8, 8);
    std::uint64_t v0 = 0x736f6d6570736575ULL ^ k0, v1 = 0x646f72616e646f6dULL ^ k1, v2 = 0x6c7967656e657261ULL ^ k0, v3 = 0x7465646279746573ULL ^ k1;
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(message.data());
    const std::size_t whole = message.size() / 8 * 8;
    for (std::size_t i = 0; i < whole; i += 8) {
        const std::uint64_t m = little_endian(bytes + i, 8);
        v3 ^= m;
        sip_round(v0, v1, v2, v3), sip_round(v0, v1, v2, v3);
        v0 ^= m;
    }
    // the last block: the bytes left, and the message's length (mod 256) in the top byte
    const std::uint64_t last = little_endian(bytes + whole, message.size() - whole) | (std::uint64_t{message.size() & 0xff} << 56);
    v3 ^= last;
    sip_round(v0, v1, v2, v3), sip_round(v0, v1, v2, v3);
    v0 ^= last;
    v2 ^= 0xff;
    for (int i = 0; i < 4; ++i) sip_round(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

// --- the roster ---

namespace {

bool valid_folder_name(std::string_view name)
{
    if (name.empty() || name.size() > 255 || name == "." || name == "..") return false;
    for (unsigned char c : name)
        if (c < 0x20 || c == 0x7f || c == '/') return false;
    return true;
}

// The rows of an RFC 4180 text, one character at a time: cells split at commas, a quoted cell
// may hold commas, quotes ("") and line breaks. Blank rows are left out; each row keeps the
// number of the line it starts on.
class CsvRows {
public:
    using Row = std::pair<std::size_t, std::vector<std::string>>;

    void take(std::string_view text, std::size_t& i)
    {
        const char c = text[i];
        if (c == '\n') ++line_;
        if (quoted_) return quoted(text, i);
        if (c == '"' && row_.back().empty()) quoted_ = true, blank_ = false;
        else if (c == ',') row_.emplace_back(), blank_ = false;
        else if (c == '\n') end_row();
        else if (c != '\r') row_.back() += c, blank_ = blank_ && (c == ' ' || c == '\t');
    }
    std::vector<Row> finish(const std::string& what)
    {
        if (quoted_) throw InputError(fmt::format("{}: line {}: a quoted cell is not closed", what, row_line_));
        end_row();
        return std::move(rows_);
    }

private:
    void quoted(std::string_view text, std::size_t& i)
    {
        if (text[i] != '"') row_.back() += text[i];
        else if (i + 1 < text.size() && text[i + 1] == '"') row_.back() += '"', ++i;
        else quoted_ = false;
    }
    void end_row()
    {
        if (!blank_) rows_.emplace_back(row_line_, std::move(row_));
        row_.assign(1, "");
        blank_ = true;
        row_line_ = line_;
    }

    std::vector<Row> rows_;
    std::vector<std::string> row_ = std::vector<std::string>(1);
    std::size_t line_ = 1, row_line_ = 1;
    bool quoted_ = false, blank_ = true;
};

std::vector<CsvRows::Row> csv_rows(std::string_view text, const std::string& what)
{
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
    CsvRows rows;
    for (std::size_t i = 0; i < text.size(); ++i) rows.take(text, i);
    return rows.finish(what);
}

std::size_t column_named(const std::vector<std::string>& header, const std::string& name, const std::string& what)
{
    for (std::size_t i = 0; i < header.size(); ++i)
        if (header[i] == name) return i;
    throw InputError(fmt::format("{}: the header (line 1) has no column \"{}\"; it has {}", what, excerpt(name, 64), excerpt(fmt::format("{}", fmt::join(header, ", ")))));
}

// A row's id and folder, each valid and each the roster's only one; refusals name the line.
void check_row(const RosterRow& row, std::size_t line, const std::string& what, bool header, std::set<std::string>& ids, std::set<std::string>& folders)
{
    if (!valid_student_id(row.id)) {
        throw InputError(fmt::format("{}: line {}: '{}' is not a student id (1 to 64 letters, digits and . _ @ + -, not starting with . or -){}", what, line,
                                     excerpt(row.id, 64), header ? "" : "; if the first line is a header, name the id's column with --roster-column"));
    }
    if (!valid_folder_name(row.folder)) throw InputError(fmt::format("{}: line {}: '{}' is not a folder name", what, line, excerpt(row.folder, 64)));
    if (!ids.insert(row.id).second) throw InputError(fmt::format("{}: line {}: student {} is in the roster twice", what, line, row.id));
    if (!folders.insert(row.folder).second) throw InputError(fmt::format("{}: line {}: two students hand in folder '{}'", what, line, excerpt(row.folder, 64)));
}

}  // namespace

std::vector<RosterRow> parse_roster(std::string_view text, const std::string& what, const RosterColumns& columns)
{
    auto rows = csv_rows(text, what);
    const bool header = !columns.id.empty() || !columns.folder.empty();
    if (header && rows.empty()) throw InputError(fmt::format("{}: no header row naming the roster's columns", what));
    const std::size_t id_at = columns.id.empty() ? 0 : column_named(rows.front().second, columns.id, what);
    const std::size_t folder_at = columns.folder.empty() ? id_at : column_named(rows.front().second, columns.folder, what);
    std::vector<RosterRow> out;
    std::set<std::string> ids, folders;
    for (std::size_t r = header ? 1 : 0; r < rows.size(); ++r) {
        const auto& [line, cells] = rows[r];
        const auto cell = [&](std::size_t at) { return at < cells.size() ? cells[at] : std::string(); };
        RosterRow row{cell(id_at), cell(folder_at)};
        check_row(row, line, what, header, ids, folders);
        if (out.size() == kMaxRoster) throw InputError(fmt::format("{}: more than {} students", what, kMaxRoster));
        out.push_back(std::move(row));
    }
    if (out.empty()) throw InputError(fmt::format("{}: no student in the roster", what));
    return out;
}

// --- the variants ---

std::string new_secret()
{
    std::array<std::uint8_t, 16> key{};
    std::size_t got = 0;
    while (got < key.size()) {
        const ssize_t n = ::getrandom(key.data() + got, key.size() - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw std::runtime_error(fmt::format("getrandom: {}", std::strerror(errno)));
        got += static_cast<std::size_t>(n);
    }
    std::string out;
    for (auto b : key) out += fmt::format("{:02x}", b);
    return out;
}

std::array<std::uint8_t, 16> secret_key(const std::string& secret)
{
    std::array<std::uint8_t, 16> key{};
    if (secret.size() != 32 || secret.find_first_not_of("0123456789abcdef") != std::string::npos)
        throw InputError("the grading file's \"variants\".\"secret\" is not 32 hex digits; make the exercise again with attnlab exercise new --roster");
    for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<std::uint8_t>(std::stoul(secret.substr(2 * i, 2), nullptr, 16));
    return key;
}

namespace {

// One seed of one student: the keyed hash of what it is for, the exercise and the id, each
// ended by a zero byte so that no two messages run into each other.
std::uint64_t student_seed(const std::string& exercise, const Variants& v, const std::string& id, const std::string& purpose)
{
    std::string message = "attnlab-variant";
    for (const std::string* part : {&exercise, &id, &purpose}) message += '\0', message += *part;
    return siphash24(secret_key(v.secret), message);
}

}  // namespace

GradeCase student_case(const std::string& exercise, const Variants& v, const std::string& id)
{
    const GradeCase c{"visible", false, student_seed(exercise, v, id, "visible"), {}};
    const auto made = drawn_case(exercise, c, v.fixed);
    if (!made) throw InputError(fmt::format("exercise {}: no variant of student {} holds at the sizes given; give fewer sizes with --roster", exercise, id));
    GradeCase out = made->config;
    out.sizes.clear();
    for (const auto& key : made->made.info.sizes) out.sizes[key] = made->made.sizes.at(key);
    return out;
}

std::vector<std::uint64_t> student_hidden_seeds(const std::string& exercise, const Variants& v, const std::string& id, int n)
{
    std::vector<std::uint64_t> out;
    for (int i = 1; i <= n; ++i) out.push_back(student_seed(exercise, v, id, fmt::format("hidden-{}", i)));
    return out;
}

}  // namespace attnlab

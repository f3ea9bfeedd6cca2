// A variant for every student: `exercise new NAME DIR --roster FILE` writes DIR/<id>/ for each
// student of the roster, each with its own seed and sizes, and `exercise grade` grades each
// submission on its student's visible case and on hidden cases of the student's own.
//
// Every seed comes from a secret kept in the teacher's grading file (never in a student's
// folder) and the student's id, through SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast
// short-input PRF", 2012), a keyed pseudorandom function: a student who knows their own id and
// seed, and a classmate's id, cannot work out the classmate's seeds or anyone's hidden ones.
#pragma once

#include "attnlab/exercise/exercise_file.hpp"
#include "attnlab/exercise/grade.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnlab {

// SipHash-2-4 of MESSAGE under a 128-bit KEY (its first 8 bytes k0, the next k1, little-endian).
std::uint64_t siphash24(const std::array<std::uint8_t, 16>& key, std::string_view message);

// One student of a roster: the id their folder and seeds are made from, and the name of the
// folder their submission comes back in (the id itself, unless a column of the roster says).
struct RosterRow {
    std::string id, folder;
};

// Which columns of a roster hold the id and the submission's folder name. With either named,
// the first row is a header that names them; with neither, every row is a student and the first
// column is the id (the other columns are ignored).
struct RosterColumns {
    std::string id, folder;
};

// A roster as CSV (RFC 4180: commas, quoted cells, CRLF or LF, a UTF-8 BOM): one student a row,
// blank rows skipped. An id is 1 to 64 letters, digits and . _ @ + -, not starting with . or -
// (it names a folder); a folder name is 1 to 255 bytes, no / and no control character. Throws
// InputError naming the row: a bad id or folder, an id or a folder twice, a missing column, no
// student, more than kMaxRoster.
std::vector<RosterRow> parse_roster(std::string_view text, const std::string& what, const RosterColumns& columns);

// 128 bits from the kernel's random source, as 32 hex digits.
std::string new_secret();
// Throws InputError unless SECRET is 32 hex digits.
std::array<std::uint8_t, 16> secret_key(const std::string& secret);

// The student's visible case: a seed of their own, and each size not fixed drawn from that seed
// within the exercise's size_range, at sizes the exercise holds and where every mistake it names
// gives a wrong answer (no free points). Throws InputError when the fixed sizes leave none.
GradeCase student_case(const std::string& exercise, const Variants& v, const std::string& id);
// The student's hidden seeds 1..n: the hidden cases of their own.
std::vector<std::uint64_t> student_hidden_seeds(const std::string& exercise, const Variants& v, const std::string& id, int n);

}  // namespace attnlab

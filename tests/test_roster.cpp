// A variant for every student: the keyed hash the seeds come from, the roster's CSV, the
// grading file that keeps the secret, and the cases a student is given and graded on.
#include "attnlab/exercise/exercise_file.hpp"
#include "attnlab/exercise/roster.hpp"

#include "attnlab/core/report.hpp"

#include <doctest/doctest.h>

#include <set>
#include <string>

using namespace attnlab;

namespace {

std::array<std::uint8_t, 16> counting_key()
{
    std::array<std::uint8_t, 16> key{};
    for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<std::uint8_t>(i);
    return key;
}

std::string counting_message(std::size_t n)
{
    std::string m;
    for (std::size_t i = 0; i < n; ++i) m += static_cast<char>(i);
    return m;
}

Variants class_of(std::vector<std::string> ids, std::map<std::string, long> fixed = {})
{
    return {"000102030405060708090a0b0c0d0e0f", std::move(fixed), std::move(ids)};
}

}  // namespace

TEST_CASE("siphash24 gives the reference vectors of Aumasson and Bernstein (key 00..0f, message 00..n-1)")
{
    // from the paper's reference implementation (vectors.h), outputs read as little-endian words
    const std::vector<std::pair<std::size_t, std::uint64_t>> vectors = {
        {0, 0x726fdb47dd0e0e31ULL},  {1, 0x74f839c593dc67fdULL},  {7, 0xab0200f58b01d137ULL},  {8, 0x93f5f5799a932462ULL},
        {15, 0xa129ca6149be45e5ULL}, {16, 0x3f2acc7f57c29bdbULL}, {63, 0x958a324ceb064572ULL},
    };
    for (const auto& [n, expected] : vectors) CHECK_MESSAGE(siphash24(counting_key(), counting_message(n)) == expected, n);
    auto other = counting_key();
    other[15] ^= 1;  // one bit of the key: another function
    CHECK(siphash24(other, counting_message(15)) != 0xa129ca6149be45e5ULL);
}

TEST_CASE("parse_roster: one id a row, or named columns under a header, and every refusal names the line")
{
    const auto plain = parse_roster("\xEF\xBB\xBF" "alice\r\nbob,ignored\n\n  \ncarol@uni.edu\n", "r.csv", {});
    REQUIRE(plain.size() == 3);
    CHECK(plain[0].id == "alice");
    CHECK(plain[0].folder == "alice");
    CHECK(plain[1].id == "bob");
    CHECK(plain[2].id == "carol@uni.edu");
    const auto named = parse_roster("Name,SID,Folder\n\"Smith, Ann\",a1,\"sub a1, \"\"final\"\"\"\nBo,b2,sub-b2\n", "r.csv", {"SID", "Folder"});
    REQUIRE(named.size() == 2);
    CHECK(named[0].id == "a1");
    CHECK(named[0].folder == "sub a1, \"final\"");
    CHECK(named[1].folder == "sub-b2");
    const auto refused = [](const std::string& text, const RosterColumns& columns) {
        try {
            parse_roster(text, "r.csv", columns);
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    CHECK(refused("alice\nStudent ID\n", {}).find("r.csv: line 2: 'Student ID' is not a student id") == 0);
    CHECK(refused("alice\nStudent ID\n", {}).find("name the id's column with --roster-column") != std::string::npos);
    CHECK(refused("alice\n-rf\n", {}).find("line 2") != std::string::npos);
    CHECK(refused("../x\n", {}).find("line 1") != std::string::npos);
    CHECK(refused("alice\nbob\nalice\n", {}).find("r.csv: line 3: student alice is in the roster twice") == 0);
    CHECK(refused("id,f\na,x\nb,x\n", {"id", "f"}).find("line 3: two students hand in folder 'x'") != std::string::npos);
    CHECK(refused("id,f\na,x/y\n", {"id", "f"}).find("line 2: 'x/y' is not a folder name") != std::string::npos);
    CHECK(refused("id\na\n", {"sid", ""}).find("the header (line 1) has no column \"sid\"; it has id") != std::string::npos);
    CHECK(refused("\"a\n", {}).find("line 1: a quoted cell is not closed") != std::string::npos);
    CHECK(refused("\n\n", {}) == "r.csv: no student in the roster");
    CHECK(valid_student_id(std::string(64, 'a')));
    CHECK_FALSE(valid_student_id(std::string(65, 'a')));
    CHECK_FALSE(valid_student_id(".hidden"));
    CHECK_FALSE(valid_student_id("a b"));
}

TEST_CASE("the grading file keeps the variants, and refuses a secret or a roster it did not write")
{
    GradingFile g{"rope-interleaved", 0, {}, {}, "python3 starter.py", class_of({"a", "b"}, {{"len", 4}})};
    const GradingFile back = parse_grading_file(grading_file_text(g), "g.json");
    REQUIRE(back.variants.has_value());
    CHECK(back.variants->secret == g.variants->secret);
    CHECK(back.variants->ids == std::vector<std::string>{"a", "b"});
    CHECK(back.variants->fixed == std::map<std::string, long>{{"len", 4}});
    CHECK_FALSE(parse_grading_file(grading_file_text({"pe", 1, {}, {2}, "x", std::nullopt}), "g.json").variants.has_value());
    std::string text = grading_file_text(g);
    const auto with = [&](const std::string& from, const std::string& to) {
        std::string t = text;
        t.replace(t.find(from), from.size(), to);
        return t;
    };
    CHECK_THROWS_WITH_AS(parse_grading_file(with("000102", "00010Z"), "g.json"), doctest::Contains("\"variants\".\"secret\" is not 32 hex digits"), InputError);
    CHECK_THROWS_WITH_AS(parse_grading_file(with("\"b\"", "\"a\""), "g.json"), doctest::Contains("holds a student twice"), InputError);
    CHECK_THROWS_WITH_AS(parse_grading_file(with("\"b\"", "\"../b\""), "g.json"), doctest::Contains("holds something other than a student id"), InputError);
}

TEST_CASE("student_case: a seed and sizes of each student's own, the same every time, within the ranges and with no free points")
{
    const Variants v = class_of({"a", "b", "c"});
    const ExerciseInfo& info = find_exercise("rope-interleaved");
    std::set<std::uint64_t> seeds;
    for (const auto& id : v.ids) {
        const GradeCase c = student_case("rope-interleaved", v, id);
        CHECK(c.name == "visible");
        CHECK(c.seed == student_case("rope-interleaved", v, id).seed);  // the same for grading as when the folder was made
        CHECK(c.sizes == student_case("rope-interleaved", v, id).sizes);
        seeds.insert(c.seed);
        for (const auto& [key, range] : info.size_range) {
            CHECK(c.sizes.at(key) >= range.first);
            CHECK(c.sizes.at(key) <= range.second);
        }
        const auto made = drawn_case("rope-interleaved", c, c.sizes);
        REQUIRE(made.has_value());
        CHECK(made->made.mistakes.size() == 5);  // every catalogued mistake gives a wrong answer here
        const auto hidden = student_hidden_seeds("rope-interleaved", v, id, 3);
        CHECK(std::set<std::uint64_t>(hidden.begin(), hidden.end()).size() == 3);
        CHECK(hidden[0] != c.seed);
        CHECK(student_hidden_seeds("rope-interleaved", v, id, 2) == std::vector<std::uint64_t>(hidden.begin(), hidden.begin() + 2));
    }
    CHECK(seeds.size() == 3);
    // another secret, another class; another exercise, other seeds
    Variants other = v;
    other.secret[0] = '1';
    CHECK(student_case("rope-interleaved", other, "a").seed != student_case("rope-interleaved", v, "a").seed);
    CHECK(student_case("rope-half", v, "a").seed != student_case("rope-interleaved", v, "a").seed);
    // a size the teacher fixed is every student's
    const Variants fixed = class_of({"a", "b"}, {{"len", 5}});
    CHECK(student_case("rope-interleaved", fixed, "a").sizes.at("len") == 5);
    CHECK(student_case("rope-interleaved", fixed, "b").sizes.at("len") == 5);
    // sizes at which the exercise holds no variant with every mistake wrong are refused
    CHECK_THROWS_WITH_AS(student_case("rope-interleaved", class_of({"a"}, {{"dim", 2}}), "a"), doctest::Contains("no variant of student a holds"), InputError);
}

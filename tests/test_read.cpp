// Reading a learner's tensor: attnlab's own CSV and JSON forms, plain matrices and lists,
// and the hostile files the readers must refuse with a message.
#include "attnlab/core/report.hpp"
#include "attnlab/io/read.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

using namespace attnlab;

TEST_CASE("CSV: attnlab's long form, its --wide form, a plain matrix with or without a header")
{
    auto t = parse_csv_tensor("batch,query,value\n0,0,1\n0,1,2\n1,0,-inf\n1,1,nan\n", "long.csv");
    CHECK(t.shape == std::vector<std::size_t>{2, 2});
    CHECK(t.axes == std::vector<std::string>{"batch", "query"});
    CHECK(t.values[2] == -INFINITY);
    CHECK(std::isnan(t.values[3]));
    t = parse_csv_tensor("pos,d0,d1,d2\n0,0,1,0\n1,0.84,0.54,0.01\n", "wide.csv");
    CHECK(t.shape == std::vector<std::size_t>{2, 3});
    CHECK(t.values[3] == 0.84);
    t = parse_csv_tensor("c0,c1\n1,2\n3,4\n", "pandas.csv");  // a header, but not attnlab's wide one
    CHECK(t.shape == std::vector<std::size_t>{2, 2});
    CHECK(t.values == std::vector<double>{1, 2, 3, 4});
    t = parse_csv_tensor("1, 2.5\r\n3,inf\r\n", "plain.csv");
    CHECK(t.values == std::vector<double>{1, 2.5, 3, INFINITY});
}

TEST_CASE("CSV: a BOM is skipped, a header has no number, pandas' index column is dropped with a note")
{
    auto t = parse_csv_tensor("\xEF\xBB\xBF" "1,2\n3,4\n", "excel.csv");  // Excel's "CSV UTF-8"
    CHECK(t.shape == std::vector<std::size_t>{2, 2});
    CHECK(t.values == std::vector<double>{1, 2, 3, 4});
    t = parse_csv_tensor("\xEF\xBB\xBF" "a,b\n1,2\n", "excel-header.csv");
    CHECK(t.values == std::vector<double>{1, 2});
    std::vector<std::string> notes;
    t = parse_csv_tensor(",0,1,2\n0,0.5,1.5,2.5\n1,3.5,4.5,5.5\n", "pandas.csv", &notes);  // DataFrame(a).to_csv()
    CHECK(t.shape == std::vector<std::size_t>{2, 3});
    CHECK(t.values == std::vector<double>{0.5, 1.5, 2.5, 3.5, 4.5, 5.5});
    REQUIRE(notes.size() == 1);
    CHECK(notes[0] == "pandas.csv: the first column, unnamed and counting 0, 1, 2, ..., is read as pandas' index and dropped");
    notes.clear();
    t = parse_csv_tensor("Unnamed: 0,x,y\n0,7,8\n1,9,10\n", "pandas2.csv", &notes);
    CHECK(t.values == std::vector<double>{7, 8, 9, 10});
    CHECK(notes.size() == 1);
    notes.clear();
    t = parse_csv_tensor(",x,y\n5,7,8\n6,9,10\n", "not-an-index.csv", &notes);  // the first column does not count rows
    CHECK(t.shape == std::vector<std::size_t>{2, 3});
    CHECK(notes.empty());
    t = parse_csv_tensor("1e-400,2\n", "underflow.csv");  // below the smallest subnormal: 0, as numpy reads it
    CHECK(t.values == std::vector<double>{0, 2});
}

TEST_CASE("CSV: every malformed file is refused naming its line and cell, never read as something else")
{
    auto refused = [](const std::string& text, const std::string& message) {
        CAPTURE(text);
        CHECK_THROWS_WITH_AS(parse_csv_tensor(text, "f.csv"), message.c_str(), InputError);
    };
    refused(",1,2\n0,4,5\n1,6\n", "f.csv: line 3 has 2 fields, the first row of numbers 3 (a ragged CSV)");  // pandas header, ragged rows
    refused("1,,2\n3,4,5\n", "f.csv: line 1, cell 2 is empty");  // no longer a header that hides a row
    refused("1,2\n3,x\n", "f.csv: line 2, cell 2 holds 'x', not a number");
    refused(std::string("1,2\n3,4\0" "5\n", 9), "f.csv: line 2, cell 2 holds '4\\x005', not a number");  // a NUL is not the end of a cell
    refused("1,2\n1e400,4\n", "f.csv: line 2, cell 1 holds '1e400', beyond float64's range");
    refused("1,2\n-1e400,4\n", "f.csv: line 2, cell 1 holds '-1e400', beyond float64's range");
    refused("a,b\n1,2\nc,d\n", "f.csv: line 3 holds no number ('c,d'); only the first line may be a header");
    refused("a,b,c\n1,2\n", "f.csv: the header has 3 fields, the rows 2");
    refused("1,2\n3,\x1b]0;title\x07\n", "f.csv: line 2, cell 2 holds '\\x1b]0;title\\x07', not a number");
    refused("1,infinity\n", "f.csv: line 1, cell 2 holds 'infinity', not a number");
    const std::string huge(5u << 20, 'x');
    try {
        parse_csv_tensor("1,2\n3," + huge + "\n", "f.csv");
        FAIL("a 5 MB cell was read");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()).size() < 200);  // an excerpt of 80 characters, not the cell
        CHECK(std::string(e.what()).find("xxx...', not a number") != std::string::npos);
    }
}

TEST_CASE("JSON: attnlab's document (the tensor by name, or its main tensor) and bare nested lists")
{
    const std::string doc = R"({"command":"pe","main_tensor":"pe","tensors":[{"name":"freq","data":[1,0.1]},{"name":"pe","data":[[0,1],[0.84,"nan"]]}]})";
    auto t = parse_json_tensor(doc, "run.json", "");
    CHECK(t.shape == std::vector<std::size_t>{2, 2});
    CHECK(std::isnan(t.values[3]));
    CHECK(parse_json_tensor(doc, "run.json", "freq").values == std::vector<double>{1, 0.1});
    CHECK(parse_json_tensor("[[[1,2]],[[3,4]]]", "list.json", "").shape == std::vector<std::size_t>{2, 1, 2});
    CHECK(parse_json_tensor("[true, false]", "b.json", "").values == std::vector<double>{1, 0});
}

TEST_CASE("hostile CSV and JSON are refused with the file and the problem")
{
    auto refused = [](const std::string& text, const std::string& fragment) {
        CAPTURE(text);
        CHECK_THROWS_WITH_AS(read_tensor_bytes(std::vector<unsigned char>(text.begin(), text.end()), "f", ""),
                             doctest::Contains(fragment.c_str()), InputError);
    };
    refused("", "the CSV is empty");
    refused("1,2\n3\n", "ragged CSV");
    refused("1,2\n3,abc\n", "'abc', not a number");
    refused("a,b\n", "only a header");
    refused("a,b,value\n0,0,1\n0,0,2\n1,1,3\n1,0,4\n", "appears twice");
    refused("pos,value\n0,1\n2,2\n", "do not fill the shape");
    refused("pos,value\n-1,1\n", "the index -1");
    refused("[[1,2],[3]]", "ragged");
    refused("[[1,2],\"x\"]", "not a number");
    refused("[1, {\"a\": 2}]", "not a number");
    refused(R"({"tensors": []})", "no tensor named");
    refused("[1, 2", "not JSON");
    refused(std::string(100, '[') + std::string(100, ']'), "nested 100 deep");
    CHECK_THROWS_WITH_AS(read_tensor_file("/nonexistent/answer.npy", "", 1e9), "/nonexistent/answer.npy: cannot be read: No such file or directory", InputError);
}

TEST_CASE("every file of the fuzzing corpus is read or refused with an InputError, never anything worse")
{
    const std::string dir = std::string(ATTNLAB_DATA_DIR) + "/../tests/fuzz/corpus";
    std::size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        const std::string name = entry.path().string();
        CAPTURE(name);
        std::ifstream in(name, std::ios::binary);
        REQUIRE(in.good());
        const std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        try {
            const Tensor t = read_tensor_bytes(bytes, name, "");
            std::size_t count = 1;
            for (std::size_t n : t.shape) count *= n;
            CHECK(count == t.values.size());
        } catch (const InputError&) {
        }
        ++files;
    }
    CHECK(files >= 14);  // the seeds and every crash the fuzzer found
}

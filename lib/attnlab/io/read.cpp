#include "attnlab/io/read.hpp"

#include "attnlab/core/report.hpp"
#include "attnlab/io/files.hpp"
#include "attnlab/io/npy.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

namespace attnlab {

namespace {

std::string_view trimmed(std::string_view text)
{
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r' || text.back() == '"')) text.remove_suffix(1);
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '"')) text.remove_prefix(1);
    return text;
}

enum class Number { ok, not_a_number, out_of_range };

// A cell as a number: decimal, inf, nan, true/false. Every byte of it is used (a NUL inside
// is not the end of it), and a finite decimal beyond float64's range is refused, not read as inf.
Number parse_number(std::string_view cell, double& v)
{
    const std::string text(trimmed(cell));
    if (text == "inf" || text == "+inf" || text == "Infinity") return v = std::numeric_limits<double>::infinity(), Number::ok;
    if (text == "-inf" || text == "-Infinity") return v = -std::numeric_limits<double>::infinity(), Number::ok;
    if (text == "nan" || text == "NaN") return v = std::numeric_limits<double>::quiet_NaN(), Number::ok;
    if (text == "true" || text == "false") return v = text == "true" ? 1.0 : 0.0, Number::ok;
    if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return Number::not_a_number;
    char* end = nullptr;
    errno = 0;
    v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size()) return Number::not_a_number;
    if (errno == ERANGE && std::isinf(v)) return Number::out_of_range;
    return std::isinf(v) || std::isnan(v) ? Number::not_a_number : Number::ok;  // "infinity", "nan(1)": not our spellings
}

// The cells of a CSV: an optional header (a first row with no number in it), then rows of
// numbers, all of one width, in one flat vector. Anything else is refused naming its line and
// cell. Nothing but the numbers is kept, so the memory is the values, not a table of strings.
struct CsvCells {
    std::vector<std::string> header;
    std::vector<double> numbers;
    std::size_t width = 0, rows = 0;
};

[[noreturn]] void bad_cell(const std::string& what, std::size_t line, std::size_t cell, std::string_view text, Number why)
{
    if (trimmed(text).empty()) throw InputError(fmt::format("{}: line {}, cell {} is empty", what, line, cell));
    throw InputError(fmt::format("{}: line {}, cell {} holds '{}', {}", what, line, cell, excerpt(trimmed(text)),
                                 why == Number::out_of_range ? "beyond float64's range" : "not a number"));
}

// Calls f on each comma-separated field of line, in order.
template <class F>
void each_field(std::string_view line, F f)
{
    for (std::size_t start = 0;;) {
        const std::size_t comma = line.find(',', start);
        f(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
        if (comma == std::string_view::npos) return;
        start = comma + 1;
    }
}

// Whether a line without commas holds two or more numbers separated by spaces or tabs
// (numpy.savetxt's default): a CSV reader would take it for one cell.
bool whitespace_numbers(std::string_view line)
{
    if (line.find(',') != std::string_view::npos) return false;
    std::size_t numbers = 0;
    for (std::size_t at = line.find_first_not_of(" \t"); at != std::string_view::npos; at = line.find_first_not_of(" \t", at)) {
        const std::size_t end = std::min(line.find_first_of(" \t", at), line.size());
        double v = 0.0;
        if (parse_number(line.substr(at, end - at), v) != Number::ok) return false;
        ++numbers;
        at = end;
    }
    return numbers >= 2;
}

// One line's cells; false when it holds no number at all (a header, if it is the first).
bool csv_line(std::string_view line, std::size_t line_no, const std::string& what, CsvCells& out, bool may_be_header)
{
    std::size_t cells = 0, numbers = 0, first_bad = 0;
    std::string_view bad_text;
    Number bad_why = Number::ok;
    const std::size_t before = out.numbers.size();
    each_field(line, [&](std::string_view cell) {
        ++cells;
        double v = 0.0;
        const Number got = parse_number(cell, v);
        if (got == Number::ok) ++numbers, out.numbers.push_back(v);
        else if (first_bad == 0) first_bad = cells, bad_text = cell, bad_why = got;
    });
    // A header: no number in it, or pandas' (an empty first cell over its index, numbered columns).
    if (may_be_header && (numbers == 0 || (first_bad == 1 && trimmed(bad_text).empty() && numbers + 1 == cells))) {
        out.numbers.resize(before);
        each_field(line, [&](std::string_view cell) { out.header.emplace_back(trimmed(cell)); });
        return false;
    }
    if (first_bad != 0) {
        out.numbers.resize(before);
        if (numbers == 0 && whitespace_numbers(line))
            throw InputError(fmt::format("{}: line {} holds numbers separated by spaces or tabs ('{}'); separate them with commas, e.g. "
                                         "numpy.savetxt(path, a, delimiter=',')", what, line_no, excerpt(line)));
        if (numbers == 0) throw InputError(fmt::format("{}: line {} holds no number ('{}'); only the first line may be a header", what, line_no, excerpt(line)));
        bad_cell(what, line_no, first_bad, bad_text, bad_why);
    }
    if (out.rows > 0 && cells != out.width) throw InputError(fmt::format("{}: line {} has {} fields, the first row of numbers {} (a ragged CSV)", what, line_no, cells, out.width));
    out.width = cells;
    ++out.rows;
    return true;
}

CsvCells csv_cells(std::string_view text, const std::string& what)
{
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // the UTF-8 BOM of Excel's "CSV UTF-8"
    CsvCells out;
    out.numbers.reserve(text.size() / 2 + 1);  // a number takes at least two bytes ("0,")
    std::size_t line_no = 0;
    bool first = true;
    for (std::size_t start = 0; start < text.size();) {
        const std::size_t nl = text.find('\n', start);
        std::string_view line = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
        start = nl == std::string_view::npos ? text.size() : nl + 1;
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
        csv_line(line, line_no, what, out, first);
        first = false;
    }
    if (out.header.empty() && out.rows == 0) throw InputError(fmt::format("{}: no numeric array (the CSV is empty)", what));
    if (out.rows == 0 && out.header.size() == 1 && whitespace_numbers(out.header.front()))
        throw InputError(fmt::format("{}: line 1 holds numbers separated by spaces or tabs ('{}'); separate them with commas, e.g. "
                                     "numpy.savetxt(path, a, delimiter=',')", what, excerpt(out.header.front())));
    if (out.rows == 0) throw InputError(fmt::format("{}: no numeric array (only a header)", what));
    if (!out.header.empty() && out.header.size() != out.width)
        throw InputError(fmt::format("{}: the header has {} fields, the rows {}", what, out.header.size(), out.width));
    return out;
}

// attnlab's long form: axis columns of indices, then "value".
Tensor long_form(CsvCells& cells, const std::string& what)
{
    const std::size_t rank = cells.width - 1;
    std::vector<std::size_t> shape(rank, 0);
    for (std::size_t r = 0; r < cells.rows; ++r)
        for (std::size_t a = 0; a < rank; ++a) {
            const double index = cells.numbers[r * cells.width + a];
            if (!(index >= 0 && index < 1e9 && index == std::floor(index))) throw InputError(fmt::format("{}: row {} has the index {}", what, r + 1, index));
            shape[a] = std::max(shape[a], static_cast<std::size_t>(index) + 1);
        }
    double product = 1.0;  // in double: a product of hostile indices must not wrap around
    for (std::size_t n : shape) product *= static_cast<double>(n);
    if (product != static_cast<double>(cells.rows)) {
        throw InputError(fmt::format("{}: {} rows do not fill the shape their indices give ({:.0f} elements)", what, cells.rows, product));
    }
    Tensor t;
    t.elem = Elem::float64;
    t.shape = shape;
    std::vector<double> values(cells.rows, std::numeric_limits<double>::quiet_NaN());
    std::vector<char> seen(cells.rows, 0);
    for (std::size_t r = 0; r < cells.rows; ++r) {
        std::size_t at = 0;
        for (std::size_t a = 0; a < rank; ++a) at = at * shape[a] + static_cast<std::size_t>(cells.numbers[r * cells.width + a]);
        if (seen[at]++) throw InputError(fmt::format("{}: an index appears twice", what));
        values[at] = cells.numbers[r * cells.width + rank];
    }
    t.values = std::move(values);
    t.axes.assign(cells.header.begin(), cells.header.end() - 1);
    return t;
}

// Whether the first column counts the rows 0, 1, 2, ...
bool counts_rows(const CsvCells& cells)
{
    for (std::size_t r = 0; r < cells.rows; ++r)
        if (cells.numbers[r * cells.width] != static_cast<double>(r)) return false;
    return cells.width > 1;
}

// attnlab's --wide header: "pos,d0,d1,...": after the axis name, one letter and the column index.
bool wide_header(const std::vector<std::string>& h)
{
    bool wide = h.size() > 1 && !h[1].empty();
    for (std::size_t c = 1; wide && c < h.size(); ++c) wide = h[c] == std::string(1, h[1][0]) + std::to_string(c - 1);
    return wide;
}

}  // namespace

Tensor parse_csv_tensor(std::string_view text, const std::string& what, std::vector<std::string>* notes)
{
    CsvCells cells = csv_cells(text, what);
    if (!cells.header.empty() && cells.header.back() == "value" && cells.width > 1) return long_form(cells, what);
    // pandas' to_csv writes its index as an unnamed first column: dropped, and said so.
    const bool pandas = !cells.header.empty() && (cells.header[0].empty() || cells.header[0] == "Unnamed: 0") && counts_rows(cells);
    const bool wide = !cells.header.empty() && wide_header(cells.header) && counts_rows(cells);
    if (pandas && notes != nullptr) notes->push_back(fmt::format("{}: the first column, unnamed and counting 0, 1, 2, ..., is read as pandas' index and dropped", what));
    const std::size_t drop = pandas || wide ? 1 : 0, cols = cells.width - drop;
    if (drop == 1) {
        for (std::size_t r = 0; r < cells.rows; ++r)
            for (std::size_t c = 0; c < cols; ++c) cells.numbers[r * cols + c] = cells.numbers[r * cells.width + c + 1];
        cells.numbers.resize(cells.rows * cols);
    }
    Tensor t;
    t.elem = Elem::float64;
    t.shape = {cells.rows, cols};
    t.axes = {"row", "col"};
    t.values = std::move(cells.numbers);
    return t;
}

namespace {

void json_values(const nlohmann::json& j, std::size_t depth, std::vector<std::size_t>& shape, std::vector<double>& out,
                 const std::string& what)
{
    if (!j.is_array()) {
        double v = 0.0;
        if (j.is_number()) v = j.get<double>();
        else if (j.is_boolean()) v = j.get<bool>() ? 1.0 : 0.0;
        else if (!(j.is_string() && parse_number(j.get<std::string>(), v) == Number::ok)) throw InputError(fmt::format("{}: the array holds {}, not a number", what, excerpt(j.dump(), 40)));
        if (depth != shape.size()) throw InputError(fmt::format("{}: the nested lists are ragged", what));
        out.push_back(v);
        return;
    }
    if (depth == shape.size()) shape.push_back(j.size());
    if (j.size() != shape[depth] || (j.empty() && depth + 1 != shape.size())) throw InputError(fmt::format("{}: the nested lists are ragged", what));
    for (const auto& e : j) json_values(e, depth + 1, shape, out, what);
}

}  // namespace

std::size_t json_nesting(std::string_view text)
{
    std::size_t depth = 0, deepest = 0;
    for (char c : text) {
        if (c == '[' || c == '{') deepest = std::max(deepest, ++depth);
        if ((c == ']' || c == '}') && depth > 0) --depth;
    }
    return deepest;
}

Tensor parse_json_tensor(const std::string& text, const std::string& what, const std::string& name)
{
    // Deep nesting is refused before the parser recurses into it.
    const std::size_t deepest = json_nesting(text);
    if (deepest > 64) throw InputError(fmt::format("{}: JSON nested {} deep; at most 64", what, deepest));
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        throw InputError(fmt::format("{}: not JSON ({})", what, excerpt(e.what(), 160)));
    }
    // Fields are read only when they have the type expected: a hostile document is refused,
    // never a type error.
    auto string_at = [](const nlohmann::json& o, const char* key) {
        const auto it = o.find(key);
        return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    const nlohmann::json* data = &doc;
    if (doc.is_object()) {
        const std::string want = !name.empty() ? name : string_at(doc, "main_tensor");
        data = nullptr;
        const auto tensors = doc.find("tensors");
        if (tensors != doc.end() && tensors->is_array())
            for (const auto& t : *tensors)
                if (t.is_object() && string_at(t, "name") == want && t.contains("data")) data = &t["data"];
        if (data == nullptr) throw InputError(fmt::format("{}: no tensor named '{}' in the JSON document", what, excerpt(want)));
    }
    Tensor t;
    t.elem = Elem::float64;
    std::vector<double> values;
    json_values(*data, 0, t.shape, values, what);
    t.values = std::move(values);
    for (std::size_t a = 0; a < t.shape.size(); ++a) t.axes.push_back("a" + std::to_string(a));
    return t;
}

namespace {

enum class Form { npy, json, csv };

// What a file holds, from its first bytes: NPY's magic, JSON's bracket (after a BOM and
// blanks), or else CSV. Blanks alone are JSON's cost while more may come, CSV's when complete.
Form form_of(std::string_view head, bool complete)
{
    if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x93 && head[1] == 'N') return Form::npy;
    if (head.substr(0, 3) == "\xEF\xBB\xBF") head.remove_prefix(3);
    const auto first = head.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return complete ? Form::csv : Form::json;
    return head[first] == '[' || head[first] == '{' ? Form::json : Form::csv;
}

// Memory per byte of file while it is parsed, the file's bytes included (measured peaks in
// tests/test_read.cpp): NPY's smallest element (1 byte) becomes a double; a CSV number takes
// at least 2 bytes and becomes a double, its row table and the tensor; a JSON number becomes
// a node of nlohmann's tree (a nested list adds an array node per list).
double parse_cost(Form form)
{
    switch (form) {
        case Form::npy: return 9.0;
        case Form::csv: return 10.0;
        case Form::json: return 48.0;
    }
    return 48.0;
}

const char* form_name(Form form) { return form == Form::npy ? "an NPY file" : form == Form::csv ? "a CSV" : "a JSON document"; }

}  // namespace

// The binary files learners reach for first, named, with how to save what attnlab reads.
void refuse_binary(std::string_view text, const std::string& what)
{
    if (text.substr(0, 4) == std::string_view("PK\x03\x04", 4))
        throw InputError(fmt::format("{}: a zip archive: PyTorch's torch.save file (.pt) or NumPy's .npz; save one array with "
                                     "numpy.save(path, t.detach().cpu().numpy()) (.npy), or as CSV", what));
    if (text.size() >= 2 && static_cast<unsigned char>(text[0]) == 0x80 && text[1] >= 2 && text[1] <= 5)
        throw InputError(fmt::format("{}: a Python pickle (torch.save's older format, or pickle.dump); save the array with "
                                     "numpy.save(path, t.detach().cpu().numpy()) (.npy), or as CSV", what));
}

Tensor read_tensor_bytes(const std::vector<unsigned char>& bytes, const std::string& what, const std::string& name,
                         std::vector<std::string>* notes)
{
    const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    refuse_binary(text, what);
    switch (form_of(text.substr(0, 64), true)) {
        case Form::npy: return parse_npy(bytes, what);
        case Form::json: return parse_json_tensor(std::string(text), what, name);
        case Form::csv: return parse_csv_tensor(text, what, notes);
    }
    return parse_csv_tensor(text, what, notes);
}

Tensor read_tensor_file(const std::string& path, const std::string& name, double max_bytes, std::vector<std::string>* notes)
{
    const auto bytes = read_input_file(path, [max_bytes](std::string_view head) {
        const Form form = form_of(head, false);
        return ReadLimit{max_bytes / parse_cost(form), fmt::format("{} takes about {:.0f} bytes of memory per byte to read", form_name(form), parse_cost(form))};
    });
    return read_tensor_bytes(bytes, path == "-" ? "standard input" : path, name, notes);
}

}  // namespace attnlab

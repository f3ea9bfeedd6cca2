#include "attnlab/io/read.hpp"

#include "attnlab/core/report.hpp"
#include "attnlab/io/npy.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

namespace attnlab {

namespace {

bool parse_number(std::string text, double& v)
{
    while (!text.empty() && (text.back() == ' ' || text.back() == '\r' || text.back() == '"')) text.pop_back();
    std::size_t i = 0;
    while (i < text.size() && (text[i] == ' ' || text[i] == '"')) ++i;
    text = text.substr(i);
    if (text == "inf" || text == "+inf") return v = std::numeric_limits<double>::infinity(), true;
    if (text == "-inf") return v = -std::numeric_limits<double>::infinity(), true;
    if (text == "nan" || text == "NaN") return v = std::numeric_limits<double>::quiet_NaN(), true;
    if (text == "true" || text == "false") return v = text == "true" ? 1.0 : 0.0, true;
    char* end = nullptr;
    v = std::strtod(text.c_str(), &end);
    return !text.empty() && end != nullptr && *end == '\0';
}

std::vector<std::vector<std::string>> csv_rows(const std::string& text)
{
    std::vector<std::vector<std::string>> rows;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.find_first_not_of(" \t") == std::string::npos) continue;
        std::vector<std::string> fields;
        std::size_t start = 0;
        for (std::size_t comma; (comma = line.find(',', start)) != std::string::npos; start = comma + 1)
            fields.push_back(line.substr(start, comma - start));
        fields.push_back(line.substr(start));
        rows.push_back(std::move(fields));
    }
    return rows;
}

// attnlab's long form: axis columns of indices, then "value".
Tensor long_form(const std::vector<std::vector<std::string>>& rows, const std::string& what)
{
    const std::size_t rank = rows[0].size() - 1;
    std::vector<std::size_t> shape(rank, 0);
    std::vector<std::vector<double>> parsed;
    for (std::size_t r = 1; r < rows.size(); ++r) {
        if (rows[r].size() != rank + 1) throw InputError(fmt::format("{}: line {} has {} fields, the header {}", what, r + 1, rows[r].size(), rank + 1));
        std::vector<double> fields(rank + 1);
        for (std::size_t a = 0; a <= rank; ++a) {
            if (!parse_number(rows[r][a], fields[a])) throw InputError(fmt::format("{}: line {} holds '{}', not a number", what, r + 1, rows[r][a]));
            if (a < rank && !(fields[a] >= 0 && fields[a] < 1e9 && fields[a] == std::floor(fields[a])))
                throw InputError(fmt::format("{}: line {} has the index {}", what, r + 1, rows[r][a]));
            if (a < rank) shape[a] = std::max(shape[a], static_cast<std::size_t>(fields[a]) + 1);
        }
        parsed.push_back(std::move(fields));
    }
    double product = 1.0;  // in double: a product of hostile indices must not wrap around
    for (std::size_t n : shape) product *= static_cast<double>(n);
    if (product != static_cast<double>(parsed.size())) {
        throw InputError(fmt::format("{}: {} rows do not fill the shape their indices give ({:.0f} elements)", what, parsed.size(), product));
    }
    const std::size_t count = parsed.size();
    Tensor t;
    t.elem = Elem::float64;
    t.shape = shape;
    t.values.assign(count, std::numeric_limits<double>::quiet_NaN());
    std::vector<char> seen(count, 0);
    for (const auto& f : parsed) {
        std::size_t at = 0;
        for (std::size_t a = 0; a < rank; ++a) at = at * shape[a] + static_cast<std::size_t>(f[a]);
        if (seen[at]++) throw InputError(fmt::format("{}: an index appears twice", what));
        t.values[at] = f[rank];
    }
    for (std::size_t a = 0; a < rank; ++a) t.axes.push_back(rows[0][a]);
    return t;
}

}  // namespace

Tensor parse_csv_tensor(const std::string& text, const std::string& what)
{
    auto rows = csv_rows(text);
    if (rows.empty()) throw InputError(fmt::format("{}: no numeric array (the CSV is empty)", what));
    double v = 0.0;
    const bool header = !parse_number(rows[0][0], v) || (rows[0].size() > 1 && !parse_number(rows[0][1], v));
    if (header && rows[0].back() == "value" && rows.size() > 1) return long_form(rows, what);
    // --wide ("pos,d0,d1,...": after the axis name, one letter and the column index; the
    // first column of each row is its index) or a plain matrix.
    bool wide = header && rows[0].size() > 1 && !rows[0][1].empty();
    for (std::size_t c = 1; wide && c < rows[0].size(); ++c)
        wide = rows[0][c] == std::string(1, rows[0][1][0]) + std::to_string(c - 1);
    for (std::size_t r = 1; wide && r < rows.size(); ++r) wide = rows[r][0] == std::to_string(r - 1);
    const std::size_t first_row = header ? 1 : 0, first_col = wide ? 1 : 0;
    if (rows.size() <= first_row) throw InputError(fmt::format("{}: no numeric array (only a header)", what));
    const std::size_t cols = rows[first_row].size() - first_col;
    Tensor t;
    t.elem = Elem::float64;
    t.shape = {rows.size() - first_row, cols};
    t.axes = {"row", "col"};
    for (std::size_t r = first_row; r < rows.size(); ++r) {
        if (rows[r].size() - first_col != cols) throw InputError(fmt::format("{}: line {} has {} fields, line {} has {} (a ragged CSV)", what, r + 1, rows[r].size(), first_row + 1, rows[first_row].size()));
        for (std::size_t c = first_col; c < rows[r].size(); ++c) {
            if (!parse_number(rows[r][c], v)) throw InputError(fmt::format("{}: line {} holds '{}', not a number", what, r + 1, rows[r][c]));
            t.values.push_back(v);
        }
    }
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
        else if (!(j.is_string() && parse_number(j.get<std::string>(), v))) throw InputError(fmt::format("{}: the array holds {}, not a number", what, j.dump().substr(0, 40)));
        if (depth != shape.size()) throw InputError(fmt::format("{}: the nested lists are ragged", what));
        out.push_back(v);
        return;
    }
    if (depth == shape.size()) shape.push_back(j.size());
    if (j.size() != shape[depth] || (j.empty() && depth + 1 != shape.size())) throw InputError(fmt::format("{}: the nested lists are ragged", what));
    for (const auto& e : j) json_values(e, depth + 1, shape, out, what);
}

}  // namespace

Tensor parse_json_tensor(const std::string& text, const std::string& what, const std::string& name)
{
    // Deep nesting is refused before the parser recurses into it.
    std::size_t depth = 0, deepest = 0;
    for (char c : text) {
        if (c == '[' || c == '{') deepest = std::max(deepest, ++depth);
        if ((c == ']' || c == '}') && depth > 0) --depth;
    }
    if (deepest > 64) throw InputError(fmt::format("{}: JSON nested {} deep; at most 64", what, deepest));
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        throw InputError(fmt::format("{}: not JSON ({})", what, e.what()));
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
        if (data == nullptr) throw InputError(fmt::format("{}: no tensor named '{}' in the JSON document", what, want));
    }
    Tensor t;
    t.elem = Elem::float64;
    std::vector<double> values;
    json_values(*data, 0, t.shape, values, what);
    t.values = std::move(values);
    for (std::size_t a = 0; a < t.shape.size(); ++a) t.axes.push_back("a" + std::to_string(a));
    return t;
}

Tensor read_tensor_bytes(const std::vector<unsigned char>& bytes, const std::string& what, const std::string& name)
{
    if (bytes.size() >= 6 && bytes[0] == 0x93 && bytes[1] == 'N') return parse_npy(bytes, what);
    const std::string text(bytes.begin(), bytes.end());
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && (text[first] == '[' || text[first] == '{')) return parse_json_tensor(text, what, name);
    return parse_csv_tensor(text, what);
}

Tensor read_tensor_file(const std::string& path, const std::string& name, double max_bytes)
{
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) throw InputError(fmt::format("{}: cannot be read", path));
    const auto size = static_cast<double>(in.tellg());
    if (size < 0) throw InputError(fmt::format("{}: cannot be read", path));
    // A CSV or JSON number takes a few bytes and becomes 8 (plus the parse tree): refuse early.
    if (size * 16.0 > max_bytes) throw InputError(fmt::format("{}: {} is too large for the memory budget", path, human_bytes(size)));
    std::vector<unsigned char> bytes(static_cast<std::size_t>(size));
    in.seekg(0);
    in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!in) throw InputError(fmt::format("{}: cannot be read", path));
    return read_tensor_bytes(bytes, path, name);
}

}  // namespace attnlab

#include "attnlab/render/render.hpp"

#include "attnlab/core/half.hpp"
#include "attnlab/core/params_json.hpp"
#include "attnlab/io/files.hpp"

#include <fmt/color.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace attnlab {
namespace {

constexpr std::size_t kSummariseAbove = 1000;  // elements, as numpy's print threshold
constexpr std::size_t kEdgeItems = 3;
// Columns a vector's line may take before it wraps: a vector of 8 numbers in scientific
// notation (90 columns) stays on one line, a position axis of 1000 does not.
constexpr std::size_t kLineWidth = 100;

std::string non_finite(double v)
{
    if (std::isnan(v)) return "nan";
    return v > 0 ? "inf" : "-inf";
}

// The indices of one axis that text output shows; npos marks the "..." gap.
constexpr std::size_t kGap = static_cast<std::size_t>(-1);
std::vector<std::size_t> shown_indices(std::size_t n, bool summarise)
{
    std::vector<std::size_t> idx;
    if (!summarise || n <= 2 * kEdgeItems) {
        for (std::size_t i = 0; i < n; ++i) idx.push_back(i);
        return idx;
    }
    for (std::size_t i = 0; i < kEdgeItems; ++i) idx.push_back(i);
    idx.push_back(kGap);
    for (std::size_t i = n - kEdgeItems; i < n; ++i) idx.push_back(i);
    return idx;
}

// How one tensor's numbers are printed in text: the same style for every element, chosen
// from the magnitudes present (as PyTorch does): integers, fixed with 4 decimals, or
// scientific. A float16 or bfloat16 tensor prints each value as the shortest decimal that
// rounds back to it in its dtype (5 significant digits at most), so a table never shows a
// value the dtype cannot hold.
struct NumberStyle {
    enum Kind { integer, fixed, scientific, boolean, shortest } kind = fixed;
    Elem elem = Elem::float64;
    std::string operator()(double v) const
    {
        if (kind == boolean) return v != 0.0 ? "true" : "false";
        if (!std::isfinite(v)) return non_finite(v);
        if (v == 0.0) return "0";  // an exact zero reads differently from 0.0000 (merely small)
        switch (kind) {
        case integer: return fmt::format("{:.0f}", v);
        case fixed: return fmt::format("{:.4f}", v);
        case shortest: return format_value(v, elem);
        default: return fmt::format("{:.4e}", v);
        }
    }
};

NumberStyle style_for(const Tensor& t)
{
    if (t.elem == Elem::boolean) return {NumberStyle::boolean};
    bool all_integer = true;
    double max_abs = 0.0, min_nonzero = std::numeric_limits<double>::infinity();
    for (double v : t.values) {
        if (!std::isfinite(v)) continue;
        all_integer = all_integer && v == std::round(v);
        max_abs = std::max(max_abs, std::abs(v));
        if (v != 0.0) min_nonzero = std::min(min_nonzero, std::abs(v));
    }
    if (all_integer && max_abs < 1e9) return {NumberStyle::integer};
    if (t.elem == Elem::float16 || t.elem == Elem::bfloat16) return {NumberStyle::shortest, t.elem};
    if (max_abs >= 1e5 || min_nonzero < 1e-4) return {NumberStyle::scientific};
    return {NumberStyle::fixed};
}

std::string shape_string(const Tensor& t)
{
    return fmt::format("[{}]", fmt::join(t.shape, ", "));
}

// Rows of a rank-2 slice at `offset` (row-major), as strings, before alignment.
void text_matrix(const Tensor& t, std::size_t offset, std::size_t rows, std::size_t cols,
                 bool summarise, const NumberStyle& style, std::string& out)
{
    const auto ri = shown_indices(rows, summarise);
    const auto ci = shown_indices(cols, summarise);
    std::vector<std::vector<std::string>> cells;
    std::size_t width = 0;
    for (std::size_t r : ri) {
        std::vector<std::string> line;
        for (std::size_t c : ci) {
            std::string s = (r == kGap || c == kGap)
                                ? "..."
                                : style(t.values[offset + r * cols + c]);
            width = std::max(width, s.size());
            line.push_back(std::move(s));
        }
        cells.push_back(std::move(line));
    }
    for (const auto& line : cells) {
        out += "  ";
        for (const auto& s : line) out += fmt::format(" {:>{}}", s, width);
        out += '\n';
    }
}

// Rank 1: one line when it fits in kLineWidth columns; otherwise wrapped, each line headed by
// the index of its first element, so that a reader finds their place in a long vector.
void text_vector(const Tensor& t, bool summarise, const NumberStyle& style, std::string& out)
{
    const std::size_t n = t.shape[0];
    std::string line;
    text_matrix(t, 0, 1, n, summarise, style, line);
    if (summarise || line.size() <= kLineWidth + 1) {  // short, or summarised to 3 + ... + 3
        out += line;
        return;
    }
    std::size_t width = 0;
    for (std::size_t i = 0; i < n; ++i) width = std::max(width, style(t.values[i]).size());
    const std::size_t digits = std::to_string(n - 1).size();
    const std::size_t per_line = std::max<std::size_t>(1, (kLineWidth - 4 - digits) / (width + 1));
    for (std::size_t first = 0; first < n; first += per_line) {
        out += fmt::format("  [{:>{}}]", first, digits);
        for (std::size_t i = first; i < std::min(n, first + per_line); ++i) out += fmt::format(" {:>{}}", style(t.values[i]), width);
        out += '\n';
    }
}

// Rank >= 2: one matrix per index of the leading axes, headed by that index ("[batch=0, head=1]").
void text_block(const Tensor& t, std::size_t axis, std::size_t offset,
                std::vector<std::string> labels, bool summarise, const NumberStyle& style,
                std::string& out)
{
    const std::size_t rank = t.rank();
    if (axis + 2 == rank) {
        const std::size_t rows = t.shape[rank - 2], cols = t.shape[rank - 1];
        if (!labels.empty()) out += fmt::format("  [{}]\n", fmt::join(labels, ", "));
        text_matrix(t, offset * rows * cols, rows, cols, summarise, style, out);
        return;
    }
    for (std::size_t i : shown_indices(t.shape[axis], summarise)) {
        if (i == kGap) {
            out += "  ...\n";
            continue;
        }
        auto inner = labels;
        inner.push_back(fmt::format("{}={}", t.axes[axis], i));
        text_block(t, axis + 1, offset * t.shape[axis] + i, std::move(inner), summarise,
                   style, out);
    }
}

void text_tensor(const Tensor& t, const RenderOptions& opts, std::string& out)
{
    const std::string title =
        opts.color ? fmt::format(fmt::emphasis::bold | fg(fmt::terminal_color::cyan), "{}", t.name)
                   : t.name;
    out += fmt::format("{}  shape {}  ({})  {}\n", title, shape_string(t),
                       fmt::join(t.axes, ", "), name_of(t.elem));
    const NumberStyle style = style_for(t);
    const bool summarise = !opts.full && t.values.size() > kSummariseAbove;
    const std::size_t rank = t.rank();
    if (rank == 0) {
        out += fmt::format("   {}\n", style(t.values[0]));
        return;
    }
    if (rank == 1) {
        text_vector(t, summarise, style, out);
        return;
    }
    text_block(t, 0, 0, {}, summarise, style, out);
}

}  // namespace

std::string format_figure(double v)
{
    if (!std::isfinite(v)) return non_finite(v);
    if (v == 0.0) return "0";  // also -0
    if (v == std::round(v) && std::abs(v) < 1e9) return fmt::format("{:.0f}", v);
    return fmt::format("{:.3g}", v);
}

// The shortest decimal that rounds back to v in the 16-bit format (v is one of its values),
// without an exponent between 1e-5 and 1e7 (620, not 6.2e+02).
std::string shortest_narrow(double v, double (*round)(double))
{
    for (int digits = 1; digits < 9; ++digits) {
        std::string s = fmt::format("{:.{}g}", v, digits);
        if (round(std::stod(s)) != v) continue;
        const double mag = std::abs(v);
        if (s.find('e') != std::string::npos && mag >= 1e-5 && mag < 1e7) {
            const int exponent = static_cast<int>(std::floor(std::log10(mag)));
            s = fmt::format("{:.{}f}", v, std::max(0, digits - 1 - exponent));
        }
        return s;
    }
    return fmt::format("{}", static_cast<float>(v));
}

std::string format_value(double v, Elem elem)
{
    if (!std::isfinite(v)) return non_finite(v);
    switch (elem) {
    case Elem::boolean: return v != 0.0 ? "1" : "0";
    case Elem::index: return fmt::format("{:.0f}", v);
    case Elem::float32: return fmt::format("{}", static_cast<float>(v));
    case Elem::float16: return shortest_narrow(v, round_to_half);
    case Elem::bfloat16: return shortest_narrow(v, round_to_bfloat16);
    case Elem::float64: break;
    }
    return fmt::format("{}", v);
}


std::string xml_escape(const std::string& s)
{
    const std::string text = valid_utf8(s);
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto ch = static_cast<unsigned char>(text[i]);
        switch (ch) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default:
                // U+FFFE and U+FFFF are UTF-8 but not XML characters
                if (ch == 0xEF && text.compare(i + 1, 1, "\xBF") == 0 && i + 2 < text.size() && (text[i + 2] == '\xBE' || text[i + 2] == '\xBF')) {
                    out += "\xEF\xBF\xBD";
                    i += 2;
                } else out += ch < 0x20 && ch != '\t' && ch != '\n' ? '?' : static_cast<char>(ch);
        }
    }
    return out;
}

std::string check_line(const Check& c, bool color, Lang lang)
{
    const bool ok = c.passed();
    std::string verdict = verdict_word(c, lang);
    if (verdict == "PASS" || verdict == "FAIL") verdict += ' ';  // padded to the width of HOLDS / WRONG
    if (color) {
        verdict = fmt::format(fmt::emphasis::bold |
                                  fg(ok ? fmt::terminal_color::green
                                        : (c.role == Role::invariant ? fmt::terminal_color::red
                                                                     : fmt::terminal_color::yellow)),
                              "{}", verdict);
    }
    const std::string role = role_word(c, lang);
    return fmt::format("{} {}{}: {}", verdict, c.claim, role.empty() ? "" : fmt::format(lang == Lang::zh ? "（{}）" : " ({})", role), check_figure(c, lang));
}




namespace {


// "they differ in head 1 only; query 3-7; every key", from the ranges along every axis.
std::string where_text_of(const Comparison& c, Lang lang)
{
    const bool zh = lang == Lang::zh;
    std::vector<std::string> parts;
    for (const auto& r : c.where) {
        if (r.from == 0 && r.to + 1 == r.size && r.size > 1) parts.push_back(fmt::format(zh ? "所有 {}" : "every {}", r.axis));
        else if (r.from == r.to) parts.push_back(fmt::format(zh ? "只在 {} {}" : "{} {} only", r.axis, r.from));
        else parts.push_back(fmt::format("{} {}-{}", r.axis, r.from, r.to));
    }
    if (parts.empty()) return {};
    return fmt::format(zh ? "不同之处：{}" : "they differ in {}", fmt::join(parts, zh ? "；" : "; "));
}

// "pe [0, 1] expected 1, got 0", each value at the shortest precision of its dtype.
std::string worst_text_of(const Comparison& c, bool zh)
{
    return fmt::format(zh ? "  最差元素：[{}] 期望 {}，得到 {}\n" : "  worst: [{}] expected {}, got {}\n", fmt::join(c.worst_index, ", "),
                       format_value(c.worst_expected, c.expected_elem), format_value(c.worst_got, c.got_elem));
}

// The last line under --against: MATCH or DIFFERS first in every language (a script greps for
// it), then the max difference, the mismatched count, the diagnosis (ids as they are) and the
// kinds, in the run's language.
std::string result_line(const Comparison& c, bool zh)
{
    std::string line = fmt::format(zh ? "{0} 最大 |差| = {1}；{3} 个元素中 {2} 个不同" : "{0} max |diff| = {1}; {2} of {3} elements differ",
                                   c.passed ? "MATCH" : "DIFFERS", format_figure(c.max_abs_diff), c.mismatched, c.total);
    if (c.shape_expected != c.shape_got)
        line = fmt::format(zh ? "DIFFERS 形状 [{}] != [{}]" : "DIFFERS shape [{}] != [{}]", fmt::join(c.shape_got, ", "), fmt::join(c.shape_expected, ", "));
    std::vector<std::string> named;
    for (const auto& d : c.diagnosis) {
        const bool sure = d.certainty == Certainty::matches;
        named.push_back(fmt::format("{} {}", zh ? (sure ? "符合" : "最接近") : name_of(d.certainty), d.id));
    }
    const char* sep = zh ? "；" : "; ";
    if (!named.empty()) line += fmt::format("{}{}", sep, fmt::join(named, zh ? "，" : ", "));
    if (!c.kinds.empty()) line += fmt::format("{}{}", sep, fmt::join(c.kinds, zh ? "，" : ", "));
    return line + "\n";
}

// One line per catalogued mistake named: matches or closest, its id, what it is, how near.
std::string diagnosis_lines(const Comparison& c, bool zh)
{
    std::string out;
    for (const auto& d : c.diagnosis) {
        const bool sure = d.certainty == Certainty::matches;
        out += fmt::format(zh ? "  {} {}：{}（最大差 {}）\n" : "  {} {}: {} (max diff {})\n", sure ? (zh ? "符合" : "matches") : (zh ? "最接近" : "closest:"), d.id,
                           d.explanation, format_figure(d.max_abs_diff));
    }
    return out;
}

// The verdict on a learner's tensor, after the run's own checks; it ends with the result line.
std::string against_text(const Comparison& c, const RenderOptions& opts)
{
    const bool zh = opts.lang == Lang::zh;
    std::string out = fmt::format(zh ? "\n对照 {} （张量 {}），按 {} 评判：\n" : "\nagainst {} (tensor {}), judged at {}:\n", c.file, c.tensor, c.judged_at);
    out += fmt::format(zh ? "  形状：期望 {}，得到 {}\n" : "  shape: expected {}, got {}\n", shape_text(c.shape_expected), shape_text(c.shape_got));
    if (c.shape_expected == c.shape_got) {
        // Chinese names the whole first: "128 个元素中 84 个超出" is "84 of 128"
        out += fmt::format(zh ? "  容差：|差| <= atol {0} + rtol {1} |期望值|；{3} 个元素中 {2} 个超出\n" : "  tolerance: |diff| <= atol {0} + rtol {1} |expected|; {2} of {3} elements outside\n",
                           format_figure(c.atol), format_figure(c.rtol), c.mismatched, c.total);
        if (!c.worst_index.empty() || c.total == 1) out += worst_text_of(c, zh);
        if (!c.where.empty()) out += "  " + where_text_of(c, opts.lang) + "\n";
    }
    for (const auto* list : {&c.read_notes, &c.notes})
        for (const auto& n : *list) out += fmt::format("  {}{}\n", zh ? "注：" : "note: ", n);
    if (!c.properties.empty()) out += zh ? "  你的张量的性质：\n" : "  properties of your tensor:\n";
    for (const auto& p : c.properties) out += wrap_text("    " + check_line(p, opts.color, opts.lang), opts.width, 10) + "\n";
    out += diagnosis_lines(c, zh);
    if (c.diagnosis.empty() && !c.passed && c.kinds.empty()) {
        if (c.shape_expected != c.shape_got)  // no element was compared, so none is shown
            out += fmt::format(zh ? "  没有已知错误与之相符；先把形状改成 {}（张量 {} 的轴：见 --help）\n"
                                  : "  no known mistake matches it; first make the shape {} (the axes of {}: see --help)\n",
                               shape_text(c.shape_expected), c.tensor);
        else out += zh ? "  没有已知错误与之相符；请从上面的最差元素查起\n" : "  no known mistake matches it; start from the worst element, above\n";
    }
    return out + result_line(c, zh);
}

}  // namespace

std::string located_text(const Comparison& c, Lang lang)
{
    std::string out;
    if (c.shape_expected != c.shape_got || c.passed) return out;
    if (!c.worst_index.empty() || c.total == 1) out += worst_text_of(c, lang == Lang::zh);
    if (!c.where.empty()) out += "  " + where_text_of(c, lang) + "\n";
    return out;
}

std::string render_text(const Report& report, const RenderOptions& opts)
{
    std::string out;
    if (!opts.quiet) {
        for (const auto& t : report.tensors) {
            text_tensor(t, opts, out);
            out += '\n';
        }
        for (const auto& n : report.notes) out += wrap_text(fmt::format("{}{}", opts.lang == Lang::zh ? "注：" : "note: ", n), opts.width, 6) + "\n";
        if (!report.notes.empty()) out += '\n';
    }
    const nlohmann::ordered_json measurements = params_json(report.measurements);
    for (const auto& [name, value] : measurements.items())
        out += fmt::format("{:<26} {}\n", name, value.is_number_float() ? fmt::format("{:.4g}", value.get<double>()) : value.is_string() ? value.get<std::string>() : value.dump());
    if (!report.measurements.empty()) out += '\n';
    const bool against = report.against.has_value();
    if (against && !opts.quiet && !report.checks.empty()) out += opts.lang == Lang::zh ? "参考运行的检查：\n" : "checks of the reference run:\n";
    if (!(against && opts.quiet))
        for (const auto& c : report.checks) {
            out += wrap_text(check_line(c, opts.color, opts.lang), opts.width, 6) + '\n';
            const std::string words = opts.quiet ? std::string() : words_line(c, opts.lang);  // --quiet: the check lines alone
            if (!words.empty()) out += wrap_text("      " + words, opts.width, 8) + '\n';
        }
    if (against) out += against_text(*report.against, opts);
    return out;
}

// A CSV cell: 16-bit values as the exact decimal of the value, which a float64 reader (pandas,
// R, gnuplot) gets back unchanged: bfloat16's -998244352, not the -1e9 it came from.
std::string csv_value(double v, Elem elem)
{
    if ((elem == Elem::float16 || elem == Elem::bfloat16) && std::isfinite(v)) return fmt::format("{}", v);
    return format_value(v, elem);
}

std::string render_csv(const Report& report, const RenderOptions& opts)
{
    const std::string& name = opts.tensor.empty() ? report.main_tensor : opts.tensor;
    const Tensor* t = report.find(name);
    if (t == nullptr) {
        throw InputError(fmt::format("unknown tensor '{}' for {}; it produces: {}", name,
                                     report.command, fmt::join(report.offered, ", ")));
    }
    const auto& v = t->values;
    std::string out;
    if (opts.wide) {
        if (t->rank() != 2) {
            throw InputError(fmt::format("--wide needs a rank-2 tensor; {} has rank {}", name,
                                         t->rank()));
        }
        // Header "pos,d0,d1,...": the first axis, then the second axis's initial and index.
        const char initial = t->axes[1].empty() ? 'c' : t->axes[1][0];
        out += t->axes[0];
        for (std::size_t j = 0; j < t->shape[1]; ++j) out += fmt::format(",{}{}", initial, j);
        out += '\n';
        for (std::size_t i = 0; i < t->shape[0]; ++i) {
            out += std::to_string(i);
            for (std::size_t j = 0; j < t->shape[1]; ++j) {
                out += ',';
                out += csv_value(t->at(i, j), t->elem);
            }
            out += '\n';
        }
        return out;
    }
    // Tidy long form: one column per axis, then value; one row per element, row-major.
    out += fmt::format("{},value\n", fmt::join(t->axes, ","));
    const std::size_t rank = t->rank();
    std::vector<std::size_t> idx(rank, 0);
    for (std::size_t flat = 0; flat < v.size(); ++flat) {
        for (std::size_t a = 0; a < rank; ++a) out += fmt::format("{},", idx[a]);
        out += csv_value(v[flat], t->elem);
        out += '\n';
        for (std::size_t a = rank; a > 0; --a) {
            if (++idx[a - 1] < t->shape[a - 1]) break;
            idx[a - 1] = 0;
        }
    }
    return out;
}

namespace {

nlohmann::ordered_json json_number(double v, Elem elem)
{
    if (!std::isfinite(v)) return non_finite(v);
    switch (elem) {
    case Elem::boolean: return v != 0.0;
    case Elem::index: return static_cast<long long>(v);
    case Elem::float32:
        // The double nearest to the float's shortest decimal form, so that 0.1f is written
        // as 0.1 rather than 0.10000000149011612.
        return std::stod(fmt::format("{}", static_cast<float>(v)));
    case Elem::float16:  // the value itself: a float64 reader gets it back unchanged
    case Elem::bfloat16:  // (-998244352, the bfloat16 that -1e9 becomes, not -1e9)
    case Elem::float64: break;
    }
    return v;
}

nlohmann::ordered_json json_data(const Tensor& t, std::size_t axis, std::size_t offset)
{
    const auto& v = t.values;
    if (t.rank() == 0) return json_number(v[0], t.elem);
    std::size_t stride = 1;
    for (std::size_t a = axis + 1; a < t.rank(); ++a) stride *= t.shape[a];
    auto arr = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < t.shape[axis]; ++i) {
        if (axis + 1 == t.rank()) {
            arr.push_back(json_number(v[offset + i], t.elem));
        } else {
            arr.push_back(json_data(t, axis + 1, offset + i * stride));
        }
    }
    return arr;
}

nlohmann::ordered_json json_figure(double v)
{
    if (!std::isfinite(v)) return non_finite(v);
    return v;
}

}  // namespace

nlohmann::ordered_json check_json(const Check& c)
{
    nlohmann::ordered_json j;
    j["name"] = c.name;
    j["claim"] = c.claim;
    j["metric"] = c.metric;
    j["measured"] = json_figure(c.measured);
    j["comparison"] = name_of(c.cmp);
    j["tolerance"] = json_figure(c.tolerance);
    j["role"] = name_of(c.role);
    j["passed"] = c.passed();
    if (c.role == Role::article) {
        j["verdict"] = name_of(c.verdict());
        j["quote"] = c.quote;
        j["reading"] = c.reading;
        if (c.intended) j["intended"] = {{"metric", c.intended->metric}, {"measured", json_figure(c.intended->measured)},
                                           {"comparison", name_of(c.intended->cmp)}, {"tolerance", json_figure(c.intended->tolerance)}};
    }
    return j;
}

namespace {

nlohmann::ordered_json against_json(const Comparison& c)
{
    nlohmann::ordered_json j;
    j["file"] = c.file;
    j["tensor"] = c.tensor;
    j["passed"] = c.passed;
    j["shape_expected"] = c.shape_expected;
    j["shape_got"] = c.shape_got;
    j["max_abs_diff"] = json_figure(c.max_abs_diff);
    j["mismatched"] = c.mismatched;
    j["total"] = c.total;
    j["rtol"] = c.rtol;
    j["atol"] = c.atol;
    j["judged_at"] = c.judged_at;
    j["worst"] = {{"index", c.worst_index}, {"expected", json_figure(c.worst_expected)}, {"got", json_figure(c.worst_got)}};
    j["where"] = nlohmann::ordered_json::array();
    for (const auto& r : c.where) j["where"].push_back({{"axis", r.axis}, {"from", r.from}, {"to", r.to}});
    j["nonfinite"] = {{"nan", c.nonfinite.nan}, {"posinf", c.nonfinite.posinf}, {"neginf", c.nonfinite.neginf}};
    j["kind"] = c.kinds;
    j["notes"] = c.read_notes;
    for (const auto& n : c.notes) j["notes"].push_back(n);
    j["properties"] = nlohmann::ordered_json::array();
    for (const auto& p : c.properties) j["properties"].push_back(check_json(p));
    j["diagnosis"] = nlohmann::ordered_json::array();
    for (const auto& d : c.diagnosis)
        j["diagnosis"].push_back({{"id", d.id}, {"explanation", d.explanation}, {"max_abs_diff", json_figure(d.max_abs_diff)}, {"certainty", name_of(d.certainty)}});
    return j;
}

}  // namespace

nlohmann::ordered_json to_json(const Report& report, bool with_tensors)
{
    nlohmann::ordered_json doc;
    doc["command"] = report.command;
    doc["params"] = params_json(report.params);
    doc["main_tensor"] = report.main_tensor;
    auto tensors = nlohmann::ordered_json::array();
    if (with_tensors) {
        for (const auto& t : report.tensors) {
            nlohmann::ordered_json j;
            j["name"] = t.name;
            j["shape"] = t.shape;
            j["axes"] = t.axes;
            j["dtype"] = name_of(t.elem);
            j["data"] = json_data(t, 0, 0);
            tensors.push_back(std::move(j));
        }
    }
    doc["tensors"] = std::move(tensors);
    auto checks = nlohmann::ordered_json::array();
    for (const auto& c : report.checks) checks.push_back(check_json(c));
    doc["checks"] = std::move(checks);
    doc["notes"] = report.notes;
    if (!report.measurements.empty()) doc["measurements"] = params_json(report.measurements);
    doc["passed"] = report.passed();
    if (report.against) doc["against"] = against_json(*report.against);
    return doc;
}

std::string render(const Report& report, const RenderOptions& opts)
{
    switch (opts.format) {
    case Format::text: return render_text(report, opts);
    case Format::csv: return render_csv(report, opts);
    case Format::json: return to_json(report, !opts.quiet).dump() + '\n';
    }
    return {};
}

}  // namespace attnlab

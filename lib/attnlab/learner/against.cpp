#include "attnlab/learner/against.hpp"

#include "attnlab/core/half.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace attnlab::detail {

std::string precision_text(Precision at, Lang lang)
{
    if (at.storage == at.compute) return fmt::format(lang == Lang::zh ? "{} 精度" : "{} precision", name_of(at.storage));
    return fmt::format(lang == Lang::zh ? "{} 存储，{} 运算" : "{} storage, {} arithmetic", name_of(at.storage), name_of(at.compute));
}

bool carries(const Tensor& t, DType dtype)
{
    double (*round)(double) = dtype == DType::float16 ? round_to_half : round_to_bfloat16;
    for (double v : t.values)
        if (std::isfinite(v) && round(v) != v) return false;
    return true;
}

void accept_csv_vector(Tensor& got, const Tensor& expected)
{
    const bool plain_csv = got.axes == std::vector<std::string>{"row", "col"};
    if (!plain_csv || expected.rank() != 1 || got.size() != expected.size() || (got.shape[0] != 1 && got.shape[1] != 1)) return;
    got.shape = expected.shape;
    got.axes = expected.axes;
}

void drop_failed_properties(Comparison& c, Lang lang)
{
    std::vector<std::string> dropped;
    for (const Check& p : c.properties)
        if (!p.passed()) dropped.push_back(p.name);
    if (dropped.empty()) return;
    c.properties.erase(std::remove_if(c.properties.begin(), c.properties.end(), [](const Check& p) { return !p.passed(); }), c.properties.end());
    c.notes.push_back(fmt::format(lang == Lang::zh ? "未列出 {}：你的张量在上面的容差内与参考答案一致，这些性质判得比这更细，或者参考运行本身也不满足"
                                                   : "not listed: {}; your tensor matches the reference within the tolerance above, and these are judged "
                                                     "more finely than that, or do not hold of the reference run either",
                                  fmt::join(dropped, ", ")));
}

void note_same_shape(const std::vector<std::pair<std::string, std::vector<std::size_t>>>& shapes, const Tensor& got, const std::string& compared, Lang lang,
                     std::vector<std::string>& notes)
{
    std::vector<std::string> names;
    for (const auto& [name, shape] : shapes)
        if (name != compared && shape == got.shape) names.push_back(name);
    if (names.empty()) return;
    notes.push_back(fmt::format(lang == Lang::zh ? "你的形状是张量 {0} 的形状：要与其中之一比较，加 --against-tensor NAME（如 --against-tensor {1}）"
                                                 : "your shape is that of {0}: to compare with one of them, add --against-tensor NAME (e.g. --against-tensor {1})",
                                fmt::join(names, ", "), names.back()));
}

void hold_to_storage(Elem stored, DType judged_at, Lang lang, Comparison& c)
{
    const std::optional<DType> d = precision_of(stored);
    if (!d || unit_roundoff(*d) <= unit_roundoff(judged_at)) return;
    c.passed = false;
    c.kinds.push_back("stored_below");
    c.notes.push_back(fmt::format(lang == Lang::zh ? "以 {0} 存储；本练习按 {1} 精度评判：请以 {1} 或 float64 保存答案，如 np.save(path, a.astype(np.{1}))"
                                                   : "stored as {0}; this exercise is judged at {1}: save the answer as {1} or float64, e.g. np.save(path, a.astype(np.{1}))",
                                  name_of(*d), name_of(judged_at)));
}

void require_meaningful(const Tolerance& tol, const ReferenceError& ref, Precision at, const std::string& tensor)
{
    if (!tolerance_too_large(tol, ref.max_abs)) return;
    throw InputError(fmt::format(
        "--against cannot judge {} at {}: two correct answers may differ by {:.3g} + {:.3g} |x|, at least 1/{:.0f} of its largest "
        "value {:.3g} (a {} run's own error is {:.3g} here); compare against a finer run, e.g. --dtype float32",
        tensor, precision_text(at, Lang::en), tol.atol, tol.rtol, 1.0 / kMaxToleranceFraction, ref.max_abs, name_of(at.compute), ref.error));
}

}  // namespace attnlab::detail

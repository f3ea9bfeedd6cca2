#include "attnlab/learner/against.hpp"

#include "attnlab/core/half.hpp"

#include <fmt/format.h>

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

void require_meaningful(const Tolerance& tol, const ReferenceError& ref, Precision at, const std::string& tensor)
{
    if (!tolerance_too_large(tol, ref.max_abs)) return;
    throw InputError(fmt::format(
        "--against cannot judge {} at {}: two correct answers may differ by {:.3g} + {:.3g} |x|, at least 1/{:.0f} of its largest "
        "value {:.3g} (a {} run's own error is {:.3g} here); compare against a finer run, e.g. --dtype float32",
        tensor, precision_text(at, Lang::en), tol.atol, tol.rtol, 1.0 / kMaxToleranceFraction, ref.max_abs, name_of(at.compute), ref.error));
}

}  // namespace attnlab::detail

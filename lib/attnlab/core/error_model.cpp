#include "attnlab/core/error_model.hpp"

#include "attnlab/core/measure.hpp"

#include <cmath>

namespace attnlab {

double unit_roundoff(DType dtype)
{
    switch (dtype) {
    case DType::float32: return std::ldexp(1.0, -24);
    case DType::float16: return std::ldexp(1.0, -11);
    case DType::bfloat16: return std::ldexp(1.0, -8);
    case DType::float64: break;
    }
    return std::ldexp(1.0, -53);
}

double subnormal_half_spacing(DType dtype)
{
    switch (dtype) {
    case DType::float32: return std::ldexp(1.0, -150);
    case DType::float16: return std::ldexp(1.0, -25);
    case DType::bfloat16: return std::ldexp(1.0, -134);
    case DType::float64: break;
    }
    return std::ldexp(1.0, -1075);
}

DType coarser(DType a, DType b) { return unit_roundoff(a) >= unit_roundoff(b) ? a : b; }

std::optional<DType> precision_of(Elem elem)
{
    switch (elem) {
    case Elem::float32: return DType::float32;
    case Elem::float64: return DType::float64;
    case Elem::float16: return DType::float16;
    case Elem::bfloat16: return DType::bfloat16;
    case Elem::boolean:
    case Elem::index: break;
    }
    return std::nullopt;
}

namespace {

bool ordinary(double v) { return std::isfinite(v) && std::abs(v) < kFillMagnitude; }

}  // namespace

ReferenceError measure_reference_error(const Tensor& in_dtype, const Tensor& float64_ref)
{
    ReferenceError out;
    for (std::size_t k = 0; k < float64_ref.size(); ++k) {
        const double exact = float64_ref.values[k];
        if (!ordinary(exact)) continue;
        out.max_abs = worse(out.max_abs, std::abs(exact));
        out.error = worse(out.error, diff_nan_rule(in_dtype.values[k], exact));
    }
    return out;
}

Tolerance judging_tolerance(Precision at, const ReferenceError& compute_error, double run_error)
{
    const double u_s = unit_roundoff(at.storage), u_c = unit_roundoff(at.compute);
    const double r_c = worse(compute_error.error, u_c * compute_error.max_abs);
    Tolerance tol;
    tol.rtol = u_s;
    tol.atol = kReferenceFactor * r_c + run_error + subnormal_half_spacing(at.storage);
    tol.fill_rtol = u_s + kReferenceFactor * u_c;
    return tol;
}

bool tolerance_too_large(const Tolerance& tol, double max_abs)
{
    if (!(max_abs > 0.0)) return false;
    return !(tol.atol + tol.rtol * max_abs < kMaxToleranceFraction * max_abs);
}

bool within(double expected, double got, const Tolerance& tol)
{
    if (!std::isfinite(expected) || !std::isfinite(got)) return diff_nan_rule(expected, got) == 0.0;
    const double d = std::abs(expected - got);
    if (std::abs(expected) >= kFillMagnitude) return d <= tol.fill_rtol * std::abs(expected);
    return d <= tol.atol + tol.rtol * std::abs(expected);
}

}  // namespace attnlab

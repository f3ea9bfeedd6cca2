#include "attnlab/core/error_model.hpp"

#include "attnlab/core/measure.hpp"

#include <cmath>

namespace attnlab {

namespace {

// Each dtype's unit roundoff (2^-p for p significand bits) and half its smallest subnormal
// spacing (2^-(p + emax - 2), the last place of the smallest subnormal, halved).
struct Rounding {
    DType dtype;
    int significand_bits;
    int subnormal_exponent;
};
constexpr Rounding kRounding[] = {{DType::float64, 53, 1075}, {DType::float32, 24, 150}, {DType::float16, 11, 25}, {DType::bfloat16, 8, 134}};

const Rounding& rounding_of(DType dtype)
{
    for (const Rounding& r : kRounding)
        if (r.dtype == dtype) return r;
    return kRounding[0];
}

}  // namespace

double unit_roundoff(DType dtype) { return std::ldexp(1.0, -rounding_of(dtype).significand_bits); }

double subnormal_half_spacing(DType dtype) { return std::ldexp(1.0, -rounding_of(dtype).subnormal_exponent); }

double accumulate_then_store(DType dtype, double ops, double stores)
{
    if (dtype != DType::float16 && dtype != DType::bfloat16) return ops * 2.0 * unit_roundoff(dtype);
    return stores * unit_roundoff(dtype) + ops * 2.0 * unit_roundoff(DType::float32);
}

double whole_number_rounding(DType dtype, double n)
{
    return std::abs(n) <= std::ldexp(1.0, rounding_of(dtype).significand_bits) ? 0.0 : unit_roundoff(dtype);
}

double angle_rel_error(DType dtype, double max_position)
{
    return unit_roundoff(dtype) + whole_number_rounding(dtype, max_position);
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

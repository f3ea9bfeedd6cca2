// float16 and bfloat16 as scalar types the experiments compute in, with PyTorch's CPU
// semantics for those dtypes: a value is held as the float32 it stands for, and every value
// stored in the type is rounded to it (to nearest even, overflow to +-inf, the format's
// subnormals). Arithmetic between two of them runs in float32 and its result is rounded, as
// one elementwise op of PyTorch's; anything else (a call to std::exp, a product with a float)
// is float32 until it is stored. So `T angle = T(pos) * freq` rounds the position (arange in
// the dtype), the product and nothing else, and a reduction that must run in float32, as
// PyTorch's matmul, sum and softmax do, accumulates in Accum<T>.
#pragma once

#include "attnlab/core/half.hpp"

#include <cmath>
#include <limits>
#include <type_traits>

namespace attnlab {

struct Float16Format {
    static float round(float x) { return from_half_bits(half_bits(x)); }
};
struct BFloat16Format {
    static float round(float x) { return from_bfloat16_bits(bfloat16_bits(x)); }
};

template <class Format>
class Narrow {
public:
    Narrow() = default;
    template <class U, class = std::enable_if_t<std::is_arithmetic_v<U>>>
    explicit Narrow(U x) : v_(Format::round(static_cast<float>(x)))
    {
    }
    // A float known to be representable (the limits below), kept as it is.
    static constexpr Narrow exact(float x)
    {
        Narrow n;
        n.v_ = x;
        return n;
    }
    operator float() const { return v_; }
    Narrow& operator=(float x) { return *this = Narrow(x); }
    Narrow& operator+=(Narrow b) { return *this = Narrow(v_ + b.v_); }
    Narrow& operator-=(Narrow b) { return *this = Narrow(v_ - b.v_); }
    Narrow& operator*=(Narrow b) { return *this = Narrow(v_ * b.v_); }
    Narrow& operator/=(Narrow b) { return *this = Narrow(v_ / b.v_); }
    Narrow& operator+=(float b) { return *this = Narrow(v_ + b); }
    Narrow& operator-=(float b) { return *this = Narrow(v_ - b); }
    Narrow& operator*=(float b) { return *this = Narrow(v_ * b); }
    Narrow& operator/=(float b) { return *this = Narrow(v_ / b); }

private:
    float v_ = 0.0f;
};

template <class F>
Narrow<F> operator+(Narrow<F> a, Narrow<F> b) { return Narrow<F>(float(a) + float(b)); }
template <class F>
Narrow<F> operator-(Narrow<F> a, Narrow<F> b) { return Narrow<F>(float(a) - float(b)); }
template <class F>
Narrow<F> operator*(Narrow<F> a, Narrow<F> b) { return Narrow<F>(float(a) * float(b)); }
template <class F>
Narrow<F> operator/(Narrow<F> a, Narrow<F> b) { return Narrow<F>(float(a) / float(b)); }
template <class F>
Narrow<F> operator-(Narrow<F> a) { return Narrow<F>::exact(-float(a)); }

using f16 = Narrow<Float16Format>;
using bf16 = Narrow<BFloat16Format>;

template <class T>
constexpr bool is_narrow = std::is_same_v<T, f16> || std::is_same_v<T, bf16>;

// The type a reduction over T accumulates in: float32 for the 16-bit types.
template <class T>
using Accum = std::conditional_t<is_narrow<T>, float, T>;

// The float type T's values are computed in by library code (BLAS, std::exp).
template <class T>
using Compute = Accum<T>;

}  // namespace attnlab

namespace std {

template <>
struct numeric_limits<attnlab::f16> {
    using T = attnlab::f16;
    static constexpr bool is_specialized = true, is_signed = true, is_integer = false, is_exact = false;
    static constexpr bool has_infinity = true, has_quiet_NaN = true, has_signaling_NaN = false, is_iec559 = true;
    static constexpr int digits = 11, radix = 2, min_exponent = -13, max_exponent = 16;
    static constexpr T epsilon() { return T::exact(0.0009765625f); }  // 2^-10
    static constexpr T round_error() { return T::exact(0.5f); }
    static constexpr T min() { return T::exact(6.103515625e-05f); }  // 2^-14
    static constexpr T denorm_min() { return T::exact(5.9604644775390625e-08f); }  // 2^-24
    static constexpr T max() { return T::exact(65504.0f); }
    static constexpr T lowest() { return T::exact(-65504.0f); }
    static constexpr T infinity() { return T::exact(numeric_limits<float>::infinity()); }
    static constexpr T quiet_NaN() { return T::exact(numeric_limits<float>::quiet_NaN()); }
};

template <>
struct numeric_limits<attnlab::bf16> {
    using T = attnlab::bf16;
    static constexpr bool is_specialized = true, is_signed = true, is_integer = false, is_exact = false;
    static constexpr bool has_infinity = true, has_quiet_NaN = true, has_signaling_NaN = false, is_iec559 = false;
    static constexpr int digits = 8, radix = 2, min_exponent = -125, max_exponent = 128;
    static constexpr T epsilon() { return T::exact(0.0078125f); }  // 2^-7
    static constexpr T round_error() { return T::exact(0.5f); }
    static constexpr T min() { return T::exact(numeric_limits<float>::min()); }
    static constexpr T denorm_min() { return T::exact(9.18354961579912115600575419705e-41f); }  // 2^-133
    static constexpr T max() { return T::exact(3.38953138925153547590470800372e38f); }  // (2 - 2^-7) 2^127
    static constexpr T lowest() { return T::exact(-3.38953138925153547590470800372e38f); }
    static constexpr T infinity() { return T::exact(numeric_limits<float>::infinity()); }
    static constexpr T quiet_NaN() { return T::exact(numeric_limits<float>::quiet_NaN()); }
};

}  // namespace std

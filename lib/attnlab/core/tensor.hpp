// A named tensor as every layer outside the math sees it: its axes, its element type, its
// shape and its values, row-major, read as doubles whatever their storage, so a check, a
// renderer or a file writer never needs to know how it was computed.
//
// Glossary of size names used across the library (as in the articles):
//   B  batch          L  query positions (sequence length)   S  key/value positions
//   H  heads          d  per-head dimension                  E  model dimension (H * d)
//   D  encoding dimension of the sinusoidal table             P  pairs (D / 2 or d / 2)
#pragma once

#include "attnlab/core/narrow.hpp"

#include <array>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace attnlab {

// How a tensor's values are to be read and printed.
// float16 and bfloat16 values are held as the doubles they stand for.
enum class Elem { float32, float64, boolean, index, float16, bfloat16 };
constexpr auto enum_names(Elem)
{
    return std::array{std::pair{Elem::float32, std::string_view("float32")},
                      std::pair{Elem::float64, std::string_view("float64")},
                      std::pair{Elem::float16, std::string_view("float16")},
                      std::pair{Elem::bfloat16, std::string_view("bfloat16")},
                      std::pair{Elem::boolean, std::string_view("bool")},
                      std::pair{Elem::index, std::string_view("int64")}};
}

template <class T>
constexpr Elem elem_of()
{
    if constexpr (std::is_same_v<T, f16>) return Elem::float16;
    else if constexpr (std::is_same_v<T, bf16>) return Elem::bfloat16;
    else return sizeof(T) == sizeof(float) ? Elem::float32 : Elem::float64;
}

// A tensor's values, row-major. Held as float when every value is a float32 (the float32,
// float16 and bfloat16 runs: half the memory of double, which the large attention runs
// need), as double otherwise. Read as doubles, exactly, whichever the storage; the loops that
// must not pay a branch per element take the storage itself with visit().
class Values {
public:
    // One element, assignable: t.values[i] = v writes it in the storage's type.
    class Ref {
    public:
        Ref(Values& v, std::size_t i) : v_(v), i_(i) {}
        operator double() const { return static_cast<const Values&>(v_)[i_]; }
        Ref& operator=(double x) { v_.set(i_, x); return *this; }
        Ref& operator=(const Ref& o) { return *this = static_cast<double>(o); }
        Ref& operator+=(double x) { return *this = static_cast<double>(*this) + x; }
        Ref& operator-=(double x) { return *this = static_cast<double>(*this) - x; }
        Ref& operator*=(double x) { return *this = static_cast<double>(*this) * x; }
    private:
        Values& v_;
        std::size_t i_;
    };
    class const_iterator {
    public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = double;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = double;
        const_iterator(const Values* v, std::size_t i) : v_(v), i_(i) {}
        double operator*() const { return (*v_)[i_]; }
        const_iterator& operator++() { ++i_; return *this; }
        const_iterator operator++(int) { auto old = *this; ++i_; return old; }
        bool operator==(const const_iterator& o) const { return i_ == o.i_; }
        bool operator!=(const const_iterator& o) const { return i_ != o.i_; }
    private:
        const Values* v_;
        std::size_t i_;
    };

    Values() = default;
    Values(std::vector<double> v) : wide_(std::move(v)) {}
    Values(std::initializer_list<double> v) : wide_(v) {}
    // n float elements (zero), for a tensor of float32-representable values.
    static Values floats(std::size_t n)
    {
        Values v;
        v.narrow_.resize(n);
        v.is_narrow_ = true;
        return v;
    }

    bool narrow() const { return is_narrow_; }
    std::size_t size() const { return is_narrow_ ? narrow_.size() : wide_.size(); }
    bool empty() const { return size() == 0; }
    double operator[](std::size_t i) const { return is_narrow_ ? static_cast<double>(narrow_[i]) : wide_[i]; }
    Ref operator[](std::size_t i) { return Ref(*this, i); }
    void set(std::size_t i, double x)
    {
        if (is_narrow_) narrow_[i] = static_cast<float>(x);
        else wide_[i] = x;
    }
    void push_back(double x)
    {
        if (is_narrow_) narrow_.push_back(static_cast<float>(x));
        else wide_.push_back(x);
    }
    void reserve(std::size_t n) { is_narrow_ ? narrow_.reserve(n) : wide_.reserve(n); }
    void resize(std::size_t n) { is_narrow_ ? narrow_.resize(n) : wide_.resize(n); }
    void assign(std::size_t n, double x) { *this = Values(std::vector<double>(n, x)); }
    const_iterator begin() const { return {this, 0}; }
    const_iterator end() const { return {this, size()}; }
    // Elements [first, last) as doubles.
    std::vector<double> slice(std::size_t first, std::size_t last) const
    {
        std::vector<double> out(last - first);
        for (std::size_t i = first; i < last; ++i) out[i - first] = (*this)[i];
        return out;
    }
    std::vector<double> to_vector() const { return slice(0, size()); }
    // f(const float*) or f(const double*): the storage itself.
    template <class F>
    decltype(auto) visit(F&& f) const
    {
        return is_narrow_ ? f(static_cast<const float*>(narrow_.data())) : f(static_cast<const double*>(wide_.data()));
    }
    template <class F>
    decltype(auto) visit(F&& f)
    {
        return is_narrow_ ? f(narrow_.data()) : f(wide_.data());
    }
    // The values as a mutable vector of doubles, the storage widened first (exact).
    std::vector<double>& wide()
    {
        if (is_narrow_) {
            wide_.assign(narrow_.begin(), narrow_.end());
            narrow_ = std::vector<float>();
            is_narrow_ = false;
        }
        return wide_;
    }
    // Every element replaced by f(element).
    template <class F>
    void transform(F&& f)
    {
        visit([&](auto* p) {
            for (std::size_t i = 0; i < size(); ++i) p[i] = static_cast<std::remove_pointer_t<decltype(p)>>(f(static_cast<double>(p[i])));
        });
    }
    // Equal element by element (NaN unequal, as std::vector's ==), whatever the storage.
    friend bool operator==(const Values& a, const Values& b)
    {
        if (a.size() != b.size()) return false;
        for (std::size_t i = 0; i < a.size(); ++i)
            if (!(a[i] == b[i])) return false;
        return true;
    }
    friend bool operator!=(const Values& a, const Values& b) { return !(a == b); }

private:
    std::vector<double> wide_;
    std::vector<float> narrow_;
    bool is_narrow_ = false;
};

struct Tensor {
    std::string name;
    std::vector<std::string> axes;  // one name per dimension, e.g. {"pos", "dim"}
    Elem elem = Elem::float64;
    std::vector<std::size_t> shape;
    Values values;                  // row-major

    std::size_t rank() const { return shape.size(); }
    std::size_t size() const { return values.size(); }
    std::size_t dim(std::size_t axis) const { return shape[axis]; }
    // Element of a rank-2 tensor, or of the last two axes at a flat leading offset.
    double at(std::size_t i, std::size_t j) const { return values[i * shape.back() + j]; }
};

// The number of elements a shape holds.
std::size_t element_count(const std::vector<std::size_t>& shape);

}  // namespace attnlab

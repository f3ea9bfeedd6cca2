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
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace attnlab {

// How a tensor's values are to be read and printed.
// float16 and bfloat16 values are stored as the floats they stand for (every one is a float).
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
    // A copy owns its own storage, whatever the original's.
    Values(const Values& o) : wide_(o.wide_), is_narrow_(o.is_narrow_)
    {
        if (is_narrow_) own(std::vector<float>(o.fdata_, o.fdata_ + o.fsize_));
    }
    Values(Values&& o) noexcept { swap(o); }
    Values& operator=(Values o) noexcept
    {
        swap(o);
        return *this;
    }
    // n float elements (zero), for a tensor of float32-representable values.
    static Values floats(std::size_t n)
    {
        Values v;
        v.is_narrow_ = true;
        v.own(std::vector<float>(n));
        return v;
    }
    // n floats at data, kept alive by owner (a container moved in): no copy.
    static Values adopt(std::shared_ptr<void> owner, float* data, std::size_t n)
    {
        Values v;
        v.is_narrow_ = true;
        v.owner_ = std::move(owner);
        v.fdata_ = data;
        v.fsize_ = n;
        return v;
    }

    bool narrow() const { return is_narrow_; }
    std::size_t size() const { return is_narrow_ ? fsize_ : wide_.size(); }
    bool empty() const { return size() == 0; }
    double operator[](std::size_t i) const { return is_narrow_ ? static_cast<double>(fdata_[i]) : wide_[i]; }
    Ref operator[](std::size_t i) { return Ref(*this, i); }
    void set(std::size_t i, double x)
    {
        if (is_narrow_) fdata_[i] = static_cast<float>(x);
        else wide_[i] = x;
    }
    void push_back(double x)
    {
        if (is_narrow_) edit([&](std::vector<float>& v) { v.push_back(static_cast<float>(x)); });
        else wide_.push_back(x);
    }
    void resize(std::size_t n)
    {
        if (is_narrow_) edit([&](std::vector<float>& v) { v.resize(n); });
        else wide_.resize(n);
    }
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
        return is_narrow_ ? f(static_cast<const float*>(fdata_)) : f(static_cast<const double*>(wide_.data()));
    }
    template <class F>
    decltype(auto) visit(F&& f)
    {
        return is_narrow_ ? f(fdata_) : f(wide_.data());
    }
    // The values as a mutable vector of doubles, the storage widened first (exact).
    std::vector<double>& wide()
    {
        if (is_narrow_) {
            wide_.assign(fdata_, fdata_ + fsize_);
            owner_.reset();
            fdata_ = nullptr, fsize_ = 0, vec_ = nullptr, is_narrow_ = false;
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
    void swap(Values& o) noexcept
    {
        std::swap(wide_, o.wide_);
        std::swap(owner_, o.owner_);
        std::swap(fdata_, o.fdata_);
        std::swap(fsize_, o.fsize_);
        std::swap(vec_, o.vec_);
        std::swap(is_narrow_, o.is_narrow_);
    }
    void own(std::vector<float> v)
    {
        auto held = std::make_shared<std::vector<float>>(std::move(v));
        fdata_ = held->data(), fsize_ = held->size(), vec_ = held.get();
        owner_ = std::move(held);
    }
    // Changes the float storage as a vector: an adopted one is copied into a vector first.
    template <class F>
    void edit(F&& f)
    {
        if (vec_ == nullptr || owner_.get() != static_cast<void*>(vec_)) own(std::vector<float>(fdata_, fdata_ + fsize_));
        f(*vec_);
        fdata_ = vec_->data(), fsize_ = vec_->size();
    }

    std::vector<double> wide_;
    std::shared_ptr<void> owner_;         // keeps the float storage alive
    float* fdata_ = nullptr;              // the float storage
    std::size_t fsize_ = 0;
    std::vector<float>* vec_ = nullptr;   // the owner, when it is a vector of our own
    bool is_narrow_ = false;
};

struct Tensor {
    std::string name;
    std::vector<std::string> axes;  // one name per dimension, e.g. {"pos", "dim"}
    Elem elem = Elem::float64;
    std::vector<std::size_t> shape;
    Values values;                  // row-major
    // The names of the first axis's entries, where the program gives them (train's schemes, so
    // that a picture labels its curves by scheme); empty otherwise.
    std::vector<std::string> entry_names = {};

    std::size_t rank() const { return shape.size(); }
    std::size_t size() const { return values.size(); }
    std::size_t dim(std::size_t axis) const { return shape[axis]; }
    // Element of a rank-2 tensor, or of the last two axes at a flat leading offset.
    double at(std::size_t i, std::size_t j) const { return values[i * shape.back() + j]; }
};

}  // namespace attnlab

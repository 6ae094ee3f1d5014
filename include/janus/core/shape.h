// Shape: the extent of each axis of an array. Layer: core.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

namespace janus {

/// A shape's extents as a view into the Shape (valid while the Shape lives and keeps its rank),
/// that converts to std::vector<int64_t> where a copy is wanted.
class ShapeDims : public std::span<const int64_t> {
 public:
  using std::span<const int64_t>::span;
  operator std::vector<int64_t>() const { return {begin(), end()}; }  // NOLINT: implicit
  friend bool operator==(ShapeDims a, ShapeDims b) { return std::ranges::equal(a, b); }
};

/// Extents of an array's axes, outermost first. A 0-d shape `{}` is a scalar (one element);
/// an extent of 0 gives an empty array. Arrays are row-major and contiguous.
///
/// Up to kInlineDims extents live in the Shape itself, so that making, copying and destroying
/// the shape of a common array allocates nothing (every operator call copies a few); more go to
/// the heap.
class Shape {
 public:
  static constexpr int kInlineDims = 6;

  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) { assign(dims.begin(), dims.size()); }
  explicit Shape(const std::vector<int64_t>& dims) { assign(dims.data(), dims.size()); }
  Shape(const Shape& other) { assign(other.data(), other.size()); }
  Shape(Shape&& other) noexcept { take(other); }
  Shape& operator=(const Shape& other) {
    if (this != &other) {
      release();
      assign(other.data(), other.size());
    }
    return *this;
  }
  Shape& operator=(Shape&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  ~Shape() { release(); }

  int ndim() const { return static_cast<int>(ndim_); }
  /// Number of elements: the product of the extents (1 for a scalar); ShapeError on overflow.
  int64_t numel() const;
  int64_t operator[](int axis) const { return data()[axis]; }
  int64_t& operator[](int axis) { return data()[axis]; }
  ShapeDims dims() const { return {data(), size()}; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + ndim_; }

  friend bool operator==(const Shape& a, const Shape& b) { return a.dims() == b.dims(); }

  /// "[2, 3]"; a scalar is "[]".
  std::string to_string() const;

 private:
  bool is_inline() const { return ndim_ <= kInlineDims; }
  size_t size() const { return ndim_; }
  const int64_t* data() const { return is_inline() ? inline_ : heap_; }
  int64_t* data() { return is_inline() ? inline_ : heap_; }
  // Copies `n` extents in; the shape holds none before (a new or released one).
  void assign(const int64_t* dims, size_t n) {
    ndim_ = static_cast<uint32_t>(n);
    if (!is_inline()) heap_ = new int64_t[n];
    std::copy_n(dims, n, data());
  }
  // Moves `other`'s extents in (the shape holds none before) and leaves `other` a scalar.
  void take(Shape& other) {
    ndim_ = other.ndim_;
    if (is_inline()) {
      std::copy_n(other.inline_, ndim_, inline_);
    } else {
      heap_ = other.heap_;
    }
    other.ndim_ = 0;
  }
  void release() {
    if (!is_inline()) delete[] heap_;
    ndim_ = 0;
  }

  uint32_t ndim_ = 0;
  union {
    int64_t inline_[kInlineDims] = {};  // while ndim_ <= kInlineDims
    int64_t* heap_;                     // otherwise, ndim_ extents
  };
};

/// Resolves one -1 extent so that the result has `numel` elements. Throws ShapeError naming
/// both shapes when that is impossible (two -1, a negative extent, sizes that do not divide).
Shape resolve_reshape(const Shape& from, const Shape& to);

}  // namespace janus

template <>
struct fmt::formatter<janus::Shape> : fmt::formatter<std::string_view> {
  auto format(const janus::Shape& s, format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(s.to_string(), ctx);
  }
};

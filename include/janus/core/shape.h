// Shape: the extent of each axis of an array. Layer: core.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace janus {

/// Extents of an array's axes, outermost first. A 0-d shape `{}` is a scalar (one element);
/// an extent of 0 gives an empty array. Arrays are row-major and contiguous.
class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}

  int ndim() const { return static_cast<int>(dims_.size()); }
  /// Number of elements: the product of the extents (1 for a scalar); ShapeError on overflow.
  int64_t numel() const;
  int64_t operator[](int axis) const { return dims_[static_cast<size_t>(axis)]; }
  int64_t& operator[](int axis) { return dims_[static_cast<size_t>(axis)]; }
  const std::vector<int64_t>& dims() const { return dims_; }
  auto begin() const { return dims_.begin(); }
  auto end() const { return dims_.end(); }

  friend bool operator==(const Shape&, const Shape&) = default;

  /// "[2, 3]"; a scalar is "[]".
  std::string to_string() const;

 private:
  std::vector<int64_t> dims_;
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

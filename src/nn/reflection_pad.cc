// ReflectionPad2D: reflection padding from one-wide slices and concat.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "janus/base/error.h"
#include "janus/nn/layers.h"
#include "janus/ops/ops.h"

namespace janus::nn {
namespace {

// `x` with `before` and `after` reflected elements on `axis`: x[before], ..., x[1] ahead of
// it and x[n - 2], ..., x[n - 1 - after] behind it.
NDArray reflect(const NDArray& x, int64_t axis, int64_t before, int64_t after) {
  const int64_t n = x.shape()[axis];
  NDArray out = x;
  for (int64_t i = 1; i <= before; ++i) out = concat(slice_axis(x, axis, i, i + 1), out, axis);
  for (int64_t i = 1; i <= after; ++i) {
    out = concat(out, slice_axis(x, axis, n - 1 - i, n - i), axis);
  }
  return out;
}

}  // namespace

ReflectionPad2D::ReflectionPad2D(std::vector<int64_t> padding) : Block("reflectionpad2d") {
  JANUS_CHECK(padding.size() == 1 || padding.size() == 8, ValueError,
              "ReflectionPad2D: padding has {} values [{}], expected 1 or 8 (before and after "
              "for each axis of [N, C, H, W])",
              padding.size(), fmt::join(padding, ", "));
  if (padding.size() == 8) {
    JANUS_CHECK(padding[0] == 0 && padding[1] == 0 && padding[2] == 0 && padding[3] == 0,
                ValueError,
                "ReflectionPad2D: padding is [{}], expected zeros for the batch and channel "
                "axes (the first 4 values)",
                fmt::join(padding, ", "));
    padding_.assign(padding.begin() + 4, padding.end());
  } else {
    padding_.assign(4, padding[0]);
  }
  for (int64_t p : padding_) {
    JANUS_CHECK(p >= 0, ValueError, "ReflectionPad2D: padding is [{}], expected values >= 0",
                fmt::join(padding, ", "));
  }
}

NDArray ReflectionPad2D::forward(const NDArray& x) {
  JANUS_CHECK(x.ndim() == 4, ShapeError,
              "{}: input has shape {}, expected 4 dimensions [batch, channels, height, width]",
              name(), x.shape());
  const Shape& s = x.shape();
  JANUS_CHECK(padding_[0] < s[2] && padding_[1] < s[2] && padding_[2] < s[3] && padding_[3] < s[3],
              ShapeError,
              "{}: padding (top, bottom, left, right) ({}) is not below the height and width of "
              "input {}: a reflection repeats no edge, so each side needs that many more rows "
              "or columns",
              name(), fmt::join(padding_, ", "), s);
  return reflect(reflect(x, 2, padding_[0], padding_[1]), 3, padding_[2], padding_[3]);
}

std::string ReflectionPad2D::describe() const {
  return fmt::format("ReflectionPad2D(padding=({}))", fmt::join(padding_, ", "));
}

}  // namespace janus::nn

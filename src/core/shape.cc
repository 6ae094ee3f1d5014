// Shape arithmetic and reshape resolution.
#include "janus/core/shape.h"

#include <algorithm>
#include <limits>

#include "janus/base/error.h"

namespace janus {

int64_t Shape::numel() const {
  if (std::find(dims_.begin(), dims_.end(), 0) != dims_.end()) return 0;
  int64_t n = 1;
  for (int64_t d : dims_) {
    // Every array's shape passes here (allocation, views, shape rules): an overflowing product
    // would otherwise wrap, to 0 elements or a negative count, and reach the allocator.
    JANUS_CHECK(!__builtin_mul_overflow(n, d, &n), ShapeError,
                "shape {}: the element count overflows int64, expected at most {} elements", *this,
                std::numeric_limits<int64_t>::max());
  }
  return n;
}

std::string Shape::to_string() const { return fmt::format("[{}]", fmt::join(dims_, ", ")); }

Shape resolve_reshape(const Shape& from, const Shape& to) {
  int unknown = -1;
  int64_t known = 1;
  for (int i = 0; i < to.ndim(); ++i) {
    if (to[i] == -1) {
      JANUS_CHECK(unknown < 0, ShapeError,
                  "reshape: target shape {} has more than one -1, expected at most one", to);
      unknown = i;
      continue;
    }
    JANUS_CHECK(to[i] >= 0, ShapeError,
                "reshape: target shape {} has a negative extent at axis {}, expected >= 0 or -1",
                to, i);
    known *= to[i];
  }
  Shape out = to;
  if (unknown >= 0) {
    JANUS_CHECK(known != 0 && from.numel() % known == 0, ShapeError,
                "reshape: cannot reshape {} ({} elements) into {}: the -1 axis cannot be inferred",
                from, from.numel(), to);
    out[unknown] = from.numel() / known;
    return out;
  }
  JANUS_CHECK(known == from.numel(), ShapeError,
              "reshape: cannot reshape {} ({} elements) into {} ({} elements)", from, from.numel(),
              to, known);
  return out;
}

}  // namespace janus

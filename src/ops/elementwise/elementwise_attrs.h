// The attribute struct of the elementwise operators with a number operand (add_scalar, ...):
// its field is named after the registered attribute that it reads (see ../typed_attrs.h).
// Private to src/ops.
#pragma once

#include "../typed_attrs.h"

namespace janus::ops {

struct ScalarAttrs {
  double scalar = 0.0;
  static constexpr auto fields() { return std::tuple{field("scalar", &ScalarAttrs::scalar)}; }
  static ScalarAttrs from(const Attrs& attrs) { return read_attrs<ScalarAttrs>(attrs); }
};

}  // namespace janus::ops

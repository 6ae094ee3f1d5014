// The attribute struct of the matrix products (dot, matmul): its fields are named after the
// registered attributes that they read (see ../typed_attrs.h). Private to src/ops.
#pragma once

#include "../typed_attrs.h"

namespace janus::ops {

struct ProductAttrs {
  bool transpose_a = false;
  bool transpose_b = false;
  static constexpr auto fields() {
    return std::tuple{field("transpose_a", &ProductAttrs::transpose_a),
                      field("transpose_b", &ProductAttrs::transpose_b)};
  }
  static ProductAttrs from(const Attrs& attrs) { return read_attrs<ProductAttrs>(attrs); }
};

}  // namespace janus::ops

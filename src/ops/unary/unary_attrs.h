// The attribute structs of the unary operators that take attributes (cast, clip, leaky_relu):
// each field named after the registered attribute that it reads (see ../typed_attrs.h).
// Private to src/ops.
#pragma once

#include "../typed_attrs.h"

namespace janus::ops {

struct CastAttrs {
  DType dtype = DType::kFloat32;
  static constexpr auto fields() { return std::tuple{field("dtype", &CastAttrs::dtype)}; }
  static CastAttrs from(const Attrs& attrs) { return read_attrs<CastAttrs>(attrs); }
};

struct ClipAttrs {
  double a_min = 0.0;
  double a_max = 0.0;
  static constexpr auto fields() {
    return std::tuple{field("a_min", &ClipAttrs::a_min), field("a_max", &ClipAttrs::a_max)};
  }
  static ClipAttrs from(const Attrs& attrs) { return read_attrs<ClipAttrs>(attrs); }
};

struct LeakyReluAttrs {
  double alpha = 0.01;
  static constexpr auto fields() { return std::tuple{field("alpha", &LeakyReluAttrs::alpha)}; }
  static LeakyReluAttrs from(const Attrs& attrs) { return read_attrs<LeakyReluAttrs>(attrs); }
};

}  // namespace janus::ops

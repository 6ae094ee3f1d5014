// The attribute structs of the ordering operators (sort, argsort, topk) and of the scatter that
// routes their gradients (see ../typed_attrs.h). Private to src/ops.
#pragma once

#include <cstdint>
#include <string>

#include "../typed_attrs.h"

namespace janus::ops {

/// sort.
struct SortAttrs {
  int64_t axis = -1;
  bool descending = false;
  static constexpr auto fields() {
    return std::tuple{field("axis", &SortAttrs::axis), field("descending", &SortAttrs::descending)};
  }
  static SortAttrs from(const Attrs& attrs) { return read_attrs<SortAttrs>(attrs); }
};

/// argsort.
struct ArgsortAttrs {
  int64_t axis = -1;
  bool descending = false;
  DType dtype = DType::kInt64;
  static constexpr auto fields() {
    return std::tuple{field("axis", &ArgsortAttrs::axis),
                      field("descending", &ArgsortAttrs::descending),
                      field("dtype", &ArgsortAttrs::dtype)};
  }
  static ArgsortAttrs from(const Attrs& attrs) { return read_attrs<ArgsortAttrs>(attrs); }
};

/// topk (MXNet's attribute names).
struct TopkAttrs {
  int64_t axis = -1;
  int64_t k = 1;
  std::string ret_typ = "indices";
  bool is_ascend = false;
  DType dtype = DType::kFloat32;
  static constexpr auto fields() {
    return std::tuple{field("axis", &TopkAttrs::axis), field("k", &TopkAttrs::k),
                      field("ret_typ", &TopkAttrs::ret_typ),
                      field("is_ascend", &TopkAttrs::is_ascend), field("dtype", &TopkAttrs::dtype)};
  }
  static TopkAttrs from(const Attrs& attrs) { return read_attrs<TopkAttrs>(attrs); }
};

/// scatter_along_axis.
struct ScatterAlongAxisAttrs {
  int64_t axis = -1;
  int64_t n = 0;
  static constexpr auto fields() {
    return std::tuple{field("axis", &ScatterAlongAxisAttrs::axis),
                      field("n", &ScatterAlongAxisAttrs::n)};
  }
  static ScatterAlongAxisAttrs from(const Attrs& attrs) {
    return read_attrs<ScatterAlongAxisAttrs>(attrs);
  }
};

}  // namespace janus::ops

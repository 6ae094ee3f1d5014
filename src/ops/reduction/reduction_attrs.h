// The attribute structs of the reductions: one per attribute list, each field named after the
// registered attribute that it reads (see ../typed_attrs.h). Private to src/ops.
#pragma once

#include <cstdint>
#include <vector>

#include "../typed_attrs.h"

namespace janus::ops {

/// sum, mean, prod, max, min, logsumexp.
struct ReduceAttrs {
  std::vector<int64_t> axes;  // empty: every axis
  bool keepdims = false;
  static constexpr auto fields() {
    return std::tuple{field("axes", &ReduceAttrs::axes), field("keepdims", &ReduceAttrs::keepdims)};
  }
  static ReduceAttrs from(const Attrs& attrs) { return read_attrs<ReduceAttrs>(attrs); }
};

struct NormAttrs : ReduceAttrs {
  int64_t ord = 2;
  static constexpr auto fields() {
    return std::tuple_cat(ReduceAttrs::fields(), std::tuple{field("ord", &NormAttrs::ord)});
  }
  static NormAttrs from(const Attrs& attrs) { return read_attrs<NormAttrs>(attrs); }
};

/// argmax and argmin.
struct ArgReduceAttrs {
  int64_t axis = 0;
  bool keepdims = false;
  static constexpr auto fields() {
    return std::tuple{field("axis", &ArgReduceAttrs::axis),
                      field("keepdims", &ArgReduceAttrs::keepdims)};
  }
  static ArgReduceAttrs from(const Attrs& attrs) { return read_attrs<ArgReduceAttrs>(attrs); }
};

}  // namespace janus::ops

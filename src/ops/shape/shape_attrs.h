// The attribute structs of the shape operators: one per attribute list, each field named after
// the registered attribute that it reads (see ../typed_attrs.h). Private to src/ops.
#pragma once

#include <cstdint>
#include <vector>

#include "../typed_attrs.h"

namespace janus::ops {

/// reshape and broadcast_to.
struct TargetShapeAttrs {
  Shape shape;
  static constexpr auto fields() { return std::tuple{field("shape", &TargetShapeAttrs::shape)}; }
  static TargetShapeAttrs from(const Attrs& attrs) { return read_attrs<TargetShapeAttrs>(attrs); }
};

/// mxnet_reshape: the target with MXNet's special codes (see mxnet_reshape.h).
struct ReshapeCodesAttrs {
  std::vector<int64_t> shape;
  bool reverse = false;
  static constexpr auto fields() {
    return std::tuple{field("shape", &ReshapeCodesAttrs::shape),
                      field("reverse", &ReshapeCodesAttrs::reverse)};
  }
  static ReshapeCodesAttrs from(const Attrs& attrs) { return read_attrs<ReshapeCodesAttrs>(attrs); }
};

/// reshape_like: the axes [begin, end) of x that take like's axes [begin, end) (MXNet's lhs_begin,
/// lhs_end, rhs_begin, rhs_end): {} every axis, {begin} from begin to the last, {begin, end}.
struct ReshapeLikeAttrs {
  std::vector<int64_t> x_axes;
  std::vector<int64_t> like_axes;
  static constexpr auto fields() {
    return std::tuple{field("x_axes", &ReshapeLikeAttrs::x_axes),
                      field("like_axes", &ReshapeLikeAttrs::like_axes)};
  }
  static ReshapeLikeAttrs from(const Attrs& attrs) { return read_attrs<ReshapeLikeAttrs>(attrs); }
};

/// concat, expand_dims, scatter_add, stack and take.
struct AxisAttrs {
  int64_t axis = 0;
  static constexpr auto fields() { return std::tuple{field("axis", &AxisAttrs::axis)}; }
  static AxisAttrs from(const Attrs& attrs) { return read_attrs<AxisAttrs>(attrs); }
};

/// squeeze and transpose.
struct AxesAttrs {
  std::vector<int64_t> axes;
  static constexpr auto fields() { return std::tuple{field("axes", &AxesAttrs::axes)}; }
  static AxesAttrs from(const Attrs& attrs) { return read_attrs<AxesAttrs>(attrs); }
};

struct PadAttrs {
  std::vector<int64_t> widths;  // before0, after0, before1, after1, ...
  double value = 0.0;
  static constexpr auto fields() {
    return std::tuple{field("widths", &PadAttrs::widths), field("value", &PadAttrs::value)};
  }
  static PadAttrs from(const Attrs& attrs) { return read_attrs<PadAttrs>(attrs); }
};

struct SliceAttrs {
  std::vector<int64_t> begin;
  std::vector<int64_t> end;
  std::vector<int64_t> step;  // empty: all 1
  static constexpr auto fields() {
    return std::tuple{field("begin", &SliceAttrs::begin), field("end", &SliceAttrs::end),
                      field("step", &SliceAttrs::step)};
  }
  static SliceAttrs from(const Attrs& attrs) { return read_attrs<SliceAttrs>(attrs); }
};

struct SliceAxisAttrs {
  int64_t axis = 0;
  int64_t begin = 0;
  int64_t end = 0;
  static constexpr auto fields() {
    return std::tuple{field("axis", &SliceAxisAttrs::axis), field("begin", &SliceAxisAttrs::begin),
                      field("end", &SliceAxisAttrs::end)};
  }
  static SliceAxisAttrs from(const Attrs& attrs) { return read_attrs<SliceAxisAttrs>(attrs); }
};

}  // namespace janus::ops

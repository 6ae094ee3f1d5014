// The attribute structs of the creation operators: one per attribute list, each field named
// after the registered attribute that it reads (see ../typed_attrs.h). Private to src/ops.
#pragma once

#include <cstdint>

#include "../typed_attrs.h"

namespace janus::ops {

/// zeros and ones: creation_attrs({}).
struct CreationAttrs {
  Shape shape;
  DType dtype = DType::kFloat32;
  Device device;
  static constexpr auto fields() {
    return std::tuple{field("shape", &CreationAttrs::shape), field("dtype", &CreationAttrs::dtype),
                      field("device", &CreationAttrs::device)};
  }
  static CreationAttrs from(const Attrs& attrs) { return read_attrs<CreationAttrs>(attrs); }
};

struct FullAttrs {
  double value = 0.0;
  Shape shape;
  DType dtype = DType::kFloat32;
  Device device;
  static constexpr auto fields() {
    return std::tuple{field("value", &FullAttrs::value), field("shape", &FullAttrs::shape),
                      field("dtype", &FullAttrs::dtype), field("device", &FullAttrs::device)};
  }
  static FullAttrs from(const Attrs& attrs) { return read_attrs<FullAttrs>(attrs); }
};

struct FillIntoAttrs {
  double value = 0.0;
  static constexpr auto fields() { return std::tuple{field("value", &FillIntoAttrs::value)}; }
  static FillIntoAttrs from(const Attrs& attrs) { return read_attrs<FillIntoAttrs>(attrs); }
};

struct ArangeAttrs {
  double start = 0.0;
  double stop = 0.0;
  double step = 1.0;
  DType dtype = DType::kFloat32;
  Device device;
  static constexpr auto fields() {
    return std::tuple{field("start", &ArangeAttrs::start), field("stop", &ArangeAttrs::stop),
                      field("step", &ArangeAttrs::step), field("dtype", &ArangeAttrs::dtype),
                      field("device", &ArangeAttrs::device)};
  }
  static ArangeAttrs from(const Attrs& attrs) { return read_attrs<ArangeAttrs>(attrs); }
};

struct LinspaceAttrs {
  double start = 0.0;
  double stop = 0.0;
  int64_t num = 0;
  bool endpoint = true;
  DType dtype = DType::kFloat32;
  Device device;
  static constexpr auto fields() {
    return std::tuple{
        field("start", &LinspaceAttrs::start), field("stop", &LinspaceAttrs::stop),
        field("num", &LinspaceAttrs::num),     field("endpoint", &LinspaceAttrs::endpoint),
        field("dtype", &LinspaceAttrs::dtype), field("device", &LinspaceAttrs::device)};
  }
  static LinspaceAttrs from(const Attrs& attrs) { return read_attrs<LinspaceAttrs>(attrs); }
};

struct EyeAttrs {
  int64_t n = 0;
  int64_t m = -1;  // -1: n
  int64_t k = 0;
  DType dtype = DType::kFloat32;
  Device device;
  /// The number of columns (m, or n when m is -1).
  int64_t columns() const { return m == -1 ? n : m; }
  static constexpr auto fields() {
    return std::tuple{field("n", &EyeAttrs::n), field("m", &EyeAttrs::m), field("k", &EyeAttrs::k),
                      field("dtype", &EyeAttrs::dtype), field("device", &EyeAttrs::device)};
  }
  static EyeAttrs from(const Attrs& attrs) { return read_attrs<EyeAttrs>(attrs); }
};

}  // namespace janus::ops

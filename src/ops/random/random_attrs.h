// The attribute structs of the random operators: one per attribute list, each field named after
// the registered attribute that it reads (see ../typed_attrs.h). Private to src/ops.
#pragma once

#include <cstdint>

#include "../typed_attrs.h"

namespace janus::ops {

struct RandomUniformAttrs {
  double low = 0.0;
  double high = 1.0;
  Shape shape;
  DType dtype = DType::kFloat32;
  Device device;
  static constexpr auto fields() {
    return std::tuple{
        field("low", &RandomUniformAttrs::low), field("high", &RandomUniformAttrs::high),
        field("shape", &RandomUniformAttrs::shape), field("dtype", &RandomUniformAttrs::dtype),
        field("device", &RandomUniformAttrs::device)};
  }
  static RandomUniformAttrs from(const Attrs& attrs) {
    return read_attrs<RandomUniformAttrs>(attrs);
  }
};

struct RandomNormalAttrs {
  double loc = 0.0;
  double scale = 1.0;
  Shape shape;
  DType dtype = DType::kFloat32;
  Device device;
  static constexpr auto fields() {
    return std::tuple{
        field("loc", &RandomNormalAttrs::loc), field("scale", &RandomNormalAttrs::scale),
        field("shape", &RandomNormalAttrs::shape), field("dtype", &RandomNormalAttrs::dtype),
        field("device", &RandomNormalAttrs::device)};
  }
  static RandomNormalAttrs from(const Attrs& attrs) { return read_attrs<RandomNormalAttrs>(attrs); }
};

struct RandintAttrs {
  int64_t low = 0;
  int64_t high = 0;
  Shape shape;
  DType dtype = DType::kInt64;
  Device device;
  static constexpr auto fields() {
    return std::tuple{field("low", &RandintAttrs::low), field("high", &RandintAttrs::high),
                      field("shape", &RandintAttrs::shape), field("dtype", &RandintAttrs::dtype),
                      field("device", &RandintAttrs::device)};
  }
  static RandintAttrs from(const Attrs& attrs) { return read_attrs<RandintAttrs>(attrs); }
};

struct PermutationAttrs {
  int64_t n = 0;
  DType dtype = DType::kInt64;
  Device device;
  static constexpr auto fields() {
    return std::tuple{field("n", &PermutationAttrs::n), field("dtype", &PermutationAttrs::dtype),
                      field("device", &PermutationAttrs::device)};
  }
  static PermutationAttrs from(const Attrs& attrs) { return read_attrs<PermutationAttrs>(attrs); }
};

}  // namespace janus::ops

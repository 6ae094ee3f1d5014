// Filling an array with one value: shared by zeros, ones and full. Private to src/ops.
#pragma once

#include "../op_utils.h"
#include "creation_attrs.h"

namespace janus::ops {

inline void fill_value(const NDArray& out, double value, const RunContext& ctx) {
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    T* __restrict p = out.data<T>();
    const T v = from_double<T>(value);
    parallel_for(out.size(), ctx, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) p[i] = v;
    });
  });
}

/// Shape rule of an operator that creates an array from S's shape, dtype and device.
template <typename S>
std::vector<TensorSpec> infer_created(const InferArgs& args) {
  const S a = S::from(args.attrs);
  for (int i = 0; i < a.shape.ndim(); ++i) {
    JANUS_CHECK(a.shape[i] >= 0, ShapeError, "{}: shape {} has a negative extent at axis {}",
                args.op.name, a.shape, i);
  }
  return {TensorSpec{a.shape, a.dtype, a.device}};
}

/// The attributes every creation operator ends with.
inline std::vector<AttrDef> creation_attrs(std::vector<AttrDef> leading) {
  leading.push_back({"shape", AttrType::kShape, std::nullopt, "extents of the output"});
  leading.push_back({"dtype", AttrType::kDType, DType::kFloat32, "element type of the output"});
  leading.push_back({"device", AttrType::kDevice, cpu(0), "device of the output"});
  return leading;
}

}  // namespace janus::ops

// arange(start, stop, step, dtype, device): evenly spaced values in [start, stop).
#include <cmath>

#include "janus/ops/ops.h"

#include "../op_utils.h"
#include "creation_attrs.h"

namespace janus::ops {
namespace {

void arange_cpu(const KernelArgs& args) {
  const ArangeAttrs a = ArangeAttrs::from(args.attrs);
  const double start = a.start;
  const double step = a.step;
  const NDArray& out = args.out(0);
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    T* p = out.data<T>();
    for (int64_t i = 0; i < out.size(); ++i)
      p[i] = from_double<T>(start + static_cast<double>(i) * step);
  });
}

std::vector<TensorSpec> infer_arange(const InferArgs& args) {
  const ArangeAttrs a = ArangeAttrs::from(args.attrs);
  const double start = a.start;
  const double stop = a.stop;
  const double step = a.step;
  JANUS_CHECK(step != 0.0 && std::isfinite(step), ValueError,
              "arange: step is {}, expected a finite non-zero number", step);
  JANUS_CHECK(std::isfinite(start) && std::isfinite(stop), ValueError,
              "arange: start {} and stop {} must be finite", start, stop);
  const double count = std::ceil((stop - start) / step);
  const int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;
  return {TensorSpec{Shape{n}, a.dtype, a.device}};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "arange",
    .doc = "Values start, start + step, ... below stop (above it for a negative step).",
    .inputs = {},
    .outputs = {"y"},
    .attrs = {{"start", AttrType::kFloat, 0.0, "first value"},
              {"stop", AttrType::kFloat, std::nullopt, "end, excluded"},
              {"step", AttrType::kFloat, 1.0, "spacing, non-zero"},
              {"dtype", AttrType::kDType, DType::kFloat32, "element type of the output"},
              {"device", AttrType::kDevice, cpu(0), "device of the output"}},
    .attr_fields = attr_fields<ArangeAttrs>(),
    .infer = infer_arange,
    .kernels = {{DeviceType::kCPU, arange_cpu}},
    .not_differentiable = true,  // no inputs
});

}  // namespace janus::ops

namespace janus {
NDArray arange(double start, double stop, double step, DType dtype, Device device) {
  static const ops::OpDef& op = ops::get_op("arange");
  return ops::invoke(op, {}, {start, stop, step, dtype, device})[0];
}
}  // namespace janus

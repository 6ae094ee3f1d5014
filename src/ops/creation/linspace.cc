// linspace(start, stop, num, endpoint, dtype, device): num evenly spaced values from start to
// stop (NumPy's linspace).
#include <cmath>
#include <type_traits>

#include "janus/ops/ops.h"

#include "../op_utils.h"
#include "creation_attrs.h"

namespace janus::ops {
namespace {

// NumPy's computation, so that float64 results agree bit for bit: with div = num - 1 (num when
// the endpoint is excluded) and step = (stop - start) / div, value i is i * step + start, or
// i / div * (stop - start) + start when step underflows to zero; the last value is exactly
// stop when the endpoint is included. Integer dtypes take the floor (NumPy >= 2.0).
void linspace_cpu(const KernelArgs& args) {
  const LinspaceAttrs a = LinspaceAttrs::from(args.attrs);
  const double start = a.start;
  const double stop = a.stop;
  const int64_t num = a.num;
  const bool endpoint = a.endpoint;
  const int64_t div = endpoint ? num - 1 : num;
  const double delta = stop - start;
  const double step = div > 0 ? delta / static_cast<double>(div) : 0.0;
  const bool tiny_step = div > 0 && step == 0.0;
  auto value = [&](int64_t i) {
    const double x = static_cast<double>(i);
    if (endpoint && num > 1 && i == num - 1) return stop;
    if (div <= 0) return x * delta + start;  // num == 1 with the endpoint: start
    if (tiny_step) return x / static_cast<double>(div) * delta + start;
    return x * step + start;
  };
  const NDArray& out = args.out(0);
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    T* p = out.data<T>();
    parallel_for(out.size(), args.ctx, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          p[i] = from_double<T>(std::floor(value(i)));
        } else {
          p[i] = from_double<T>(value(i));
        }
      }
    });
  });
}

std::vector<TensorSpec> infer_linspace(const InferArgs& args) {
  const LinspaceAttrs a = LinspaceAttrs::from(args.attrs);
  const double start = a.start;
  const double stop = a.stop;
  const int64_t num = a.num;
  JANUS_CHECK(num >= 0, ValueError, "linspace: num is {}, expected num >= 0", num);
  JANUS_CHECK(std::isfinite(start) && std::isfinite(stop), ValueError,
              "linspace: start {} and stop {} must be finite", start, stop);
  return {TensorSpec{Shape{num}, a.dtype, a.device}};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "linspace",
    .doc =
        "num evenly spaced values from start to stop, stop included unless endpoint is false.\n\n"
        "NumPy's linspace: num = 0 gives an empty array, num = 1 gives [start]; integer "
        "dtypes take the floor of each value.",
    .inputs = {},
    .outputs = {"y"},
    .attrs = {{"start", AttrType::kFloat, std::nullopt, "first value"},
              {"stop", AttrType::kFloat, std::nullopt,
               "last value (or the end, excluded, without endpoint)"},
              {"num", AttrType::kInt, std::nullopt, "number of values, >= 0"},
              {"endpoint", AttrType::kBool, true, "whether stop is the last value"},
              {"dtype", AttrType::kDType, DType::kFloat32, "element type of the output"},
              {"device", AttrType::kDevice, cpu(0), "device of the output"}},
    .attr_fields = attr_fields<LinspaceAttrs>(),
    .infer = infer_linspace,
    .kernels = {{DeviceType::kCPU, linspace_cpu}},
    .not_differentiable = true,  // no inputs
});

}  // namespace janus::ops

namespace janus {
NDArray linspace(double start, double stop, int64_t num, bool endpoint, DType dtype,
                 Device device) {
  static const ops::OpDef& op = ops::get_op("linspace");
  return ops::invoke(op, {}, {start, stop, num, endpoint, dtype, device})[0];
}
}  // namespace janus

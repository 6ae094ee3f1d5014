// random_normal(loc, scale, shape, dtype, device): normal samples (Box-Muller on Philox words).
#include <cmath>
#include <numbers>

#include "../creation/fill.h"
#include "janus/ops/ops.h"
#include "philox.h"

namespace janus::ops {
namespace {

void random_normal_cpu(const KernelArgs& args) {
  const double loc = args.attrs.get<double>(0);
  const double scale = args.attrs.get<double>(1);
  const Philox gen(args.rng);
  const NDArray& out = args.out(0);
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    T* p = out.data<T>();
    // Element pair (2j, 2j+1) comes from the words of block j: one Box-Muller transform.
    const int64_t n = out.size();
    const int64_t pairs = (n + 1) / 2;
    parallel_for(pairs, args.ctx, [&](int64_t lo, int64_t hi) {
      for (int64_t j = lo; j < hi; ++j) {
        const auto w = gen.block(static_cast<uint64_t>(j));
        const double u1 = 1.0 - uniform01(w[0]);  // (0, 1]: log is finite
        const double u2 = uniform01(w[1]);
        const double r = std::sqrt(-2.0 * std::log(u1));
        const double theta = 2.0 * std::numbers::pi * u2;
        p[2 * j] = from_double<T>(loc + scale * r * std::cos(theta));
        if (2 * j + 1 < n) p[2 * j + 1] = from_double<T>(loc + scale * r * std::sin(theta));
      }
    });
  });
}

std::vector<TensorSpec> infer_random_normal(const InferArgs& args) {
  const double scale = args.attrs.get<double>(1);
  JANUS_CHECK(scale >= 0.0, ValueError, "random_normal: scale is {}, expected scale >= 0", scale);
  auto specs = infer_from_attrs(2, 3, 4)(args);
  JANUS_CHECK(is_floating(specs[0].dtype), TypeError,
              "random_normal: dtype {} is not a floating type, expected float32, float64, float16 "
              "or bfloat16",
              specs[0].dtype);
  return specs;
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "random_normal",
    .doc = "Normal samples with mean loc and standard deviation scale, seeded and deterministic.",
    .inputs = {},
    .outputs = {"y"},
    .attrs = creation_attrs({{"loc", AttrType::kFloat, 0.0, "mean"},
                             {"scale", AttrType::kFloat, 1.0, "standard deviation, >= 0"}}),
    .infer = infer_random_normal,
    .kernels = {{DeviceType::kCPU, random_normal_cpu}},
    .not_differentiable = true,  // no inputs
    .random = true,
});

}  // namespace janus::ops

namespace janus {
NDArray random_normal(double loc, double scale, const Shape& shape, DType dtype, Device device) {
  static const ops::OpDef& op = ops::get_op("random_normal");
  return ops::invoke(op, {}, {loc, scale, shape, dtype, device})[0];
}
}  // namespace janus

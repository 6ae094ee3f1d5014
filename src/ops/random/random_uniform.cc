// random_uniform(low, high, shape, dtype, device): uniform samples in [low, high).
#include "janus/ops/ops.h"

#include "../creation/fill.h"
#include "philox.h"
#include "random_attrs.h"

namespace janus::ops {
namespace {

void random_uniform_cpu(const KernelArgs& args) {
  const RandomUniformAttrs a = RandomUniformAttrs::from(args.attrs);
  const double low = a.low;
  const double high = a.high;
  const Philox gen(args.rng);
  const NDArray& out = args.out(0);
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    T* p = out.data<T>();
    parallel_for(out.size(), args.ctx, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        const double u = uniform01(gen.word(static_cast<uint64_t>(i)));
        const T v = from_double<T>(low + (high - low) * u);
        // Rounding to T can reach `high` (float16 and bfloat16 near the top of the range,
        // float32 within half an ulp of it); keep the range half-open by wrapping to low, like
        // PyTorch's uniform_.
        p[i] = static_cast<double>(v) < high ? v : from_double<T>(low);
      }
    });
  });
}

std::vector<TensorSpec> infer_random_uniform(const InferArgs& args) {
  const RandomUniformAttrs a = RandomUniformAttrs::from(args.attrs);
  const double low = a.low;
  const double high = a.high;
  JANUS_CHECK(low <= high, ValueError,
              "random_uniform: low {} is above high {}, expected low <= high", low, high);
  auto specs = infer_created<RandomUniformAttrs>(args);
  JANUS_CHECK(is_floating(specs[0].dtype), TypeError,
              "random_uniform: dtype {} is not a floating type, expected float32, float64, float16 "
              "or bfloat16",
              specs[0].dtype);
  return specs;
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "random_uniform",
    .doc = "Uniform samples in [low, high) from the seeded counter-based generator.",
    .inputs = {},
    .outputs = {"y"},
    .attrs = creation_attrs({{"low", AttrType::kFloat, 0.0, "lower bound, included"},
                             {"high", AttrType::kFloat, 1.0, "upper bound, excluded"}}),
    .attr_fields = attr_fields<RandomUniformAttrs>(),
    .infer = infer_random_uniform,
    .kernels = {{DeviceType::kCPU, random_uniform_cpu}},
    .not_differentiable = true,  // no inputs
    .random = true,
});

}  // namespace janus::ops

namespace janus {
NDArray random_uniform(double low, double high, const Shape& shape, DType dtype, Device device) {
  static const ops::OpDef& op = ops::get_op("random_uniform");
  return ops::invoke(op, {}, {low, high, shape, dtype, device})[0];
}
void seed(uint64_t value) { ops::seed(value); }
}  // namespace janus

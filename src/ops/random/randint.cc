// randint(low, high, shape, dtype, device): uniform integers in [low, high).
#include <type_traits>

#include "janus/ops/ops.h"

#include "../creation/fill.h"
#include "philox.h"
#include "random_attrs.h"
#include "uniform_int.h"

namespace janus::ops {
namespace {

// Element i is draw i of the call's stream (see uniform_below): exactly uniform, and the same
// whichever thread computes it.
void randint_cpu(const KernelArgs& args) {
  const RandintAttrs a = RandintAttrs::from(args.attrs);
  const int64_t low = a.low;
  const int64_t high = a.high;
  // high > low, so the difference is in [1, 2^64 - 1]: exact in unsigned arithmetic.
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  const Philox gen(args.rng);
  const NDArray& out = args.out(0);
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      T* p = out.data<T>();
      parallel_for(out.size(), args.ctx, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) {
          const uint64_t v =
              static_cast<uint64_t>(low) + uniform_below(gen, static_cast<uint64_t>(i), range);
          p[i] = static_cast<T>(static_cast<int64_t>(v));  // in [low, high): fits T (checked)
        }
      });
    } else {
      JANUS_ASSERT(false, "randint: kernel called with dtype {}", out.dtype());
    }
  });
}

std::vector<TensorSpec> infer_randint(const InferArgs& args) {
  const RandintAttrs a = RandintAttrs::from(args.attrs);
  const int64_t low = a.low;
  const int64_t high = a.high;
  JANUS_CHECK(low < high, ValueError, "randint: low {} is not below high {}, expected low < high",
              low, high);
  auto specs = infer_created<RandintAttrs>(args);
  const DType dtype = specs[0].dtype;
  JANUS_CHECK(is_sampled_integer(dtype), TypeError,
              "randint: dtype {} is not an integer type, expected int32, int64 or uint8", dtype);
  const auto [min, max] = integer_limits(dtype);
  // high - 1 cannot overflow (high > low). Every range fits int64, so max + 1 is only formatted
  // for int32 and uint8.
  JANUS_CHECK(low >= min && high - 1 <= max, ValueError,
              "randint: range [{}, {}) does not fit dtype {}, expected {} <= low and high <= {}",
              low, high, dtype, min, max + 1);
  return specs;
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "randint",
    .doc = "Uniform integers in [low, high) from the seeded counter-based generator.\n\n"
           "Each element takes 64 random bits and maps them into the range by Lemire's "
           "multiply-shift with rejection, so every value is exactly equally likely.",
    .inputs = {},
    .outputs = {"y"},
    .attrs = {{"low", AttrType::kInt, std::nullopt, "lower bound, included"},
              {"high", AttrType::kInt, std::nullopt, "upper bound, excluded; above low"},
              {"shape", AttrType::kShape, std::nullopt, "extents of the output"},
              {"dtype", AttrType::kDType, DType::kInt64,
               "element type of the output: int32, int64 or uint8"},
              {"device", AttrType::kDevice, cpu(0), "device of the output"}},
    .attr_fields = attr_fields<RandintAttrs>(),
    .infer = infer_randint,
    .kernels = {{DeviceType::kCPU, randint_cpu}},
    .not_differentiable = true,  // no inputs
    .random = true,
});

}  // namespace janus::ops

namespace janus {
NDArray randint(int64_t low, int64_t high, const Shape& shape, DType dtype, Device device) {
  static const ops::OpDef& op = ops::get_op("randint");
  return ops::invoke(op, {}, {low, high, shape, dtype, device})[0];
}
}  // namespace janus

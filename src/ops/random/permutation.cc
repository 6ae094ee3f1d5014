// permutation(n, dtype, device): a random ordering of 0, 1, ..., n - 1.
#include <type_traits>
#include <utility>

#include "janus/ops/ops.h"

#include "../op_utils.h"
#include "philox.h"
#include "random_attrs.h"
#include "uniform_int.h"

namespace janus::ops {
namespace {

// Fisher-Yates: for i = n-1 down to 1, swap element i with element j, j uniform in [0, i].
// Step i takes draw i of the call's stream (see uniform_below), so the result depends only on
// the seed and the call's position. The shuffle is sequential by nature: one thread.
void permutation_cpu(const KernelArgs& args) {
  const Philox gen(args.rng);
  const NDArray& out = args.out(0);
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      T* p = out.data<T>();
      const int64_t n = out.size();
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(i);  // n - 1 fits T (checked)
      for (int64_t i = n - 1; i > 0; --i) {
        const uint64_t j =
            uniform_below(gen, static_cast<uint64_t>(i), static_cast<uint64_t>(i) + 1);
        std::swap(p[i], p[j]);
      }
    } else {
      JANUS_ASSERT(false, "permutation: kernel called with dtype {}", out.dtype());
    }
  });
}

std::vector<TensorSpec> infer_permutation(const InferArgs& args) {
  const PermutationAttrs a = PermutationAttrs::from(args.attrs);
  const int64_t n = a.n;
  const DType dtype = a.dtype;
  JANUS_CHECK(n >= 0, ValueError, "permutation: n is {}, expected n >= 0", n);
  JANUS_CHECK(is_sampled_integer(dtype), TypeError,
              "permutation: dtype {} is not an integer type, expected int32, int64 or uint8",
              dtype);
  const int64_t max = integer_limits(dtype).second;
  // Values go up to n - 1; every n fits int64, so max + 1 is only formatted for int32 and uint8.
  JANUS_CHECK(n - 1 <= max, ValueError, "permutation: n {} does not fit dtype {}, expected n <= {}",
              n, dtype, max + 1);
  return {TensorSpec{Shape{n}, dtype, a.device}};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "permutation",
    .doc = "A random ordering of 0, 1, ..., n - 1 from the seeded counter-based generator.\n\n"
           "Fisher-Yates shuffle; step i draws its index from word block i of the call's "
           "Philox stream (exactly uniform: Lemire's multiply-shift with rejection).",
    .inputs = {},
    .outputs = {"y"},
    .attrs = {{"n", AttrType::kInt, std::nullopt, "number of elements, >= 0"},
              {"dtype", AttrType::kDType, DType::kInt64,
               "element type of the output: int32, int64 or uint8"},
              {"device", AttrType::kDevice, cpu(0), "device of the output"}},
    .attr_fields = attr_fields<PermutationAttrs>(),
    .infer = infer_permutation,
    .kernels = {{DeviceType::kCPU, permutation_cpu}},
    .not_differentiable = true,  // no inputs
    .random = true,
});

}  // namespace janus::ops

namespace janus {
NDArray permutation(int64_t n, DType dtype, Device device) {
  static const ops::OpDef& op = ops::get_op("permutation");
  return ops::invoke(op, {}, {n, dtype, device})[0];
}
}  // namespace janus

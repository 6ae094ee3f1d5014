// Comparisons equal, not_equal, less, less_equal, greater, greater_equal: elementwise, with
// NumPy broadcasting, bool output, not differentiable. One table row per operator.
#include <functional>

#include "janus/ops/ops.h"

#include "nary_loop.h"

namespace janus::ops {
namespace {

// The kernel of comparison Cmp (std::less<> ...) over every input dtype.
template <typename Cmp>
void compare_cpu(const KernelArgs& args) {
  dispatch_dtype(args.in(0).dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    broadcast_map<bool, T, T>(args, [](T x, T y) { return Cmp()(C(x), C(y)); });
  });
}

template <typename Cmp>
OpDef comparison(std::string_view name, std::string_view doc) {
  return {
      .name = name,
      .doc = doc,
      .inputs = {"a", "b"},
      .outputs = {"y"},
      .infer = infer_comparison,
      .kernels = {{DeviceType::kCPU, compare_cpu<Cmp>}},
      .not_differentiable = true,
      .fusion = FusionClass::kBroadcast,
  };
}

}  // namespace

JANUS_DEFINE_OP(
    {comparison<std::equal_to<>>("equal", "Elementwise a == b (bool), with NumPy broadcasting.")});
JANUS_DEFINE_OP({comparison<std::not_equal_to<>>(
    "not_equal", "Elementwise a != b (bool), with NumPy broadcasting.")});
JANUS_DEFINE_OP({comparison<std::less<>>("less",
                                         "Elementwise a < b (bool), with NumPy broadcasting.")});
JANUS_DEFINE_OP({comparison<std::less_equal<>>(
    "less_equal", "Elementwise a <= b (bool), with NumPy broadcasting.")});
JANUS_DEFINE_OP({comparison<std::greater<>>("greater",
                                            "Elementwise a > b (bool), with NumPy broadcasting.")});
JANUS_DEFINE_OP({comparison<std::greater_equal<>>(
    "greater_equal", "Elementwise a >= b (bool), with NumPy broadcasting.")});

}  // namespace janus::ops

namespace janus {
namespace {
NDArray compare(std::string_view name, const NDArray& a, const NDArray& b) {
  return ops::invoke(ops::get_op(name), {a, b})[0];
}
}  // namespace

NDArray equal(const NDArray& a, const NDArray& b) { return compare("equal", a, b); }
NDArray not_equal(const NDArray& a, const NDArray& b) { return compare("not_equal", a, b); }
NDArray less(const NDArray& a, const NDArray& b) { return compare("less", a, b); }
NDArray less_equal(const NDArray& a, const NDArray& b) { return compare("less_equal", a, b); }
NDArray greater(const NDArray& a, const NDArray& b) { return compare("greater", a, b); }
NDArray greater_equal(const NDArray& a, const NDArray& b) { return compare("greater_equal", a, b); }
}  // namespace janus

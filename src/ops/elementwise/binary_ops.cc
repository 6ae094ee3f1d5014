// Binary elementwise operators on two arrays of one dtype with NumPy broadcasting, one table row
// each: add, subtract, mul, divide, power, maximum, minimum.
#include <cmath>

#include "janus/ops/ops.h"

#include "../invoke_one.h"
#include "binary_loop.h"
#include "nary_loop.h"

namespace janus::ops {
namespace {

using Grads = std::vector<NDArray>;

// The dtypes that a row accepts (one dtype for both inputs either way).
enum class Dtypes : uint8_t { kAll, kFloating };

// y = Fn()(a, b) elementwise over the broadcast shape.
template <Dtypes kDtypes, typename Fn>
void binary_cpu(const KernelArgs& args) {
  const auto run = [&]<typename T>() {
    binary_broadcast<T>(args, [](T x, T y) { return static_cast<T>(Fn()(x, y)); });
  };
  if constexpr (kDtypes == Dtypes::kFloating) {
    dispatch_floating(args.out(0).dtype(), run);
  } else {
    dispatch_dtype(args.out(0).dtype(), run);
  }
}

// One row: the operator `name` whose elements combine by `fn` (a captureless generic lambda of
// two elements of one type) and whose gradient `grad` sums dy back to each input's shape.
template <Dtypes kDtypes, typename Fn>
OpDef binary_op(std::string_view name, std::string_view doc, Fn /*fn*/, GradFn grad,
                bool in_place) {
  return {
      .name = name,
      .doc = doc,
      .inputs = {"a", "b"},
      .outputs = {"y"},
      .infer = kDtypes == Dtypes::kFloating ? InferFn(infer_floating_binary)
                                            : InferFn(infer_broadcast_binary),
      .kernels = {{DeviceType::kCPU, binary_cpu<kDtypes, Fn>}},
      .grad = std::move(grad),
      .fusion = FusionClass::kBroadcast,
      .inplace_input = in_place ? 0 : -1,
  };
}

// The larger (kMax) or smaller of x and y; a nan x wins, so that nan in either input gives nan.
template <bool kMax, typename T>
T extremum(T x, T y) {
  using C = compute_t<T>;
  const C cx(x), cy(y);
  return ((kMax ? cx >= cy : cx <= cy) || cx != cx) ? x : y;
}

// The gradient of maximum (pick_a = a >= b) or minimum (a <= b): dy goes to the input that was
// chosen (to a on ties), summed to its shape.
Grads extremum_grad(const GradArgs& g, const NDArray& pick_a) {
  const NDArray zero = zeros({}, g.dy(0).dtype(), g.dy(0).device());
  return {sum_to(where(pick_a, g.dy(0), zero), g.x(0).shape()),
          sum_to(where(pick_a, zero, g.dy(0)), g.x(1).shape())};
}

}  // namespace

JANUS_DEFINE_OP({binary_op<Dtypes::kAll>(
    "add", "Elementwise sum of two arrays of one dtype, with NumPy broadcasting.",
    [](auto x, auto y) { return wrapping_add(x, y); },
    // dy has the broadcast shape: sum it back to each input's shape.
    [](const GradArgs& g) -> Grads {
      return {sum_to(g.dy(0), g.x(0).shape()), sum_to(g.dy(0), g.x(1).shape())};
    },
    /*in_place=*/true)});

JANUS_DEFINE_OP({binary_op<Dtypes::kAll>(
    "subtract", "Elementwise difference a - b of two arrays of one dtype, with NumPy broadcasting.",
    [](auto x, auto y) { return wrapping_sub(x, y); },
    [](const GradArgs& g) -> Grads {
      return {sum_to(g.dy(0), g.x(0).shape()), sum_to(negative(g.dy(0)), g.x(1).shape())};
    },
    /*in_place=*/true)});

JANUS_DEFINE_OP({binary_op<Dtypes::kAll>(
    "mul", "Elementwise product of two arrays of one dtype, with NumPy broadcasting.",
    [](auto x, auto y) { return wrapping_mul(x, y); },
    [](const GradArgs& g) -> Grads {
      return {sum_to(g.dy(0) * g.x(1), g.x(0).shape()), sum_to(g.dy(0) * g.x(0), g.x(1).shape())};
    },
    /*in_place=*/true)});

JANUS_DEFINE_OP({binary_op<Dtypes::kFloating>(
    "divide",
    "Elementwise quotient a / b of two floating arrays of one dtype, with NumPy broadcasting "
    "(IEEE: x / 0 is inf or nan).",
    [](auto x, auto y) {
      using C = compute_t<decltype(x)>;
      return C(x) / C(y);
    },
    // y = a / b: da = dy / b, db = -dy * a / b^2 = -(dy * y) / b; then sum to each shape.
    [](const GradArgs& g) -> Grads {
      const NDArray& b = g.x(1);
      return {sum_to(divide(g.dy(0), b), g.x(0).shape()),
              sum_to(negative(divide(g.dy(0) * g.y(0), b)), b.shape())};
    },
    /*in_place=*/true)});

JANUS_DEFINE_OP({binary_op<Dtypes::kFloating>(
    "power",
    "Elementwise a ** b of two floating arrays of one dtype, with NumPy broadcasting (std::pow: "
    "a negative base with a non-integer exponent gives nan).",
    [](auto x, auto y) {
      using C = compute_t<decltype(x)>;
      return std::pow(C(x), C(y));
    },
    // y = a^b: da = dy * b * a^(b-1), db = dy * y * log(a) (defined for a > 0).
    [](const GradArgs& g) -> Grads {
      const NDArray& a = g.x(0);
      const NDArray& b = g.x(1);
      return {sum_to(g.dy(0) * b * power(a, b - 1.0), a.shape()),
              sum_to(g.dy(0) * g.y(0) * log(a), b.shape())};
    },
    /*in_place=*/false)});

JANUS_DEFINE_OP({binary_op<Dtypes::kAll>(
    "maximum",
    "Elementwise larger of two arrays of one dtype, with NumPy broadcasting; a nan in either "
    "input gives nan.",
    [](auto x, auto y) { return extremum</*kMax=*/true>(x, y); },
    [](const GradArgs& g) -> Grads { return extremum_grad(g, greater_equal(g.x(0), g.x(1))); },
    /*in_place=*/false)});

JANUS_DEFINE_OP({binary_op<Dtypes::kAll>(
    "minimum",
    "Elementwise smaller of two arrays of one dtype, with NumPy broadcasting; a nan in either "
    "input gives nan.",
    [](auto x, auto y) { return extremum</*kMax=*/false>(x, y); },
    [](const GradArgs& g) -> Grads { return extremum_grad(g, less_equal(g.x(0), g.x(1))); },
    /*in_place=*/false)});

}  // namespace janus::ops

namespace janus {
namespace {
NDArray call_binary(const ops::OpDef& op, const NDArray& a, const NDArray& b) {
  return ops::invoke_one(op, {a, b});
}
}  // namespace

NDArray add(const NDArray& a, const NDArray& b) {
  static const ops::OpDef& op = ops::get_op("add");
  return call_binary(op, a, b);
}
NDArray subtract(const NDArray& a, const NDArray& b) {
  static const ops::OpDef& op = ops::get_op("subtract");
  return call_binary(op, a, b);
}
NDArray mul(const NDArray& a, const NDArray& b) {
  static const ops::OpDef& op = ops::get_op("mul");
  return call_binary(op, a, b);
}
NDArray divide(const NDArray& a, const NDArray& b) {
  static const ops::OpDef& op = ops::get_op("divide");
  return call_binary(op, a, b);
}
NDArray power(const NDArray& a, const NDArray& b) {
  static const ops::OpDef& op = ops::get_op("power");
  return call_binary(op, a, b);
}
NDArray maximum(const NDArray& a, const NDArray& b) {
  static const ops::OpDef& op = ops::get_op("maximum");
  return call_binary(op, a, b);
}
NDArray minimum(const NDArray& a, const NDArray& b) {
  static const ops::OpDef& op = ops::get_op("minimum");
  return call_binary(op, a, b);
}
}  // namespace janus

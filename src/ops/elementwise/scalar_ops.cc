// Elementwise operators of an array and a number (the attribute `scalar`, converted to the
// array's dtype), one table row each: add_scalar, subtract_scalar, rsubtract_scalar, mul_scalar,
// divide_scalar, rdivide_scalar, power_scalar, rpower_scalar, maximum_scalar, minimum_scalar.
#include <cmath>

#include "janus/ops/ops.h"

#include "../invoke_one.h"
#include "binary_loop.h"
#include "elementwise_attrs.h"
#include "nary_loop.h"

namespace janus::ops {
namespace {

using Grads = std::vector<NDArray>;

// The dtypes that a row accepts.
enum class Dtypes : uint8_t { kAll, kFloating };

// y = Fn()(a, s) elementwise, s the scalar in a's dtype.
template <Dtypes kDtypes, typename Fn>
void scalar_cpu(const KernelArgs& args) {
  const double scalar = ScalarAttrs::from(args.attrs).scalar;
  const auto run = [&]<typename T>() {
    unary_scalar<T>(args, scalar, [](T x, T s) { return static_cast<T>(Fn()(x, s)); });
  };
  if constexpr (kDtypes == Dtypes::kFloating) {
    dispatch_floating(args.out(0).dtype(), run);
  } else {
    dispatch_dtype(args.out(0).dtype(), run);
  }
}

// One row: the operator `name` whose elements combine with the scalar by `fn` (a captureless
// generic lambda of an element and the scalar, both of the array's type).
template <Dtypes kDtypes, typename Fn>
OpDef scalar_op(std::string_view name, std::string_view doc, Fn /*fn*/, GradFn grad,
                bool in_place) {
  return {
      .name = name,
      .doc = doc,
      .inputs = {"a"},
      .outputs = {"y"},
      .attrs = {{"scalar", AttrType::kFloat, std::nullopt, "the number"}},
      .attr_fields = attr_fields<ScalarAttrs>(),
      .infer =
          kDtypes == Dtypes::kFloating ? InferFn(infer_floating_unary) : infer_same_as_input(0),
      .kernels = {{DeviceType::kCPU, scalar_cpu<kDtypes, Fn>}},
      .grad = std::move(grad),
      .fusion = FusionClass::kElementwise,
      .inplace_input = in_place ? 0 : -1,
  };
}

double scalar_of(const GradArgs& g) { return ScalarAttrs::from(g.attrs).scalar; }

// The larger (kMax) or smaller of x and s; a nan x wins, so that nan in a gives nan.
template <bool kMax, typename T>
T extremum(T x, T s) {
  using C = compute_t<T>;
  return static_cast<T>(((kMax ? C(x) >= C(s) : C(x) <= C(s)) || C(x) != C(x)) ? x : s);
}

// The gradient of maximum_scalar (pick_a = a >= s) or minimum_scalar (a <= s): dy goes where a
// was chosen (ties included).
Grads extremum_grad(const GradArgs& g, const NDArray& pick_a) {
  const NDArray& a = g.x(0);
  return {where(pick_a, g.dy(0), zeros({}, a.dtype(), a.device()))};
}

NDArray full_like_scalar(const NDArray& a, double s) { return full({}, s, a.dtype(), a.device()); }

}  // namespace

JANUS_DEFINE_OP({scalar_op<Dtypes::kAll>(
    "add_scalar", "Elementwise sum of an array and a number (converted to the array's dtype).",
    [](auto x, auto s) { return wrapping_add(x, s); },
    [](const GradArgs& g) -> Grads { return {g.dy(0)}; }, /*in_place=*/true)});

JANUS_DEFINE_OP({scalar_op<Dtypes::kAll>(
    "subtract_scalar", "Elementwise a - scalar (the number converted to the array's dtype).",
    [](auto x, auto s) { return wrapping_sub(x, s); },
    [](const GradArgs& g) -> Grads { return {g.dy(0)}; }, /*in_place=*/true)});

JANUS_DEFINE_OP({scalar_op<Dtypes::kAll>(
    "rsubtract_scalar", "Elementwise scalar - a (the number converted to the array's dtype).",
    [](auto x, auto s) { return wrapping_sub(s, x); },
    [](const GradArgs& g) -> Grads { return {negative(g.dy(0))}; }, /*in_place=*/true)});

JANUS_DEFINE_OP({scalar_op<Dtypes::kAll>(
    "mul_scalar", "Elementwise product of an array and a number (converted to the array's dtype).",
    [](auto x, auto s) { return wrapping_mul(x, s); },
    [](const GradArgs& g) -> Grads { return {g.dy(0) * scalar_of(g)}; }, /*in_place=*/true)});

JANUS_DEFINE_OP({scalar_op<Dtypes::kFloating>(
    "divide_scalar",
    "Elementwise a / scalar of a floating array (the number converted to its dtype).",
    [](auto x, auto s) {
      using C = compute_t<decltype(x)>;
      return C(x) / C(s);
    },
    [](const GradArgs& g) -> Grads { return {g.dy(0) * (1.0 / scalar_of(g))}; },
    /*in_place=*/true)});

JANUS_DEFINE_OP({scalar_op<Dtypes::kFloating>(
    "rdivide_scalar",
    "Elementwise scalar / a of a floating array (the number converted to its dtype).",
    [](auto x, auto s) {
      using C = compute_t<decltype(x)>;
      return C(s) / C(x);
    },
    // y = s / a: da = -s / a^2 * dy = -(dy * y) / a.
    [](const GradArgs& g) -> Grads { return {negative(divide(g.dy(0) * g.y(0), g.x(0)))}; },
    /*in_place=*/false)});

JANUS_DEFINE_OP({scalar_op<Dtypes::kFloating>(
    "power_scalar",
    "Elementwise a ** scalar of a floating array (the number converted to its dtype).",
    [](auto x, auto s) {
      using C = compute_t<decltype(x)>;
      return std::pow(C(x), C(s));
    },
    // y = a^s: da = dy * s * a^(s-1).
    [](const GradArgs& g) -> Grads {
      const double s = scalar_of(g);
      return {g.dy(0) * s * power(g.x(0), s - 1.0)};
    },
    /*in_place=*/false)});

JANUS_DEFINE_OP({scalar_op<Dtypes::kFloating>(
    "rpower_scalar",
    "Elementwise scalar ** a of a floating array (the number converted to its dtype).",
    [](auto x, auto s) {
      using C = compute_t<decltype(x)>;
      return std::pow(C(s), C(x));
    },
    // y = s^a: da = dy * y * log(s).
    [](const GradArgs& g) -> Grads { return {g.dy(0) * g.y(0) * std::log(scalar_of(g))}; },
    /*in_place=*/true)});

JANUS_DEFINE_OP({scalar_op<Dtypes::kAll>(
    "maximum_scalar",
    "Elementwise larger of an array and a number (converted to its dtype); nan in a gives nan.",
    [](auto x, auto s) { return extremum</*kMax=*/true>(x, s); },
    [](const GradArgs& g) -> Grads {
      return extremum_grad(g, greater_equal(g.x(0), full_like_scalar(g.x(0), scalar_of(g))));
    },
    /*in_place=*/false)});

JANUS_DEFINE_OP({scalar_op<Dtypes::kAll>(
    "minimum_scalar",
    "Elementwise smaller of an array and a number (converted to its dtype); nan in a gives nan.",
    [](auto x, auto s) { return extremum</*kMax=*/false>(x, s); },
    [](const GradArgs& g) -> Grads {
      return extremum_grad(g, less_equal(g.x(0), full_like_scalar(g.x(0), scalar_of(g))));
    },
    /*in_place=*/false)});

}  // namespace janus::ops

namespace janus {
namespace {
NDArray call_scalar(const ops::OpDef& op, const NDArray& a, double scalar) {
  return ops::invoke_one(op, {a}, {scalar});
}
}  // namespace

NDArray add(const NDArray& a, double scalar) {
  static const ops::OpDef& op = ops::get_op("add_scalar");
  return call_scalar(op, a, scalar);
}
NDArray subtract(const NDArray& a, double scalar) {
  static const ops::OpDef& op = ops::get_op("subtract_scalar");
  return call_scalar(op, a, scalar);
}
NDArray subtract(double scalar, const NDArray& a) {
  static const ops::OpDef& op = ops::get_op("rsubtract_scalar");
  return call_scalar(op, a, scalar);
}
NDArray mul(const NDArray& a, double scalar) {
  static const ops::OpDef& op = ops::get_op("mul_scalar");
  return call_scalar(op, a, scalar);
}
NDArray divide(const NDArray& a, double scalar) {
  static const ops::OpDef& op = ops::get_op("divide_scalar");
  return call_scalar(op, a, scalar);
}
NDArray divide(double scalar, const NDArray& a) {
  static const ops::OpDef& op = ops::get_op("rdivide_scalar");
  return call_scalar(op, a, scalar);
}
NDArray power(const NDArray& a, double scalar) {
  static const ops::OpDef& op = ops::get_op("power_scalar");
  return call_scalar(op, a, scalar);
}
NDArray power(double scalar, const NDArray& a) {
  static const ops::OpDef& op = ops::get_op("rpower_scalar");
  return call_scalar(op, a, scalar);
}
NDArray maximum(const NDArray& a, double scalar) {
  static const ops::OpDef& op = ops::get_op("maximum_scalar");
  return call_scalar(op, a, scalar);
}
NDArray minimum(const NDArray& a, double scalar) {
  static const ops::OpDef& op = ops::get_op("minimum_scalar");
  return call_scalar(op, a, scalar);
}
}  // namespace janus

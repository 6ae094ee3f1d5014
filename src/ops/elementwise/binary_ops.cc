// Binary elementwise operators on two arrays of one dtype with NumPy broadcasting, one table row
// each: add, subtract, mul, divide, power, maximum, minimum, mod, fmod, arctan2, hypot,
// copysign.
#include <cmath>
#include <type_traits>

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

// The remainder of x / y with the sign of y (Python's and NumPy's %, as NumPy computes it:
// from fmod, so that it is exact, e.g. 1e20 % 3 = 1); x % 0 is nan for floats and 0 for
// integers (NumPy's result, without its warning), and INT_MIN % -1 is 0.
template <typename T>
T floored_mod(T x, T y) {
  if constexpr (std::is_same_v<T, bool>) {
    return false;  // x % true = 0, x % false = 0
  } else if constexpr (std::is_integral_v<T>) {
    if (y == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
      if (y == -1) return 0;
      const T r = static_cast<T>(x % y);
      return (r != 0 && (r < 0) != (y < 0)) ? static_cast<T>(r + y) : r;
    } else {
      return static_cast<T>(x % y);
    }
  } else {
    using C = compute_t<T>;
    const C cy(y);
    const C r = std::fmod(C(x), cy);
    if (r == 0) return T(std::copysign(C(0), cy));
    return T((r < 0) != (cy < 0) ? r + cy : r);
  }
}

// The remainder of x / y with the sign of x (C's fmod, NumPy's fmod); x fmod 0 is nan for
// floats and 0 for integers, and INT_MIN fmod -1 is 0.
template <typename T>
T truncated_mod(T x, T y) {
  if constexpr (std::is_same_v<T, bool>) {
    return false;
  } else if constexpr (std::is_integral_v<T>) {
    if (y == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
      if (y == -1) return 0;
    }
    return static_cast<T>(x % y);
  } else {
    using C = compute_t<T>;
    return T(std::fmod(C(x), C(y)));
  }
}

// The gradient of both remainders: y = a - q * b with q = (a - y) / b constant between jumps,
// so da = dy and db = -dy * q.
Grads remainder_grad(const GradArgs& g) {
  const NDArray& a = g.x(0);
  const NDArray& b = g.x(1);
  return {sum_to(g.dy(0), a.shape()), sum_to(negative(g.dy(0) * divide(a - g.y(0), b)), b.shape())};
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

JANUS_DEFINE_OP({binary_op<Dtypes::kAll>(
    "mod",
    "Elementwise remainder of a / b with the sign of b (Python's and NumPy's %), with NumPy "
    "broadcasting; x % 0 is nan for floats and 0 for integers.",
    [](auto x, auto y) { return floored_mod(x, y); }, remainder_grad, /*in_place=*/false)});

JANUS_DEFINE_OP({binary_op<Dtypes::kAll>(
    "fmod",
    "Elementwise remainder of a / b with the sign of a (C's fmod), with NumPy broadcasting; "
    "x fmod 0 is nan for floats and 0 for integers.",
    [](auto x, auto y) { return truncated_mod(x, y); }, remainder_grad, /*in_place=*/false)});

JANUS_DEFINE_OP({binary_op<Dtypes::kFloating>(
    "arctan2",
    "Elementwise angle of the point (b, a) in radians, in [-pi, pi] (std::atan2: the quadrant "
    "from both signs), with NumPy broadcasting.",
    [](auto x, auto y) {
      using C = compute_t<decltype(x)>;
      return std::atan2(C(x), C(y));
    },
    // y = atan2(a, b): da = dy * b / (a^2 + b^2), db = -dy * a / (a^2 + b^2).
    [](const GradArgs& g) -> Grads {
      const NDArray& a = g.x(0);
      const NDArray& b = g.x(1);
      const NDArray scaled = divide(g.dy(0), a * a + b * b);
      return {sum_to(scaled * b, a.shape()), sum_to(negative(scaled * a), b.shape())};
    },
    /*in_place=*/false)});

JANUS_DEFINE_OP({binary_op<Dtypes::kFloating>(
    "hypot",
    "Elementwise sqrt(a^2 + b^2) without overflow or underflow in between (std::hypot), with "
    "NumPy broadcasting.",
    [](auto x, auto y) {
      using C = compute_t<decltype(x)>;
      return std::hypot(C(x), C(y));
    },
    // y = hypot(a, b): da = dy * a / y, db = dy * b / y.
    [](const GradArgs& g) -> Grads {
      const NDArray scaled = divide(g.dy(0), g.y(0));
      return {sum_to(scaled * g.x(0), g.x(0).shape()), sum_to(scaled * g.x(1), g.x(1).shape())};
    },
    /*in_place=*/false)});

JANUS_DEFINE_OP({binary_op<Dtypes::kFloating>(
    "copysign",
    "Elementwise magnitude of a with the sign bit of b (std::copysign: -0 and -nan count as "
    "negative), with NumPy broadcasting.",
    [](auto x, auto y) {
      using C = compute_t<decltype(x)>;
      return std::copysign(C(x), C(y));
    },
    // y = |a| * sign(b): da = dy * sign(a) * sign(b) (the signs as +-1 from the sign bits),
    // db = 0.
    [](const GradArgs& g) -> Grads {
      const NDArray& a = g.x(0);
      const NDArray& b = g.x(1);
      const NDArray one = ones({}, a.dtype(), a.device());
      const NDArray sign_ab = copysign(one, a) * copysign(one, b);
      return {sum_to(g.dy(0) * sign_ab, a.shape()), zeros(b.shape(), b.dtype(), b.device())};
    },
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
NDArray mod(const NDArray& a, const NDArray& b) {
  static const ops::OpDef& op = ops::get_op("mod");
  return call_binary(op, a, b);
}
NDArray fmod(const NDArray& a, const NDArray& b) {
  static const ops::OpDef& op = ops::get_op("fmod");
  return call_binary(op, a, b);
}
NDArray arctan2(const NDArray& a, const NDArray& b) {
  static const ops::OpDef& op = ops::get_op("arctan2");
  return call_binary(op, a, b);
}
NDArray hypot(const NDArray& a, const NDArray& b) {
  static const ops::OpDef& op = ops::get_op("hypot");
  return call_binary(op, a, b);
}
NDArray copysign(const NDArray& a, const NDArray& b) {
  static const ops::OpDef& op = ops::get_op("copysign");
  return call_binary(op, a, b);
}
}  // namespace janus

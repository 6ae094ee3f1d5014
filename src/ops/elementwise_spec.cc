// Conformance specifications of the elementwise arithmetic operators.
#include <algorithm>
#include <cmath>

#include "elementwise/elementwise_attrs.h"
#include "testing/op_spec.h"

namespace janus::testing {
namespace {

const std::vector<OpSample> kBinarySamples = {
    {{{2, 3}, {2, 3}}}, {{{2, 3}, {3}}}, {{{4, 1}, {1, 5}}}, {{{2, 1, 3}, {1, 4, 1}}},
    {{{}, {}}},         {{{3}, {}}},     {{{0, 3}, {3}}},    {{{1}, {2, 2}}},
};

ReferenceFn binary(std::function<double(double, double)> f) {
  return [f](const std::vector<RefTensor>& in, const ops::Attrs&) {
    return std::vector<RefTensor>{ref_broadcast(in[0], in[1], f)};
  };
}

ReferenceFn with_scalar(std::function<double(double, double)> f) {
  return [f](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
    const double s = ops::ScalarAttrs::from(attrs).scalar;
    return std::vector<RefTensor>{ref_map(in[0], [&](double x) { return f(x, s); })};
  };
}

const std::vector<OpSample> kScalarSamples = {
    {{{2, 3}}, {0.5}}, {{{}}, {-3.0}}, {{{0}}, {1.0}}, {{{5, 1, 2}}, {2.0}}};

JANUS_OP_SPEC({.op = "add", .reference = binary(std::plus<>()), .samples = kBinarySamples});
JANUS_OP_SPEC({.op = "mul", .reference = binary(std::multiplies<>()), .samples = kBinarySamples});
JANUS_OP_SPEC({.op = "add_scalar",
               .reference = with_scalar(std::plus<>()),
               .samples = kScalarSamples});
JANUS_OP_SPEC({.op = "mul_scalar",
               .reference = with_scalar(std::multiplies<>()),
               .samples = kScalarSamples});

// ---- subtract, divide, power, maximum, minimum, comparisons, where -----------------------------

// Inputs kept where finite differences are valid: away from 0 (divisors), positive (bases).
void push_from_zero(RefTensor& t, double margin) {
  for (double& v : t.data) {
    if (std::fabs(v) < margin) v = std::copysign(margin + std::fabs(v), v);
  }
}
void make_positive(RefTensor& t) {
  for (double& v : t.data) v = 0.5 + 0.75 * std::fabs(v);  // [0.5, 2]
}
// Input 0 on integers and input 1 on half-integers: never closer than 0.5 (max/min kinks).
void integers_and_half_integers(int index, RefTensor& t, std::mt19937&) {
  for (double& v : t.data) v = index == 0 ? std::round(v) : std::floor(v) + 0.5;
}
// Multiples of 0.5 (exact in float32), so that ties are common and equal ones compare equal.
void halves(int, RefTensor& t, std::mt19937&) {
  for (double& v : t.data) v = std::round(2 * v) / 2;
}

JANUS_OP_SPEC({.op = "subtract", .reference = binary(std::minus<>()), .samples = kBinarySamples});
JANUS_OP_SPEC({.op = "divide",
               .reference = binary(std::divides<>()),
               .samples = kBinarySamples,
               .make_input = [](int i, RefTensor& t, std::mt19937&) {
                 if (i == 1) push_from_zero(t, 0.5);
               }});
JANUS_OP_SPEC({.op = "power",
               .reference = binary([](double a, double b) { return std::pow(a, b); }),
               .samples = kBinarySamples,
               .make_input = [](int i, RefTensor& t, std::mt19937&) {
                 if (i == 0) make_positive(t);
               }});
JANUS_OP_SPEC({.op = "maximum",
               .reference = binary([](double a, double b) { return std::max(a, b); }),
               .samples = kBinarySamples,
               .make_input = integers_and_half_integers});
JANUS_OP_SPEC({.op = "minimum",
               .reference = binary([](double a, double b) { return std::min(a, b); }),
               .samples = kBinarySamples,
               .make_input = integers_and_half_integers});

// Python's remainder, from fmod as the kernel computes it.
double floored_mod(double a, double b) {
  const double r = std::fmod(a, b);
  if (r == 0) return std::copysign(0.0, b);
  return (r < 0) != (b < 0) ? r + b : r;
}
// Inputs where a remainder's finite differences are valid: divisors away from 0, and a / b at
// least 0.05 from an integer, where the remainder jumps.
void away_from_remainder_jumps(int i, RefTensor& t, std::mt19937&) {
  if (i == 1) {
    for (double& v : t.data) v = std::copysign(0.75, v);  // b = +-0.75
  } else {
    for (double& v : t.data) v = 0.75 * (std::floor(v / 0.75) + 0.5) + 0.3 * (v - std::floor(v));
  }
}
JANUS_OP_SPEC({.op = "mod",
               .reference = binary(floored_mod),
               .samples = kBinarySamples,
               .make_input = away_from_remainder_jumps});
JANUS_OP_SPEC({.op = "fmod",
               .reference = binary([](double a, double b) { return std::fmod(a, b); }),
               .samples = kBinarySamples,
               .make_input = away_from_remainder_jumps});
JANUS_OP_SPEC({.op = "arctan2",
               .reference = binary([](double a, double b) { return std::atan2(a, b); }),
               .samples = kBinarySamples,
               .make_input = [](int i, RefTensor& t, std::mt19937&) {
                 if (i == 1) push_from_zero(t, 0.5);  // away from the jump at b < 0, a = 0
               }});
JANUS_OP_SPEC({.op = "hypot",
               .reference = binary([](double a, double b) { return std::hypot(a, b); }),
               .samples = kBinarySamples,
               .make_input = [](int i, RefTensor& t, std::mt19937&) {
                 if (i == 0) push_from_zero(t, 0.5);  // away from the cone's tip
               }});
JANUS_OP_SPEC({.op = "copysign",
               .reference = binary([](double a, double b) { return std::copysign(a, b); }),
               .samples = kBinarySamples,
               .make_input = [](int, RefTensor& t, std::mt19937&) { push_from_zero(t, 0.25); }});

OpSpec comparison(std::string op, std::function<bool(double, double)> f) {
  return {.op = std::move(op),
          .reference = binary([f](double a, double b) { return f(a, b) ? 1.0 : 0.0; }),
          .samples = kBinarySamples,
          .make_input = halves};
}
JANUS_OP_SPEC({comparison("equal", std::equal_to<>())});
JANUS_OP_SPEC({comparison("not_equal", std::not_equal_to<>())});
JANUS_OP_SPEC({comparison("less", std::less<>())});
JANUS_OP_SPEC({comparison("less_equal", std::less_equal<>())});
JANUS_OP_SPEC({comparison("greater", std::greater<>())});
JANUS_OP_SPEC({comparison("greater_equal", std::greater_equal<>())});

// cond is bool; the three operands broadcast together.
const std::vector<DType> kBoolCond = {DType::kBool, DType::kFloat64, DType::kFloat64};
JANUS_OP_SPEC({.op = "where",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs&) {
                     // a where cond holds, nan elsewhere (no input is nan), then b for the nans.
                     const RefTensor picked = ref_broadcast(in[0], in[1], [](double c, double a) {
                       return c != 0 ? a : std::nan("");
                     });
                     return std::vector<RefTensor>{ref_broadcast(
                         picked, in[2], [](double p, double b) { return std::isnan(p) ? b : p; })};
                   },
               .samples = {{{{2, 3}, {2, 3}, {2, 3}}, {}, kBoolCond},
                           {{{2, 3}, {3}, {}}, {}, kBoolCond},
                           {{{4, 1}, {1, 5}, {4, 5}}, {}, kBoolCond},
                           {{{}, {2, 2}, {2, 1}}, {}, kBoolCond},
                           {{{3}, {2, 1}, {1}}, {}, kBoolCond},
                           {{{0, 3}, {3}, {1}}, {}, kBoolCond}},
               .make_input =
                   [](int i, RefTensor& t, std::mt19937&) {
                     if (i == 0) {
                       for (double& v : t.data) v = v > 0 ? 1.0 : 0.0;
                     }
                   }});

// relu's gradient from its output: dy where y > 0, else 0.
JANUS_OP_SPEC({.op = "relu_backward",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs&) {
                     return std::vector<RefTensor>{ref_broadcast(
                         in[0], in[1], [](double y, double dy) { return y > 0 ? dy : 0.0; })};
                   },
               .samples = {{{{2, 3}, {2, 3}}}, {{{7}, {7}}}, {{{0, 4}, {0, 4}}}}});

// ---- scalar forms ------------------------------------------------------------------------------

JANUS_OP_SPEC({.op = "subtract_scalar",
               .reference = with_scalar(std::minus<>()),
               .samples = kScalarSamples});
JANUS_OP_SPEC({.op = "rsubtract_scalar",
               .reference = with_scalar([](double x, double s) { return s - x; }),
               .samples = kScalarSamples});
JANUS_OP_SPEC({.op = "divide_scalar",
               .reference = with_scalar(std::divides<>()),
               .samples = kScalarSamples});
JANUS_OP_SPEC({.op = "rdivide_scalar",
               .reference = with_scalar([](double x, double s) { return s / x; }),
               .samples = kScalarSamples,
               .make_input = [](int, RefTensor& t, std::mt19937&) { push_from_zero(t, 0.5); }});
JANUS_OP_SPEC({.op = "power_scalar",
               .reference = with_scalar([](double x, double s) { return std::pow(x, s); }),
               .samples = kScalarSamples,
               .make_input = [](int, RefTensor& t, std::mt19937&) { make_positive(t); }});
JANUS_OP_SPEC({.op = "rpower_scalar",
               .reference = with_scalar([](double x, double s) { return std::pow(s, x); }),
               .samples = {
                   {{{2, 3}}, {2.0}}, {{{}}, {0.5}}, {{{0}}, {3.0}}, {{{5, 1, 2}}, {1.5}}}});

// Scalars are half-integers and inputs integers: never closer than 0.5 (the kink).
const std::vector<OpSample> kHalfIntegerScalarSamples = {
    {{{2, 3}}, {0.5}}, {{{}}, {-1.5}}, {{{0}}, {1.5}}, {{{5, 1, 2}}, {-0.5}}};
void integers(int, RefTensor& t, std::mt19937&) {
  for (double& v : t.data) v = std::round(v);
}
JANUS_OP_SPEC({.op = "maximum_scalar",
               .reference = with_scalar([](double x, double s) { return std::max(x, s); }),
               .samples = kHalfIntegerScalarSamples,
               .make_input = integers});
JANUS_OP_SPEC({.op = "minimum_scalar",
               .reference = with_scalar([](double x, double s) { return std::min(x, s); }),
               .samples = kHalfIntegerScalarSamples,
               .make_input = integers});

}  // namespace
}  // namespace janus::testing

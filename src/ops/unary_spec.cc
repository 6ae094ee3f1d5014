// Conformance specifications of the unary operators.
#include <cmath>
#include <numbers>

#include "testing/op_spec.h"
#include "unary/unary_attrs.h"

namespace janus::testing {
namespace {

const std::vector<OpSample> kUnarySamples = {{{{2, 3}}}, {{{}}}, {{{0}}}, {{{5, 1, 2}}}, {{{7}}}};

ReferenceFn unary(std::function<double(double)> f) {
  return [f](const std::vector<RefTensor>& in, const ops::Attrs&) {
    return std::vector<RefTensor>{ref_map(in[0], f)};
  };
}

// Input domains where the function is smooth, so that finite differences are valid.
void away_from_zero(int, RefTensor& t, std::mt19937&) {  // kinks of abs, relu, sign at 0
  for (double& v : t.data) {
    if (std::fabs(v) < 0.1) v = std::copysign(0.1 + std::fabs(v), v);
  }
}
void positive(int, RefTensor& t, std::mt19937&) {  // log, sqrt, rsqrt: [0.2, 2.2]
  for (double& v : t.data) v = 0.2 + std::fabs(v);
}
void above_minus_one(int, RefTensor& t, std::mt19937&) {  // log1p: [-0.5, 1.5]
  for (double& v : t.data) v = -0.5 + std::fabs(v);
}

JANUS_OP_SPEC({.op = "negative", .reference = unary(std::negate<>()), .samples = kUnarySamples});
JANUS_OP_SPEC({.op = "abs",
               .reference = unary([](double x) { return std::fabs(x); }),
               .samples = kUnarySamples,
               .make_input = away_from_zero});
JANUS_OP_SPEC({.op = "square",
               .reference = unary([](double x) { return x * x; }),
               .samples = kUnarySamples});
JANUS_OP_SPEC({.op = "sign",
               .reference = unary([](double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }),
               .samples = kUnarySamples,
               .make_input = away_from_zero});
JANUS_OP_SPEC({.op = "relu",
               .reference = unary([](double x) { return x > 0 ? x : 0.0; }),
               .samples = kUnarySamples,
               .make_input = away_from_zero});
JANUS_OP_SPEC({.op = "leaky_relu",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
                     const double alpha = ops::LeakyReluAttrs::from(attrs).alpha;
                     return std::vector<RefTensor>{
                         ref_map(in[0], [alpha](double x) { return x > 0 ? x : alpha * x; })};
                   },
               .samples = {{{{2, 3}}}, {{{}}, {0.2}}, {{{0}}}, {{{5, 1, 2}}, {0.5}}},
               .make_input = away_from_zero});

JANUS_OP_SPEC({.op = "exp",
               .reference = unary([](double x) { return std::exp(x); }),
               .samples = kUnarySamples});
JANUS_OP_SPEC({.op = "log",
               .reference = unary([](double x) { return std::log(x); }),
               .samples = kUnarySamples,
               .make_input = positive});
JANUS_OP_SPEC({.op = "log1p",
               .reference = unary([](double x) { return std::log1p(x); }),
               .samples = kUnarySamples,
               .make_input = above_minus_one});
JANUS_OP_SPEC({.op = "sqrt",
               .reference = unary([](double x) { return std::sqrt(x); }),
               .samples = kUnarySamples,
               .make_input = positive});
JANUS_OP_SPEC({.op = "rsqrt",
               .reference = unary([](double x) { return 1.0 / std::sqrt(x); }),
               .samples = kUnarySamples,
               .make_input = positive});
JANUS_OP_SPEC({.op = "sin",
               .reference = unary([](double x) { return std::sin(x); }),
               .samples = kUnarySamples});
JANUS_OP_SPEC({.op = "cos",
               .reference = unary([](double x) { return std::cos(x); }),
               .samples = kUnarySamples});
JANUS_OP_SPEC({.op = "tanh",
               .reference = unary([](double x) { return std::tanh(x); }),
               .samples = kUnarySamples});
JANUS_OP_SPEC({.op = "erf",
               .reference = unary([](double x) { return std::erf(x); }),
               .samples = kUnarySamples});
JANUS_OP_SPEC({.op = "sigmoid",
               .reference = unary([](double x) { return 1.0 / (1.0 + std::exp(-x)); }),
               .samples = kUnarySamples,
               .low = -6.0,
               .high = 6.0});
JANUS_OP_SPEC({.op = "gelu",
               .reference = unary([](double x) {
                 return 0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2));
               }),
               .samples = kUnarySamples,
               .low = -4.0,
               .high = 4.0});
JANUS_OP_SPEC({.op = "softplus",
               .reference = unary([](double x) { return std::log1p(std::exp(x)); }),
               .samples = kUnarySamples,
               .low = -6.0,
               .high = 6.0});

void above_one(int, RefTensor& t, std::mt19937&) {  // arccosh: [1.2, 3.2]
  for (double& v : t.data) v = 1.2 + std::fabs(v);
}
JANUS_OP_SPEC({.op = "tan",
               .reference = unary([](double x) { return std::tan(x); }),
               .samples = kUnarySamples,
               .low = -1.2,
               .high = 1.2});
JANUS_OP_SPEC({.op = "arcsin",
               .reference = unary([](double x) { return std::asin(x); }),
               .samples = kUnarySamples,
               .low = -0.9,
               .high = 0.9});
JANUS_OP_SPEC({.op = "arccos",
               .reference = unary([](double x) { return std::acos(x); }),
               .samples = kUnarySamples,
               .low = -0.9,
               .high = 0.9});
JANUS_OP_SPEC({.op = "arctan",
               .reference = unary([](double x) { return std::atan(x); }),
               .samples = kUnarySamples});
JANUS_OP_SPEC({.op = "sinh",
               .reference = unary([](double x) { return std::sinh(x); }),
               .samples = kUnarySamples});
JANUS_OP_SPEC({.op = "cosh",
               .reference = unary([](double x) { return std::cosh(x); }),
               .samples = kUnarySamples});
JANUS_OP_SPEC({.op = "arcsinh",
               .reference = unary([](double x) { return std::asinh(x); }),
               .samples = kUnarySamples});
JANUS_OP_SPEC({.op = "arccosh",
               .reference = unary([](double x) { return std::acosh(x); }),
               .samples = kUnarySamples,
               .make_input = above_one});
JANUS_OP_SPEC({.op = "arctanh",
               .reference = unary([](double x) { return std::atanh(x); }),
               .samples = kUnarySamples,
               .low = -0.9,
               .high = 0.9});
JANUS_OP_SPEC({.op = "log2",
               .reference = unary([](double x) { return std::log2(x); }),
               .samples = kUnarySamples,
               .make_input = positive});
JANUS_OP_SPEC({.op = "log10",
               .reference = unary([](double x) { return std::log10(x); }),
               .samples = kUnarySamples,
               .make_input = positive});
JANUS_OP_SPEC({.op = "expm1",
               .reference = unary([](double x) { return std::expm1(x); }),
               .samples = kUnarySamples});
JANUS_OP_SPEC({.op = "cbrt",
               .reference = unary([](double x) { return std::cbrt(x); }),
               .samples = kUnarySamples,
               .make_input = away_from_zero});

// Rounding: inputs on k/4 + 1/8, at least 0.125 from every integer and every half (the
// steps), so finite differences see the zero gradient; ties are tested in unary_ops_test.cc.
void off_the_steps(int, RefTensor& t, std::mt19937&) {
  for (double& v : t.data) v = std::floor(4 * v) / 4 + 0.125;
}
JANUS_OP_SPEC({.op = "floor",
               .reference = unary([](double x) { return std::floor(x); }),
               .samples = kUnarySamples,
               .make_input = off_the_steps});
JANUS_OP_SPEC({.op = "ceil",
               .reference = unary([](double x) { return std::ceil(x); }),
               .samples = kUnarySamples,
               .make_input = off_the_steps});
JANUS_OP_SPEC({.op = "rint",
               .reference = unary([](double x) { return std::nearbyint(x); }),
               .samples = kUnarySamples,
               .make_input = off_the_steps});

// Inputs on k/4 + 1/8: at least 0.125 from every bound of the samples (the kinks).
JANUS_OP_SPEC({.op = "clip",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
                     const ops::ClipAttrs a = ops::ClipAttrs::from(attrs);
                     const double lo = a.a_min, hi = a.a_max;
                     return std::vector<RefTensor>{
                         ref_map(in[0], [=](double x) { return std::min(std::max(x, lo), hi); })};
                   },
               .samples = {{{{2, 3}}, {-1.0, 1.0}},
                           {{{}}, {-0.5, 1.5}},
                           {{{0}}, {0.0, 0.0}},
                           {{{5, 1, 2}}, {-0.5, 0.5}},
                           {{{9}}, {2.0, 2.0}}},
               .make_input =
                   [](int, RefTensor& t, std::mt19937&) {
                     for (double& v : t.data) v = std::floor(4 * v) / 4 + 0.125;
                   }});

// Casts to float32 are checked in unary_ops_test.cc: float32 rounding defeats finite
// differences at float64 precision.
JANUS_OP_SPEC({.op = "cast",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
                     const DType to = ops::CastAttrs::from(attrs).dtype;
                     return std::vector<RefTensor>{ref_map(in[0], [to](double x) {
                       if (to == DType::kBool) return x != 0 ? 1.0 : 0.0;
                       if (!is_floating(to)) return std::trunc(x);
                       return x;
                     })};
                   },
               .samples = {{{{2, 3}}, {DType::kFloat64}},
                           {{{}}, {DType::kFloat64}},
                           {{{4}}, {DType::kInt32}},
                           {{{5, 1, 2}}, {DType::kInt64}},
                           {{{3, 2}}, {DType::kBool}},
                           {{{0}}, {DType::kUInt8}}},
               .low = -5.0,
               .high = 5.0});

}  // namespace
}  // namespace janus::testing

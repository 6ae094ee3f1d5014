// Operator specifications for the conformance suite (tests/op_conformance_test.cc): a float64
// reference, sample shapes and attributes, the input domain and tolerances. Each operator family
// registers its specs in src/ops/<family>_spec.cc with JANUS_OP_SPEC.
#pragma once

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "janus/core/dtype.h"
#include "janus/core/shape.h"
#include "janus/ops/activation.h"
#include "janus/ops/registry.h"

namespace janus::testing {

/// A host array of doubles: what references read and write.
struct RefTensor {
  Shape shape;
  std::vector<double> data;

  int64_t size() const { return static_cast<int64_t>(data.size()); }
  double& operator[](int64_t i) { return data[static_cast<size_t>(i)]; }
  double operator[](int64_t i) const { return data[static_cast<size_t>(i)]; }
};

/// Reference implementation: float64 outputs from float64 inputs and the call's attributes
/// (complete: defaults filled in, in the OpDef's order).
using ReferenceFn =
    std::function<std::vector<RefTensor>(const std::vector<RefTensor>& inputs, const ops::Attrs&)>;

/// One call to check: input shapes, attributes (as given to invoke; defaults are filled in),
/// and the dtype of integer inputs (labels, indices), which `make_input` must then fill.
struct OpSample {
  std::vector<Shape> shapes;
  ops::Attrs attrs;
  std::vector<DType> int_dtypes = {};  // per input: kFloat64 (default) means "floating input"
};

struct OpSpec {
  std::string op;  // the registered name
  /// Null when the operator is checked by its own tests instead (say why in `note`).
  ReferenceFn reference;
  std::vector<OpSample> samples;
  double low = -2.0;  // floating inputs are uniform in [low, high]
  double high = 2.0;
  /// Fills input `index` (already sized and random) when the defaults do not fit (integer
  /// labels, distinct values for max/min, positive values for log...).
  std::function<void(int index, RefTensor& input, std::mt19937& rng)> make_input;
  double rtol32 = 1e-5, atol32 = 1e-5;    // float32 kernel vs float64 reference
  double rtol64 = 1e-10, atol64 = 1e-12;  // float64 kernel vs float64 reference
  bool check_float32 = true;
  /// Gradient vs central differences in float64 (differentiable operators).
  bool check_grad = true;
  double grad_rtol = 1e-5, grad_atol = 1e-6;
  /// Floating inputs without a gradient by design (state the operator updates in place, such
  /// as batch_norm's running statistics): not differentiated.
  std::vector<size_t> no_grad_inputs = {};
  std::string note;  // why a check is skipped
};

void register_op_spec(OpSpec spec);
const std::vector<OpSpec>& op_specs();

struct OpSpecRegistrar {
  explicit OpSpecRegistrar(OpSpec spec) { register_op_spec(std::move(spec)); }
};

/// Helpers for references.
RefTensor ref_zeros(const Shape& shape);
/// Applies f elementwise with NumPy broadcasting of a and b.
RefTensor ref_broadcast(const RefTensor& a, const RefTensor& b,
                        const std::function<double(double, double)>& f);
RefTensor ref_map(const RefTensor& a, const std::function<double(double)>& f);
/// The activation `a` of fully_connected and conv (none, relu, sigmoid, tanh) of x, in double.
double ref_post_op(ops::Activation a, double x);

}  // namespace janus::testing

#define JANUS_OP_SPEC_CONCAT_INNER(a, b) a##b
#define JANUS_OP_SPEC_CONCAT(a, b) JANUS_OP_SPEC_CONCAT_INNER(a, b)
/// Registers a specification: JANUS_OP_SPEC({.op = "add", .reference = ..., .samples = ...}).
#define JANUS_OP_SPEC(...)                                             \
  static const ::janus::testing::OpSpecRegistrar JANUS_OP_SPEC_CONCAT( \
      janus_op_spec_, __LINE__)(::janus::testing::OpSpec __VA_ARGS__)

// Dense: a fully connected layer.
#include <fmt/format.h>

#include "janus/base/error.h"
#include "janus/nn/layers.h"
#include "janus/ops/ops.h"

namespace janus::nn {

Dense::Dense(int64_t units, std::string activation, bool use_bias, bool flatten, int64_t in_units,
             InitializerPtr weight_init, InitializerPtr bias_init)
    : Block("dense"),
      units_(units),
      activation_(ops::parse_activation(activation, "Dense", "activation")),
      flatten_(flatten) {
  JANUS_CHECK(units > 0, ValueError, "Dense: units is {}, expected a positive number", units);
  JANUS_CHECK(in_units >= 0, ValueError, "Dense: in_units is {}, expected >= 0 (0: inferred)",
              in_units);
  weight_ = register_param("weight", Shape{units, in_units}, std::move(weight_init));
  if (use_bias) bias_ = register_param("bias", Shape{units}, std::move(bias_init));
}

NDArray Dense::forward(const NDArray& x) {
  JANUS_CHECK(x.ndim() >= 2 || (!flatten_ && x.ndim() >= 1), ShapeError,
              "{}: input has shape {}, expected [batch, features]", name(), x.shape());
  // Flatten keeps the batch axis; otherwise the layer applies to the last axis.
  const int64_t features =
      flatten_ ? x.size() / std::max<int64_t>(x.shape()[0], 1) : x.shape()[x.ndim() - 1];
  const int64_t expected = weight_->shape()[1];
  JANUS_CHECK(expected == 0 || expected == features, ShapeError,
              "{}: input of shape {} has {} features, expected {} (weight {})", name(), x.shape(),
              features, expected, weight_->shape());
  if (!weight_->initialized()) {
    weight_->infer_shape(Shape{units_, features});
    weight_->finish_deferred_init();
    if (bias_) bias_->finish_deferred_init();
  }
  const Shape rows = flatten_ ? Shape{x.shape()[0], features}
                              : Shape{x.size() / std::max<int64_t>(features, 1), features};
  const NDArray in = x.shape() == rows ? x : reshape(x, rows);
  // relu runs inside the product's call: one engine operation and one output array, with
  // relu's own rule (NaN stays NaN), so it equals fully_connected followed by relu.
  const bool fused_relu = bias_ && activation_ == ops::Activation::kRelu;
  const ops::Activation post_op = fused_relu ? ops::Activation::kRelu : ops::Activation::kNone;
  static const ops::OpDef& fc = ops::get_op("fully_connected");
  // The replicas are looked up before the argument list is built: data() may throw (no
  // replica on this device), and GCC 12 unwinds a half-built initializer_list wrongly (ASan:
  // stack-use-after-scope).
  const NDArray& w = weight_->data(x.device());
  const NDArray* b = bias_ ? &bias_->data(x.device()) : nullptr;
  NDArray y = b != nullptr
                  ? ops::invoke(fc, {in, w, *b}, {std::string(ops::activation_name(post_op))})[0]
                  : dot(in, w, false, true);
  if (!flatten_ && x.ndim() != 2) {
    std::vector<int64_t> dims(x.shape().begin(), x.shape().end());
    dims.back() = units_;
    y = reshape(y, Shape(dims));
  }
  return fused_relu ? y : activate(y, activation_);
}

std::string Dense::describe() const {
  const int64_t in = weight_->shape()[1];
  return fmt::format("Dense({} -> {}{}{})", in == 0 ? "None" : std::to_string(in), units_,
                     activation_ == ops::Activation::kNone
                         ? ""
                         : ", " + std::string(ops::activation_name(activation_)),
                     bias_ ? "" : ", no bias");
}

}  // namespace janus::nn

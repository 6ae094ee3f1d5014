// Named activations and the Activation layer.
#include <fmt/format.h>

#include "janus/base/error.h"
#include "janus/nn/layers.h"
#include "janus/ops/ops.h"

namespace janus::nn {

void check_activation(const std::string& activation) {
  ops::parse_activation(activation, "nn", "activation");
}

NDArray activate(const NDArray& x, ops::Activation activation) {
  switch (activation) {
    case ops::Activation::kNone:
      return x;
    case ops::Activation::kRelu:
      return relu(x);
    case ops::Activation::kSigmoid:
      return sigmoid(x);
    case ops::Activation::kTanh:
      return tanh(x);
    case ops::Activation::kSoftrelu:
      return softplus(x);
    case ops::Activation::kGelu:
      return gelu(x);
    case ops::Activation::kLeaky:
      return leaky_relu(x);
  }
  return x;  // not reached: each enumerator returns above (-Wswitch names a missing one)
}

NDArray activate(const NDArray& x, const std::string& activation) {
  return activate(x, ops::parse_activation(activation, "nn", "activation"));
}

Activation::Activation(std::string activation)
    : Block("activation"),
      activation_(ops::parse_activation(activation, "Activation", "activation")) {}

NDArray Activation::forward(const NDArray& x) { return activate(x, activation_); }

std::string Activation::describe() const {
  return fmt::format("Activation({})", ops::activation_name(activation_));
}

}  // namespace janus::nn

// Named activations and the Activation layer.
#include <fmt/format.h>

#include "janus/base/error.h"
#include "janus/nn/layers.h"
#include "janus/ops/ops.h"

namespace janus::nn {

void check_activation(const std::string& activation) {
  static const char* const kNames[] = {"", "relu", "sigmoid", "tanh", "softrelu", "gelu", "leaky"};
  for (const char* n : kNames) {
    if (activation == n) return;
  }
  JANUS_THROW(ValueError,
              "unknown activation '{}', expected one of relu, sigmoid, tanh, softrelu, gelu, "
              "leaky, or \"\" for none",
              activation);
}

NDArray activate(const NDArray& x, const std::string& activation) {
  if (activation.empty()) return x;
  if (activation == "relu") return relu(x);
  if (activation == "sigmoid") return sigmoid(x);
  if (activation == "tanh") return tanh(x);
  if (activation == "softrelu") return softplus(x);
  if (activation == "gelu") return gelu(x);
  if (activation == "leaky") return leaky_relu(x);
  check_activation(activation);  // throws
  return x;
}

Activation::Activation(std::string activation) : Block("activation"), activation_(std::move(activation)) {
  check_activation(activation_);
}

NDArray Activation::forward(const NDArray& x) { return activate(x, activation_); }

std::string Activation::describe() const { return fmt::format("Activation({})", activation_); }

}  // namespace janus::nn

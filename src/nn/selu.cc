// SELU, composed of relu and exp.
#include "janus/nn/layers.h"
#include "janus/ops/ops.h"

namespace janus::nn {

SELU::SELU() : Block("selu") {}

NDArray SELU::forward(const NDArray& x) {
  // The constants of Klambauer et al. (2017), as MXNet's LeakyReLU act_type 'selu' has them.
  constexpr double kAlpha = 1.6732632423543772848170429916717;
  constexpr double kScale = 1.0507009873554804934193349852946;
  // relu(x) + alpha * (exp(min(x, 0)) - 1): x above 0, alpha * (exp(x) - 1) at or below it.
  return (relu(x) + (exp(negative(relu(negative(x)))) + -1.0) * kAlpha) * kScale;
}

}  // namespace janus::nn

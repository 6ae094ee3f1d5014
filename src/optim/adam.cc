// Adam: one adam_update per parameter, with the parameter's own step count for the bias
// correction.
#include <fmt/format.h>

#include "janus/base/error.h"
#include "janus/ops/optim.h"
#include "janus/optim/optimizer.h"

namespace janus::optim {

Adam::Adam(double learning_rate, double beta1, double beta2, double epsilon, double wd)
    : Optimizer(learning_rate, wd), beta1_(beta1), beta2_(beta2), epsilon_(epsilon) {
  JANUS_CHECK(beta1 >= 0 && beta1 < 1, ValueError, "Adam: beta1 is {}, expected a value in [0, 1)",
              beta1);
  JANUS_CHECK(beta2 >= 0 && beta2 < 1, ValueError, "Adam: beta2 is {}, expected a value in [0, 1)",
              beta2);
  JANUS_CHECK(epsilon >= 0, ValueError, "Adam: epsilon is {}, expected a value >= 0", epsilon);
}

std::string Adam::describe() const {
  return fmt::format("Adam(lr={}, beta1={}, beta2={}, epsilon={}, wd={})", learning_rate(), beta1_,
                     beta2_, epsilon_, wd());
}

void Adam::apply(const NDArray& weight, const NDArray& grad, std::vector<NDArray>& state, double lr,
                 double wd, int64_t t) {
  adam_update(weight, grad, state[0], state[1], lr, beta1_, beta2_, epsilon_, wd, rescale_grad(),
              clip_gradient(), t);
}

}  // namespace janus::optim

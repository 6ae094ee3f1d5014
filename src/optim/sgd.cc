// SGD with optional momentum: one sgd_update or sgd_mom_update per parameter.
#include <fmt/format.h>

#include "janus/base/error.h"
#include "janus/ops/optim.h"
#include "janus/optim/optimizer.h"

namespace janus::optim {

SGD::SGD(double learning_rate, double momentum, double wd)
    : Optimizer(learning_rate, wd), momentum_(momentum) {
  JANUS_CHECK(momentum >= 0 && momentum < 1, ValueError,
              "SGD: momentum is {}, expected a value in [0, 1)", momentum);
}

std::string SGD::describe() const {
  return fmt::format("SGD(lr={}, momentum={}, wd={})", learning_rate(), momentum_, wd());
}

std::vector<std::string> SGD::state_names() const {
  if (momentum_ == 0) return {};
  return {"mom"};
}

void SGD::apply(const NDArray& weight, const NDArray& grad, std::vector<NDArray>& state, double lr,
                double wd, int64_t /*t*/) {
  if (state.empty()) {
    sgd_update(weight, grad, lr, wd, rescale_grad(), clip_gradient());
    return;
  }
  sgd_mom_update(weight, grad, state[0], lr, momentum_, wd, rescale_grad(), clip_gradient());
}

}  // namespace janus::optim

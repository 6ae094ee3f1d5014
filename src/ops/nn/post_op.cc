// The gradient through the post-op activation of fully_connected and conv{1,2,3}d, shared with
// the sigmoid and tanh operators so that a fused call and the separate ones differentiate alike.
#include "post_op.h"

#include "janus/ops/ops.h"

#include "../elementwise/relu_backward.h"

namespace janus::ops {

NDArray post_op_backward(Activation a, const NDArray& y, const NDArray& dy) {
  switch (a) {
    case Activation::kNone:
      return dy;
    case Activation::kRelu:
      return relu_backward(y, dy);
    case Activation::kSigmoid:
      return dy * y * (1.0 - y);
    case Activation::kTanh:
      return dy * (1.0 - square(y));
    default:
      break;
  }
  JANUS_THROW(InternalError, "activation '{}' is not a post-op", activation_name(a));
}

}  // namespace janus::ops

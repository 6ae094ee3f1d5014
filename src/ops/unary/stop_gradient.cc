// stop_gradient(x): x unchanged, with no gradient (MXNet's BlockGrad).
#include "janus/ops/ops.h"

#include "unary_op.h"

namespace janus::ops {

// An operator rather than NDArray::detach so that a traced (hybridized) graph keeps the cut:
// detach makes a handle without history, which a trace cannot tell from its input.
JANUS_DEFINE_OP({any_unary_op(
    "stop_gradient",
    "x unchanged, elementwise; no gradient flows to x (MXNet's BlockGrad, stop_gradient).",
    [](auto x) { return x; },
    [](const GradArgs&) -> std::vector<NDArray> { return {NDArray()}; })});

}  // namespace janus::ops

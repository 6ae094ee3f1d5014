// relu_backward(y, dy): the gradient of relu (and of the relu post-op of fully_connected and
// conv2d) in one pass. Private to src/ops: gradient rules call it.
#pragma once

#include "janus/core/ndarray.h"

namespace janus::ops {

/// dy where y > 0 or y is NaN, else 0 (relu_passes; y the activation's output: y > 0 exactly
/// where its input was).
NDArray relu_backward(const NDArray& y, const NDArray& dy);

}  // namespace janus::ops

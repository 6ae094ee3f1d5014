// The target shape of MXNet 1.x's Reshape from its codes. Private to src/ops.
#pragma once

#include <cstdint>
#include <span>

#include "janus/core/shape.h"

namespace janus::ops {

/// `from` reshaped by MXNet's codes: a positive extent is taken as it is (consuming one input
/// axis), 0 copies the input's extent at that position, -1 is inferred from the element count
/// (at most once), -2 copies every remaining input axis, -3 merges the next two input axes, and
/// -4 splits the next input axis into the two values that follow it (one may be -1). ShapeError
/// naming the codes when they do not fit `from`. `reverse` (MXNet's Reshape(reverse=True))
/// matches the codes against the axes from the last: both are reversed, resolved, and the
/// result reversed again.
Shape resolve_mxnet_reshape(const Shape& from, std::span<const int64_t> codes,
                            bool reverse = false);

}  // namespace janus::ops

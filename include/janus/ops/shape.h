// Operator API of the shape family (see ops.h for the conventions). Layer: ops.
#pragma once

#include <cstdint>
#include <vector>

#include "janus/core/ndarray.h"

namespace janus {

}  // namespace janus

// Operator API of the nn family (see ops.h for the conventions). Layer: ops.
#pragma once

#include <cstdint>
#include <vector>

#include "janus/core/ndarray.h"

namespace janus {

}  // namespace janus

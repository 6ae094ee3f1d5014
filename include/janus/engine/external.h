// Arrays over memory that Janus does not own (zero-copy import, e.g. DLPack). Layer: engine.
#pragma once

#include <functional>

#include "janus/core/ndarray.h"

namespace janus {

/// An array over `data`: `shape`'s elements of `dtype`, row-major and contiguous, aligned to
/// the element size, on `device`. The array gets a new var like any other; `release` is called
/// exactly once, when the last handle (views included) is gone and every operation pushed on
/// the array has finished, possibly on an engine thread. ValueError for a null `data` with
/// elements or a misaligned one.
NDArray from_external(void* data, const Shape& shape, DType dtype, Device device,
                      std::function<void()> release);

}  // namespace janus

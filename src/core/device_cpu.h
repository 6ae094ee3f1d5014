// The CPU device type's backend. Private to src/core.
#pragma once

#include "janus/core/device_backend.h"

namespace janus {

/// Logical CPU devices (cpu(i) owns device_cores(cpu(i))): a lane's workers are pinned to the
/// device's cores, a compute worker's kernels use an OpenMP team of its share of them, and a
/// stream is the worker thread itself.
DeviceBackend& cpu_device_backend();

}  // namespace janus

// The CPU device type's backend. Private to src/core.
#pragma once

#include <vector>

#include "janus/core/device_backend.h"

namespace janus {

/// Logical CPU devices (cpu(i) owns device_cores(cpu(i))): a compute worker is pinned to the
/// device's cores and its kernels use an OpenMP team of its share of them; copy and comm
/// workers may run on any of the process's cores; a stream is the worker thread itself.
DeviceBackend& cpu_device_backend();

/// The ids of this process's cores (hardware_cores() of them), where copy and comm workers may
/// run.
const std::vector<int>& hardware_core_ids();

}  // namespace janus

// Splitting a batch across devices (Gluon's gluon.utils.split_data / split_and_load). Layer:
// parallel.
//
//   std::vector<Device> devices = {cpu(0), cpu(1)};
//   std::vector<NDArray> xs = parallel::split_and_load(x, devices);   // x: [256, 1, 28, 28]
//   // xs[0]: rows 0..127 on cpu(0), xs[1]: rows 128..255 on cpu(1), copied on copy lanes
#pragma once

#include <cstdint>
#include <vector>

#include "janus/core/ndarray.h"

namespace janus::parallel {

/// One slice of `batch` (along axis 0) per device, each a copy on its device made on that
/// device's copy lane (a slice already on its device is a view of `batch`, not a copy). An
/// empty device list, a device named twice, a scalar batch or an uneven split with
/// `even_split` is a ValueError naming the sizes or devices.
std::vector<NDArray> split_and_load(const NDArray& batch, const std::vector<Device>& devices,
                                    bool even_split = true);

}  // namespace janus::parallel

// The device types' backends, one slot per DeviceType: the CPU's from the start, the GPU's
// empty until a GPU backend (or a test's fake) installs one.
#include "janus/core/device_backend.h"

#include <array>
#include <atomic>
#include <iterator>

#include "device_cpu.h"

namespace janus {
namespace {

std::array<std::atomic<DeviceBackend*>, kNumDeviceTypes>& backends() {
  static std::array<std::atomic<DeviceBackend*>, kNumDeviceTypes> slots{&cpu_device_backend(),
                                                                        nullptr};
  return slots;
}

}  // namespace

std::string_view lane_name(Lane lane) {
  constexpr std::string_view kNames[] = {"compute", "copy", "comm"};
  static_assert(std::size(kNames) == kNumLanes);
  return kNames[static_cast<size_t>(lane)];
}

// acquire/release: a thread that finds a backend sees it fully constructed.
DeviceBackend* device_backend(DeviceType type) {
  return backends()[static_cast<size_t>(type)].load(std::memory_order_acquire);
}

DeviceBackend* set_device_backend(DeviceType type, DeviceBackend* backend) {
  return backends()[static_cast<size_t>(type)].exchange(backend, std::memory_order_acq_rel);
}

}  // namespace janus

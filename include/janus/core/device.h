// Devices: logical CPU devices that split the machine's cores, and GPUs (CUDA backend, later).
// What a device type does for the engine is its DeviceBackend (device_backend.h). Layer: core.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace janus {

enum class DeviceType : uint8_t { kCPU = 0, kGPU = 1 };
inline constexpr int kNumDeviceTypes = 2;

/// "cpu" or "gpu".
std::string_view device_type_name(DeviceType type);

/// A device on which arrays live and kernels run. `cpu(i)` is a logical CPU device: the
/// machine's cores are split among `num_cpu_devices()` of them (one by default, owning all
/// cores), so multi-device code runs and is tested on a CPU-only machine.
struct Device {
  DeviceType type = DeviceType::kCPU;
  int id = 0;

  bool is_cpu() const { return type == DeviceType::kCPU; }
  bool is_gpu() const { return type == DeviceType::kGPU; }
  friend bool operator==(const Device&, const Device&) = default;
};

inline constexpr int kMaxDevicesPerType = 64;

inline Device cpu(int id = 0) { return Device{DeviceType::kCPU, id}; }
inline Device gpu(int id = 0) { return Device{DeviceType::kGPU, id}; }

/// "cpu(0)", "gpu(1)".
std::string to_string(Device device);

/// Parses "cpu", "cpu:1", "cpu(1)", "gpu:0". Throws ValueError naming the text on failure.
Device parse_device(std::string_view text);

/// Cores of this process (sched_getaffinity), at least 1.
int hardware_cores();

/// Number of logical CPU devices (JANUS_CPU_DEVICES, default 1).
int num_cpu_devices();

/// Splits the cores among `n` logical CPU devices. Takes effect for devices whose workers the
/// engine has not started yet; call it at start-up. Throws ValueError when n is not in [1, 64].
void set_num_cpu_devices(int n);

/// The core ids that `device` owns (a contiguous share of the process's cores; when there are
/// more devices than cores, devices share cores round-robin).
std::vector<int> device_cores(Device device);

/// Throws DeviceError when `device` does not exist: an id outside [0, count()) of its type's
/// backend (num_cpu_devices() for CPUs), or a device of a type with no backend, with the reason
/// (a build without CUDA; a CUDA build where the runtime sees no device, or sees some but Janus
/// has no GPU kernels yet). `what` names the caller for the message.
void check_device(Device device, std::string_view what);

/// Whether a kernel running on `runner` may read memory of `owner` directly (peer access).
/// Logical CPU devices share the host's memory: always. GPUs: none yet (no CUDA backend).
bool peer_access(Device runner, Device owner);

/// Checks a list of devices that each get a replica or a slice (data parallelism): not empty
/// (ValueError), each existing (DeviceError), none twice (ValueError naming it and the list).
/// `what` names the caller for the message.
void check_devices(const std::vector<Device>& devices, std::string_view what);

}  // namespace janus

template <>
struct fmt::formatter<janus::Device> : fmt::formatter<std::string_view> {
  auto format(janus::Device d, format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(janus::to_string(d), ctx);
  }
};

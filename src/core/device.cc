// Logical CPU devices and the share of the machine's cores that each one owns.
#include "janus/core/device.h"

#include <fmt/ranges.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <iterator>

#include "janus/base/error.h"
#include "janus/core/device_backend.h"
#include "janus/core/device_cuda.h"

#include "device_cpu.h"

namespace janus {
namespace {

std::vector<int> process_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cores;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &set)) cores.push_back(c);
    }
  }
  if (cores.empty()) cores.push_back(0);
  return cores;
}

const std::vector<int>& cores_of_process() {
  // Never destroyed: an engine worker may still be starting, and pinning itself to its
  // device's cores, while the process exits and destroys its statics.
  static const auto* cores = new std::vector<int>(process_cores());
  return *cores;
}

int cpu_devices_from_env() {
  const char* env = std::getenv("JANUS_CPU_DEVICES");
  if (env == nullptr) return 1;
  int n = std::atoi(env);
  return std::clamp(n, 1, kMaxDevicesPerType);
}

std::atomic<int>& cpu_device_count() {
  static std::atomic<int> count{cpu_devices_from_env()};
  return count;
}

// Why gpu(i) cannot be used while no GPU backend is installed.
std::string gpu_unavailable_reason() {
  const CudaRuntimeInfo& cuda = cuda_runtime_info();
  if (!cuda.built) return cuda.status;
  if (cuda.devices == 0) return fmt::format("no CUDA device ({})", cuda.status);
  return fmt::format("the CUDA runtime sees {} device(s) but Janus has no GPU kernels yet",
                     cuda.devices);
}

}  // namespace

std::string_view device_type_name(DeviceType type) {
  constexpr std::string_view kNames[] = {"cpu", "gpu"};
  static_assert(std::size(kNames) == kNumDeviceTypes);
  return kNames[static_cast<size_t>(type)];
}

std::string to_string(Device device) {
  return fmt::format("{}({})", device_type_name(device.type), device.id);
}

Device parse_device(std::string_view text) {
  auto fail = [&] {
    detail::throw_error<ValueError>(
        std::source_location::current(),
        "device: cannot parse '{}', expected cpu, cpu:N, cpu(N) or gpu:N", text);
  };
  Device d;
  std::string_view rest;
  if (text.starts_with("cpu")) {
    d.type = DeviceType::kCPU;
    rest = text.substr(3);
  } else if (text.starts_with("gpu")) {
    d.type = DeviceType::kGPU;
    rest = text.substr(3);
  } else {
    fail();
  }
  if (rest.empty()) return d;
  if (rest.front() == ':') {
    rest.remove_prefix(1);
  } else if (rest.front() == '(' && rest.back() == ')') {
    rest = rest.substr(1, rest.size() - 2);
  } else {
    fail();
  }
  auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), d.id);
  if (ec != std::errc() || ptr != rest.data() + rest.size() || d.id < 0) fail();
  return d;
}

int hardware_cores() { return static_cast<int>(cores_of_process().size()); }

const std::vector<int>& hardware_core_ids() { return cores_of_process(); }

int num_cpu_devices() { return cpu_device_count().load(std::memory_order_relaxed); }

void set_num_cpu_devices(int n) {
  JANUS_CHECK(n >= 1 && n <= kMaxDevicesPerType, ValueError,
              "set_num_cpu_devices: got {}, expected a count in [1, {}]", n, kMaxDevicesPerType);
  cpu_device_count().store(n, std::memory_order_relaxed);
}

std::vector<int> device_cores(Device device) {
  check_device(device, "device_cores");
  const auto& cores = cores_of_process();
  const int n_dev = num_cpu_devices();
  const int n_cores = static_cast<int>(cores.size());
  if (n_dev >= n_cores) return {cores[device.id % n_cores]};
  // Contiguous shares; the first (n_cores % n_dev) devices get one extra core.
  const int base = n_cores / n_dev;
  const int extra = n_cores % n_dev;
  const int begin = device.id * base + std::min(device.id, extra);
  const int count = base + (device.id < extra ? 1 : 0);
  return {cores.begin() + begin, cores.begin() + begin + count};
}

void check_device(Device device, std::string_view what) {
  // CPUs first, without the backend's virtual call (every push checks its device): the CPU
  // backend's count is num_cpu_devices().
  if (device.is_cpu()) {
    JANUS_CHECK(device.id >= 0 && device.id < num_cpu_devices(), DeviceError,
                "{}: device {} does not exist: there are {} cpu devices (set JANUS_CPU_DEVICES "
                "or call set_num_cpu_devices to have more)",
                what, device, num_cpu_devices());
    return;
  }
  const DeviceBackend* backend = device_backend(device.type);
  if (backend == nullptr) {
    detail::throw_error<DeviceError>(std::source_location::current(),
                                     "{}: device {} is not available: {}, expected a cpu device",
                                     what, device, gpu_unavailable_reason());
  }
  const int count = backend->count();
  JANUS_CHECK(device.id >= 0 && device.id < count, DeviceError,
              "{}: device {} does not exist: there are {} {} devices", what, device, count,
              device_type_name(device.type));
}

void check_devices(const std::vector<Device>& devices, std::string_view what) {
  JANUS_CHECK(!devices.empty(), ValueError, "{}: the list of devices is empty; give at least one",
              what);
  for (size_t i = 0; i < devices.size(); ++i) {
    check_device(devices[i], what);
    for (size_t j = 0; j < i; ++j) {
      JANUS_CHECK(devices[j] != devices[i], ValueError,
                  "{}: device {} appears twice in [{}]; give each device once", what, devices[i],
                  fmt::join(devices, ", "));
    }
  }
}

bool peer_access(Device runner, Device owner) {
  return runner == owner || (runner.is_cpu() && owner.is_cpu());
}

}  // namespace janus

// Device types: what the engine needs from one kind of device (CPU, and CUDA later) to run
// operations on it: its devices, its worker threads per lane, and a stream per worker. A new
// type plugs in here and in the op registry's kernels, never in the engine's core. Layer: core.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "janus/core/device.h"

namespace janus {

/// Lanes are separate worker queues of a device, so that copies overlap compute, and a
/// network collective (the dist layer's, which blocks its worker until every peer took part)
/// never holds up a device's copies or compute. The comm lane has one worker per device, so
/// collectives of one device run one at a time in the order they became ready.
enum class Lane : uint8_t { kCompute = 0, kCopy = 1, kComm = 2 };
inline constexpr int kNumLanes = 3;

/// "compute", "copy" or "comm", for profiles and messages.
std::string_view lane_name(Lane lane);

/// Where one engine worker's kernels put their work: for a CPU the worker thread itself (a
/// kernel's work is done when it returns); for a GPU its own CUDA stream, so that each lane of
/// a device (compute, copy) is a separate hardware queue. Made on the worker's thread by
/// DeviceBackend::start_worker, used by that thread only, destroyed when the worker exits.
class Stream {
 public:
  virtual ~Stream() = default;
  /// Blocks until the work that kernels issued on this stream has finished; throws (a typed
  /// Janus error) when that work failed. The engine calls it after every kernel and before
  /// the operation's vars are released, so the vars stay the one source of order between
  /// devices, types and lanes, and an asynchronous failure is the operation's error.
  virtual void synchronize() = 0;
};

/// How the engine serves one lane of one device.
struct LaneWorkers {
  int workers = 1;         // threads that take ready operations from the lane's queue
  int kernel_threads = 1;  // RunContext::num_threads of the lane's kernels
};

/// One device type. Implementations are thread-safe; they live as long as any engine that
/// started workers with them.
class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;

  /// Devices of this type that exist now: ids [0, count()).
  virtual int count() const = 0;

  /// Workers and kernel threads of `device`'s `lane`, asked once, when the engine starts the
  /// lane. `requested` is the engine's option for the lane (compute or copy workers; 1 for
  /// comm, whose operations must run one at a time).
  virtual LaneWorkers lane_workers(Device device, Lane lane, int requested) const = 0;

  /// Prepares the calling thread, a new worker of `device`'s `lane` planned by `plan`, before
  /// its first operation, and returns the worker's stream.
  virtual std::unique_ptr<Stream> start_worker(Device device, Lane lane,
                                               const LaneWorkers& plan) = 0;
};

/// The backend of `type`; null when there is none (a GPU in a build without a GPU backend).
/// Thread-safe.
DeviceBackend* device_backend(DeviceType type);

/// Installs `backend` (not owned; null removes it) for `type` and returns the one it replaces.
/// For a device type's start-up code and for tests' fake types. Engines keep the backend their
/// running workers were started with, so replace one only while no engine holds workers of
/// that type, and keep the old one alive until then.
DeviceBackend* set_device_backend(DeviceType type, DeviceBackend* backend);

}  // namespace janus

// Factories of the engine implementations. Private to src/engine.
#pragma once

#include <memory>

#include "janus/engine/engine.h"

namespace janus {

std::unique_ptr<Engine> make_naive_engine(const EngineOptions& options);
std::unique_ptr<Engine> make_threaded_engine(const EngineOptions& options);

/// True on a thread that runs engine operations (worker threads must never block on the
/// engine: back-pressure skips them and blockers refuse to run there).
bool is_engine_worker_thread();
void mark_engine_worker_thread();

/// Workers the engine asks a device type's backend for on `lane` (DeviceBackend::lane_workers).
/// One comm worker per device: its collectives block while peers take part, and must run one
/// at a time in the order of the process group's sequence var (dist/collectives.cc).
inline int requested_workers(const EngineOptions& options, Lane lane) {
  if (lane == Lane::kCompute) return options.cpu_compute_workers;
  return lane == Lane::kCopy ? options.copy_workers : 1;
}

}  // namespace janus

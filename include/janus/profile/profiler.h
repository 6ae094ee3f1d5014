// The profiler: records every engine operation (name, device, lane, worker thread, start and
// duration) and each device's memory in use, and writes them as a Chrome trace (open it in
// Perfetto or chrome://tracing) or prints a table per operator. Each operation carries its
// shapes and bytes; the steps of a hybridized block's compiled graph are events of their own,
// nested in the graph's `cached_op` event. Layer: profile.
//
//   profiler::start();
//   train_one_epoch();
//   profiler::stop();
//   profiler::dump("trace.json");      // one process row per device, one thread row per worker
//   std::cout << profiler::dumps();    // count, total, mean, min, max per operator
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "janus/core/device.h"
#include "janus/engine/engine.h"

namespace janus::profiler {

/// One operation that ran.
struct Event {
  std::string name;
  Device device;
  Lane lane;
  int thread = 0;  // a small number per worker thread, in order of first appearance
  int64_t start_ns = 0, end_ns = 0;
  std::string shapes;        // inputs, then outputs: "[256, 784] [256, 784] -> [256, 256]"
  int64_t bytes = 0;         // the bytes its inputs and outputs hold
  int64_t memory_bytes = 0;  // the device's bytes in use when it finished
};

/// Starts recording (clears what an earlier run recorded). Costs nothing measurable when off.
void start();
/// Stops recording; what was recorded stays until the next start().
void stop();
bool is_running();
/// The events recorded so far, by start time.
std::vector<Event> events();
/// Writes the Chrome trace JSON to `path`; IOError naming the path when it cannot.
void dump(const std::string& path);
/// The Chrome trace JSON as a string.
std::string trace_json();
/// A table per operator name: count, total, mean, min and max milliseconds, by total, and the
/// bytes its calls touched per second of their time. The steps of a hybridized block's graph
/// appear both on their own and inside their `cached_op` row.
std::string dumps();

}  // namespace janus::profiler

namespace janus {

/// A scope timer that waits for the engine before reading the clock, at both ends, as the seed
/// documents' Benchmark does: `{ Benchmark b("matmul"); ... }` prints "matmul: 0.1234 sec".
///
/// Waiting for the engine rethrows an error that a kernel raised meanwhile (Engine::wait_all).
/// stop() rethrows it to the caller; a destructor must not throw, so a Benchmark that was not
/// stopped logs the error to stderr instead (once: the engine reports each error once). Call
/// stop() where the error must reach the caller:
///   Benchmark b("matmul"); ...; const double s = b.stop();
class Benchmark {
 public:
  /// Waits for the engine (rethrowing its error), then starts the clock.
  explicit Benchmark(std::string description = "Done");
  /// Stops, unless stop() was called; logs an engine error instead of throwing it.
  ~Benchmark();
  /// Seconds so far (waits for the engine first; rethrows its error).
  double seconds() const;
  /// Waits for the engine, prints "<description>: <seconds> sec" to stdout and returns the
  /// seconds; rethrows the engine's error (and prints nothing). Once: the destructor then does
  /// nothing, and a second call is a ValueError.
  double stop();
  Benchmark(const Benchmark&) = delete;
  Benchmark& operator=(const Benchmark&) = delete;

 private:
  std::string description_;
  int64_t start_ns_;
  bool stopped_ = false;
};

}  // namespace janus

// The dependency engine: every operation is pushed with the vars it reads and writes and runs
// on a worker of its device and lane once those vars grant it. Layer: engine.
//
//   Engine& e = engine();
//   Var* x = e.new_var();
//   e.push([](const RunContext&) { /* write x */ }, {}, {x}, cpu(0));
//   e.push([](const RunContext&) { /* read x */ }, {x}, {}, cpu(0));
//   e.wait_all();
//
// Ordering per var: reads run together; a write waits for every earlier read and write; later
// reads wait for that write. Results therefore never depend on thread scheduling.
//
// Errors: a kernel that throws attaches its error to every var it writes. Operations that read
// or write such a var are skipped and inherit the error. A blocker (wait_for_var, and so
// wait_to_read, item, to_vector, printing) on an affected var rethrows it with the failing
// operator's name: such a var holds no valid value, so every blocker on it throws rather than
// return wrong numbers. wait_all() rethrows each error at most once, and not at all if a blocker
// already threw it. The engine stays usable after an error.
//
// Threads: pushing from several frontend threads at once is supported. Each push registers all
// of its dependencies atomically (one push at a time), so the order between two threads is the
// order in which their pushes happened, and no cycle can form. Kernels may push (back-pressure
// never blocks a worker thread).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "janus/base/unique_function.h"
#include "janus/core/device.h"
#include "janus/core/device_backend.h"

namespace janus {

class Var;

/// Called between the slices of a sliced wait (Engine::wait_for_var, Engine::wait_all).
using WaitPoll = std::function<void()>;

/// What a kernel learns about where it runs.
struct RunContext {
  Device device;
  Lane lane = Lane::kCompute;
  /// Intra-op threads the kernel may use (the device's cores shared among its compute workers).
  int num_threads = 1;
  /// The worker's stream on its device (DeviceBackend::start_worker), where a GPU kernel
  /// issues its work; the engine synchronizes it before the operation completes. Null when
  /// the kernel runs on the pushing thread (the naive engine) or is an engine-internal step.
  Stream* stream = nullptr;
};

/// A kernel: move-only, with its captures stored inline (no allocation for captures up to
/// 120 bytes).
using Kernel = UniqueFunction<void(const RunContext&)>;
/// Run when a var is released (e.g. to return memory to its pool). Must not throw.
using ReleaseFn = UniqueFunction<void(), 48>;

struct EngineStats {
  int64_t pushed = 0;     // operations pushed since start
  int64_t in_flight = 0;  // pushed and not yet finished
  int64_t max_in_flight = 0;
};

/// What the profiler shows of an operation beyond its name. Pushers fill it only while a
/// listener is installed (`op_listener_installed()`), so that it costs nothing otherwise.
struct OpDetail {
  std::string shapes;  // "[256,784] [256,784] -> [256,256]": inputs, then outputs
  int64_t bytes = 0;   // the bytes its inputs and outputs hold
};

/// Sees every operation that runs, on the thread that ran it, right after it ran (the
/// profiler's hook). Must be thread-safe and cheap. Times are steady_clock nanoseconds.
class OpListener {
 public:
  virtual ~OpListener() = default;
  virtual void on_operation(std::string_view name, const OpDetail& detail, Device device, Lane lane,
                            int64_t start_ns, int64_t end_ns) = 0;
};

/// Installs `listener` for every engine (nullptr: none). With none, running an operation costs
/// one atomic load more.
void set_op_listener(OpListener* listener);
/// Whether a listener is installed (one atomic load): pushers build an OpDetail only then.
bool op_listener_installed();
/// Tells the listener, if any, about work that ran inside another operation's kernel (the
/// steps of a compiled graph), so that profiles show them one by one.
void report_operation(std::string_view name, const OpDetail& detail, Device device, Lane lane,
                      int64_t start_ns, int64_t end_ns);
/// The clock listeners are given: steady_clock nanoseconds.
int64_t op_clock_ns();

enum class EngineKind { kNaive, kThreaded };

struct EngineOptions {
  /// Compute workers per CPU device (JANUS_CPU_WORKERS, default 1: kernels use the device's
  /// cores through intra-op threads instead).
  int cpu_compute_workers = 1;
  /// Copy-lane workers per device. (The comm lane always has one.)
  int copy_workers = 1;
  /// Back-pressure: a push blocks while this many operations are in flight
  /// (JANUS_MAX_IN_FLIGHT, default 4096). Pushes from worker threads never block.
  int64_t max_in_flight = 4096;
};

class Engine {
 public:
  virtual ~Engine() = default;

  virtual EngineKind kind() const = 0;

  /// A new dependency var. Release it with `delete_var`, never with delete.
  virtual Var* new_var() = 0;

  /// Queues `kernel` to run on `device`'s `lane` once every var in `reads` and `writes`
  /// grants it; returns at once (the naive engine runs it before returning). A var listed in
  /// both is a write. Larger `priority` runs first among ready operations of a lane. `name`
  /// names the operation in errors and profiles. Blocks while `max_in_flight` operations are
  /// pending (back-pressure), unless called from a worker thread. `detail` goes to the
  /// profiler.
  virtual void push(Kernel kernel, std::span<Var* const> reads, std::span<Var* const> writes,
                    Device device, Lane lane = Lane::kCompute, int priority = 0,
                    std::string_view name = {}, OpDetail detail = {}) = 0;

  void push(Kernel kernel, std::initializer_list<Var*> reads, std::initializer_list<Var*> writes,
            Device device, Lane lane = Lane::kCompute, int priority = 0, std::string_view name = {},
            OpDetail detail = {}) {
    push(std::move(kernel), std::span<Var* const>(reads.begin(), reads.size()),
         std::span<Var* const>(writes.begin(), writes.size()), device, lane, priority, name,
         std::move(detail));
  }

  /// Releases `var` after every operation pushed on it so far; then runs `on_release` (which
  /// must not throw), e.g. to return the var's memory to its pool. Never blocks.
  virtual void delete_var(Var* var, ReleaseFn on_release) = 0;

  /// Blocks until every write pushed on `var` so far has finished; rethrows the var's error.
  virtual void wait_for_var(Var* var) = 0;

  /// Blocks until every pushed operation has finished; rethrows the first error that no
  /// blocker has rethrown yet, and forgets the rest.
  virtual void wait_all() = 0;

  /// wait_for_var and wait_all in slices of `slice`: `poll` runs on the waiting thread after
  /// each slice that ended with work still pending, with no engine lock held. An exception from
  /// `poll` ends the wait and propagates (e.g. Python's KeyboardInterrupt): the pending work
  /// keeps running, and its errors stay for the next blocker.
  virtual void wait_for_var(Var* var, std::chrono::milliseconds slice, const WaitPoll& poll) = 0;
  virtual void wait_all(std::chrono::milliseconds slice, const WaitPoll& poll) = 0;

  virtual EngineStats stats() const = 0;

  /// RunContext::num_threads of a kernel on `device`'s compute lane: the intra-op (OpenMP)
  /// threads a kernel there may use. Operators build thread-count-dependent state (oneDNN
  /// primitives) for this many threads.
  virtual int kernel_threads(Device device) = 0;
};

/// The process-wide engine, created on first use from JANUS_ENGINE=naive|threaded (default
/// threaded) with options from the environment. Drained and stopped at exit.
Engine& engine();

/// Waits for all work of the current engine (rethrowing as wait_all does), then replaces it
/// with a new one. For tests and benchmarks that compare engines; not thread-safe against
/// concurrent pushes.
void set_engine(EngineKind kind, const EngineOptions& options = {});

/// Registers (again) the exit handler that drains the global engine. Exit handlers run in
/// reverse order of registration, so a library whose kernels create static state lazily (oneDNN)
/// calls this once after that state exists: the drain then runs while the state is still alive.
void drain_engine_at_exit();

/// Options read from the environment (JANUS_CPU_WORKERS, JANUS_MAX_IN_FLIGHT).
EngineOptions engine_options_from_env();

/// Creates a stand-alone engine (not the global one), e.g. for engine tests.
std::unique_ptr<Engine> make_engine(EngineKind kind, const EngineOptions& options = {});

std::string_view engine_kind_name(EngineKind kind);

}  // namespace janus

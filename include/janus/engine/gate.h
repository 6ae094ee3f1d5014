// Gated operations: an operation pushed now that also waits for a later open, so that a result
// can be promised before the operations that compute its inputs are pushed. Layer: engine.
#pragma once

#include <exception>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "janus/engine/engine.h"

namespace janus {

/// The handle of an operation pushed with push_gated: the operation waits for its vars and for
/// its gate to open. Thread-safe.
class Gate {
 public:
  virtual ~Gate() = default;
  /// Lets the operation run once its vars grant it. With `error`, the operation does not run
  /// its kernel: it fails with `error`, which poisons its writes as a throwing kernel would.
  /// Only the first open (or open_after) counts. A handle destroyed unsettled opens with an
  /// error.
  virtual void open(std::exception_ptr error = nullptr) = 0;
  /// Opens the gate once every write pushed so far on `vars` has finished (on the thread that
  /// finishes the last), with the error of the first of them that carries one. From this call
  /// on the gate is no longer the pushing thread's to open: its waits do not abandon it.
  virtual void open_after(std::span<Var* const> vars) = 0;
  /// Whether open or open_after was called (or the engine abandoned the gate).
  virtual bool is_settled() const = 0;
};

/// Like Engine::push on `engine`, but the operation also waits for its gate: operations pushed
/// later on its vars wait behind it. Its kernel may read memory that operations pushed after it
/// write, provided the gate opens after they finish (Gate::open_after on their vars).
///
/// Never a hang: a blocking wait (wait_for_var, wait_all) on the thread that pushed the
/// operation, while its gate is unsettled, first opens the gate with an EngineError carrying
/// `abandon_message` (that thread was to open it and cannot while it waits), so the wait
/// returns or rethrows; back-pressure skips that thread while it holds an unsettled gate (the
/// operations behind it could fill the window); shutdown abandons every unsettled gate. The
/// naive engine runs every operation when it is pushed and cannot hold one:
/// NotImplementedError.
std::shared_ptr<Gate> push_gated(Engine& engine, Kernel kernel, std::span<Var* const> reads,
                                 std::span<Var* const> writes, Device device, Lane lane,
                                 std::string_view name, std::string abandon_message);

}  // namespace janus

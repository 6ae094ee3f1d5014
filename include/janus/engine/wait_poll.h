// A thread's poll for the engine's blocking waits: how a frontend keeps every wait inside its
// calls into C++ layers interruptible (Python's Ctrl-C). Layer: engine.
#pragma once

#include <chrono>

#include "janus/engine/engine.h"

namespace janus {

/// The calling thread's poll for its blocking waits that have none of their own (wait_for_var,
/// wait_all, and push's back-pressure wait), while it lives: they wait in slices of `slice` and
/// run `poll` between slices, as the sliced waits do, so an exception from `poll` ends the wait
/// and leaves the call that waited (a push that it ends has pushed nothing). For a frontend
/// whose calls into C++ layers must stay interruptible in every wait inside them (Python's
/// Ctrl-C). Nests: the innermost scope of the thread applies, and its end restores the one
/// around it. `poll` must outlive the scope.
class ScopedWaitPoll {
 public:
  ScopedWaitPoll(std::chrono::milliseconds slice, const WaitPoll& poll);
  ~ScopedWaitPoll();
  ScopedWaitPoll(const ScopedWaitPoll&) = delete;
  ScopedWaitPoll& operator=(const ScopedWaitPoll&) = delete;

  /// The calling thread's innermost scope, or null.
  static const ScopedWaitPoll* current();
  std::chrono::milliseconds slice() const { return slice_; }
  const WaitPoll& poll() const { return poll_; }

 private:
  std::chrono::milliseconds slice_;
  const WaitPoll& poll_;
  const ScopedWaitPoll* outer_;
};

}  // namespace janus

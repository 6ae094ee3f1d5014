// Var: the per-array dependency queue shared by every engine. Private to src/engine.
//
// A var keeps the operations that want it in FIFO order. Granted reads run together; a write
// is granted only when no read or write is active and it is first in the queue; reads behind a
// write wait for it.
//
// The var's fields are on two cache lines: the pushers' line (the queue, the active write, the
// count of reads granted; guarded by `lock_`, a spinlock whose critical sections are a few
// instructions) and the completions' line (the count of reads completed and the flag of a
// write waiting for them). A read registers on the first and completes on the second, so an
// array that many operations read (a weight, an input used again and again) costs its pushing
// thread no cache-line hand-off per operation: the worker that completes a read writes a line
// that the pusher does not touch until a write is queued behind the reads.
#pragma once

#include <atomic>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../core/recycler.h"

namespace janus {

struct OprBlock;

/// One failure of one operation, shared by every var it poisoned and every operation that
/// inherited it. `reported` makes wait_all rethrow it at most once.
struct ErrorRecord {
  std::exception_ptr error;
  std::atomic<bool> reported{false};
};

class SpinLock {
 public:
  void lock() {
    // acquire pairs with the release in unlock(): the previous holder's writes are visible.
    while (locked_.exchange(true, std::memory_order_acquire)) {
      while (locked_.load(std::memory_order_relaxed)) std::this_thread::yield();
    }
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

using OprList = std::vector<OprBlock*>;

class Var {
 public:
  JANUS_RECYCLED(Var)  // made by the frontend, often deleted by a worker

  Var() = default;
  Var(const Var&) = delete;
  Var& operator=(const Var&) = delete;
  ~Var();

  /// Registers a read by `op`; true when it is granted at once.
  bool append_read(OprBlock* op);
  /// Registers a write by `op`; true when it is granted at once.
  bool append_write(OprBlock* op);
  /// Ends a granted read; appends to `granted` the operations that this unblocks.
  void complete_read(OprList& granted);
  /// Ends the granted write; poisons the var with `error` when set; appends to `granted` the
  /// operations that this unblocks.
  void complete_write(const std::shared_ptr<ErrorRecord>& error, OprList& granted);

  /// True when no write is active or queued: the value is final for now.
  bool is_readable();
  /// True when nothing is active or queued.
  bool is_idle();
  /// True when `op` holds the var's only active read or its active write, and nothing is
  /// queued.
  bool used_only_by(const OprBlock& op);
  std::shared_ptr<ErrorRecord> error();
  /// Whether the var carries an error, without the lock: an operation that the var granted
  /// sees the error of every write before it (a var is poisoned for good), and a worker that
  /// checks every var of every operation this way writes none of their lines.
  bool poisoned() const { return poisoned_.load(std::memory_order_acquire); }
  /// False while no var of this process was ever poisoned: then a worker need not read the
  /// vars of its operation at all (their pushers' lines, which a pusher writes per operation).
  /// An operation granted after a poisoning write completed sees it true.
  static bool any_poisoned() { return any_poisoned_.load(std::memory_order_relaxed); }

 private:
  struct Waiter {
    JANUS_RECYCLED(Waiter)  // queued by the pusher, granted by a worker
    OprBlock* op;
    bool write;
    Waiter* next;
  };
  void enqueue(OprBlock* op, bool write);
  OprBlock* pop();
  /// Reads granted and not completed. Caller holds lock_. The load is seq_cst: after a store of
  /// `write_waits_`, a weaker load could be ordered before the store, and then neither this
  /// thread nor the last completion would see the other (on x86 the two orders compile alike).
  int64_t active_reads() const { return reads_granted_ - reads_completed_.load(); }
  void grant_queued(OprList& granted);

  // The pushers' line: guarded by lock_.
  SpinLock lock_;
  bool write_active_ = false;
  std::atomic<bool> poisoned_{false};  // error_ is set (never cleared)
  int64_t reads_granted_ = 0;
  Waiter* head_ = nullptr;
  Waiter* tail_ = nullptr;
  std::shared_ptr<ErrorRecord> error_;
  // The completions' line. A read completion counts itself here, then looks at the queue (under
  // lock_) only when `write_waits_` says a write waits for the active reads to end. Both are
  // seq_cst: the thread that queues such a write sets the flag, then reads the count, so either
  // it sees every read completed (and grants the write itself) or the last completion sees the
  // flag.
  alignas(64) std::atomic<int64_t> reads_completed_{0};
  std::atomic<bool> write_waits_{false};

  static std::atomic<bool> any_poisoned_;
};

}  // namespace janus

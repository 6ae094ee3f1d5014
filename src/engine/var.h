// Var: the per-array dependency queue shared by every engine. Private to src/engine.
//
// A var keeps the operations that want it in FIFO order. Granted reads run together; a write
// is granted only when no read or write is active and it is first in the queue; reads behind a
// write wait for it.
//
// The fields sit on two cache lines: the pushers' line (the queue, the active write, the count
// of reads granted; guarded by `lock_`, a spinlock whose critical sections are a few
// instructions) and the completions' line (one atomic word that completing reads count
// themselves in, and the poisoned flag). A read registers on the first line and completes on
// the second, so an array that many operations read (a weight, an input used again and again)
// costs its pushing thread no cache-line hand-off per operation: the worker that completes a
// read writes a line that the pusher touches only when it queues a write behind the reads.
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
  /// checks every var of every operation this way writes none of their lines and reads only
  /// the completions' line, not the pushers'.
  bool poisoned() const { return poisoned_.load(std::memory_order_acquire); }
  /// False while no var of this process was ever poisoned: then a worker need not look at the
  /// vars of its operation at all (a line that another thread writes). An operation granted
  /// after a poisoning write completed sees it true (set before the grant).
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
  /// Reads granted and not completed. Caller holds lock_.
  int64_t active_reads() const;
  /// For a write that is next (no write active or waiting): true when no read is active, so
  /// the write may be granted now; otherwise makes the last active read grant it. Caller
  /// holds lock_.
  bool no_reads_or_wait_for_them();
  void grant_queued(OprList& granted);

  // The pushers' line: guarded by lock_.
  SpinLock lock_;
  bool write_active_ = false;
  bool write_waits_ = false;   // the write at the head waits for the active reads to complete
  int64_t reads_granted_ = 0;  // since the last write was granted
  Waiter* head_ = nullptr;
  Waiter* tail_ = nullptr;
  std::shared_ptr<ErrorRecord> error_;
  // Keeps the completions' fields a line away from the pushers' (and, below, from whatever
  // follows the var in memory): the recycler does not align objects to a line.
  [[maybe_unused]] char line_gap_[64];
  // The completions' line. `reads_` is one word so that a completing read learns from its own
  // decrement whether a write waits for it (see var.cc): while no write waits it is minus the
  // reads completed since the last write was granted (<= 0; active reads = reads_granted_ +
  // reads_); while a write waits (write_waits_) it is the number of reads still active (> 0).
  std::atomic<int64_t> reads_{0};
  std::atomic<bool> poisoned_{false};  // error_ is set (never cleared)
  [[maybe_unused]] char tail_gap_[55];

  static std::atomic<bool> any_poisoned_;
};

}  // namespace janus

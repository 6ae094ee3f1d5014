// Var: the per-array dependency queue shared by every engine. Private to src/engine.
//
// A var keeps the operations that want it in FIFO order. Granted reads run together; a write
// is granted only when no read or write is active and it is first in the queue; reads behind a
// write wait for it. Every field is guarded by `lock` (a spinlock: critical sections are a few
// instructions).
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

 private:
  struct Waiter {
    JANUS_RECYCLED(Waiter)  // queued by the pusher, granted by a worker
    OprBlock* op;
    bool write;
    Waiter* next;
  };
  void enqueue(OprBlock* op, bool write);
  void grant_queued(OprList& granted);

  SpinLock lock_;
  int active_reads_ = 0;
  bool write_active_ = false;
  Waiter* head_ = nullptr;
  Waiter* tail_ = nullptr;
  std::shared_ptr<ErrorRecord> error_;
  std::atomic<bool> poisoned_{false};  // error_ is set (never cleared)
};

}  // namespace janus

// The per-var reader/writer FIFO.
#include "var.h"

#include <mutex>

#include "janus/base/error.h"

#include "opr_block.h"

namespace janus {

Var::~Var() {
  // Only an idle var is deleted (delete_var runs after the var's last operation).
  while (head_ != nullptr) {
    Waiter* next = head_->next;
    delete head_;
    head_ = next;
  }
}

void Var::enqueue(OprBlock* op, bool write) {
  auto* w = new Waiter{op, write, nullptr};
  if (tail_ == nullptr) {
    head_ = tail_ = w;
  } else {
    tail_->next = w;
    tail_ = w;
  }
}

std::atomic<bool> Var::any_poisoned_{false};

// Removes the head of the queue and returns its operation. Caller holds lock_.
OprBlock* Var::pop() {
  Waiter* w = head_;
  head_ = w->next;
  if (head_ == nullptr) tail_ = nullptr;
  OprBlock* op = w->op;
  delete w;
  return op;
}

// How reads complete without the lock, and why no read touches a freed var.
//
// A completing read's only access to the var is one decrement of `reads_` (complete_read),
// unless that decrement tells it that it is the last read a waiting write needs: then it takes
// the lock and grants that write. Anything that could free the var (its release is a write:
// delete_var queues one, or runs the release at once when is_idle sees nothing active) is
// granted only after every read's decrement, so the var is alive at each decrement; and a read
// that goes on to take the lock is the one that grants the waiting write, which nothing behind
// it can overtake, so the var is alive until it has granted it.
//
// The states of `reads_` (every change of the pushers' fields is under lock_):
// - no write waits: reads_ = -(reads completed) <= 0; a decrement returns <= 0, and the read
//   does nothing more.
// - a write waits (write_waits_, set under lock_ by no_reads_or_wait_for_them): reads_ = the
//   reads still active, >= 1. Reads behind a waiting write are queued, not granted, so the
//   count only falls; exactly one decrement returns 1 (the last read), and no other return
//   value tells a read to go on.
// The switch from the first to the second state is a compare-and-swap, under lock_, from the
// value the lock holder saw (with reads_granted_ it gives the active reads) to the active
// count. Each interleaving:
// - a read completes between the holder's load and its compare-and-swap: the swap fails, the
//   holder recomputes; a read that completes before the swap sees no write waiting and stops.
// - every read completes before the swap: the holder sees none active and grants the write
//   itself (no flag); the reads touched nothing after their decrements.
// - the swap succeeds: every later decrement sees the active count; the last one returns 1 and
//   takes lock_, which it gets only after the holder has queued the write and unlocked (its
//   decrement follows the swap, made inside the holder's critical section).
// - several reads complete at once: the decrements are one atomic sequence, so one of them is
//   the last whatever their order.
// - reads pushed while a write waits queue behind it (append_read sees the queue), and so do
//   further writes; they are granted after that write completes, so no read granted after
//   the swap decrements the count that the swap set.
// - the var's release queued as a write: delete_var frees at once only when is_idle (under
//   lock_, loading reads_ with acquire) sees no read active, that is after every read's
//   decrement, which is each read's last access; otherwise the release is a write like any
//   other, waiting for the reads itself or behind the waiting write.
// - the last read grants the waiting write by adding it to `granted`; the engine dispatches
//   it after complete_read has returned, and the read touches the var no more, so even a
//   write that frees the var, or the release behind it, runs only after the read is done
//   with it.
// Orders: a decrement releases (the read's accesses happen before those of the write that is
// granted after it) and acquires (the last read sees every earlier read's release, through the
// sequence of decrements); the holder's load and swap acquire likewise. When the write is
// granted, no read is active and none is in flight, so resetting reads_ and reads_granted_ to
// 0 there races with nothing.
int64_t Var::active_reads() const {
  const int64_t reads = reads_.load(std::memory_order_acquire);
  return write_waits_ ? reads : reads_granted_ + reads;
}

bool Var::no_reads_or_wait_for_them() {
  JANUS_DEBUG_ASSERT(!write_active_ && !write_waits_, "var: a write is already active or waits");
  int64_t reads = reads_.load(std::memory_order_acquire);
  for (;;) {
    const int64_t active = reads_granted_ + reads;
    if (active == 0) {
      reads_.store(0, std::memory_order_relaxed);
      reads_granted_ = 0;
      return true;
    }
    if (reads_.compare_exchange_weak(reads, active, std::memory_order_acq_rel,
                                     std::memory_order_acquire)) {
      write_waits_ = true;
      return false;
    }
  }
}

bool Var::append_read(OprBlock* op) {
  std::lock_guard guard(lock_);
  if (!write_active_ && head_ == nullptr) {
    ++reads_granted_;
    return true;
  }
  enqueue(op, /*write=*/false);
  return false;
}

bool Var::append_write(OprBlock* op) {
  std::lock_guard guard(lock_);
  if (!write_active_ && head_ == nullptr && no_reads_or_wait_for_them()) {
    write_active_ = true;
    return true;
  }
  enqueue(op, /*write=*/true);
  return false;
}

// Grants the head of the queue when nothing active blocks it: the run of reads at the front,
// then a write once no read is active (or makes the last active read grant it). Caller holds
// lock_, and no write is active or waits.
void Var::grant_queued(OprList& granted) {
  while (head_ != nullptr && !head_->write) {
    ++reads_granted_;
    granted.push_back(pop());
  }
  if (head_ == nullptr || !no_reads_or_wait_for_them()) return;
  write_active_ = true;
  granted.push_back(pop());
}

void Var::complete_read(OprList& granted) {
  // After this decrement the var may be freed, unless it returns 1 (see above).
  if (reads_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  std::lock_guard guard(lock_);
  JANUS_DEBUG_ASSERT(write_waits_ && head_ != nullptr && head_->write,
                     "var: the last read found no waiting write");
  write_waits_ = false;
  reads_granted_ = 0;  // and reads_ is 0: none active, none completed since
  grant_queued(granted);
}

void Var::complete_write(const std::shared_ptr<ErrorRecord>& error, OprList& granted) {
  std::lock_guard guard(lock_);
  JANUS_DEBUG_ASSERT(write_active_, "var: write completed with no active write");
  write_active_ = false;
  if (error) {
    error_ = error;
    poisoned_.store(true, std::memory_order_release);
    any_poisoned_.store(true, std::memory_order_relaxed);
  }
  grant_queued(granted);
}

bool Var::is_readable() {
  std::lock_guard guard(lock_);
  // A queued read always sits behind an active or queued write, so an empty queue and no
  // active write means no write is pending.
  return !write_active_ && head_ == nullptr;
}

bool Var::is_idle() {
  std::lock_guard guard(lock_);
  return !write_active_ && head_ == nullptr && active_reads() == 0;
}

bool Var::used_only_by(const OprBlock& op) {
  std::lock_guard guard(lock_);
  if (head_ != nullptr) return false;
  // One write is active at a time, and `op` lists each var once, as a read or as a write.
  if (write_active_) return op.writes.contains(this);
  return active_reads() == 1 && op.reads.contains(this);
}

std::shared_ptr<ErrorRecord> Var::error() {
  std::lock_guard guard(lock_);
  return error_;
}

}  // namespace janus

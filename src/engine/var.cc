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

std::atomic<bool> Var::any_poisoned_{false};

void Var::enqueue(OprBlock* op, bool write) {
  auto* w = new Waiter{op, write, nullptr};
  if (tail_ == nullptr) {
    head_ = tail_ = w;
  } else {
    tail_->next = w;
    tail_ = w;
  }
}

// Removes the head of the queue and returns its operation. Caller holds lock_.
OprBlock* Var::pop() {
  Waiter* w = head_;
  head_ = w->next;
  if (head_ == nullptr) tail_ = nullptr;
  OprBlock* op = w->op;
  delete w;
  return op;
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
  if (write_active_ || head_ != nullptr) {
    enqueue(op, /*write=*/true);
    return false;
  }
  if (active_reads() == 0) {
    write_active_ = true;
    return true;
  }
  // Only active reads hold it: the last of them to complete grants it, unless they all
  // completed before they could see the flag.
  enqueue(op, /*write=*/true);
  write_waits_.store(true);  // seq_cst, then the count again: see reads_completed_
  if (active_reads() > 0) return false;
  write_waits_.store(false, std::memory_order_relaxed);
  pop();
  write_active_ = true;
  return true;
}

// Grants the head of the queue, when nothing active blocks it: the run of reads at the front,
// or one write once no read is active. A write that waits only for active reads sets
// write_waits_, so that the last of them grants it. Caller holds lock_.
void Var::grant_queued(OprList& granted) {
  if (write_active_) return;
  while (head_ != nullptr && !head_->write) {
    ++reads_granted_;
    granted.push_back(pop());
  }
  if (head_ == nullptr) return;
  if (active_reads() > 0) {
    // Already set (under lock_): whoever set it read the count after, so the last completion
    // sees it.
    if (write_waits_.load(std::memory_order_relaxed)) return;
    write_waits_.store(true);  // seq_cst, then the count again: see reads_completed_
    if (active_reads() > 0) return;
  }
  write_waits_.store(false, std::memory_order_relaxed);
  write_active_ = true;
  granted.push_back(pop());
}

void Var::complete_read(OprList& granted) {
  // seq_cst, before the flag's load: see reads_completed_. Release: the reader's accesses
  // happen before those of a write that an acquiring load of the count then grants.
  reads_completed_.fetch_add(1);
  if (!write_waits_.load()) return;
  std::lock_guard guard(lock_);
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

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

bool Var::append_read(OprBlock* op) {
  std::lock_guard guard(lock_);
  if (!write_active_ && head_ == nullptr) {
    ++active_reads_;
    return true;
  }
  enqueue(op, /*write=*/false);
  return false;
}

bool Var::append_write(OprBlock* op) {
  std::lock_guard guard(lock_);
  if (!write_active_ && active_reads_ == 0 && head_ == nullptr) {
    write_active_ = true;
    return true;
  }
  enqueue(op, /*write=*/true);
  return false;
}

// Grants the head of the queue: either the run of reads at the front, or one write when
// nothing is active. Caller holds lock_.
void Var::grant_queued(OprList& granted) {
  while (head_ != nullptr && !head_->write) {
    ++active_reads_;
    granted.push_back(head_->op);
    Waiter* next = head_->next;
    delete head_;
    head_ = next;
  }
  if (head_ != nullptr && active_reads_ == 0) {
    write_active_ = true;
    granted.push_back(head_->op);
    Waiter* next = head_->next;
    delete head_;
    head_ = next;
  }
  if (head_ == nullptr) tail_ = nullptr;
}

void Var::complete_read(OprList& granted) {
  std::lock_guard guard(lock_);
  JANUS_DEBUG_ASSERT(active_reads_ > 0, "var: read completed with no active read");
  if (--active_reads_ == 0) grant_queued(granted);
}

void Var::complete_write(const std::shared_ptr<ErrorRecord>& error, OprList& granted) {
  std::lock_guard guard(lock_);
  JANUS_DEBUG_ASSERT(write_active_, "var: write completed with no active write");
  write_active_ = false;
  if (error) {
    error_ = error;
    poisoned_.store(true, std::memory_order_release);
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
  return !write_active_ && active_reads_ == 0 && head_ == nullptr;
}

bool Var::used_only_by(const OprBlock& op) {
  std::lock_guard guard(lock_);
  if (head_ != nullptr) return false;
  // One write is active at a time, and `op` lists each var once, as a read or as a write.
  if (write_active_) return op.writes.contains(this);
  return active_reads_ == 1 && op.reads.contains(this);
}

std::shared_ptr<ErrorRecord> Var::error() {
  std::lock_guard guard(lock_);
  return error_;
}

}  // namespace janus

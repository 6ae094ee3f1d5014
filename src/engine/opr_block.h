// OprBlock: one pushed operation while it waits, runs and completes; and the pieces that the
// naive and threaded engines share (dependency lists, running a kernel, the error log).
// Private to src/engine.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "janus/engine/engine.h"

#include "../core/recycler.h"
#include "var.h"

namespace janus {

enum class OpKind : uint8_t {
  kNormal,    // a kernel, run by a worker of its device and lane
  kWait,      // a blocker's read: signals the waiting thread, runs inline when granted
  kDelete,    // releases a var after its last use, runs inline when granted
  kOpenGate,  // opens a gate (Gate::open_after) once its reads are granted, runs inline
};

/// A small list of vars with inline room for the common case (an operator's inputs).
class VarList {
 public:
  static constexpr int kInline = 6;
  void push_back(Var* v) {
    if (size_ < kInline) {
      inline_[size_] = v;
    } else {
      if (size_ == kInline) heap_.assign(inline_, inline_ + kInline);
      heap_.push_back(v);
    }
    ++size_;
  }
  int size() const { return size_; }
  Var* const* begin() const { return size_ <= kInline ? inline_ : heap_.data(); }
  Var* const* end() const { return begin() + size_; }
  bool contains(Var* v) const {
    for (Var* x : *this) {
      if (x == v) return true;
    }
    return false;
  }

 private:
  Var* inline_[kInline];
  std::vector<Var*> heap_;
  int size_ = 0;
};

struct OprBlock {
  JANUS_RECYCLED(OprBlock)  // made by the pusher, freed by a worker

  Kernel fn;
  VarList reads;   // no duplicates, none of them also in writes
  VarList writes;  // no duplicates
  /// Dependencies not yet granted, plus one held by the pusher until it has registered them all
  /// (so a grant racing with the registration cannot dispatch the op early).
  std::atomic<int> wait{0};
  OpKind kind = OpKind::kNormal;
  Lane lane = Lane::kCompute;
  Device device;
  int priority = 0;
  uint64_t seq = 0;                // push order, breaks priority ties first-in first-out
  OprBlock* next_ready = nullptr;  // link in a worker pool's stack of incoming ops
  std::string name;
  OpDetail detail;  // for the profiler; empty unless a listener was installed at push time
  std::shared_ptr<ErrorRecord> error;
};

/// Fills `op->reads` and `op->writes` from the pushed lists: duplicates dropped, a var that is
/// both read and written kept as a write. Throws ValueError on a null var.
void set_dependencies(OprBlock* op, std::span<Var* const> reads, std::span<Var* const> writes);

/// Errors raised by kernels, kept until wait_all reports them. Thread-safe.
class ErrorLog {
 public:
  void add(std::shared_ptr<ErrorRecord> record);
  /// The first error not yet reported (now marked reported), or null; forgets all of them.
  std::shared_ptr<ErrorRecord> take_unreported();

 private:
  std::mutex mu_;
  std::vector<std::shared_ptr<ErrorRecord>> errors_;
};

/// What a failed kernel's message suggests when the kernel ran on a worker: its error surfaces
/// at a later wait, far from the call that caused it, and the naive engine throws it on the
/// caller's stack instead.
inline constexpr std::string_view kRunNaiveHint =
    "set JANUS_ENGINE=naive to run synchronously and get a clean backtrace";

/// Runs `op->fn` unless a var it touches carries an error, in which case the op inherits that
/// error and is skipped. A throwing kernel gets a new ErrorRecord (logged in `log`) whose
/// message names the operator and ends with `hint` in parentheses (none when empty).
void run_operation(OprBlock* op, const RunContext& ctx, ErrorLog& log, std::string_view hint);

/// Rethrows `record` (marking it reported) when it is set.
void rethrow_if_error(const std::shared_ptr<ErrorRecord>& record);

}  // namespace janus

// The oneDNN CPU engine and stream shared by the oneDNN-backed kernels. Private to src/ops.
#pragma once

#include <omp.h>

#include <cstdint>
#include <functional>
#include <string>

#include <dnnl.hpp>

namespace janus::ops {

/// The process's oneDNN CPU engine (created once, thread-safe). The first call also runs one
/// tiny matmul, so that oneDNN's lazily created static state exists, and then registers the
/// engine's exit drain again: kernels still in flight at exit finish before that state is
/// destroyed. Operator functions call it on the frontend thread before pushing.
dnnl::engine& onednn_engine();

/// Attributes for every primitive Janus builds: a user-managed scratchpad. oneDNN's default
/// (library) scratchpad belongs to the thread that created the primitive, but kernels run on
/// engine workers, so each execution passes its own (onednn_scratchpad).
dnnl::primitive_attr onednn_attr();

/// Scratchpad memory for `md` (a primitive descriptor's scratchpad_desc()) from a buffer owned
/// by the calling thread, grown as needed. Valid until the thread's next call.
dnnl::memory onednn_scratchpad(const dnnl::memory::desc& md);

/// The first time an implementation (primitive_desc::impl_info_str()) is seen, runs `run_once`
/// on the caller's thread, limited to one OpenMP thread: the first execution of an
/// implementation creates static state inside oneDNN. `run_once` must build the primitive it
/// runs (a probe): oneDNN fixes a primitive's threads when it is built, and the cached one is
/// built for the compute worker's threads (ops::run_prepare), so running it here would start
/// an OpenMP team on the caller. Then registers the engine's exit drain again, so a kernel still
/// running at exit finishes before any of that state is destroyed. Call it from an operator's
/// `prepare` after building a new primitive.
void settle_onednn_state(const std::string& impl, const std::function<void()>& run_once);

// Below this many multiply-adds (about 10-20 us of arithmetic on one core) a product runs on
// one thread: starting and joining a second OpenMP thread costs several microseconds on an
// idle machine and far more on a busy one, more than splitting the work saves. 1x512 · 512x256
// (2^17) is below it; 8x512 · 512x256 is not. Used by matmul and fully_connected.
constexpr int64_t kParallelGemmMacs = int64_t{1} << 18;

// Limits this thread's OpenMP team (and so oneDNN's, which runs on OpenMP) to one thread for
// its lifetime when `active`, then restores the previous count.
class OneThreadIf {
 public:
  explicit OneThreadIf(bool active) : saved_(active ? omp_get_max_threads() : 1) {
    if (saved_ > 1) omp_set_num_threads(1);
  }
  ~OneThreadIf() {
    if (saved_ > 1) omp_set_num_threads(saved_);
  }
  OneThreadIf(const OneThreadIf&) = delete;
  OneThreadIf& operator=(const OneThreadIf&) = delete;

 private:
  int saved_;
};

}  // namespace janus::ops

// The oneDNN CPU engine and stream shared by the oneDNN-backed kernels. Private to src/ops.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <dnnl.hpp>

#include "janus/base/omp_threads.h"

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

/// The calling thread's oneDNN stream on onednn_engine(), created on its first use: kernels
/// execute on it rather than creating a stream per call.
dnnl::stream& onednn_stream();

/// Scratchpad memory for `md` (a primitive descriptor's scratchpad_desc()) from a buffer owned
/// by the calling thread, grown as needed. Valid until the thread's next call.
dnnl::memory onednn_scratchpad(const dnnl::memory::desc& md);

/// A primitive's argument memory objects, built once per concurrent run and reused: a run only
/// sets their data pointers (set_data_handle) and brings its thread's scratchpad, so it builds
/// no oneDNN object and allocates nothing on the worker between two parallel regions.
/// Thread-safe: each run leases a set of its own.
class OneDnnBindings {
  struct Set;

 public:
  /// `args`: each argument's id (DNNL_ARG_SRC, ...) and desc, in the order bind() takes their
  /// data; `scratchpad`: the primitive descriptor's scratchpad_desc() (empty: none).
  OneDnnBindings(std::initializer_list<std::pair<int, dnnl::memory::desc>> args,
                 dnnl::memory::desc scratchpad);
  ~OneDnnBindings();

  /// One set of memory objects, held by no other lease; back in the pool when the lease ends.
  class Lease {
   public:
    Lease(const OneDnnBindings& owner, std::unique_ptr<Set> set);
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    /// Argument i's data at data[i] (as many as the bindings' args).
    void bind(std::initializer_list<const void*> data);
    /// Executes `prim` on the calling thread's stream with the bound data and its thread's
    /// scratchpad, and waits for it.
    void execute(const dnnl::primitive& prim);

   private:
    const OneDnnBindings& owner_;
    std::unique_ptr<Set> set_;
  };

  Lease lease() const;

  /// lease(), bind(data), execute(prim).
  void run(const dnnl::primitive& prim, std::initializer_list<const void*> data) const;

 private:
  std::vector<std::pair<int, dnnl::memory::desc>> args_;
  dnnl::memory::desc scratchpad_;
  mutable std::mutex mu_;
  mutable std::vector<std::unique_ptr<Set>> idle_;  // at most one per concurrent run
};

/// The first time an implementation (primitive_desc::impl_info_str()) is seen, runs `run_once`
/// on the caller's thread, limited to one OpenMP thread: the first execution of an
/// implementation creates static state inside oneDNN. `run_once` must build the primitive it
/// runs (a probe): oneDNN fixes a primitive's threads when it is built, and the cached one is
/// built for the compute worker's threads (ops::run_prepare), so running it here would start
/// an OpenMP team on the caller. Then registers the engine's exit drain again, so a kernel still
/// running at exit finishes before any of that state is destroyed. Call it from an operator's
/// `prepare` after building a new primitive.
void settle_onednn_state(const std::string& impl, const std::function<void()>& run_once);

/// Call after each run of a cached primitive on a worker; `ran` is the primitive's own flag.
/// Its first run on the worker's OpenMP team can create oneDNN state that the one-thread probe
/// of settle_onednn_state did not (kernels of the team's threads: a convolution's weight
/// gradient on two threads did), so the engine's exit drain is registered again after it, to
/// run before that state is destroyed.
void settle_after_first_run(std::atomic<bool>& ran);

// Below this many multiply-adds a product runs on one thread: starting and joining a second
// OpenMP thread costs more than splitting so little work saves, on a busy machine above all.
// 1x512 · 512x256 (2^17) is below it; 8x512 · 512x256 is not. Used by matmul and
// fully_connected.
constexpr int64_t kParallelGemmMacs = int64_t{1} << 18;

}  // namespace janus::ops

// ScopedOmpThreads: the one way Janus changes a thread's OpenMP thread count. Layer: base.
#pragma once

#include <omp.h>

namespace janus {

/// Sets the calling thread's OpenMP thread count (omp_set_num_threads: the team size of the
/// thread's next parallel regions, oneDNN's included) for the guard's lifetime, then restores
/// the count it found. Changes nothing when the count is already `threads`. The count is
/// per-thread state: a guard acts on the thread that made it, and guards nest (the innermost
/// restores first).
///   const ScopedOmpThreads threads(engine().kernel_threads(device));
class ScopedOmpThreads {
 public:
  explicit ScopedOmpThreads(int threads) : saved_(omp_get_max_threads()), threads_(threads) {
    if (threads_ != saved_) omp_set_num_threads(threads_);
  }
  ~ScopedOmpThreads() {
    if (threads_ != saved_) omp_set_num_threads(saved_);
  }
  ScopedOmpThreads(const ScopedOmpThreads&) = delete;
  ScopedOmpThreads& operator=(const ScopedOmpThreads&) = delete;

  /// One thread while it lives when `active` (work too small to split), else no change:
  ///   const auto one_thread = ScopedOmpThreads::one_thread_if(macs < kParallelGemmMacs);
  static ScopedOmpThreads one_thread_if(bool active) {
    return ScopedOmpThreads(active ? 1 : omp_get_max_threads());
  }

 private:
  int saved_, threads_;
};

}  // namespace janus

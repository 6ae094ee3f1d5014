// prefetch_for_write: asks the cache for lines this thread is about to write. Layer: base.
//
// Objects that one thread makes and another frees (src/core/recycler.h) come back to the
// making thread with their lines in the other core's cache. Writing them then costs a
// core-to-core hand-off per line (30-160 ns on the 2-CPU development VM), and the thread waits
// for the outstanding ones at its next atomic read-modify-write, which drains its store buffer.
// A prefetch issued an allocation earlier moves the lines while the thread does other work.
//
// PREFETCHW (exclusive ownership, so that the write needs no second request) where the CPU has
// it (CPUID PRFCHW, looked up once); otherwise a plain prefetch. Both are hints: they change
// no value and order nothing, so they need no synchronization.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

namespace janus {

namespace prefetch_detail {

#if defined(__x86_64__) && defined(__GNUC__)
inline bool cpu_has_prefetchw() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0x80000001u, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (ecx & (1u << 8)) != 0;  // PRFCHW (3DNowPrefetch)
}
inline const bool kHasPrefetchw = cpu_has_prefetchw();
#endif

inline void line_for_write(const char* p) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (kHasPrefetchw) {
    asm("prefetchw %0" : : "m"(*p));
    return;
  }
#endif
  __builtin_prefetch(p, 1, 3);
}

}  // namespace prefetch_detail

inline constexpr size_t kCacheLine = 64;

/// Prefetches, for writing, every cache line of the `bytes` bytes at `p` (bytes > 0).
inline void prefetch_for_write(const void* p, size_t bytes) {
  const auto first = reinterpret_cast<uintptr_t>(p) & ~uintptr_t{kCacheLine - 1};
  const auto last = (reinterpret_cast<uintptr_t>(p) + bytes - 1) & ~uintptr_t{kCacheLine - 1};
  for (uintptr_t line = first; line <= last; line += kCacheLine) {
    prefetch_detail::line_for_write(reinterpret_cast<const char*>(line));
  }
}

}  // namespace janus

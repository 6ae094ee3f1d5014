// Per-device pooled allocators and their memory counters. Layer: core.
#pragma once

#include <cstddef>
#include <cstdint>

#include "janus/core/device.h"

namespace janus {

/// Counters of one device's allocator. All byte counts are after rounding to the pool's
/// size classes.
struct MemoryStats {
  int64_t bytes_in_use = 0;       // handed out and not yet returned
  int64_t peak_bytes_in_use = 0;  // high-water mark of bytes_in_use since the last reset
  int64_t bytes_cached = 0;       // returned to the pool, kept for reuse
  int64_t num_allocs = 0;         // allocate() calls
  int64_t num_pool_hits = 0;      // allocate() calls served from the pool
};

/// A block of device memory. `size` is the rounded size actually reserved.
struct Block {
  void* ptr = nullptr;
  size_t size = 0;
};

/// Memory for one device. Blocks are 64-byte aligned. Thread-safe.
class Allocator {
 public:
  virtual ~Allocator() = default;
  /// Returns a block of at least `bytes` bytes (a valid, unique pointer even for 0 bytes).
  virtual Block allocate(size_t bytes) = 0;
  virtual void free(Block block) = 0;
  virtual MemoryStats stats() const = 0;
  virtual void reset_peak() = 0;
  /// Returns every cached block to the system.
  virtual void release_cached() = 0;
};

/// The allocator of `device` (any cpu id below kMaxDevicesPerType, even one that
/// set_num_cpu_devices no longer counts): a pooled allocator that rounds sizes up to size classes
/// and keeps freed blocks for reuse. Lives until the process ends (never destroyed), so memory can
/// be returned during static destruction.
Allocator& allocator_for(Device device);

inline MemoryStats memory_stats(Device device) { return allocator_for(device).stats(); }

}  // namespace janus

// Pooled CPU allocator: sizes rounded to classes, freed blocks cached per class for reuse.
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "janus/base/error.h"
#include "janus/core/allocator.h"

namespace janus {
namespace {

constexpr size_t kAlignment = 64;

// Size classes: multiples of 64 bytes up to 4 KiB, then multiples of 1/8 of the next lower
// power of two (at most 12.5% waste), so that a training loop's repeated shapes hit the pool.
size_t round_size(size_t bytes) {
  if (bytes <= 4096) return bytes == 0 ? kAlignment : (bytes + kAlignment - 1) & ~(kAlignment - 1);
  size_t pow2 = size_t{1} << (63 - __builtin_clzll(bytes));
  size_t step = pow2 / 8;
  return (bytes + step - 1) / step * step;
}

class PooledCpuAllocator final : public Allocator {
 public:
  Block allocate(size_t bytes) override {
    const size_t size = round_size(bytes);
    std::lock_guard lock(mu_);
    ++stats_.num_allocs;
    void* ptr = nullptr;
    auto it = free_.find(size);
    if (it != free_.end() && !it->second.empty()) {
      ptr = it->second.back();
      it->second.pop_back();
      stats_.bytes_cached -= static_cast<int64_t>(size);
      ++stats_.num_pool_hits;
    } else {
      ptr = std::aligned_alloc(kAlignment, size);
      if (ptr == nullptr) {
        release_cached_locked();
        ptr = std::aligned_alloc(kAlignment, size);
      }
      JANUS_CHECK(ptr != nullptr, ValueError,
                  "allocator: out of memory allocating {} bytes on cpu ({} bytes in use)", size,
                  stats_.bytes_in_use);
    }
    stats_.bytes_in_use += static_cast<int64_t>(size);
    if (stats_.bytes_in_use > stats_.peak_bytes_in_use) {
      stats_.peak_bytes_in_use = stats_.bytes_in_use;
    }
    return Block{ptr, size};
  }

  void free(Block block) override {
    if (block.ptr == nullptr) return;
    std::lock_guard lock(mu_);
    free_[block.size].push_back(block.ptr);
    stats_.bytes_in_use -= static_cast<int64_t>(block.size);
    stats_.bytes_cached += static_cast<int64_t>(block.size);
  }

  MemoryStats stats() const override {
    std::lock_guard lock(mu_);
    return stats_;
  }

  void reset_peak() override {
    std::lock_guard lock(mu_);
    stats_.peak_bytes_in_use = stats_.bytes_in_use;
  }

  void release_cached() override {
    std::lock_guard lock(mu_);
    release_cached_locked();
  }

 private:
  void release_cached_locked() {
    for (auto& [size, ptrs] : free_) {
      for (void* p : ptrs) std::free(p);
    }
    free_.clear();
    stats_.bytes_cached = 0;
  }

  mutable std::mutex mu_;
  std::map<size_t, std::vector<void*>> free_;
  MemoryStats stats_;
};

}  // namespace

Allocator& allocator_for(Device device) {
  // Not check_device: memory of a cpu device that a later set_num_cpu_devices removed must
  // still go back to its pool when its arrays are released.
  JANUS_CHECK(device.is_cpu() && device.id >= 0 && device.id < kMaxDevicesPerType, DeviceError,
              "allocator: no allocator for device {}, expected cpu(0) to cpu({})", device,
              kMaxDevicesPerType - 1);
  // Never destroyed: arrays may be released during static destruction, after this function's
  // statics would otherwise be gone.
  static auto* allocators = [] {
    auto* a = new std::unique_ptr<Allocator>[kMaxDevicesPerType];
    for (int i = 0; i < kMaxDevicesPerType; ++i) a[i] = std::make_unique<PooledCpuAllocator>();
    return a;
  }();
  return *allocators[device.id];
}

}  // namespace janus

// Tests of the pooled CPU allocator: alignment, size classes, reuse and the memory counters.
//
// The allocator of cpu(0) is process-wide; these tests use sizes that nothing else in the
// test program allocates, and compare counters before and after.
#include "janus/core/allocator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include "janus/base/error.h"

namespace janus {
namespace {

using ::testing::HasSubstr;

bool aligned64(const void* p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; }

TEST(Allocator, BlocksAre64ByteAlignedAndLargeEnough) {
  Allocator& alloc = allocator_for(cpu(0));
  std::vector<Block> blocks;
  for (size_t bytes :
       {size_t{1}, size_t{3}, size_t{63}, size_t{64}, size_t{65}, size_t{100}, size_t{4095},
        size_t{4096}, size_t{4097}, size_t{10007}, size_t{1} << 20, (size_t{1} << 20) + 1}) {
    const Block b = alloc.allocate(bytes);
    ASSERT_NE(b.ptr, nullptr) << bytes;
    EXPECT_TRUE(aligned64(b.ptr)) << bytes;
    EXPECT_GE(b.size, bytes);
    EXPECT_EQ(b.size % 64, 0u) << bytes;
    // Size classes waste at most one alignment unit or 12.5%.
    EXPECT_LE(b.size, std::max(bytes + 63, bytes + bytes / 8 + 1)) << bytes;
    std::memset(b.ptr, 0xab, b.size);  // the whole rounded block is usable
    blocks.push_back(b);
  }
  for (const Block& b : blocks) alloc.free(b);
}

TEST(Allocator, ZeroBytesGiveValidUniquePointers) {
  Allocator& alloc = allocator_for(cpu(0));
  const Block a = alloc.allocate(0);
  const Block b = alloc.allocate(0);
  ASSERT_NE(a.ptr, nullptr);
  ASSERT_NE(b.ptr, nullptr);
  EXPECT_NE(a.ptr, b.ptr);
  EXPECT_TRUE(aligned64(a.ptr));
  EXPECT_GT(a.size, 0u);
  alloc.free(a);
  alloc.free(b);
}

TEST(Allocator, SizeClasses) {
  Allocator& alloc = allocator_for(cpu(0));
  auto size_of = [&](size_t bytes) {
    const Block b = alloc.allocate(bytes);
    alloc.free(b);
    return b.size;
  };
  EXPECT_EQ(size_of(1), 64u);
  EXPECT_EQ(size_of(64), 64u);
  EXPECT_EQ(size_of(65), 128u);
  EXPECT_EQ(size_of(4096), 4096u);
  EXPECT_EQ(size_of(4097), 4608u);  // steps of 4096 / 8 above 4 KiB
  EXPECT_EQ(size_of(5000), 5120u);
  EXPECT_EQ(size_of(1 << 20), 1u << 20);
  EXPECT_EQ(size_of((1 << 20) + 1), (1u << 20) + (1u << 17));
}

TEST(Allocator, FreedBlocksAreReusedFromThePool) {
  Allocator& alloc = allocator_for(cpu(0));
  constexpr size_t kBytes = 777'777;  // a size class nothing else uses
  const Block first = alloc.allocate(kBytes);
  const MemoryStats s0 = alloc.stats();
  alloc.free(first);
  const MemoryStats s1 = alloc.stats();
  EXPECT_EQ(s1.bytes_in_use, s0.bytes_in_use - static_cast<int64_t>(first.size));
  EXPECT_EQ(s1.bytes_cached, s0.bytes_cached + static_cast<int64_t>(first.size));

  const Block second = alloc.allocate(kBytes - 10);  // same size class
  const MemoryStats s2 = alloc.stats();
  EXPECT_EQ(second.ptr, first.ptr);
  EXPECT_EQ(second.size, first.size);
  EXPECT_EQ(s2.num_allocs, s1.num_allocs + 1);
  EXPECT_EQ(s2.num_pool_hits, s1.num_pool_hits + 1);
  EXPECT_EQ(s2.bytes_cached, s1.bytes_cached - static_cast<int64_t>(first.size));
  EXPECT_EQ(s2.bytes_in_use, s0.bytes_in_use);

  // A different size class is not served from that block.
  const Block other = alloc.allocate(kBytes * 3);
  const MemoryStats s3 = alloc.stats();
  EXPECT_NE(other.ptr, first.ptr);
  EXPECT_EQ(s3.num_allocs, s2.num_allocs + 1);
  alloc.free(other);
  alloc.free(second);
}

TEST(Allocator, InUseAndPeakCounters) {
  Allocator& alloc = allocator_for(cpu(0));
  alloc.reset_peak();
  const MemoryStats base = alloc.stats();
  EXPECT_EQ(base.peak_bytes_in_use, base.bytes_in_use);

  const Block a = alloc.allocate(300'000);
  const Block b = alloc.allocate(500'000);
  const MemoryStats after_two = alloc.stats();
  const auto both = static_cast<int64_t>(a.size + b.size);
  EXPECT_EQ(after_two.bytes_in_use, base.bytes_in_use + both);
  EXPECT_EQ(after_two.peak_bytes_in_use, base.bytes_in_use + both);
  EXPECT_EQ(after_two.num_allocs, base.num_allocs + 2);

  alloc.free(a);
  const MemoryStats after_free = alloc.stats();
  EXPECT_EQ(after_free.bytes_in_use, base.bytes_in_use + static_cast<int64_t>(b.size));
  EXPECT_EQ(after_free.peak_bytes_in_use, base.bytes_in_use + both);  // the high-water mark stays

  alloc.reset_peak();
  EXPECT_EQ(alloc.stats().peak_bytes_in_use, after_free.bytes_in_use);
  alloc.free(b);
  EXPECT_EQ(alloc.stats().bytes_in_use, base.bytes_in_use);
  EXPECT_EQ(alloc.stats().peak_bytes_in_use, after_free.bytes_in_use);
  EXPECT_EQ(memory_stats(cpu(0)).bytes_in_use, alloc.stats().bytes_in_use);
}

TEST(Allocator, ReleaseCachedEmptiesThePool) {
  Allocator& alloc = allocator_for(cpu(0));
  constexpr size_t kBytes = 123'457;
  alloc.free(alloc.allocate(kBytes));
  EXPECT_GT(alloc.stats().bytes_cached, 0);
  alloc.release_cached();
  const MemoryStats s0 = alloc.stats();
  EXPECT_EQ(s0.bytes_cached, 0);
  const Block b = alloc.allocate(kBytes);  // must come from the system, not the pool
  const MemoryStats s1 = alloc.stats();
  EXPECT_EQ(s1.num_pool_hits, s0.num_pool_hits);
  EXPECT_EQ(s1.num_allocs, s0.num_allocs + 1);
  EXPECT_EQ(s1.bytes_in_use, s0.bytes_in_use + static_cast<int64_t>(b.size));
  alloc.free(b);
}

TEST(Allocator, LiveBlocksNeverAlias) {
  Allocator& alloc = allocator_for(cpu(0));
  std::vector<Block> blocks;
  std::set<void*> ptrs;
  for (int i = 0; i < 64; ++i) {
    blocks.push_back(alloc.allocate(static_cast<size_t>(1000 + 37 * (i % 5))));
    EXPECT_TRUE(ptrs.insert(blocks.back().ptr).second) << i;
  }
  for (const Block& b : blocks) alloc.free(b);
  // Freed blocks come back (each once) when the same sizes are asked for again.
  const MemoryStats before = alloc.stats();
  std::set<void*> again;
  std::vector<Block> reused;
  for (int i = 0; i < 64; ++i) {
    reused.push_back(alloc.allocate(static_cast<size_t>(1000 + 37 * (i % 5))));
    EXPECT_TRUE(again.insert(reused.back().ptr).second) << i;
  }
  EXPECT_EQ(alloc.stats().num_pool_hits, before.num_pool_hits + 64);
  for (const Block& b : reused) alloc.free(b);
}

TEST(Allocator, FreeingANullBlockIsANoOp) {
  Allocator& alloc = allocator_for(cpu(0));
  const MemoryStats before = alloc.stats();
  alloc.free(Block{});
  const MemoryStats after = alloc.stats();
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
  EXPECT_EQ(after.bytes_cached, before.bytes_cached);
}

TEST(Allocator, EachDeviceHasItsOwnAllocator) {
  const int saved = num_cpu_devices();
  set_num_cpu_devices(2);
  Allocator* a0 = &allocator_for(cpu(0));
  Allocator* a1 = &allocator_for(cpu(1));
  EXPECT_NE(a0, a1);
  EXPECT_EQ(a0, &allocator_for(cpu(0)));
  const MemoryStats before0 = a0->stats();
  const Block b = a1->allocate(4242);
  EXPECT_EQ(a0->stats().bytes_in_use, before0.bytes_in_use);
  a1->free(b);
  set_num_cpu_devices(saved);
}

TEST(Allocator, UnknownDevicesAreRejected) {
  try {
    allocator_for(cpu(kMaxDevicesPerType));
    ADD_FAILURE() << "allocator_for accepted a cpu id past the last one";
  } catch (const DeviceError& e) {
    EXPECT_THAT(
        e.what(),
        HasSubstr("allocator: no allocator for device cpu(64), expected cpu(0) to cpu(63)"));
  }
  try {
    allocator_for(gpu(0));
    ADD_FAILURE() << "allocator_for accepted gpu(0)";
  } catch (const DeviceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("allocator: no allocator for device gpu(0)"));
  }
}

}  // namespace
}  // namespace janus

// Recycler: storage released on one thread is reused by another, a thread's own list goes back
// to the shared stack when the thread exits, and storage passed between threads under load
// keeps its contents (run under ASan and TSan too).
#include "recycler.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace janus {
namespace {

// Each test uses its own type, and so its own pool.
template <int kTag>
struct Item {
  JANUS_RECYCLED(Item)
  int64_t payload[6] = {};
};

TEST(Recycler, StorageReleasedOnAnotherThreadIsReused) {
  using T = Item<0>;
  T* first = new T();
  std::thread([first] { delete first; }).join();
  T* again = new T();
  EXPECT_EQ(again, first);
  delete again;
}

TEST(Recycler, AThreadsOwnListGoesBackWhenTheThreadExits) {
  using T = Item<1>;
  void* a = nullptr;
  void* b = nullptr;
  std::thread([&] {
    T* x = new T();
    T* y = new T();
    a = x;
    b = y;
    delete x;
    delete y;
    delete new T();  // takes both into this thread's list, uses one, releases it again
  }).join();
  // One of them is on the shared stack, the other was in the exited thread's list.
  T* p = new T();
  T* q = new T();
  EXPECT_EQ((std::set<void*>{p, q}), (std::set<void*>{a, b}));
  delete p;
  delete q;
}

TEST(Recycler, StoragePassedBetweenThreadsKeepsItsContents) {
  using T = Item<2>;
  constexpr int kItems = 20000;
  std::mutex mu;
  std::vector<T*> handed;
  int64_t bad = 0;
  std::thread consumer([&] {
    int seen = 0;
    while (seen < kItems) {
      std::vector<T*> batch;
      {
        std::lock_guard lock(mu);
        batch.swap(handed);
      }
      for (T* t : batch) {
        for (int64_t v : t->payload) bad += v != t->payload[0];
        delete t;
      }
      seen += static_cast<int>(batch.size());
      if (batch.empty()) std::this_thread::yield();
    }
  });
  for (int i = 0; i < kItems; ++i) {
    T* t = new T();
    for (int64_t& v : t->payload) v = i;
    std::lock_guard lock(mu);
    handed.push_back(t);
  }
  consumer.join();
  EXPECT_EQ(bad, 0);
}

// allocate_shared over RecyclingAllocator: the control block and the object come from the
// pool, so that one made here and released on another thread is made again in the same place,
// and the object is destroyed when the last owner goes.
TEST(Recycler, AllocateSharedReusesAnotherThreadsRelease) {
  struct Payload {
    explicit Payload(int* destroyed) : destroyed(destroyed) {}
    ~Payload() { ++*destroyed; }
    int* destroyed;
    int64_t values[4] = {1, 2, 3, 4};
  };
  int destroyed = 0;
  auto first = std::allocate_shared<Payload>(RecyclingAllocator<Payload>{}, &destroyed);
  const Payload* address = first.get();
  std::thread([p = std::move(first)]() mutable { p.reset(); }).join();
  EXPECT_EQ(destroyed, 1);
  auto again = std::allocate_shared<Payload>(RecyclingAllocator<Payload>{}, &destroyed);
  EXPECT_EQ(again.get(), address);
  EXPECT_EQ(again->values[3], 4);
  std::weak_ptr<Payload> weak = again;
  again.reset();
  EXPECT_EQ(destroyed, 2);
  EXPECT_TRUE(weak.expired());
}

// A 56-byte object still gets a line of its own, aligned to it: the prefetch of a free entry
// (allocate) must never take a line that a live object shares.
TEST(Recycler, EveryObjectHasCacheLinesOfItsOwn) {
  struct Small {
    JANUS_RECYCLED(Small)
    int64_t payload[7] = {};
  };
  std::vector<Small*> objects;
  std::set<uintptr_t> lines;
  for (int i = 0; i < 100; ++i) objects.push_back(new Small());
  for (Small* o : objects) {
    const auto at = reinterpret_cast<uintptr_t>(o);
    EXPECT_EQ(at % kCacheLine, 0u);
    for (uintptr_t line = at / kCacheLine; line <= (at + sizeof(Small) - 1) / kCacheLine; ++line) {
      EXPECT_TRUE(lines.insert(line).second) << "two objects share line " << line;
    }
  }
  for (Small* o : objects) delete o;
}

}  // namespace
}  // namespace janus

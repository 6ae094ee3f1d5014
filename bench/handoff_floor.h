// The cheapest asynchronous dispatch of one operation: the floor of tiny_op and engine_push.
// The calling thread constructs the operation (a closure of at most 64 bytes) in the next slot
// of a single-producer, single-consumer ring; one consumer thread, spinning, runs and destroys
// it there. No allocation, no dependency tracking, no error handling, no sleeping: whatever an
// engine does per operation, it pays at least this hand-off to another core, so a framework
// that beats it means the floor is wrong.
//
// line_handoff_ns measures what one such hand-off costs at the least: one cache line written by
// one core and then read by the other. On a virtual machine it depends on where the host runs
// the two virtual CPUs (sharing a last-level cache or not) and can change between runs and
// within one; the benchmarks report it beside their timings, so that a slow run can be told
// from a slow engine.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <thread>
#include <type_traits>
#include <vector>

namespace bench {

class HandoffRing {
 public:
  explicit HandoffRing(size_t capacity = size_t{1} << 14) : slots_(capacity) {
    consumer_ = std::thread([this] { consume(); });
  }
  ~HandoffRing() {
    drain();
    stop_.store(true, std::memory_order_release);
    consumer_.join();
  }
  HandoffRing(const HandoffRing&) = delete;
  HandoffRing& operator=(const HandoffRing&) = delete;

  /// Hands `f` (callable with no arguments) to the consumer; spins while the ring is full.
  template <typename F>
  void push(F f) {
    static_assert(sizeof(F) <= kClosureBytes && alignof(F) <= alignof(std::max_align_t),
                  "HandoffRing: the closure does not fit a slot");
    const size_t tail = tail_.load(std::memory_order_relaxed);
    while (tail - head_.load(std::memory_order_acquire) >= slots_.size()) pause();
    Slot& slot = slots_[tail % slots_.size()];
    ::new (static_cast<void*>(slot.closure)) F(std::move(f));
    slot.run = [](void* p) {
      F* fn = std::launder(static_cast<F*>(p));
      (*fn)();
      fn->~F();
    };
    tail_.store(tail + 1, std::memory_order_release);
  }

  /// Returns when the consumer has run everything pushed so far.
  void drain() const {
    const size_t tail = tail_.load(std::memory_order_relaxed);
    while (head_.load(std::memory_order_acquire) != tail) pause();
  }

 private:
  static constexpr size_t kClosureBytes = 64;
  struct Slot {
    alignas(std::max_align_t) unsigned char closure[kClosureBytes];
    void (*run)(void*) = nullptr;  // runs the closure, then destroys it
  };

  static void pause() {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
  }

  void consume() {
    size_t head = 0;
    for (;;) {
      if (head == tail_.load(std::memory_order_acquire)) {
        if (stop_.load(std::memory_order_acquire)) return;
        pause();
        continue;
      }
      Slot& slot = slots_[head % slots_.size()];
      slot.run(slot.closure);
      head_.store(++head, std::memory_order_release);
    }
  }

  std::vector<Slot> slots_;
  alignas(64) std::atomic<size_t> head_{0};  // next slot the consumer runs
  alignas(64) std::atomic<size_t> tail_{0};  // next slot the producer fills
  std::atomic<bool> stop_{false};
  std::thread consumer_;
};

/// Nanoseconds for one cache line to go from this thread's core to another thread's: half the
/// round trip of a counter that the two threads increment in turn, best of up to `rounds` rounds
/// of 1000 round trips (the best round is one that no interruption touched), for about 0.3 s at
/// most: on a busy machine the two threads seldom run at once, and then the figure is large
/// (the machine, not the hand-off), or infinite when no round ended in time. Like the ring, it
/// needs the two threads on two cores.
inline double line_handoff_ns(int rounds = 100) {
  constexpr int64_t kTrips = 1000;
  constexpr auto kBudget = std::chrono::milliseconds(300);
  struct alignas(64) Line {
    std::atomic<int64_t> value{0};
  };
  Line line;
  std::atomic<bool> stop{false};
  // The other thread answers each odd value with the next even one.
  std::thread echo([&] {
    int64_t expect = 1;
    while (!stop.load(std::memory_order_relaxed)) {
      if (line.value.load(std::memory_order_acquire) != expect) continue;
      line.value.store(expect + 1, std::memory_order_release);
      expect += 2;
    }
  });
  const auto begin = std::chrono::steady_clock::now();
  double best = std::numeric_limits<double>::infinity();  // when no round ends in time
  int64_t v = 0;
  for (int r = 0; r < rounds; ++r) {
    const auto start = std::chrono::steady_clock::now();
    bool late = false;  // a round still running well past the budget is dropped
    for (int64_t i = 0; i < kTrips && !late; ++i, v += 2) {
      line.value.store(v + 1, std::memory_order_release);
      while (line.value.load(std::memory_order_acquire) != v + 2) {
      }
      late = i % 128 == 127 && std::chrono::steady_clock::now() - begin > 2 * kBudget;
    }
    if (late) break;
    const auto end = std::chrono::steady_clock::now();
    const std::chrono::duration<double, std::nano> took = end - start;
    best = std::min(best, took.count() / (2.0 * kTrips));
    if (end - begin > kBudget) break;
  }
  stop.store(true, std::memory_order_relaxed);
  echo.join();
  return best;
}

}  // namespace bench

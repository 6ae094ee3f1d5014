// Recycler: storage for objects that one thread allocates and another frees. Private to
// src/core and src/engine.
//
// The engine's bookkeeping crosses threads: an operation, its var's queue entries and its vars
// are made by the pushing thread and released by a worker; so are an operator's outputs (their
// NDArray object and storage), whose last owner is often the kernel's captures on the worker.
// glibc's per-thread caches miss on both sides of such traffic (the freeing thread's cache
// fills, the allocating thread's runs dry), so nearly every allocation and every free takes an
// arena lock and touches the other core's cache lines. A class routes its operator new and
// delete here instead (or allocate_shared takes a RecyclingAllocator):
//
//   - release puts the storage on the calling thread's own list while that holds fewer than
//     kKeep entries, and otherwise on the thread's spill chain, which goes to one shared
//     lock-free stack (a compare-and-swap) once it holds kKeep entries;
//   - allocate pops from the calling thread's own list, and when that is empty takes its spill
//     chain, or else the whole shared stack at once (one exchange), falling back to ::operator
//     new when all are empty; it prefetches the next entry of the list for writing, so that
//     the lines of storage that another thread freed move before the caller writes them.
//
// So a thread that frees what another allocates (a worker, the engine's operations) touches
// the shared stack once per kKeep releases and the allocating thread once per kKeep
// allocations, instead of both once per object: on a 2-core machine each touch of that line
// by the other thread's core is a cache-line hand-off on the push path.
//
// Neither step reads a link that another thread may change (a release only writes the link of
// storage it owns; only a whole-stack take removes entries), so there is no ABA hazard. Storage
// is kept for reuse and never returned to the system: a pool is as large as the most objects
// of its class that were alive at once. A thread's own list goes back to the shared stack when
// the thread exits.
//
// Under AddressSanitizer the storage in a pool is poisoned (all but its link), so that a use
// after release is still reported.
#pragma once

#include <atomic>
#include <cstddef>
#include <new>

#include "janus/base/prefetch.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

namespace janus {

template <typename T>
class Recycler {
 public:
  static void* allocate() {
    Local& local = local_list;
    if (local.head == nullptr) refill(local);
    Node* n = local.head;
    if (n == nullptr) return ::operator new (kSize, std::align_val_t{kCacheLine});
    local.head = n->next;
    if (local.count > 0) --local.count;
    // The next allocation's storage, often last written by another thread: its lines move
    // now, while the caller fills this one (prefetch.h).
    if (local.head != nullptr) prefetch_for_write(local.head, kSize);
    unpoison(n);
    return n;
  }

  static void release(void* p) {
    if (p == nullptr) return;
    auto* n = static_cast<Node*>(p);
    poison(n);
    Local& local = local_list;
    if (local.exited) {
      push_chain(n, n);
      return;
    }
    register_exit(local);
    if (local.count < kKeep) {
      n->next = local.head;
      local.head = n;
      ++local.count;
      return;
    }
    n->next = local.spill;
    if (local.spill == nullptr) local.spill_tail = n;
    local.spill = n;
    if (++local.spill_count < kKeep) return;
    push_chain(local.spill, local.spill_tail);
    local.spill = local.spill_tail = nullptr;
    local.spill_count = 0;
  }

 private:
  struct Node {
    Node* next;
  };
  // Whole cache lines, aligned to them: an object shares no line with another, so that the
  // prefetch of a free entry (allocate) never takes a line that a live neighbour's thread is
  // using, and two objects that different threads use never share a line.
  static constexpr size_t kSize =
      ((sizeof(T) < sizeof(Node) ? sizeof(Node) : sizeof(T)) + kCacheLine - 1) / kCacheLine *
      kCacheLine;
  // Small, so that the objects in circulation between two threads (up to about 2 kKeep of
  // each class) stay within a core's caches.
  static constexpr int kKeep = 16;

  // The calling thread's list (of which `count`, at most kKeep, are the thread's own releases)
  // and spill chain. Trivially destructible, so that an access is one TLS lookup (no guard);
  // ExitHandler gives both back when the thread exits, after which the thread allocates with
  // ::operator new and releases to the shared stack (`exited`), so that nothing is kept where
  // no one will look.
  struct Local {
    Node* head;
    Node* spill;
    Node* spill_tail;
    int count;
    int spill_count;
    bool registered;
    bool exited;
  };
  static inline thread_local Local local_list{nullptr, nullptr, nullptr, 0, 0, false, false};

  struct ExitHandler {
    ~ExitHandler() {
      Local& local = local_list;
      local.exited = true;
      if (local.spill != nullptr) push_chain(local.spill, local.spill_tail);
      local.spill = local.spill_tail = nullptr;
      local.spill_count = 0;
      if (local.head == nullptr) return;
      Node* tail = local.head;
      while (tail->next != nullptr) tail = tail->next;
      push_chain(local.head, tail);
      local.head = nullptr;
      local.count = 0;
    }
  };

  static void register_exit(Local& local) {
    if (local.registered) return;
    thread_local ExitHandler handler;  // constructed on first use: registers its destructor
    (void)handler;
    local.registered = true;
  }

  // Called with the thread's list empty: takes the spill chain, or else the shared stack (whose
  // entries are not counted: the thread keeps up to kKeep of its own releases beside them).
  static void refill(Local& local) {
    if (local.exited) return;
    register_exit(local);
    local.count = local.spill_count;
    if (local.spill != nullptr) {
      local.head = local.spill;
      local.spill = local.spill_tail = nullptr;
      local.spill_count = 0;
      return;
    }
    local.head = shared().exchange(nullptr, std::memory_order_acquire);
  }

  static std::atomic<Node*>& shared() {
    static std::atomic<Node*> stack{nullptr};  // trivially destructible: usable at exit
    return stack;
  }

  // Pushes the chain first..last (already linked) on the shared stack. release: the storage's
  // last writes happen before the thread that takes it reads it (the exchange's acquire).
  static void push_chain(Node* first, Node* last) {
    std::atomic<Node*>& stack = shared();
    Node* head = stack.load(std::memory_order_relaxed);
    do {
      last->next = head;
    } while (!stack.compare_exchange_weak(head, first, std::memory_order_release,
                                          std::memory_order_relaxed));
  }

  static void poison([[maybe_unused]] Node* n) {
#if defined(__SANITIZE_ADDRESS__)
    ASAN_POISON_MEMORY_REGION(reinterpret_cast<char*>(n) + sizeof(Node), kSize - sizeof(Node));
#endif
  }
  static void unpoison([[maybe_unused]] Node* n) {
#if defined(__SANITIZE_ADDRESS__)
    ASAN_UNPOISON_MEMORY_REGION(n, kSize);
#endif
  }
};

/// An allocator over Recycler<T> for std::allocate_shared, whose control block and object then
/// come from the pool of that block's type: single objects only (arrays go to ::operator new).
template <typename T>
struct RecyclingAllocator {
  using value_type = T;
  RecyclingAllocator() = default;
  template <typename U>
  RecyclingAllocator(const RecyclingAllocator<U>&) {}  // NOLINT: rebinding is implicit
  T* allocate(std::size_t n) {
    static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "over-aligned for the pool");
    if (n != 1) return static_cast<T*>(::operator new(n * sizeof(T)));
    return static_cast<T*>(Recycler<T>::allocate());
  }
  void deallocate(T* p, std::size_t n) {
    if (n != 1) {
      ::operator delete(p);
      return;
    }
    Recycler<T>::release(p);
  }
  template <typename U>
  bool operator==(const RecyclingAllocator<U>&) const {
    return true;
  }
};

/// Declares a class's operator new and delete to use Recycler<Class>.
#define JANUS_RECYCLED(Class)                                                    \
  static void* operator new(std::size_t) { return Recycler<Class>::allocate(); } \
  static void operator delete(void* p) { Recycler<Class>::release(p); }

}  // namespace janus

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
//   - release pushes the storage on one shared lock-free stack (a compare-and-swap);
//   - allocate pops from the calling thread's own list, and when that is empty takes the whole
//     shared stack at once (one exchange), falling back to ::operator new when both are empty.
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
    if (n == nullptr) return ::operator new(kSize);
    local.head = n->next;
    unpoison(n);
    return n;
  }

  static void release(void* p) {
    if (p == nullptr) return;
    auto* n = static_cast<Node*>(p);
    poison(n);
    push_chain(n, n);
  }

 private:
  struct Node {
    Node* next;
  };
  static constexpr size_t kSize = sizeof(T) < sizeof(Node) ? sizeof(Node) : sizeof(T);

  // The calling thread's list. Trivially destructible, so that an access is one TLS lookup
  // (no guard); ExitHandler gives the list back when the thread exits, after which the thread
  // allocates with ::operator new (`exited`), so that nothing is kept where no one will look.
  struct Local {
    Node* head;
    bool registered;
    bool exited;
  };
  static inline thread_local Local local_list{nullptr, false, false};

  struct ExitHandler {
    ~ExitHandler() {
      Local& local = local_list;
      local.exited = true;
      if (local.head == nullptr) return;
      Node* tail = local.head;
      while (tail->next != nullptr) tail = tail->next;
      push_chain(local.head, tail);
      local.head = nullptr;
    }
  };

  static void refill(Local& local) {
    if (local.exited) return;
    if (!local.registered) {
      thread_local ExitHandler handler;  // constructed on first use: registers its destructor
      (void)handler;
      local.registered = true;
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

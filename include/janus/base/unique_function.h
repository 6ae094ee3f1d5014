// UniqueFunction: a move-only std::function with room for a large capture inline, so that
// pushing an operation does not allocate for its kernel. Layer: base.
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace janus {

template <typename Signature, size_t kInline = 120>
class UniqueFunction;

/// Holds any callable with signature R(Args...). Callables up to kInline bytes (and no stricter
/// alignment than max_align_t) live inside the object; larger ones on the heap.
template <typename R, typename... Args, size_t kInline>
class UniqueFunction<R(Args...), kInline> {
 public:
  UniqueFunction() = default;
  UniqueFunction(std::nullptr_t) {}  // NOLINT(google-explicit-constructor)

  template <typename F,
            typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, UniqueFunction> &&
                                        std::is_invocable_r_v<R, F&, Args...>>>
  UniqueFunction(F&& f) {  // NOLINT(google-explicit-constructor): as std::function
    using T = std::decay_t<F>;
    if constexpr (sizeof(T) <= kInline && alignof(T) <= alignof(std::max_align_t) &&
                  std::is_nothrow_move_constructible_v<T>) {
      ::new (static_cast<void*>(storage_)) T(std::forward<F>(f));
      ops_ = &kInlineOps<T>;
    } else {
      *reinterpret_cast<T**>(storage_) = new T(std::forward<F>(f));
      ops_ = &kHeapOps<T>;
    }
  }

  UniqueFunction(UniqueFunction&& other) noexcept { move_from(other); }
  UniqueFunction& operator=(UniqueFunction&& other) noexcept {
    if (this != &other) {
      reset();
      move_from(other);
    }
    return *this;
  }
  UniqueFunction& operator=(std::nullptr_t) {
    reset();
    return *this;
  }
  UniqueFunction(const UniqueFunction&) = delete;
  UniqueFunction& operator=(const UniqueFunction&) = delete;
  ~UniqueFunction() { reset(); }

  explicit operator bool() const { return ops_ != nullptr; }

  R operator()(Args... args) { return ops_->call(storage_, std::forward<Args>(args)...); }

 private:
  struct Ops {
    R (*call)(void*, Args&&...);
    void (*move)(void* dst, void* src);  // move-constructs dst from src, destroys src
    void (*destroy)(void*);
  };

  template <typename T>
  static constexpr Ops kInlineOps = {
      [](void* s, Args&&... a) -> R { return (*static_cast<T*>(s))(std::forward<Args>(a)...); },
      [](void* d, void* s) {
        ::new (d) T(std::move(*static_cast<T*>(s)));
        static_cast<T*>(s)->~T();
      },
      [](void* s) { static_cast<T*>(s)->~T(); }};

  template <typename T>
  static constexpr Ops kHeapOps = {
      [](void* s, Args&&... a) -> R { return (**static_cast<T**>(s))(std::forward<Args>(a)...); },
      [](void* d, void* s) { *static_cast<T**>(d) = *static_cast<T**>(s); },
      [](void* s) { delete *static_cast<T**>(s); }};

  void move_from(UniqueFunction& other) noexcept {
    if (other.ops_ == nullptr) return;
    other.ops_->move(storage_, other.storage_);
    ops_ = other.ops_;
    other.ops_ = nullptr;
  }

  void reset() {
    if (ops_ == nullptr) return;
    ops_->destroy(storage_);
    ops_ = nullptr;
  }

  alignas(std::max_align_t) unsigned char storage_[kInline];
  const Ops* ops_ = nullptr;
};

}  // namespace janus

// NDArray: a handle to a typed, shaped, contiguous view of device storage. Layer: core.
//
// The array data itself is written asynchronously by the engine; this header only describes
// it. Allocation (janus::empty) and the blocking accessors (wait_to_read, item, to_vector,
// operator<<) live in the engine layer, janus/engine/array.h.
#pragma once

#include <cstddef>
#include <memory>

#include "janus/core/allocator.h"
#include "janus/core/device.h"
#include "janus/core/dtype.h"
#include "janus/core/shape.h"

namespace janus {

class Var;            // the dependency handle, defined by the engine layer
struct AutogradMeta;  // what autograd knows of an array, defined by the autograd layer

/// One allocation of device memory and the dependency var that orders every access to it.
/// Created by the engine layer, whose shared_ptr deleter schedules the release after the last
/// pending use of the var.
struct Storage {
  Block block;
  Device device;
  Var* var = nullptr;
};

/// A reference-counted handle: copies share the same array (as torch::Tensor and
/// mxnet::NDArray do). Views made by `reshape` and `slice` share storage, and so the same
/// dependency var, with the array they come from. Arrays are always row-major and contiguous.
/// A default-constructed NDArray is undefined (`defined()` is false).
class NDArray {
 public:
  NDArray() = default;
  NDArray(std::shared_ptr<Storage> storage, Shape shape, DType dtype, size_t offset_bytes = 0);

  bool defined() const { return impl_ != nullptr; }
  /// True for a symbolic placeholder made while a graph is traced: shape, dtype and device
  /// only, no memory and no dependency var (janus::placeholder).
  bool is_placeholder() const { return impl_->storage->var == nullptr; }
  const Shape& shape() const { return impl_->shape; }
  int ndim() const { return impl_->shape.ndim(); }
  int64_t size() const { return impl_->shape.numel(); }
  size_t nbytes() const { return static_cast<size_t>(size()) * dtype_size(dtype()); }
  DType dtype() const { return impl_->dtype; }
  Device device() const { return impl_->storage->device; }
  size_t offset_bytes() const { return impl_->offset; }
  const std::shared_ptr<Storage>& storage() const { return impl_->storage; }
  Var* var() const { return impl_->storage->var; }

  /// Address of the first element. Not synchronized: only kernels (run by the engine once
  /// their dependencies are met) and code that has waited may touch the memory.
  void* raw_data() const { return static_cast<char*>(impl_->storage->block.ptr) + impl_->offset; }
  template <typename T>
  T* data() const {
    return static_cast<T*>(raw_data());
  }

  /// A view with another shape and the same elements; one extent may be -1. Throws ShapeError
  /// when the element counts differ.
  NDArray reshape(const Shape& shape) const;
  /// The view of rows [begin, end) along the first axis. Throws IndexError when the range is
  /// outside [0, shape[0]] or the array is a scalar.
  NDArray slice(int64_t begin, int64_t end) const;
  /// Row `index` along the first axis, with that axis removed (a view). Negative indices count
  /// from the end.
  NDArray at(int64_t index) const;

  /// True when both handles refer to the same array object (not merely the same storage).
  bool is_same(const NDArray& other) const { return impl_ == other.impl_; }

  /// A new array object over the same data with no autograd history (what autograd::detach
  /// returns, and what recorded operations keep of their inputs and outputs).
  NDArray detach() const { return NDArray(storage(), shape(), dtype(), offset_bytes()); }

  /// Autograd's record of this array (null when it has none). Owned by the array object, shared
  /// by its copies, not by its views or detached handles.
  const std::shared_ptr<AutogradMeta>& autograd_meta() const { return impl_->autograd; }
  void set_autograd_meta(std::shared_ptr<AutogradMeta> meta) const {
    impl_->autograd = std::move(meta);
  }

 private:
  struct Impl {
    std::shared_ptr<Storage> storage;
    Shape shape;
    DType dtype;
    size_t offset;
    std::shared_ptr<AutogradMeta> autograd;
  };
  std::shared_ptr<Impl> impl_;
};

}  // namespace janus

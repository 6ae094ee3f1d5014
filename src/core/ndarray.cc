// NDArray views: reshape and first-axis slicing share storage with their source.
#include "janus/core/ndarray.h"

#include "janus/base/error.h"

#include "recycler.h"

namespace janus {

NDArray::NDArray(std::shared_ptr<Storage> storage, Shape shape, DType dtype, size_t offset_bytes)
    : impl_(std::allocate_shared<Impl>(
          // Pooled: an operator's outputs are made here and released by the engine's worker.
          RecyclingAllocator<Impl>{},
          Impl{std::move(storage), std::move(shape), dtype, offset_bytes, nullptr})) {}

NDArray NDArray::reshape(const Shape& shape) const {
  JANUS_CHECK(defined(), ValueError, "reshape: the array is undefined");
  return NDArray(storage(), resolve_reshape(this->shape(), shape), dtype(), offset_bytes());
}

NDArray NDArray::slice(int64_t begin, int64_t end) const {
  JANUS_CHECK(defined(), ValueError, "slice: the array is undefined");
  JANUS_CHECK(ndim() >= 1, IndexError, "slice: cannot slice a scalar (shape [])");
  const int64_t rows = shape()[0];
  JANUS_CHECK(
      0 <= begin && begin <= end && end <= rows, IndexError,
      "slice: range [{}, {}) is outside axis 0 of shape {}, expected 0 <= begin <= end <= {}",
      begin, end, shape(), rows);
  Shape out = shape();
  out[0] = end - begin;
  const size_t row_bytes =
      static_cast<size_t>(shape().numel() / std::max<int64_t>(rows, 1)) * dtype_size(dtype());
  return NDArray(storage(), std::move(out), dtype(), offset_bytes() + begin * row_bytes);
}

NDArray NDArray::at(int64_t index) const {
  JANUS_CHECK(defined(), ValueError, "at: the array is undefined");
  JANUS_CHECK(ndim() >= 1, IndexError, "at: cannot index a scalar (shape [])");
  const int64_t rows = shape()[0];
  const int64_t i = index < 0 ? index + rows : index;
  JANUS_CHECK(0 <= i && i < rows, IndexError,
              "at: index {} is out of range for axis 0 of shape {}, expected in [{}, {})", index,
              shape(), -rows, rows);
  std::vector<int64_t> dims(shape().begin() + 1, shape().end());
  NDArray row = slice(i, i + 1);
  return NDArray(storage(), Shape(std::move(dims)), dtype(), row.offset_bytes());
}

}  // namespace janus

// The engine-backed half of NDArray: allocation whose release waits for the last pending use,
// host data in and out, and the blocking accessors. Layer: engine.
#pragma once

#include <ostream>
#include <span>
#include <vector>

#include "janus/base/error.h"
#include "janus/core/ndarray.h"
#include "janus/engine/engine.h"

namespace janus {

/// An uninitialized array. Its storage comes from the device's pool and owns a new var; when
/// the last handle goes, the storage is released after every operation pushed on it.
NDArray empty(const Shape& shape, DType dtype = DType::kFloat32, Device device = cpu());
/// A symbolic placeholder: shape, dtype and device, no memory and no var. Operators called on
/// placeholders while a graph is traced record nodes; blockers on one raise TraceError.
NDArray placeholder(const Shape& shape, DType dtype = DType::kFloat32, Device device = cpu());

/// An array holding a copy of `values` (converted to `dtype`), e.g.
/// `from_vector<float>({1, 2, 3, 4}, {2, 2})`. Throws ShapeError when the counts differ.
NDArray from_host(const void* values, DType values_dtype, int64_t count, const Shape& shape,
                  DType dtype, Device device);
template <typename T>
NDArray from_vector(const std::vector<T>& values, const Shape& shape, DType dtype = dtype_of<T>,
                    Device device = cpu()) {
  return from_host(values.data(), dtype_of<T>, static_cast<int64_t>(values.size()), shape, dtype,
                   device);
}

/// Blocks until every write pushed on `a` so far has finished; rethrows its error (the failing
/// operator is named in the message).
void wait_to_read(const NDArray& a);
/// Blocks until every operation pushed so far has finished; rethrows the first unreported error.
void wait_all();

/// wait_to_read and wait_all that run `poll` every `slice` while they block (Engine's sliced
/// waits: an exception from `poll` ends the wait, the work keeps running). `caller` names the
/// public call in errors (waiting on a placeholder while tracing).
void wait_to_read(const NDArray& a, std::chrono::milliseconds slice, const WaitPoll& poll,
                  const char* caller = "wait_to_read");
void wait_all(std::chrono::milliseconds slice, const WaitPoll& poll);

/// Copies the elements out, converted to `dtype`, after waiting (a blocker). `caller` names
/// the public call in errors (reading a placeholder while tracing).
void copy_to_host(const NDArray& a, void* out, DType dtype, const char* caller = "copy_to_host");

/// The elements as a vector of T, after waiting (a blocker).
template <typename T>
std::vector<T> to_vector(const NDArray& a) {
  std::vector<T> out(static_cast<size_t>(a.size()));
  copy_to_host(a, out.data(), dtype_of<T>, "to_vector");
  return out;
}

/// The single element of a one-element array as T, after waiting (a blocker). Throws
/// ValueError when the array has more than one element.
template <typename T>
T item(const NDArray& a) {
  JANUS_CHECK(a.defined() && a.size() == 1, ValueError,
              "item: expected an array with exactly one element, got shape {}",
              a.defined() ? a.shape().to_string() : "<undefined>");
  T out{};
  copy_to_host(a, &out, dtype_of<T>, "item");
  return out;
}

/// Prints the values NumPy-style, e.g. "array([[3., 3.]], dtype=float32)" (a blocker).
std::ostream& operator<<(std::ostream& os, const NDArray& a);

}  // namespace janus

// The operator API: functions that call registered operators. Each returns at once; the work
// runs on the engine. Layer: ops.
#pragma once

#include <cstdint>
#include <vector>

#include "janus/core/ndarray.h"

namespace janus {

// Creation.
NDArray zeros(const Shape& shape, DType dtype = DType::kFloat32, Device device = cpu());
NDArray ones(const Shape& shape, DType dtype = DType::kFloat32, Device device = cpu());
NDArray full(const Shape& shape, double value, DType dtype = DType::kFloat32,
             Device device = cpu());
/// Values start, start + step, ... up to but excluding stop (NumPy's arange).
NDArray arange(double start, double stop, double step = 1.0, DType dtype = DType::kFloat32,
               Device device = cpu());
/// num evenly spaced values from start to stop (NumPy's linspace): stop is the last value
/// unless endpoint is false; num = 0 gives an empty array, num = 1 gives [start]. Integer
/// dtypes take the floor of each value.
NDArray linspace(double start, double stop, int64_t num, bool endpoint = true,
                 DType dtype = DType::kFloat32, Device device = cpu());
/// An n x m array (m = -1: n x n) with ones on diagonal k (0: the main diagonal, k > 0 above
/// it, k < 0 below it) and zeros elsewhere (NumPy's eye).
NDArray eye(int64_t n, int64_t m = -1, int64_t k = 0, DType dtype = DType::kFloat32,
            Device device = cpu());

// Random: counter-based (Philox-4x32-10) streams keyed by the global seed and the position of
// the call in the program, so results never depend on which thread ran first.
void seed(uint64_t value);
NDArray random_uniform(double low, double high, const Shape& shape, DType dtype = DType::kFloat32,
                       Device device = cpu());
NDArray random_normal(double loc, double scale, const Shape& shape, DType dtype = DType::kFloat32,
                      Device device = cpu());
/// Integers uniform in [low, high), exactly (no modulo bias); dtype int32, int64 or uint8,
/// holding every value of the range.
NDArray randint(int64_t low, int64_t high, const Shape& shape, DType dtype = DType::kInt64,
                Device device = cpu());
/// A random ordering of 0, 1, ..., n - 1 (a Fisher-Yates shuffle); dtype int32, int64 or
/// uint8, holding n - 1.
NDArray permutation(int64_t n, DType dtype = DType::kInt64, Device device = cpu());

// Elementwise arithmetic, with NumPy broadcasting.
NDArray add(const NDArray& a, const NDArray& b);
NDArray add(const NDArray& a, double scalar);
NDArray mul(const NDArray& a, const NDArray& b);
NDArray mul(const NDArray& a, double scalar);

inline NDArray operator+(const NDArray& a, const NDArray& b) { return add(a, b); }
inline NDArray operator+(const NDArray& a, double s) { return add(a, s); }
inline NDArray operator+(double s, const NDArray& a) { return add(a, s); }
inline NDArray operator*(const NDArray& a, const NDArray& b) { return mul(a, b); }
inline NDArray operator*(const NDArray& a, double s) { return mul(a, s); }
inline NDArray operator*(double s, const NDArray& a) { return mul(a, s); }

// Reductions.
/// Sum over `axes` (every axis when empty); keepdims keeps reduced axes with extent 1.
NDArray sum(const NDArray& x, std::vector<int64_t> axes = {}, bool keepdims = false);
/// Sums the broadcast axes of `x` away so that the result has `shape` (the gradient of a
/// broadcast). Returns `x` itself when the shapes are equal.
NDArray sum_to(const NDArray& x, const Shape& shape);

// Shape.
/// The same elements in another shape; one extent may be -1. Recorded by autograd (unlike the
/// NDArray::reshape view).
NDArray reshape(const NDArray& x, const Shape& shape);

// Linear algebra.
/// Matrix product of 2-D arrays, op(a) · op(b) with op transposing when asked (oneDNN).
NDArray dot(const NDArray& a, const NDArray& b, bool transpose_a = false, bool transpose_b = false);

// Transfer.
/// A copy of `a` on `device`, made on the copy lane (so it overlaps compute).
NDArray copyto(const NDArray& a, Device device);

}  // namespace janus

// Operator families added one header each (each file declares its family's functions).
#include "janus/ops/elementwise.h"
#include "janus/ops/linalg.h"
#include "janus/ops/nn.h"
#include "janus/ops/optim.h"
#include "janus/ops/reduction.h"
#include "janus/ops/shape.h"
#include "janus/ops/unary.h"

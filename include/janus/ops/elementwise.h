// Operator API of the elementwise family (see ops.h for the conventions). Layer: ops.
#pragma once

#include <cstdint>
#include <vector>

#include "janus/core/ndarray.h"
#include "janus/ops/unary.h"

namespace janus {

// Binary arithmetic with NumPy broadcasting; both inputs must have one dtype (TypeError
// otherwise). A scalar is converted to the array's dtype first (2.9 -> 2 for int32).
NDArray subtract(const NDArray& a, const NDArray& b);
NDArray subtract(const NDArray& a, double scalar);
/// scalar - a.
NDArray subtract(double scalar, const NDArray& a);
/// Floating dtypes only (TypeError otherwise); IEEE results for x / 0.
NDArray divide(const NDArray& a, const NDArray& b);
NDArray divide(const NDArray& a, double scalar);
/// scalar / a.
NDArray divide(double scalar, const NDArray& a);
/// a ** b, floating dtypes only; a negative base with a non-integer exponent gives nan.
NDArray power(const NDArray& a, const NDArray& b);
NDArray power(const NDArray& a, double scalar);
/// scalar ** a.
NDArray power(double scalar, const NDArray& a);
/// The larger (smaller) element; nan in either input gives nan. The gradient goes to the
/// chosen input, to `a` on ties.
NDArray maximum(const NDArray& a, const NDArray& b);
NDArray maximum(const NDArray& a, double scalar);
inline NDArray maximum(double scalar, const NDArray& a) { return maximum(a, scalar); }
NDArray minimum(const NDArray& a, const NDArray& b);
NDArray minimum(const NDArray& a, double scalar);
inline NDArray minimum(double scalar, const NDArray& a) { return minimum(a, scalar); }
/// The remainder of a / b with the sign of b (Python's %, NumPy's mod): exact, from fmod;
/// x % 0 is nan for floats and 0 for integers. Gradient: dy to a, -dy * (a - y) / b to b.
NDArray mod(const NDArray& a, const NDArray& b);
/// The remainder of a / b with the sign of a (C's fmod); x fmod 0 as for mod.
NDArray fmod(const NDArray& a, const NDArray& b);
/// Floating dtypes only: atan2(a, b), the angle of the point (b, a) in [-pi, pi].
NDArray arctan2(const NDArray& a, const NDArray& b);
/// Floating dtypes only: sqrt(a^2 + b^2) without intermediate overflow.
NDArray hypot(const NDArray& a, const NDArray& b);
/// Floating dtypes only: |a| with the sign bit of b. The gradient to b is zero.
NDArray copysign(const NDArray& a, const NDArray& b);

// Comparisons with NumPy broadcasting: one dtype in, bool out, not differentiable.
NDArray equal(const NDArray& a, const NDArray& b);
NDArray not_equal(const NDArray& a, const NDArray& b);
NDArray less(const NDArray& a, const NDArray& b);
NDArray less_equal(const NDArray& a, const NDArray& b);
NDArray greater(const NDArray& a, const NDArray& b);
NDArray greater_equal(const NDArray& a, const NDArray& b);

/// cond ? a : b elementwise; cond of any dtype (nonzero is true), a and b of one dtype, all
/// three broadcast together. Gradients flow to a and b only.
NDArray where(const NDArray& cond, const NDArray& a, const NDArray& b);

inline NDArray operator-(const NDArray& a, const NDArray& b) { return subtract(a, b); }
inline NDArray operator-(const NDArray& a, double s) { return subtract(a, s); }
inline NDArray operator-(double s, const NDArray& a) { return subtract(s, a); }
inline NDArray operator-(const NDArray& a) { return negative(a); }
inline NDArray operator/(const NDArray& a, const NDArray& b) { return divide(a, b); }
inline NDArray operator/(const NDArray& a, double s) { return divide(a, s); }
inline NDArray operator/(double s, const NDArray& a) { return divide(s, a); }

}  // namespace janus

// Helpers shared by operator files: common shape rules and parallel elementwise loops.
// Private to src/ops.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "janus/base/error.h"
#include "janus/ops/registry.h"

namespace janus::ops {

/// Below this many elements a loop runs on one thread (thread start-up costs more).
inline constexpr int64_t kParallelGrain = 1 << 15;

/// A number converted to element type T (through float for the 16-bit float types).
/// Integer types truncate toward zero and saturate at their range (NaN gives 0), so that no
/// conversion is undefined behaviour.
template <typename T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return T(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<T>) {
    if (!(v == v)) return T(0);
    constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
    constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
    if (v <= lo) return std::numeric_limits<T>::min();
    if (v >= hi) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

/// x + y, x - y, x * y and -x in element type T. Signed integers wrap around modulo 2^bits, as
/// in NumPy (INT32_MAX + 1 gives INT32_MIN), instead of overflowing, which is undefined
/// behaviour in C++: they are computed in the unsigned type (at least unsigned int, so that no
/// promotion to int can overflow either) and converted back, which C++20 defines as modular.
/// Other types compute as `static_cast<T>(x op y)`.
namespace detail {
template <typename T>
inline constexpr bool kWrapsSigned = std::is_integral_v<T>&& std::is_signed_v<T>;
template <typename T>
using wrap_unsigned_t =
    std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
}  // namespace detail

template <typename T>
constexpr T wrapping_add(T x, T y) {
  if constexpr (detail::kWrapsSigned<T>) {
    using U = detail::wrap_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(x) + static_cast<U>(y));
  } else {
    return static_cast<T>(x + y);
  }
}

template <typename T>
constexpr T wrapping_sub(T x, T y) {
  if constexpr (detail::kWrapsSigned<T>) {
    using U = detail::wrap_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(x) - static_cast<U>(y));
  } else {
    return static_cast<T>(x - y);
  }
}

template <typename T>
constexpr T wrapping_mul(T x, T y) {
  if constexpr (detail::kWrapsSigned<T>) {
    using U = detail::wrap_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(x) * static_cast<U>(y));
  } else {
    return static_cast<T>(x * y);
  }
}

template <typename T>
constexpr T wrapping_neg(T x) {
  if constexpr (detail::kWrapsSigned<T>) {
    using U = detail::wrap_unsigned_t<T>;
    return static_cast<T>(U(0) - static_cast<U>(x));
  } else {
    return static_cast<T>(-x);
  }
}

/// Calls body(begin, end) over [0, n) split among up to ctx.num_threads OpenMP threads, and no
/// more than the calling thread's OpenMP count (a kernel that narrows it with ScopedOmpThreads
/// narrows its loops too). `item_cost` is the number of elements one index stands for (the
/// threads are chosen by the total, kParallelGrain elements each at least).
template <typename Body>
void parallel_for(int64_t n, const RunContext& ctx, Body body, int64_t item_cost = 1) {
  const int threads =
      static_cast<int>(std::min<int64_t>({ctx.num_threads, omp_get_max_threads(), n,
                                          n * std::max<int64_t>(item_cost, 1) / kParallelGrain}));
  if (threads <= 1) {
    body(int64_t{0}, n);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    const int nt = omp_get_num_threads();
    const int64_t chunk = (n + nt - 1) / nt;
    const int64_t begin = std::min<int64_t>(n, t * chunk);
    const int64_t end = std::min<int64_t>(n, begin + chunk);
    if (begin < end) body(begin, end);
  }
}

/// Shape rule: one output like input `index`.
InferFn infer_same_as_input(int index);

/// NumPy broadcasting of two shapes; throws ShapeError naming `op` and both shapes.
Shape broadcast_shapes(std::string_view op, const Shape& a, const Shape& b);

/// Shape rule of the operators that write into their first input (copy_into, add_into): dst and
/// src of one shape and dtype, no outputs.
std::vector<TensorSpec> infer_into(const InferArgs& args);

/// Shape rule of binary elementwise operators: broadcast shapes, equal dtypes required.
std::vector<TensorSpec> infer_broadcast_binary(const InferArgs& args);

}  // namespace janus::ops

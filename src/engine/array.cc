// Array allocation tied to the dependency engine, host transfers and printing.
#include "janus/engine/array.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "../core/recycler.h"

namespace janus {
namespace {

template <typename From, typename To>
void convert(const From* src, To* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<To, bool>) {
      dst[i] = static_cast<float>(src[i]) != 0.0f;
    } else if constexpr (std::is_same_v<To, float16> || std::is_same_v<To, bfloat16>) {
      dst[i] = To(static_cast<float>(src[i]));
    } else if constexpr (std::is_same_v<From, float16> || std::is_same_v<From, bfloat16>) {
      dst[i] = static_cast<To>(static_cast<float>(src[i]));
    } else {
      dst[i] = static_cast<To>(src[i]);
    }
  }
}

void convert_any(const void* src, DType src_dtype, void* dst, DType dst_dtype, int64_t n) {
  if (n == 0) return;  // an empty std::vector's data() may be null
  if (src_dtype == dst_dtype) {
    std::memcpy(dst, src, static_cast<size_t>(n) * dtype_size(src_dtype));
    return;
  }
  dispatch_dtype(src_dtype, [&]<typename From>() {
    dispatch_dtype(dst_dtype, [&]<typename To>() {
      convert(static_cast<const From*>(src), static_cast<To*>(dst), n);
    });
  });
}

// Storage whose var and memory are released through the engine after the last pending use of
// the var. One allocation with its shared_ptr's count, from a pool (allocate_shared): it is made
// on the calling thread and often released on a worker (the last kernel that uses it).
struct EngineStorage : Storage {
  EngineStorage(Block b, Device d) : Storage{b, d, engine().new_var()} {}
  EngineStorage(const EngineStorage&) = delete;
  EngineStorage& operator=(const EngineStorage&) = delete;
  ~EngineStorage() {
    engine().delete_var(var, [b = block, d = device] { allocator_for(d).free(b); });
  }
};

}  // namespace

NDArray empty(const Shape& shape, DType dtype, Device device) {
  for (int i = 0; i < shape.ndim(); ++i) {
    JANUS_CHECK(shape[i] >= 0, ShapeError, "empty: shape {} has a negative extent at axis {}",
                shape, i);
  }
  check_device(device, "empty");
  const int64_t numel = shape.numel();  // ShapeError when the count overflows
  constexpr int64_t kMaxBytes = std::numeric_limits<int64_t>::max();
  JANUS_CHECK(numel <= kMaxBytes / static_cast<int64_t>(dtype_size(dtype)), ShapeError,
              "empty: shape {} of {} needs more than {} bytes", shape, dtype_name(dtype),
              kMaxBytes);
  Allocator& alloc = allocator_for(device);
  const size_t bytes = static_cast<size_t>(numel) * dtype_size(dtype);
  return NDArray(std::allocate_shared<EngineStorage>(RecyclingAllocator<EngineStorage>{},
                                                     alloc.allocate(bytes), device),
                 shape, dtype);
}

NDArray placeholder(const Shape& shape, DType dtype, Device device) {
  return NDArray(std::make_shared<Storage>(Storage{Block{}, device, nullptr}), shape, dtype);
}

namespace {

void check_readable(const NDArray& a, const char* caller) {
  JANUS_CHECK(a.defined(), ValueError, "{}: the array is undefined", caller);
  JANUS_CHECK(!a.is_placeholder(), TraceError,
              "{}: reads the value of a symbolic array (shape {}, {}) while a hybridized block is "
              "traced; tracing runs the forward on placeholders that hold no data, so the value "
              "exists only when the compiled graph runs. Return the array from forward and read "
              "it after the call, or hybridize(false) to debug imperatively",
              caller, a.shape(), dtype_name(a.dtype()));
}

}  // namespace

NDArray from_host(const void* values, DType values_dtype, int64_t count, const Shape& shape,
                  DType dtype, Device device) {
  JANUS_CHECK(count == shape.numel(), ShapeError,
              "from_vector: got {} values for shape {}, expected {}", count, shape, shape.numel());
  NDArray out = empty(shape, dtype, device);
  // The kernel runs later: keep our own copy of the values, already converted.
  auto staged = std::make_shared<std::vector<char>>(out.nbytes());
  convert_any(values, values_dtype, staged->data(), dtype, count);
  void* dst = out.raw_data();
  engine().push(
      [staged, dst](const RunContext&) {
        if (!staged->empty()) std::memcpy(dst, staged->data(), staged->size());
      },
      {}, {out.var()}, device, Lane::kCopy, 0, "from_host");
  return out;
}

void wait_to_read(const NDArray& a) {
  check_readable(a, "wait_to_read");
  engine().wait_for_var(a.var());
}

void wait_all() { engine().wait_all(); }

void wait_to_read(const NDArray& a, std::chrono::milliseconds slice, const WaitPoll& poll,
                  const char* caller) {
  check_readable(a, caller);
  engine().wait_for_var(a.var(), slice, poll);
}

void wait_all(std::chrono::milliseconds slice, const WaitPoll& poll) {
  engine().wait_all(slice, poll);
}

void copy_to_host(const NDArray& a, void* out, DType dtype, const char* caller) {
  check_readable(a, caller);
  engine().wait_for_var(a.var());
  convert_any(a.raw_data(), a.dtype(), out, dtype, a.size());
}

namespace {

void print_values(std::ostream& os, const std::vector<double>& v, const Shape& s, int axis,
                  int64_t offset, int64_t stride_elems, bool integral) {
  if (axis == s.ndim()) {
    const double x = v[static_cast<size_t>(offset)];
    if (integral) {
      os << static_cast<int64_t>(x);
    } else if (std::isfinite(x) && x == std::floor(x) && std::fabs(x) < 1e16) {
      os << static_cast<int64_t>(x) << '.';
    } else {
      os << x;
    }
    return;
  }
  const int64_t n = s[axis];
  const int64_t inner = stride_elems / std::max<int64_t>(n, 1);
  constexpr int64_t kEdge = 3;  // summarise long axes: first and last three
  os << '[';
  const char* sep = axis + 1 < s.ndim() ? ",\n       " : ", ";
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) os << sep;
    if (n > 2 * kEdge + 1 && i == kEdge) {
      os << "...";
      i = n - kEdge;
      os << sep;
    }
    print_values(os, v, s, axis + 1, offset + i * inner, inner, integral);
  }
  os << ']';
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const NDArray& a) {
  if (!a.defined()) return os << "array(<undefined>)";
  check_readable(a, "operator<< (printing an array)");
  std::vector<double> values = to_vector<double>(a);
  std::ostringstream body;
  body.precision(6);
  const bool integral = !is_floating(a.dtype());
  print_values(body, values, a.shape(), 0, 0, a.size(), integral);
  return os << "array(" << body.str() << ", dtype=" << dtype_name(a.dtype()) << ")";
}

}  // namespace janus

// DLPack import (np.from_dlpack): a CPU tensor whose layout is row-major and compact becomes a
// Janus array over the producer's memory, without a copy; any other layout is copied once.
// Layer: python.
//
// The structs below are DLPack's stable C ABI (the "dltensor" capsule's payload), written from
// the specification, since the header is not installed here.
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include "janus/engine/external.h"

#include "bindings.h"

namespace janus::python {
namespace {

struct DLDevice {
  int32_t device_type;  // 1: CPU, 3: CUDA pinned host memory
  int32_t device_id;
};

struct DLDataType {
  uint8_t code;  // 0: int, 1: uint, 2: float, 4: bfloat, 6: bool
  uint8_t bits;
  uint16_t lanes;
};

struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; null for row-major compact
  uint64_t byte_offset;
};

struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

constexpr int32_t kDLCPU = 1;
constexpr int32_t kDLCUDAHost = 3;

DType dtype_of(const DLDataType& t) {
  JANUS_CHECK(t.lanes == 1, TypeError, "from_dlpack: vector dtypes ({} lanes) are not supported",
              t.lanes);
  const int key = t.code * 1000 + t.bits;
  switch (key) {
    case 2032:
      return DType::kFloat32;
    case 2064:
      return DType::kFloat64;
    case 2016:
      return DType::kFloat16;
    case 4016:
      return DType::kBFloat16;
    case 32:
      return DType::kInt32;
    case 64:
      return DType::kInt64;
    case 1008:
      return DType::kUInt8;
    case 6008:
      return DType::kBool;
    default:
      JANUS_THROW(TypeError,
                  "from_dlpack: DLPack dtype code {} with {} bits has no Janus dtype (float16/32/"
                  "64, bfloat16, int32, int64, uint8 and bool do)",
                  t.code, t.bits);
  }
}

// The producers' deleters may need the GIL (NumPy's takes it; PyTorch's does not), but the
// last release of an imported array can happen on an engine worker, which never takes the
// GIL. Such releases are queued here and run by a pending call on the interpreter's main
// thread; a thread that already holds the GIL runs the deleter at once.
std::mutex& pending_mutex() {
  static std::mutex m;
  return m;
}
std::vector<DLManagedTensor*>& pending() {
  static auto* v = new std::vector<DLManagedTensor*>();  // never destroyed: used at exit
  return *v;
}

int drain_pending(void*) {
  std::vector<DLManagedTensor*> batch;
  {
    std::lock_guard lock(pending_mutex());
    batch.swap(pending());
  }
  for (DLManagedTensor* t : batch) {
    if (t->deleter != nullptr) t->deleter(t);
  }
  return 0;
}

void release_managed(DLManagedTensor* t) {
  if (!Py_IsInitialized()) return;  // the interpreter is gone: the producer's memory with it
  if (PyGILState_Check() != 0) {
    if (t->deleter != nullptr) t->deleter(t);
    return;
  }
  bool first;
  {
    std::lock_guard lock(pending_mutex());
    first = pending().empty();
    pending().push_back(t);
  }
  // Callable without the GIL. When the queue of pending calls is full, the next drain (a later
  // release, or the next import) takes this tensor too.
  if (first) Py_AddPendingCall(&drain_pending, nullptr);
}

// A copy of a strided tensor into a new row-major array.
NDArray copy_strided(const DLTensor& t, DType dtype, const Shape& shape) {
  NDArray out = empty(shape, dtype, cpu());
  const size_t item = dtype_size(dtype);
  const int64_t n = shape.numel();
  const char* base = static_cast<const char*>(t.data) + t.byte_offset;
  char* dst = static_cast<char*>(out.raw_data());
  std::vector<int64_t> strides(static_cast<size_t>(t.ndim), 1);
  for (int d = t.ndim; d-- > 0;) {
    const auto i = static_cast<size_t>(d);
    if (t.strides != nullptr) {
      strides[i] = t.strides[d];
    } else if (i + 1 < strides.size()) {
      strides[i] = strides[i + 1] * t.shape[d + 1];
    }
  }
  std::vector<int64_t> index(static_cast<size_t>(t.ndim), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t offset = 0;
    for (size_t d = 0; d < index.size(); ++d) offset += index[d] * strides[d];
    std::memcpy(dst + static_cast<size_t>(i) * item, base + offset * static_cast<int64_t>(item),
                item);
    for (int d = t.ndim; d-- > 0;) {
      if (++index[static_cast<size_t>(d)] < t.shape[d]) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
  return out;
}

// True when `strides` (null, or in elements) describe the row-major compact layout; extents of
// 1 may carry any stride.
bool is_compact(const DLTensor& t) {
  if (t.strides == nullptr) return true;
  int64_t expected = 1;
  for (int d = t.ndim; d-- > 0;) {
    if (t.shape[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.shape[d];
  }
  return true;
}

NDArray from_dlpack_capsule(const py::capsule& capsule) {
  drain_pending(nullptr);
  JANUS_CHECK(std::strcmp(capsule.name(), "dltensor") == 0, ValueError,
              "from_dlpack: the capsule is named '{}', expected 'dltensor' (a capsule can be "
              "consumed only once)",
              capsule.name());
  auto* managed = capsule.get_pointer<DLManagedTensor>();
  const DLTensor& t = managed->dl_tensor;
  JANUS_CHECK(t.device.device_type == kDLCPU || t.device.device_type == kDLCUDAHost, DeviceError,
              "from_dlpack: the tensor is on DLPack device type {} (id {}), expected the CPU "
              "(type 1)",
              t.device.device_type, t.device.device_id);
  JANUS_CHECK(t.ndim >= 0, ValueError, "from_dlpack: ndim is {}", t.ndim);
  const DType dtype = dtype_of(t.dtype);
  std::vector<int64_t> dims(t.shape, t.shape + t.ndim);
  const Shape shape(dims);
  // From here on Janus owns the tensor: the capsule is renamed so that its destructor (the
  // producer's) leaves it alone.
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  void* data = static_cast<char*>(t.data) + t.byte_offset;
  const bool aligned = reinterpret_cast<uintptr_t>(data) % dtype_size(dtype) == 0;
  if (!is_compact(t) || !aligned || shape.numel() == 0) {
    NDArray out = copy_strided(t, dtype, shape);
    release_managed(managed);
    return out;
  }
  return from_external(data, shape, dtype, cpu(), [managed] { release_managed(managed); });
}

}  // namespace

void bind_dlpack(py::module_& m) {
  m.def("from_dlpack_capsule", &from_dlpack_capsule, py::arg("capsule"),
        "A Janus array over a 'dltensor' capsule's CPU memory (no copy when the layout is "
        "row-major and compact); the capsule is consumed.");
}

}  // namespace janus::python

// The additions of which reductions are made: add_into(dst, src), dst += src in place, and
// peer_add(a, b), a + b on a's device reading b from wherever it lives (peer access).
#include <cstdint>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "janus/ops/ops.h"
#include "janus/ops/transfer.h"

#include "../op_utils.h"

namespace janus::ops {
namespace {

// y = a + b elementwise over n elements (y may be a); booleans combine by logical or.
void add_loop(const NDArray& y, const NDArray& a, const NDArray& b, const RunContext& ctx) {
  dispatch_dtype(y.dtype(), [&]<typename T>() {
    T* out = y.data<T>();
    const T* x = a.data<T>();
    const T* __restrict z = b.data<T>();
    parallel_for(y.size(), ctx, [&](int64_t begin, int64_t end) {
      if constexpr (std::is_same_v<T, bool>) {
        for (int64_t i = begin; i < end; ++i) out[i] = x[i] || z[i];
      } else {
        for (int64_t i = begin; i < end; ++i) out[i] = wrapping_add(x[i], z[i]);
      }
    });
  });
}

void add_into_cpu(const KernelArgs& args) {
  add_loop(args.in(0), args.in(0), args.in(1), args.ctx);
}

// Above this many bytes a new sum is written with streaming stores: it is larger than the
// caches keep anyway (a ring's partial sum of a large array, read next by another device), so
// fetching each line of it before writing it (write-allocate) would only add a read of the
// whole output: 3 array-sizes of memory traffic instead of 4.
constexpr int64_t kStreamingBytes = int64_t{4} << 20;

#if defined(__SSE2__)
// y = a + b over [begin, end), y written around the caches; bit-identical to add_loop (one
// rounded addition per element).
void add_streaming(float* y, const float* a, const float* b, int64_t begin, int64_t end) {
  int64_t i = begin;
  for (; i < end && (reinterpret_cast<uintptr_t>(y + i) & 15) != 0; ++i) y[i] = a[i] + b[i];
  for (; i + 4 <= end; i += 4) {
    _mm_stream_ps(y + i, _mm_add_ps(_mm_loadu_ps(a + i), _mm_loadu_ps(b + i)));
  }
  for (; i < end; ++i) y[i] = a[i] + b[i];
  _mm_sfence();  // the streamed lines reach memory before the operation completes
}
#endif

void peer_add_cpu(const KernelArgs& args) {
  const NDArray& y = args.out(0);
#if defined(__SSE2__)
  if (y.dtype() == DType::kFloat32 && y.nbytes() >= kStreamingBytes) {
    float* out = y.data<float>();
    const float* a = args.in(0).data<float>();
    const float* b = args.in(1).data<float>();
    parallel_for(y.size(), args.ctx,
                 [&](int64_t begin, int64_t end) { add_streaming(out, a, b, begin, end); });
    return;
  }
#endif
  add_loop(y, args.in(0), args.in(1), args.ctx);
}

std::vector<TensorSpec> infer_peer_add(const InferArgs& args) {
  infer_into(args);  // one shape and dtype
  const TensorSpec& a = args.inputs[0];
  const TensorSpec& b = args.inputs[1];
  JANUS_CHECK(peer_access(a.device, b.device), DeviceError,
              "{}: a is on {} and b on {}, whose memory {} cannot read (copy b there first)",
              args.op.name, a.device, b.device, a.device);
  return {a};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "add_into",
    .doc = "dst += src in place (dst a mutable input), both on one device: the step of which "
           "reductions are made. Booleans combine by logical or.",
    .inputs = {"dst", "src"},
    .outputs = {},
    .infer = infer_into,
    .kernels = {{DeviceType::kCPU, add_into_cpu}},
    .not_differentiable = true,
    .mutable_inputs = {0},
});

JANUS_DEFINE_OP({
    .name = "peer_add",
    .doc = "a + b on a's device, reading b directly from the device it lives on (peer access: "
           "logical CPU devices share memory): the step of a reduce-scatter that needs no staging "
           "copy.",
    .inputs = {"a", "b"},
    .outputs = {"y"},
    .infer = infer_peer_add,
    .kernels = {{DeviceType::kCPU, peer_add_cpu}},
    .not_differentiable = true,
    .multi_device = true,
});

}  // namespace janus::ops

namespace janus {
NDArray peer_add(const NDArray& a, const NDArray& b) {
  static const ops::OpDef& op = ops::get_op("peer_add");
  return ops::invoke(op, {a, b}, {})[0];
}

void add_into(const NDArray& dst, const NDArray& src) {
  static const ops::OpDef& op = ops::get_op("add_into");
  ops::invoke(op, {dst, src}, {});
}
}  // namespace janus

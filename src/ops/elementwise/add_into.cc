// add_into(dst, src): dst += src in place, the step of which reductions are made.
#include "janus/ops/ops.h"
#include "janus/ops/transfer.h"

#include "../op_utils.h"

namespace janus::ops {

namespace {

void add_into_cpu(const KernelArgs& args) {
  dispatch_dtype(args.in(0).dtype(), [&]<typename T>() {
    T* __restrict dst = args.in(0).data<T>();
    const T* __restrict src = args.in(1).data<T>();
    parallel_for(args.in(0).size(), args.ctx, [&](int64_t b, int64_t e) {
      if constexpr (std::is_same_v<T, bool>) {
        for (int64_t i = b; i < e; ++i) dst[i] = dst[i] || src[i];
      } else {
        for (int64_t i = b; i < e; ++i) dst[i] = wrapping_add(dst[i], src[i]);
      }
    });
  });
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

}  // namespace janus::ops

namespace janus {
void add_into(const NDArray& dst, const NDArray& src) {
  static const ops::OpDef& op = ops::get_op("add_into");
  ops::invoke(op, {dst, src}, {});
}
}  // namespace janus

// copy_into(dst, src): src's elements written into dst, on the copy lane of dst's device.
#include <cstring>

#include "janus/ops/ops.h"
#include "janus/ops/transfer.h"

#include "../op_utils.h"

namespace janus::ops {
namespace {

// CPU to CPU: logical devices share host memory, so a copy is a memcpy.
void copy_into_cpu(const KernelArgs& args) {
  std::memcpy(args.in(0).raw_data(), args.in(1).raw_data(), args.in(1).nbytes());
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "copy_into",
    .doc = "Writes src's elements into dst (a mutable input) on the copy lane of dst's device; "
           "src may live on another device. The step of which broadcasts and all-gathers are "
           "made.",
    .inputs = {"dst", "src"},
    .outputs = {},
    .infer = infer_into,
    .kernels = {{DeviceType::kCPU, copy_into_cpu}},
    .not_differentiable = true,
    .copy_lane = true,
    .multi_device = true,
    .mutable_inputs = {0},
});

}  // namespace janus::ops

namespace janus {
void copy_into(const NDArray& dst, const NDArray& src) {
  static const ops::OpDef& op = ops::get_op("copy_into");
  ops::invoke(op, {dst, src}, {});
}
}  // namespace janus

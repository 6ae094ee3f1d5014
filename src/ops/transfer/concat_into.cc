// concat_into(dst, parts): the parts' elements written one after another into dst, on the
// compute lane of dst's device.
#include <fmt/format.h>

#include <cstring>

#include "janus/ops/ops.h"
#include "janus/ops/transfer.h"

#include "../op_utils.h"

namespace janus::ops {
namespace {

// Logical CPU devices share host memory, so each part is a memcpy into its place.
void concat_into_cpu(const KernelArgs& args) {
  char* out = static_cast<char*>(args.in(0).raw_data());
  for (size_t i = 1; i < args.inputs.size(); ++i) {
    const size_t bytes = args.in(i).nbytes();
    if (bytes == 0) continue;
    std::memcpy(out, args.in(i).raw_data(), bytes);
    out += bytes;
  }
}

std::vector<TensorSpec> infer_concat_into(const InferArgs& args) {
  const TensorSpec& dst = args.inputs[0];
  int64_t total = 0;
  for (size_t i = 1; i < args.inputs.size(); ++i) {
    const TensorSpec& part = args.inputs[i];
    JANUS_CHECK(part.dtype == dst.dtype, TypeError,
                "{}: part {} is {} but dst is {}, expected one dtype", args.op.name, i - 1,
                part.dtype, dst.dtype);
    JANUS_CHECK(peer_access(dst.device, part.device), DeviceError,
                "{}: part {} is on {}, whose memory {} (dst's device) cannot read", args.op.name,
                i - 1, part.device, dst.device);
    total += part.shape.numel();
  }
  JANUS_CHECK(total == dst.shape.numel(), ShapeError,
              "{}: the parts hold {} elements together but dst (shape {}) holds {}, expected "
              "the same number",
              args.op.name, total, dst.shape, dst.shape.numel());
  return {};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "concat_into",
    .doc = "Writes the parts' elements one after another into dst (a mutable input; every "
           "array read flat), on the compute lane of dst's device; the parts may live on peer "
           "devices. The all-gather step of a ring on devices whose memory is the host's: one "
           "operation per device instead of a copy per chunk.",
    .inputs = {"dst", "part"},
    .outputs = {},
    .variadic = true,
    .infer = infer_concat_into,
    .kernels = {{DeviceType::kCPU, concat_into_cpu}},
    .not_differentiable = true,
    .multi_device = true,
    .mutable_inputs = {0},
});

}  // namespace janus::ops

namespace janus {
void concat_into(const NDArray& dst, std::span<const NDArray> parts) {
  static const ops::OpDef& op = ops::get_op("concat_into");
  for (size_t i = 0; i < parts.size(); ++i) {
    JANUS_CHECK(!parts[i].defined() || parts[i].storage() != dst.storage(), ValueError,
                "concat_into: part {} shares dst's memory, expected parts apart from dst", i);
  }
  std::vector<NDArray> inputs;
  inputs.reserve(parts.size() + 1);
  inputs.push_back(dst);
  inputs.insert(inputs.end(), parts.begin(), parts.end());
  ops::invoke(op, inputs, {});
}
}  // namespace janus

// copyto(a, device): a copy of an array on another device, made on the copy lane.
#include <cstring>

#include "janus/ops/ops.h"

#include "../op_utils.h"
#include "../typed_attrs.h"

namespace janus::ops {
namespace {

struct CopytoAttrs {
  Device device;
  static constexpr auto fields() { return std::tuple{field("device", &CopytoAttrs::device)}; }
  static CopytoAttrs from(const Attrs& attrs) { return read_attrs<CopytoAttrs>(attrs); }
};

// CPU to CPU: both logical devices share host memory, so a copy is a memcpy.
void copyto_cpu(const KernelArgs& args) {
  std::memcpy(args.out(0).raw_data(), args.in(0).raw_data(), args.in(0).nbytes());
}

std::vector<TensorSpec> infer_copyto(const InferArgs& args) {
  TensorSpec out = args.inputs[0];
  out.device = CopytoAttrs::from(args.attrs).device;
  check_device(out.device, "copyto");
  return {out};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "copyto",
    .doc = "Copy of an array on another device, made on the copy lane to overlap compute.",
    .inputs = {"a"},
    .outputs = {"y"},
    .attrs = {{"device", AttrType::kDevice, std::nullopt, "destination device"}},
    .attr_fields = attr_fields<CopytoAttrs>(),
    .infer = infer_copyto,
    .kernels = {{DeviceType::kCPU, copyto_cpu}},
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      return {copyto(g.dy(0), g.x(0).device())};
    },
    .copy_lane = true,
    .multi_device = true,
});

}  // namespace janus::ops

namespace janus {
NDArray copyto(const NDArray& a, Device device) {
  static const ops::OpDef& op = ops::get_op("copyto");
  return ops::invoke(op, {a}, {device})[0];
}
}  // namespace janus

// Dtype rules shared by the elementwise and unary families.
#include "nary_loop.h"

namespace janus::ops {

void check_floating(std::string_view op, DType dtype) {
  JANUS_CHECK(is_floating(dtype), TypeError,
              "{}: input has dtype {}, expected a floating dtype (float32, float64, float16 or "
              "bfloat16; cast it first)",
              op, dtype);
}

std::vector<TensorSpec> infer_floating_unary(const InferArgs& args) {
  check_floating(args.op.name, args.inputs[0].dtype);
  return {args.inputs[0]};
}

std::vector<TensorSpec> infer_floating_binary(const InferArgs& args) {
  std::vector<TensorSpec> out = infer_broadcast_binary(args);
  check_floating(args.op.name, out[0].dtype);
  return out;
}

std::vector<TensorSpec> infer_comparison(const InferArgs& args) {
  std::vector<TensorSpec> out = infer_broadcast_binary(args);
  out[0].dtype = DType::kBool;
  return out;
}

}  // namespace janus::ops

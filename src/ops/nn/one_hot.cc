// one_hot(labels, depth, dtype): integer labels to rows of zeros with a one at the label.
#include "janus/ops/ops.h"

#include "../op_utils.h"
#include "nn_attrs.h"

namespace janus::ops {
namespace {

template <typename L, typename T>
void one_hot_loop(const L* labels, T* out, int64_t n, int64_t depth) {
  std::fill_n(out, n * depth, from_double<T>(0));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t label = static_cast<int64_t>(labels[i]);
    JANUS_CHECK(label >= 0 && label < depth, IndexError,
                "one_hot: label {} at position {} is out of range, expected 0 <= label < {}", label,
                i, depth);
    out[i * depth + label] = from_double<T>(1);
  }
}

void one_hot_cpu(const KernelArgs& args) {
  const NDArray& labels = args.in(0);
  const NDArray& out = args.out(0);
  const int64_t depth = OneHotAttrs::from(args.attrs).depth;
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    if (labels.dtype() == DType::kInt32) {
      one_hot_loop(labels.data<int32_t>(), out.data<T>(), labels.size(), depth);
    } else {
      one_hot_loop(labels.data<int64_t>(), out.data<T>(), labels.size(), depth);
    }
  });
}

std::vector<TensorSpec> infer_one_hot(const InferArgs& args) {
  const TensorSpec& labels = args.inputs[0];
  const OneHotAttrs a = OneHotAttrs::from(args.attrs);
  const int64_t depth = a.depth;
  JANUS_CHECK(labels.dtype == DType::kInt32 || labels.dtype == DType::kInt64, TypeError,
              "one_hot: labels have dtype {}, expected int32 or int64", labels.dtype);
  JANUS_CHECK(depth >= 0, ValueError, "one_hot: depth is {}, expected depth >= 0", depth);
  std::vector<int64_t> dims = labels.shape.dims();
  dims.push_back(depth);
  return {TensorSpec{Shape(std::move(dims)), a.dtype, labels.device}};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "one_hot",
    .doc = "Rows of `depth` zeros with a one at each integer label; shape labels.shape + [depth].",
    .inputs = {"labels"},
    .outputs = {"y"},
    .attrs = {{"depth", AttrType::kInt, std::nullopt, "number of classes"},
              {"dtype", AttrType::kDType, DType::kFloat32, "dtype of the output"}},
    .attr_fields = attr_fields<OneHotAttrs>(),
    .infer = infer_one_hot,
    .kernels = {{DeviceType::kCPU, one_hot_cpu}},
    .not_differentiable = true,  // integer input
});

}  // namespace janus::ops

namespace janus {
NDArray one_hot(const NDArray& labels, int64_t depth, DType dtype) {
  static const ops::OpDef& op = ops::get_op("one_hot");
  return ops::invoke(op, {labels}, {depth, dtype})[0];
}
}  // namespace janus

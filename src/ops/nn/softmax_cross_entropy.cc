// softmax_cross_entropy(logits, labels): per-sample loss -log softmax(logits)[label].
#include <cmath>

#include "janus/ops/ops.h"

#include "../op_utils.h"

namespace janus::ops {
namespace {

// loss_i = log(sum_j exp(x_ij)) - x_i,label_i, with the row maximum subtracted first.
template <typename T, typename L>
void cross_entropy_loop(const T* x, const L* labels, T* loss, int64_t n, int64_t c,
                        const RunContext& ctx) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t label = static_cast<int64_t>(labels[i]);
    JANUS_CHECK(label >= 0 && label < c, IndexError,
                "softmax_cross_entropy: label {} of sample {} is out of range, expected 0 <= "
                "label < {} (the number of classes)",
                label, i, c);
  }
  parallel_for(n * c, ctx, [&](int64_t lo_elem, int64_t hi_elem) {
    const int64_t lo = (lo_elem + c - 1) / c, hi = (hi_elem + c - 1) / c;  // rows starting here
    for (int64_t i = lo; i < hi; ++i) {
      const T* row = x + i * c;
      double mx = -INFINITY;
      for (int64_t j = 0; j < c; ++j) mx = std::max(mx, static_cast<double>(row[j]));
      double total = 0;
      for (int64_t j = 0; j < c; ++j) total += std::exp(static_cast<double>(row[j]) - mx);
      loss[i] = static_cast<T>(std::log(total) + mx - static_cast<double>(row[labels[i]]));
    }
  });
}

void softmax_cross_entropy_cpu(const KernelArgs& args) {
  const NDArray& x = args.in(0);
  const NDArray& labels = args.in(1);
  const int64_t n = x.shape()[0], c = x.shape()[1];
  auto run = [&]<typename T>() {
    if (labels.dtype() == DType::kInt32) {
      cross_entropy_loop(x.data<T>(), labels.data<int32_t>(), args.out(0).data<T>(), n, c,
                         args.ctx);
    } else {
      cross_entropy_loop(x.data<T>(), labels.data<int64_t>(), args.out(0).data<T>(), n, c,
                         args.ctx);
    }
  };
  if (x.dtype() == DType::kFloat64) {
    run.operator()<double>();
  } else {
    run.operator()<float>();
  }
}

std::vector<TensorSpec> infer_softmax_cross_entropy(const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  const TensorSpec& labels = args.inputs[1];
  JANUS_CHECK(x.shape.ndim() == 2, ShapeError,
              "softmax_cross_entropy: logits have shape {}, expected 2 dimensions [N, C]", x.shape);
  JANUS_CHECK(x.dtype == DType::kFloat32 || x.dtype == DType::kFloat64, TypeError,
              "softmax_cross_entropy: logits have dtype {}, expected float32 or float64", x.dtype);
  JANUS_CHECK(labels.dtype == DType::kInt32 || labels.dtype == DType::kInt64, TypeError,
              "softmax_cross_entropy: labels have dtype {}, expected int32 or int64 class indices",
              labels.dtype);
  JANUS_CHECK(labels.shape == Shape{x.shape[0]}, ShapeError,
              "softmax_cross_entropy: labels have shape {} for logits of shape {}, expected [{}]",
              labels.shape, x.shape, x.shape[0]);
  JANUS_CHECK(x.shape[1] > 0 || x.shape[0] == 0, ShapeError,
              "softmax_cross_entropy: logits have shape {} (no classes), expected C >= 1", x.shape);
  return {TensorSpec{Shape{x.shape[0]}, x.dtype, x.device}};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "softmax_cross_entropy",
    .doc = "Per-sample loss -log(softmax(logits)[label]) of logits [N, C] and int labels [N].",
    .inputs = {"logits", "labels"},
    .outputs = {"loss"},
    .infer = infer_softmax_cross_entropy,
    .kernels = {{DeviceType::kCPU, softmax_cross_entropy_cpu}},
    // dloss: [N] -> dlogits = (softmax(logits) - one_hot(labels)) * dloss[:, None]; labels have
    // no gradient (softmax_cross_entropy_backward.cc).
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      return {softmax_cross_entropy_backward(g.x(0), g.x(1), g.dy(0)), NDArray()};
    },
});

}  // namespace janus::ops

namespace janus {
NDArray softmax_cross_entropy(const NDArray& logits, const NDArray& labels) {
  static const ops::OpDef& op = ops::get_op("softmax_cross_entropy");
  return ops::invoke(op, {logits, labels})[0];
}
}  // namespace janus

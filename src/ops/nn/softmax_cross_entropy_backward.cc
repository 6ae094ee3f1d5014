// softmax_cross_entropy_backward(logits, labels, dloss): the gradient of softmax_cross_entropy,
// one pass over the logits instead of softmax, one_hot, a scale, a sum and a product (five
// operations, four arrays the size of the logits).
#include <cmath>

#include "janus/ops/ops.h"

#include "../op_utils.h"

namespace janus::ops {
namespace {

// dlogits_ij = (softmax(x_i)_j - [j == label_i]) * dloss_i, the softmax accumulated in double
// and rounded to T before the label is taken off: what the composite gave, to the bit.
template <typename T, typename L>
void cross_entropy_backward_loop(const T* x, const L* labels, const T* dloss, T* dx, int64_t n,
                                 int64_t c, const RunContext& ctx) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t label = static_cast<int64_t>(labels[i]);
    JANUS_CHECK(label >= 0 && label < c, IndexError,
                "softmax_cross_entropy_backward: label {} of sample {} is out of range, expected "
                "0 <= label < {} (the number of classes)",
                label, i, c);
  }
  parallel_for(
      n * c, ctx,
      [&](int64_t lo_elem, int64_t hi_elem) {
        const int64_t lo = (lo_elem + c - 1) / c, hi = (hi_elem + c - 1) / c;  // rows starting here
        for (int64_t i = lo; i < hi; ++i) {
          const T* row = x + i * c;
          T* out = dx + i * c;
          double mx = -INFINITY;
          for (int64_t j = 0; j < c; ++j) mx = std::max(mx, static_cast<double>(row[j]));
          // A row of up to kKeep classes keeps its exponentials; a longer one recomputes them.
          constexpr int64_t kKeep = 64;
          double e[kKeep];
          double total = 0;
          for (int64_t j = 0; j < c; ++j) {
            const double v = std::exp(static_cast<double>(row[j]) - mx);
            if (j < kKeep) e[j] = v;
            total += v;
          }
          const int64_t label = static_cast<int64_t>(labels[i]);
          for (int64_t j = 0; j < c; ++j) {
            const double v = j < kKeep ? e[j] : std::exp(static_cast<double>(row[j]) - mx);
            const T p = static_cast<T>(v / total);
            out[j] = (j == label ? p + T(-1) : p) * dloss[i];
          }
        }
      },
      /*item_cost=*/8);  // an exponential per element
}

void softmax_cross_entropy_backward_cpu(const KernelArgs& args) {
  const NDArray& x = args.in(0);
  const NDArray& labels = args.in(1);
  const int64_t n = x.shape()[0], c = x.shape()[1];
  auto run = [&]<typename T>() {
    if (labels.dtype() == DType::kInt32) {
      cross_entropy_backward_loop(x.data<T>(), labels.data<int32_t>(), args.in(2).data<T>(),
                                  args.out(0).data<T>(), n, c, args.ctx);
    } else {
      cross_entropy_backward_loop(x.data<T>(), labels.data<int64_t>(), args.in(2).data<T>(),
                                  args.out(0).data<T>(), n, c, args.ctx);
    }
  };
  if (x.dtype() == DType::kFloat64) {
    run.operator()<double>();
  } else {
    run.operator()<float>();
  }
}

std::vector<TensorSpec> infer_softmax_cross_entropy_backward(const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  const TensorSpec& labels = args.inputs[1];
  const TensorSpec& dloss = args.inputs[2];
  JANUS_CHECK(x.shape.ndim() == 2, ShapeError,
              "softmax_cross_entropy_backward: logits have shape {}, expected 2 dimensions [N, C]",
              x.shape);
  JANUS_CHECK(x.dtype == DType::kFloat32 || x.dtype == DType::kFloat64, TypeError,
              "softmax_cross_entropy_backward: logits have dtype {}, expected float32 or float64",
              x.dtype);
  JANUS_CHECK(labels.dtype == DType::kInt32 || labels.dtype == DType::kInt64, TypeError,
              "softmax_cross_entropy_backward: labels have dtype {}, expected int32 or int64 "
              "class indices",
              labels.dtype);
  JANUS_CHECK(labels.shape == Shape{x.shape[0]} && dloss.shape == Shape{x.shape[0]}, ShapeError,
              "softmax_cross_entropy_backward: labels {} and dloss {} for logits {}, expected "
              "[{}] each",
              labels.shape, dloss.shape, x.shape, x.shape[0]);
  JANUS_CHECK(dloss.dtype == x.dtype, TypeError,
              "softmax_cross_entropy_backward: dloss has dtype {}, the logits {}, expected one "
              "dtype",
              dloss.dtype, x.dtype);
  return {x};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "softmax_cross_entropy_backward",
    .doc = "Gradient of softmax_cross_entropy: dlogits = (softmax(logits) - one_hot(labels)) * "
           "dloss[:, None] for logits [N, C], int labels [N] and dloss [N], in one pass.\n\n"
           "Not differentiable: second derivatives of softmax_cross_entropy are not supported "
           "yet.",
    .inputs = {"logits", "labels", "dloss"},
    .outputs = {"dlogits"},
    .infer = infer_softmax_cross_entropy_backward,
    .kernels = {{DeviceType::kCPU, softmax_cross_entropy_backward_cpu}},
    .not_differentiable = true,
});

}  // namespace janus::ops

namespace janus {
NDArray softmax_cross_entropy_backward(const NDArray& logits, const NDArray& labels,
                                       const NDArray& dloss) {
  static const ops::OpDef& op = ops::get_op("softmax_cross_entropy_backward");
  return ops::invoke(op, {logits, labels, dloss})[0];
}
}  // namespace janus

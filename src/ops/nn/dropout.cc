// dropout(x, p, training): zeroes elements with probability p and scales the rest by 1/(1-p),
// drawing from the seeded Philox stream; also returns the mask it applied.
#include "janus/ops/ops.h"

#include "../op_utils.h"
#include "../random/philox.h"
#include "nn_attrs.h"

namespace janus::ops {
namespace {

template <typename T>
void dropout_loop(const KernelArgs& args) {
  const DropoutAttrs a = DropoutAttrs::from(args.attrs);
  const double p = a.p;
  const bool training = a.training;
  const T* x = args.in(0).data<T>();
  T* y = args.out(0).data<T>();
  T* mask = args.out(1).data<T>();
  const int64_t n = args.in(0).size();
  const Philox gen(args.rng);
  const bool identity = !training || p == 0.0;
  const T kept = static_cast<T>(p < 1.0 ? 1.0 / (1.0 - p) : 0.0);
  parallel_for(n, args.ctx, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      // Element i keeps its value when its own uniform draw is at least p: the mask depends only
      // on (seed, call position, i), never on the thread split.
      const T m =
          identity ? T(1) : (uniform01(gen.word(static_cast<uint64_t>(i))) >= p ? kept : T(0));
      mask[i] = m;
      y[i] = x[i] * m;
    }
  });
}

void dropout_cpu(const KernelArgs& args) {
  if (args.in(0).dtype() == DType::kFloat64) {
    dropout_loop<double>(args);
  } else {
    dropout_loop<float>(args);
  }
}

std::vector<TensorSpec> infer_dropout(const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  const double p = DropoutAttrs::from(args.attrs).p;
  JANUS_CHECK(p >= 0.0 && p <= 1.0, ValueError, "dropout: p is {}, expected 0 <= p <= 1", p);
  JANUS_CHECK(x.dtype == DType::kFloat32 || x.dtype == DType::kFloat64, TypeError,
              "dropout: dtype {} is not supported, expected float32 or float64", x.dtype);
  return {x, x};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "dropout",
    .doc = "In training, zeroes each element with probability p and scales the others by "
           "1/(1-p); the identity otherwise.\n\n"
           "The second output is the mask that was applied (0 or 1/(1-p), all ones outside "
           "training), so that the gradient is dy * mask without drawing again. The mask comes "
           "from the seeded Philox stream: the same seed and program give the same mask.",
    .inputs = {"x"},
    .outputs = {"y", "mask"},
    .attrs = {{"p", AttrType::kFloat, 0.5, "probability of zeroing an element"},
              {"training", AttrType::kBool, true, "drop elements (false: the identity)"}},
    .attr_fields = attr_fields<DropoutAttrs>(),
    .infer = infer_dropout,
    .kernels = {{DeviceType::kCPU, dropout_cpu}},
    // The mask is a constant of the call: dx = dy * mask (the mask's own gradient is ignored).
    .grad = [](const GradArgs& g) -> std::vector<NDArray> { return {g.dy(0) * g.y(1)}; },
    .random = true,
});

}  // namespace janus::ops

namespace janus {
NDArray dropout(const NDArray& x, double p, bool training) {
  static const ops::OpDef& op = ops::get_op("dropout");
  return ops::invoke(op, {x}, {p, training})[0];
}
}  // namespace janus

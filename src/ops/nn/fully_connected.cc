// fully_connected(x, weight, bias): y = x · weightᵀ + bias through a cached oneDNN matmul (the
// weight read transposed through its strides), or, for one input row, our own matrix-vector loop
// (linalg/gemv.h). The matmul, not oneDNN's inner product: on plain layouts the inner product
// takes the packing sgemm (x64:gemm:jit), the matmul the brgemm kernels, 10-22% less time on the
// seed MLP's and LeNet's layers at batch 64 (one thread, AVX-512), with no weights kept in
// another layout between calls.
#include <string>
#include <vector>

#include "janus/ops/elementwise.h"
#include "janus/ops/ops.h"

#include "../invoke_one.h"
#include "../linalg/gemv.h"
#include "../linalg/onednn.h"
#include "../linalg/primitive_cache.h"
#include "../op_utils.h"
#include "nn_attrs.h"
#include "post_op.h"

namespace janus::ops {
namespace {

// x: [n, k], weight: [m, k], bias: [m] -> y: [n, m].
struct FcKey {
  int64_t n, k, m;
  // y = activation(x · Wᵀ + b), applied after the primitive (post_op.h).
  Activation activation = Activation::kNone;
  auto operator<=>(const FcKey&) const = default;
};

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

struct FcDescs {
  dnnl::memory::desc src, weights, bias, dst;
};

// x [n, k] · weightᵀ [k, m] (the weight [m, k] row-major, so strides {1, k}) + bias [1, m].
FcDescs fc_descs(const FcKey& key) {
  return {dnnl::memory::desc({key.n, key.k}, dt::f32, tag::ab),
          dnnl::memory::desc({key.k, key.m}, dt::f32, dnnl::memory::dims{1, key.k}),
          dnnl::memory::desc({1, key.m}, dt::f32, tag::ab),
          dnnl::memory::desc({key.n, key.m}, dt::f32, tag::ab)};
}

// The product of one shape (a value of the primitive cache), with its argument memory objects.
struct CachedFc {
  explicit CachedFc(const FcKey& key) : CachedFc(key, fc_descs(key)) {}
  CachedFc(const FcKey& key, const FcDescs& d)
      : pd(dnnl::matmul::desc(d.src, d.weights, d.bias, d.dst), onednn_attr(), onednn_engine()),
        prim(pd),
        bindings({{DNNL_ARG_SRC, d.src},
                  {DNNL_ARG_WEIGHTS, d.weights},
                  {DNNL_ARG_BIAS, d.bias},
                  {DNNL_ARG_DST, d.dst}},
                 pd.scratchpad_desc()),
        macs(key.n * key.k * key.m) {}
  std::string impl() const { return pd.impl_info_str(); }

  dnnl::matmul::primitive_desc pd;
  dnnl::matmul prim;
  OneDnnBindings bindings;
  int64_t macs;
};

void run_fc(const CachedFc& fc, const void* x, const void* w, const void* b, void* y) {
  const auto one_thread = ScopedOmpThreads::one_thread_if(fc.macs < kParallelGemmMacs);
  fc.bindings.run(fc.prim, {x, w, b, y});
}

// Built once per shape on the caller's thread (prepare), shared by every worker. The activation
// is not part of the primitive, so every activation shares one.
const CachedFc& cached_fc(FcKey key) {
  key.activation = Activation::kNone;
  return primitive_cache<FcKey, CachedFc>().get(key, [&key](const CachedFc& probe) {
    std::vector<float> x(static_cast<size_t>(key.n * key.k)), w(static_cast<size_t>(key.m * key.k));
    std::vector<float> b(static_cast<size_t>(key.m)), y(static_cast<size_t>(key.n * key.m));
    run_fc(probe, x.data(), w.data(), b.data(), y.data());
  });
}

Activation activation_of(const Attrs& attrs) { return FullyConnectedAttrs::from(attrs).activation; }

FcKey fc_key(const Shape& x, const Shape& w, const Attrs& attrs) {
  return FcKey{x[0], x[1], w[0], activation_of(attrs)};
}

bool uses_onednn(const FcKey& key, DType dtype) {
  return dtype == DType::kFloat32 && key.n > 0 && key.k > 0 && key.m > 0 &&
         !use_gemv(key.n, key.k, key.m);
}

template <typename T>
void fc_reference(const T* x, const T* w, const T* b, T* y, const FcKey& s) {
  for (int64_t i = 0; i < s.n; ++i) {
    for (int64_t j = 0; j < s.m; ++j) {
      T acc = b[j];
      for (int64_t p = 0; p < s.k; ++p) acc += x[i * s.k + p] * w[j * s.k + p];
      y[i * s.m + j] = post_op_value(s.activation, acc);
    }
  }
}

void prepare_fc(const InferArgs& args, std::span<const TensorSpec>) {
  const FcKey key = fc_key(args.inputs[0].shape, args.inputs[1].shape, args.attrs);
  if (uses_onednn(key, args.inputs[0].dtype)) cached_fc(key);
}

void fully_connected_cpu(const KernelArgs& args) {
  const FcKey key = fc_key(args.in(0).shape(), args.in(1).shape(), args.attrs);
  const NDArray& y = args.out(0);
  if (y.dtype() == DType::kFloat64) {
    fc_reference(args.in(0).data<double>(), args.in(1).data<double>(), args.in(2).data<double>(),
                 y.data<double>(), key);
    return;
  }
  if (use_gemv(key.n, key.k, key.m)) {
    // The loop applies relu itself; the other activations follow on its row.
    const bool relu = key.activation == Activation::kRelu;
    gemv_bias(args.in(0).data<float>(), args.in(1).data<float>(), args.in(2).data<float>(),
              y.data<float>(), key.k, key.m, relu);
    if (!relu) post_op_block(key.activation, y.data<float>(), key.m);
    return;
  }
  if (!uses_onednn(key, y.dtype())) {  // an empty extent: K = 0 leaves the bias
    fc_reference(args.in(0).data<float>(), args.in(1).data<float>(), args.in(2).data<float>(),
                 y.data<float>(), key);
    return;
  }
  run_fc(cached_fc(key), args.in(0).raw_data(), args.in(1).raw_data(), args.in(2).raw_data(),
         y.raw_data());
  post_op_in_place(key.activation, y.data<float>(), y.size(), args.ctx);
}

std::vector<TensorSpec> infer_fully_connected(const InferArgs& args) {
  const TensorSpec& x = args.inputs[0];
  const TensorSpec& w = args.inputs[1];
  const TensorSpec& b = args.inputs[2];
  JANUS_CHECK(x.shape.ndim() == 2, ShapeError,
              "fully_connected: input has shape {}, expected 2 dimensions [batch, in_features]",
              x.shape);
  JANUS_CHECK(w.shape.ndim() == 2, ShapeError,
              "fully_connected: weight has shape {}, expected 2 dimensions [out_features, "
              "in_features]",
              w.shape);
  JANUS_CHECK(x.shape[1] == w.shape[1], ShapeError,
              "fully_connected: input {} has {} features but weight {} expects {} (weight is "
              "[out_features, in_features])",
              x.shape, x.shape[1], w.shape, w.shape[1]);
  JANUS_CHECK(b.shape == Shape{w.shape[0]}, ShapeError,
              "fully_connected: bias has shape {} for weight {}, expected [{}]", b.shape, w.shape,
              w.shape[0]);
  JANUS_CHECK(
      x.dtype == w.dtype && x.dtype == b.dtype, TypeError,
      "fully_connected: input, weight and bias have dtypes {}, {} and {}, expected one dtype",
      x.dtype, w.dtype, b.dtype);
  JANUS_CHECK(x.dtype == DType::kFloat32 || x.dtype == DType::kFloat64, TypeError,
              "fully_connected: dtype {} is not supported, expected float32 or float64", x.dtype);
  FullyConnectedAttrs::from(args.attrs);  // throws for an activation that is not a post-op
  return {TensorSpec{Shape{x.shape[0], w.shape[0]}, x.dtype, x.device}};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "fully_connected",
    .doc = "y = x · weightᵀ + bias for x [N, K], weight [M, K], bias [M] (oneDNN matmul; "
           "for N = 1 and a small weight, a single-threaded matrix-vector loop).\n\n"
           "Without a bias, pass zeros of shape [M]: the bias gradient is then simply unused. "
           "activation \"relu\", \"sigmoid\" or \"tanh\" applies that operator's function to y "
           "in the same call (the graph's fuse_bias_activation pass sets it): the fused call and "
           "the separate operator give identical results, NaN included.",
    .inputs = {"x", "weight", "bias"},
    .outputs = {"y"},
    .attrs = {{"activation", AttrType::kString, std::string(),
               "'', 'relu', 'sigmoid' or 'tanh', applied to the result"}},
    .attr_fields = attr_fields<FullyConnectedAttrs>(),
    .infer = infer_fully_connected,
    .kernels = {{DeviceType::kCPU, fully_connected_cpu}},
    .prepare = prepare_fc,
    // dy: [N, M] -> dx = dy · W [N, K], dW = dyᵀ · x [M, K], db = sum over N [M].
    // dy first goes back through the activation, from its output y. dW and db go into their
    // gradient buffers when backward gives them.
    .grad = [](const GradArgs& g) -> std::vector<NDArray> {
      static const OpDef& dot_op = get_op("dot");
      static const OpDef& sum_op = get_op("sum");
      const NDArray dy = post_op_backward(activation_of(g.attrs), g.y(0), g.dy(0));
      return {g.needs(0) ? dot(dy, g.x(1)) : NDArray(),
              g.needs(1) ? invoke_one_to(dot_op, {dy, g.x(0)}, {/*transpose_a=*/true, false},
                                         g.grad_buffer(1))
                         : NDArray(),
              g.needs(2)
                  ? invoke_one_to(sum_op, {dy}, {std::vector<int64_t>{0}, false}, g.grad_buffer(2))
                  : NDArray()};
    },
});

}  // namespace janus::ops

namespace janus {
NDArray fully_connected(const NDArray& x, const NDArray& weight, const NDArray& bias) {
  static const ops::OpDef& op = ops::get_op("fully_connected");
  return ops::invoke(op, {x, weight, bias})[0];
}
}  // namespace janus

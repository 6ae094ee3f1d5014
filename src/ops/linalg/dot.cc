// dot(a, b, transpose_a, transpose_b): matrix product of 2-D arrays through oneDNN matmul.
#include "janus/ops/ops.h"

#include "../op_utils.h"
#include "gemm.h"
#include "linalg_attrs.h"

namespace janus::ops {
namespace {

GemmKey matmul_key(const Shape& a, const Shape& b, const Attrs& attrs) {
  const ProductAttrs t = ProductAttrs::from(attrs);
  const bool ta = t.transpose_a;
  const bool tb = t.transpose_b;
  return GemmKey{ta ? a[1] : a[0], ta ? a[0] : a[1], tb ? b[0] : b[1], ta, tb};
}

void prepare_dot(const InferArgs& args, std::span<const TensorSpec>) {
  const GemmKey key = matmul_key(args.inputs[0].shape, args.inputs[1].shape, args.attrs);
  if (uses_onednn(key, args.inputs[0].dtype)) cached_gemm(key);
}

void dot_cpu(const KernelArgs& args) {
  const GemmKey key = matmul_key(args.in(0).shape(), args.in(1).shape(), args.attrs);
  const NDArray& out = args.out(0);
  if (key.m == 0 || key.n == 0) return;
  if (args.in(0).dtype() == DType::kFloat64) {
    gemm_reference(args.in(0).data<double>(), args.in(1).data<double>(), out.data<double>(), key);
    return;
  }
  if (!uses_onednn(key, out.dtype())) {  // K = 0: a sum of nothing
    std::fill_n(out.data<float>(), out.size(), 0.0f);
    return;
  }
  run_gemm(cached_gemm(key), args.in(0).raw_data(), args.in(1).raw_data(), out.raw_data());
}

std::vector<TensorSpec> infer_dot(const InferArgs& args) {
  const TensorSpec& a = args.inputs[0];
  const TensorSpec& b = args.inputs[1];
  JANUS_CHECK(
      a.shape.ndim() == 2 && b.shape.ndim() == 2, NotImplementedError,
      "dot: operands have shapes {} and {}; only 2-D operands are supported (use matmul for "
      "batched or 1-D operands)",
      a.shape, b.shape);
  JANUS_CHECK(a.dtype == b.dtype, TypeError,
              "dot: operands have dtypes {} and {}, expected the same dtype", a.dtype, b.dtype);
  JANUS_CHECK(a.dtype == DType::kFloat32 || a.dtype == DType::kFloat64, TypeError,
              "dot: dtype {} is not supported, expected float32 or float64", a.dtype);
  const ProductAttrs t = ProductAttrs::from(args.attrs);
  const bool ta = t.transpose_a;
  const bool tb = t.transpose_b;
  const int64_t m = ta ? a.shape[1] : a.shape[0];
  const int64_t ka = ta ? a.shape[0] : a.shape[1];
  const int64_t kb = tb ? b.shape[1] : b.shape[0];
  const int64_t n = tb ? b.shape[0] : b.shape[1];
  JANUS_CHECK(ka == kb, ShapeError,
              "dot: inner dimensions differ: {}{} · {}{} gives {} and {}, expected them equal",
              a.shape, ta ? "ᵀ" : "", b.shape, tb ? "ᵀ" : "", ka, kb);
  return {TensorSpec{Shape{m, n}, a.dtype, a.device}};
}

// C = op(A) · op(B). Gradients keep each operand's stored layout:
//   A·B:   dA = dC·Bᵀ      dB = Aᵀ·dC
//   Aᵀ·B:  dA = B·dCᵀ      dB = A·dC        (A stored [K, M])
//   A·Bᵀ:  dA = dC·B       dB = dCᵀ·A       (B stored [N, K])
//   Aᵀ·Bᵀ: dA = Bᵀ·dCᵀ     dB = dCᵀ·Aᵀ
std::vector<NDArray> dot_grad(const GradArgs& g) {
  const ProductAttrs t = ProductAttrs::from(g.attrs);
  const bool ta = t.transpose_a;
  const bool tb = t.transpose_b;
  const NDArray& a = g.x(0);
  const NDArray& b = g.x(1);
  const NDArray& dc = g.dy(0);
  // Each gradient is one product of dc with the other operand; only the needed ones run.
  auto grad_a = [&] {
    if (!ta && !tb) return dot(dc, b, false, true);
    if (ta && !tb) return dot(b, dc, false, true);
    if (!ta && tb) return dot(dc, b);
    return dot(b, dc, true, true);
  };
  auto grad_b = [&] {
    if (!ta && !tb) return dot(a, dc, true, false);
    if (ta && !tb) return dot(a, dc);
    if (!ta && tb) return dot(dc, a, true, false);
    return dot(dc, a, true, true);
  };
  return {g.needs(0) ? grad_a() : NDArray(), g.needs(1) ? grad_b() : NDArray()};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "dot",
    .doc =
        "Matrix product op(a) · op(b) of 2-D arrays (oneDNN matmul, primitives cached by shape).",
    .inputs = {"a", "b"},
    .outputs = {"y"},
    .attrs = {{"transpose_a", AttrType::kBool, false, "use aᵀ"},
              {"transpose_b", AttrType::kBool, false, "use bᵀ"}},
    .attr_fields = attr_fields<ProductAttrs>(),
    .infer = infer_dot,
    .kernels = {{DeviceType::kCPU, dot_cpu}},
    .prepare = prepare_dot,
    .grad = dot_grad,
});

}  // namespace janus::ops

namespace janus {
NDArray dot(const NDArray& a, const NDArray& b, bool transpose_a, bool transpose_b) {
  static const ops::OpDef& op = ops::get_op("dot");
  return ops::invoke(op, {a, b}, {transpose_a, transpose_b})[0];
}
}  // namespace janus

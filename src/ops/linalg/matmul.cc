// matmul(a, b, transpose_a, transpose_b): NumPy's matmul (batched, broadcast batch dimensions,
// 1-D operands promoted and the added axis removed) through one cached 2-D oneDNN matmul per
// shape, run once per batch entry.
#include <vector>

#include "janus/ops/ops.h"

#include "../op_utils.h"
#include "gemm.h"
#include "linalg_attrs.h"

namespace janus::ops {
namespace {

/// The operands as stacks of matrices: batch shape (broadcast), and for each operand the
/// matrix stride per batch axis (0 where it broadcasts).
struct MatmulPlan {
  GemmKey gemm;
  Shape batch;
  std::vector<int64_t> a_strides, b_strides;  // in matrices
  Shape out;
};

// 1-D operands become [1, K] (a) and [K, 1] (b), as in NumPy.
Shape promote(const Shape& s, bool is_a) {
  if (s.ndim() != 1) return s;
  return is_a ? Shape{1, s[0]} : Shape{s[0], 1};
}

std::vector<int64_t> batch_strides(const Shape& s, const Shape& batch) {
  const int nb = batch.ndim(), ns = s.ndim() - 2;
  std::vector<int64_t> st(static_cast<size_t>(nb), 0);
  int64_t stride = 1;
  for (int i = ns - 1; i >= 0; --i) {
    st[static_cast<size_t>(nb - ns + i)] = s[i] == 1 ? 0 : stride;
    stride *= s[i];
  }
  return st;
}

MatmulPlan plan_matmul(const Shape& a_shape, const Shape& b_shape, const Attrs& attrs) {
  const ProductAttrs t = ProductAttrs::from(attrs);
  const bool ta = t.transpose_a, tb = t.transpose_b;
  JANUS_CHECK(a_shape.ndim() >= 1 && b_shape.ndim() >= 1, ShapeError,
              "matmul: operands have shapes {} and {}, expected at least 1 dimension each", a_shape,
              b_shape);
  JANUS_CHECK(!(ta && a_shape.ndim() == 1) && !(tb && b_shape.ndim() == 1), ValueError,
              "matmul: a 1-D operand cannot be transposed (shapes {} and {}, transpose_a={}, "
              "transpose_b={})",
              a_shape, b_shape, ta, tb);
  const Shape a = promote(a_shape, true), b = promote(b_shape, false);
  const int na = a.ndim(), nb = b.ndim();
  const int64_t m = ta ? a[na - 1] : a[na - 2], ka = ta ? a[na - 2] : a[na - 1];
  const int64_t kb = tb ? b[nb - 1] : b[nb - 2], n = tb ? b[nb - 2] : b[nb - 1];
  JANUS_CHECK(ka == kb, ShapeError,
              "matmul: inner dimensions differ: {}{} @ {}{} gives {} and {}, expected them equal",
              a_shape, ta ? "ᵀ" : "", b_shape, tb ? "ᵀ" : "", ka, kb);
  MatmulPlan p;
  p.gemm = GemmKey{m, ka, n, ta, tb};
  const Shape a_batch(std::vector<int64_t>(a.dims().begin(), a.dims().end() - 2));
  const Shape b_batch(std::vector<int64_t>(b.dims().begin(), b.dims().end() - 2));
  for (int i = 1; i <= std::min(a_batch.ndim(), b_batch.ndim()); ++i) {
    const int64_t da = a_batch[a_batch.ndim() - i], db = b_batch[b_batch.ndim() - i];
    JANUS_CHECK(da == db || da == 1 || db == 1, ShapeError,
                "matmul: batch dimensions of {} and {} do not broadcast (extents {} and {} at "
                "batch axis {}), expected equal extents or 1",
                a_shape, b_shape, da, db, -i);
  }
  p.batch = broadcast_shapes("matmul", a_batch, b_batch);
  p.a_strides = batch_strides(a, p.batch);
  p.b_strides = batch_strides(b, p.batch);
  std::vector<int64_t> out = p.batch.dims();
  if (a_shape.ndim() > 1) out.push_back(m);
  if (b_shape.ndim() > 1) out.push_back(n);
  p.out = Shape(std::move(out));
  return p;
}

void prepare_matmul(const InferArgs& args, std::span<const TensorSpec>) {
  const MatmulPlan p = plan_matmul(args.inputs[0].shape, args.inputs[1].shape, args.attrs);
  if (uses_onednn(p.gemm, args.inputs[0].dtype)) cached_gemm(p.gemm);
}

template <typename T, typename Gemm>
void for_each_batch(const NDArray& a, const NDArray& b, const NDArray& c, const MatmulPlan& p,
                    Gemm gemm) {
  const GemmKey& g = p.gemm;
  const int nb = p.batch.ndim();
  std::vector<int64_t> idx(static_cast<size_t>(nb), 0);
  const int64_t count = p.batch.numel();
  int64_t ao = 0, bo = 0;
  for (int64_t e = 0; e < count; ++e) {
    gemm(a.data<T>() + ao * g.m * g.k, b.data<T>() + bo * g.k * g.n, c.data<T>() + e * g.m * g.n);
    for (int d = nb - 1; d >= 0; --d) {  // odometer over the batch axes
      const size_t ud = static_cast<size_t>(d);
      ao += p.a_strides[ud];
      bo += p.b_strides[ud];
      if (++idx[ud] < p.batch[d]) break;
      ao -= p.a_strides[ud] * p.batch[d];
      bo -= p.b_strides[ud] * p.batch[d];
      idx[ud] = 0;
    }
  }
}

void matmul_cpu(const KernelArgs& args) {
  const MatmulPlan p = plan_matmul(args.in(0).shape(), args.in(1).shape(), args.attrs);
  const NDArray& out = args.out(0);
  if (out.size() == 0) return;
  const GemmKey& g = p.gemm;
  if (out.dtype() == DType::kFloat64) {
    for_each_batch<double>(
        args.in(0), args.in(1), out, p,
        [&](const double* a, const double* b, double* c) { gemm_reference(a, b, c, g); });
    return;
  }
  if (!uses_onednn(g, out.dtype())) {  // K = 0: a sum of nothing
    std::fill_n(out.data<float>(), out.size(), 0.0f);
    return;
  }
  const CachedGemm& prim = cached_gemm(g);
  for_each_batch<float>(args.in(0), args.in(1), out, p,
                        [&](const float* a, const float* b, float* c) { run_gemm(prim, a, b, c); });
}

std::vector<TensorSpec> infer_matmul(const InferArgs& args) {
  const TensorSpec& a = args.inputs[0];
  const TensorSpec& b = args.inputs[1];
  JANUS_CHECK(a.dtype == b.dtype, TypeError,
              "matmul: operands have dtypes {} and {}, expected the same dtype", a.dtype, b.dtype);
  JANUS_CHECK(a.dtype == DType::kFloat32 || a.dtype == DType::kFloat64, TypeError,
              "matmul: dtype {} is not supported, expected float32 or float64", a.dtype);
  return {TensorSpec{plan_matmul(a.shape, b.shape, args.attrs).out, a.dtype, a.device}};
}

// The rules of dot, batched: each product has the broadcast batch shape and is summed back to
// its operand's shape. 1-D operands work on their promoted 2-D forms and are reshaped back.
//   A·B:   dA = dC·Bᵀ      dB = Aᵀ·dC
//   Aᵀ·B:  dA = B·dCᵀ      dB = A·dC
//   A·Bᵀ:  dA = dC·B       dB = dCᵀ·A
//   Aᵀ·Bᵀ: dA = Bᵀ·dCᵀ     dB = dCᵀ·Aᵀ
std::vector<NDArray> matmul_grad(const GradArgs& g) {
  const ProductAttrs t = ProductAttrs::from(g.attrs);
  const bool ta = t.transpose_a, tb = t.transpose_b;
  const Shape as = promote(g.x(0).shape(), true), bs = promote(g.x(1).shape(), false);
  const NDArray a = g.x(0).ndim() == 1 ? reshape(g.x(0), as) : g.x(0);
  const NDArray b = g.x(1).ndim() == 1 ? reshape(g.x(1), bs) : g.x(1);
  const MatmulPlan p = plan_matmul(as, bs, g.attrs);
  std::vector<int64_t> full = p.batch.dims();
  full.push_back(p.gemm.m);
  full.push_back(p.gemm.n);
  const NDArray dc = reshape(g.dy(0), Shape(std::move(full)));
  NDArray da, db;
  if (!ta && !tb) {
    if (g.needs(0)) da = matmul(dc, b, false, true);
    if (g.needs(1)) db = matmul(a, dc, true, false);
  } else if (ta && !tb) {
    if (g.needs(0)) da = matmul(b, dc, false, true);
    if (g.needs(1)) db = matmul(a, dc);
  } else if (!ta && tb) {
    if (g.needs(0)) da = matmul(dc, b);
    if (g.needs(1)) db = matmul(dc, a, true, false);
  } else {
    if (g.needs(0)) da = matmul(b, dc, true, true);
    if (g.needs(1)) db = matmul(dc, a, true, true);
  }
  return {da.defined() ? reshape(sum_to(da, as), g.x(0).shape()) : NDArray(),
          db.defined() ? reshape(sum_to(db, bs), g.x(1).shape()) : NDArray()};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "matmul",
    .doc = "NumPy matmul of op(a) and op(b): batched over leading axes with broadcasting; a 1-D "
           "operand is promoted to a matrix and the added axis removed (oneDNN for float32).",
    .inputs = {"a", "b"},
    .outputs = {"y"},
    .attrs = {{"transpose_a", AttrType::kBool, false, "swap the last two axes of a (2-D and up)"},
              {"transpose_b", AttrType::kBool, false, "swap the last two axes of b (2-D and up)"}},
    .attr_fields = attr_fields<ProductAttrs>(),
    .infer = infer_matmul,
    .kernels = {{DeviceType::kCPU, matmul_cpu}},
    .prepare = prepare_matmul,
    .grad = matmul_grad,
});

}  // namespace janus::ops

namespace janus {
NDArray matmul(const NDArray& a, const NDArray& b, bool transpose_a, bool transpose_b) {
  static const ops::OpDef& op = ops::get_op("matmul");
  return ops::invoke(op, {a, b}, {transpose_a, transpose_b})[0];
}
}  // namespace janus

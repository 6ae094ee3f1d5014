// dot(a, b, transpose_a, transpose_b): matrix product of 2-D arrays through oneDNN matmul.
#include <map>
#include <vector>
#include <mutex>
#include <tuple>

#include "../op_utils.h"
#include "janus/ops/ops.h"
#include "janus/engine/engine.h"
#include "onednn.h"

namespace janus::ops {
namespace {

// op(a) is [M, K] and op(b) is [K, N]; a transposed operand is described by strides, so no
// copy is made.
struct MatmulKey {
  int64_t m, k, n;
  bool ta, tb;
  auto operator<=>(const MatmulKey&) const = default;
};

dnnl::memory::desc matrix_desc(int64_t rows, int64_t cols, bool transposed) {
  // Logical [rows, cols]; stored row-major as [rows, cols], or as [cols, rows] if transposed.
  const dnnl::memory::dims strides = transposed ? dnnl::memory::dims{1, rows}
                                                : dnnl::memory::dims{cols, 1};
  return dnnl::memory::desc({rows, cols}, dnnl::memory::data_type::f32, strides);
}

// Primitives are built once per shape (building costs far more than running), on the caller's
// thread by `prepare_dot`, and shared by every worker: oneDNN primitives are safe to execute
// concurrently.
std::mutex g_cache_mu;
std::map<MatmulKey, dnnl::matmul>& matmul_cache() {
  static auto* cache = new std::map<MatmulKey, dnnl::matmul>();  // lives until exit
  return *cache;
}

const dnnl::matmul& cached_matmul(const MatmulKey& key) {
  std::lock_guard lock(g_cache_mu);
  auto& cache = matmul_cache();
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  const auto pd = dnnl::matmul::primitive_desc(
      dnnl::matmul::desc(matrix_desc(key.m, key.k, key.ta), matrix_desc(key.k, key.n, key.tb),
                         matrix_desc(key.m, key.n, false)),
      onednn_engine());
  const dnnl::matmul& prim = cache.emplace(key, dnnl::matmul(pd)).first->second;
  settle_onednn_state(pd.impl_info_str(), [&] {
    std::vector<float> a(static_cast<size_t>(key.m * key.k));
    std::vector<float> b(static_cast<size_t>(key.k * key.n));
    std::vector<float> c(static_cast<size_t>(key.m * key.n));
    dnnl::engine& eng = onednn_engine();
    dnnl::memory ma(matrix_desc(key.m, key.k, key.ta), eng, a.data());
    dnnl::memory mb(matrix_desc(key.k, key.n, key.tb), eng, b.data());
    dnnl::memory mc(matrix_desc(key.m, key.n, false), eng, c.data());
    dnnl::stream stream(eng);
    prim.execute(stream, {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}});
    stream.wait();
  });
  return prim;
}

template <typename T>
void dot_reference(const T* a, const T* b, T* c, const MatmulKey& s) {
  for (int64_t i = 0; i < s.m * s.n; ++i) c[i] = T(0);
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t p = 0; p < s.k; ++p) {
      const T av = s.ta ? a[p * s.m + i] : a[i * s.k + p];
      for (int64_t j = 0; j < s.n; ++j) c[i * s.n + j] += av * (s.tb ? b[j * s.k + p] : b[p * s.n + j]);
    }
  }
}

MatmulKey matmul_key(const Shape& a, const Shape& b, const Attrs& attrs) {
  const bool ta = attrs.get<bool>(0);
  const bool tb = attrs.get<bool>(1);
  return MatmulKey{ta ? a[1] : a[0], ta ? a[0] : a[1], tb ? b[0] : b[1], ta, tb};
}

bool uses_onednn(const MatmulKey& key, DType dtype) {
  return dtype == DType::kFloat32 && key.m > 0 && key.n > 0 && key.k > 0;
}

void prepare_dot(const InferArgs& args, std::span<const TensorSpec>) {
  const MatmulKey key = matmul_key(args.inputs[0].shape, args.inputs[1].shape, args.attrs);
  if (uses_onednn(key, args.inputs[0].dtype)) cached_matmul(key);
}

void dot_cpu(const KernelArgs& args) {
  const MatmulKey key = matmul_key(args.in(0).shape(), args.in(1).shape(), args.attrs);
  const NDArray& out = args.out(0);
  if (key.m == 0 || key.n == 0) return;
  if (args.in(0).dtype() == DType::kFloat64) {
    dot_reference(args.in(0).data<double>(), args.in(1).data<double>(), out.data<double>(), key);
    return;
  }
  if (!uses_onednn(key, out.dtype())) {  // K = 0: a sum of nothing
    std::fill_n(out.data<float>(), out.size(), 0.0f);
    return;
  }
  const dnnl::matmul& prim = cached_matmul(key);
  dnnl::engine& eng = onednn_engine();
  dnnl::memory a(matrix_desc(key.m, key.k, key.ta), eng, args.in(0).raw_data());
  dnnl::memory b(matrix_desc(key.k, key.n, key.tb), eng, args.in(1).raw_data());
  dnnl::memory c(matrix_desc(key.m, key.n, false), eng, out.raw_data());
  dnnl::stream stream(eng);
  prim.execute(stream, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
  stream.wait();
}

std::vector<TensorSpec> infer_dot(const InferArgs& args) {
  const TensorSpec& a = args.inputs[0];
  const TensorSpec& b = args.inputs[1];
  JANUS_CHECK(a.shape.ndim() == 2 && b.shape.ndim() == 2, NotImplementedError,
              "dot: operands have shapes {} and {}; only 2-D operands are supported so far", a.shape,
              b.shape);
  JANUS_CHECK(a.dtype == b.dtype, TypeError,
              "dot: operands have dtypes {} and {}, expected the same dtype", a.dtype, b.dtype);
  JANUS_CHECK(a.dtype == DType::kFloat32 || a.dtype == DType::kFloat64, TypeError,
              "dot: dtype {} is not supported, expected float32 or float64", a.dtype);
  const bool ta = args.attrs.get<bool>(0);
  const bool tb = args.attrs.get<bool>(1);
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
  const bool ta = g.attrs.get<bool>(0);
  const bool tb = g.attrs.get<bool>(1);
  const NDArray& a = g.x(0);
  const NDArray& b = g.x(1);
  const NDArray& dc = g.dy(0);
  if (!ta && !tb) return {dot(dc, b, false, true), dot(a, dc, true, false)};
  if (ta && !tb) return {dot(b, dc, false, true), dot(a, dc)};
  if (!ta && tb) return {dot(dc, b), dot(dc, a, true, false)};
  return {dot(b, dc, true, true), dot(dc, a, true, true)};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "dot",
    .doc = "Matrix product op(a) · op(b) of 2-D arrays (oneDNN matmul, primitives cached by shape).",
    .inputs = {"a", "b"},
    .outputs = {"y"},
    .attrs = {{"transpose_a", AttrType::kBool, false, "use aᵀ"},
              {"transpose_b", AttrType::kBool, false, "use bᵀ"}},
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

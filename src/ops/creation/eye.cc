// eye(n, m, k, dtype, device): an n x m array with ones on diagonal k and zeros elsewhere
// (NumPy's eye).
#include <algorithm>
#include <limits>

#include "janus/ops/ops.h"

#include "fill.h"

namespace janus::ops {
namespace {

void eye_cpu(const KernelArgs& args) {
  const EyeAttrs a = EyeAttrs::from(args.attrs);
  const int64_t n = a.n;
  const int64_t m = a.columns();
  const int64_t k = a.k;
  const NDArray& out = args.out(0);
  fill_value(out, 0.0, args.ctx);
  // Ones at (i, i + k) for 0 <= i < n and 0 <= i + k < m. Diagonals outside the array (k >= m
  // or k <= -n) have none; both tests come first so that -k never overflows.
  if (k >= m || k <= -n) return;
  const int64_t first_row = k >= 0 ? 0 : -k;
  const int64_t rows = std::min(n - first_row, m - (first_row + k));
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    T* p = out.data<T>();
    const T one = from_double<T>(1.0);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = first_row + r;
      p[i * m + i + k] = one;
    }
  });
}

std::vector<TensorSpec> infer_eye(const InferArgs& args) {
  const EyeAttrs a = EyeAttrs::from(args.attrs);
  const int64_t n = a.n;
  const int64_t m_attr = a.m;
  JANUS_CHECK(n >= 0, ValueError, "eye: n is {}, expected n >= 0", n);
  JANUS_CHECK(m_attr >= -1, ValueError, "eye: m is {}, expected m >= 0 (or -1 for m = n)", m_attr);
  const int64_t m = a.columns();
  JANUS_CHECK(m == 0 || n <= std::numeric_limits<int64_t>::max() / m, ValueError,
              "eye: n {} by m {} is more elements than int64 counts, expected n * m < 2^63", n, m);
  return {TensorSpec{Shape{n, m}, a.dtype, a.device}};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "eye",
    .doc = "An n x m array with ones on diagonal k (0: main, > 0: above, < 0: below), zeros "
           "elsewhere.",
    .inputs = {},
    .outputs = {"y"},
    .attrs = {{"n", AttrType::kInt, std::nullopt, "number of rows, >= 0"},
              {"m", AttrType::kInt, int64_t{-1}, "number of columns, >= 0; -1 means n"},
              {"k", AttrType::kInt, int64_t{0}, "index of the diagonal of ones"},
              {"dtype", AttrType::kDType, DType::kFloat32, "element type of the output"},
              {"device", AttrType::kDevice, cpu(0), "device of the output"}},
    .attr_fields = attr_fields<EyeAttrs>(),
    .infer = infer_eye,
    .kernels = {{DeviceType::kCPU, eye_cpu}},
    .not_differentiable = true,  // no inputs
});

}  // namespace janus::ops

namespace janus {
NDArray eye(int64_t n, int64_t m, int64_t k, DType dtype, Device device) {
  static const ops::OpDef& op = ops::get_op("eye");
  return ops::invoke(op, {}, {n, m, k, dtype, device})[0];
}
}  // namespace janus

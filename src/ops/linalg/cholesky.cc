// linalg_cholesky(a): the lower-triangular L with L Lᵀ = A for each symmetric positive-definite
// matrix of a stack [..., n, n], in double precision. Only A's lower triangle is read, as
// NumPy's and LAPACK's; a matrix that is not positive definite is a ValueError at the wait.
#include <cmath>

#include "janus/base/error.h"
#include "janus/ops/elementwise.h"
#include "janus/ops/linalg.h"
#include "janus/ops/ops.h"
#include "janus/ops/shape.h"

#include "square_matrices.h"

namespace janus::ops {
namespace {

void cholesky_cpu(const KernelArgs& args) {
  const NDArray& a = args.in(0);
  const int64_t n = a.shape()[a.ndim() - 1];
  for_each_matrix(a, args.out(0), [&](int64_t b, std::vector<double>& m) {
    auto at = [&](int64_t i, int64_t j) -> double& { return m[static_cast<size_t>(i * n + j)]; };
    for (int64_t j = 0; j < n; ++j) {
      double d = at(j, j);
      for (int64_t k = 0; k < j; ++k) d -= at(j, k) * at(j, k);
      JANUS_CHECK(d > 0.0, ValueError,
                  "linalg_cholesky: matrix {} of the stack {} is not positive definite (pivot {} "
                  "is {}), expected a symmetric positive-definite matrix",
                  b, a.shape(), j, d);
      const double l = std::sqrt(d);
      at(j, j) = l;
      for (int64_t i = j + 1; i < n; ++i) {
        double s = at(i, j);
        for (int64_t k = 0; k < j; ++k) s -= at(i, k) * at(j, k);
        at(i, j) = s / l;
      }
      for (int64_t i = 0; i < j; ++i) at(i, j) = 0.0;  // the upper triangle
    }
  });
}

std::vector<TensorSpec> infer_cholesky(const InferArgs& args) {
  check_square_matrices("linalg_cholesky", args.inputs[0]);
  return {args.inputs[0]};
}

// With Φ(X) the lower triangle of X with its diagonal halved and S = L⁻ᵀ Φ(Lᵀ dL) L⁻¹, the
// gradient of a symmetric A is (S + Sᵀ) / 2. The kernel reads only the lower triangle, whose
// entries below the diagonal stand for two of A's: dA = Φ(S + Sᵀ), which the chain rule
// through any A = f(B) turns into the same dB as the symmetric form.
std::vector<NDArray> cholesky_grad(const GradArgs& g) {
  const NDArray& l = g.y(0);
  const int64_t n = l.shape()[l.ndim() - 1];
  const NDArray idx = arange(0, static_cast<double>(n), 1, DType::kInt64, l.device());
  const NDArray rows = reshape(idx, Shape{n, 1});
  const NDArray cols = reshape(idx, Shape{1, n});
  const NDArray none = zeros(Shape{1}, l.dtype(), l.device());
  auto phi = [&](const NDArray& x) {
    return where(greater(rows, cols), x, where(equal(rows, cols), mul(x, 0.5), none));
  };
  const NDArray p = phi(matmul(l, g.dy(0), true, false));
  const NDArray l_inv = linalg_inv(l);
  const NDArray s = matmul(matmul(l_inv, p, true, false), l_inv);
  return {phi(add(s, matrix_transpose(s)))};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "linalg_cholesky",
    .doc = "The lower Cholesky factor L (L Lᵀ = A) of each symmetric positive-definite matrix of a "
           "stack [..., n, n], reading A's lower triangle (in double).",
    .inputs = {"a"},
    .outputs = {"l"},
    .infer = infer_cholesky,
    .kernels = {{DeviceType::kCPU, cholesky_cpu}},
    .grad = cholesky_grad,
});

}  // namespace janus::ops

namespace janus {
NDArray linalg_cholesky(const NDArray& a) {
  static const ops::OpDef& op = ops::get_op("linalg_cholesky");
  return ops::invoke(op, {a}, {})[0];
}
}  // namespace janus

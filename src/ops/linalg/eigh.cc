// linalg_eigh(a): the eigenvalues (ascending) and eigenvectors of each symmetric matrix of a stack
// [..., n, n], read from A's lower triangle as NumPy's default, by cyclic Jacobi rotations in
// double precision. Each eigenvector's largest component (the first of equal ones) is positive,
// so that the result is a function of A wherever the eigenvalues are distinct.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "janus/base/error.h"
#include "janus/ops/elementwise.h"
#include "janus/ops/linalg.h"
#include "janus/ops/ops.h"
#include "janus/ops/shape.h"

#include "square_matrices.h"

namespace janus::ops {
namespace {

constexpr int kMaxSweeps = 100;

// Diagonalizes the symmetric m (row-major n x n, both triangles filled) in place, accumulating the
// rotations in v (identity on entry). False when the sweeps did not converge (NaN or inf).
bool jacobi(std::vector<double>& m, std::vector<double>& v, int64_t n) {
  auto at = [n](std::vector<double>& x, int64_t i, int64_t j) -> double& {
    return x[static_cast<size_t>(i * n + j)];
  };
  double total = 0.0;
  for (const double e : m) total += e * e;
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    double off = 0.0;
    for (int64_t p = 0; p < n; ++p) {
      for (int64_t q = p + 1; q < n; ++q) off += 2.0 * at(m, p, q) * at(m, p, q);
    }
    if (off <= 1e-32 * total) return true;  // also when A is zero or diagonal
    if (!std::isfinite(off)) return false;
    for (int64_t p = 0; p < n; ++p) {
      for (int64_t q = p + 1; q < n; ++q) {
        const double apq = at(m, p, q);
        if (apq == 0.0) continue;
        // The rotation by φ in the (p, q) plane that zeroes a_pq: cot 2φ = θ, t = tan φ.
        const double theta = (at(m, q, q) - at(m, p, p)) / (2.0 * apq);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::hypot(theta, 1.0));
        const double c = 1.0 / std::hypot(t, 1.0), s = t * c;
        for (int64_t k = 0; k < n; ++k) {  // A J
          const double kp = at(m, k, p), kq = at(m, k, q);
          at(m, k, p) = c * kp - s * kq;
          at(m, k, q) = s * kp + c * kq;
        }
        for (int64_t k = 0; k < n; ++k) {  // Jᵀ (A J)
          const double pk = at(m, p, k), qk = at(m, q, k);
          at(m, p, k) = c * pk - s * qk;
          at(m, q, k) = s * pk + c * qk;
        }
        for (int64_t k = 0; k < n; ++k) {  // V J
          const double kp = at(v, k, p), kq = at(v, k, q);
          at(v, k, p) = c * kp - s * kq;
          at(v, k, q) = s * kp + c * kq;
        }
      }
    }
  }
  return false;
}

std::vector<TensorSpec> infer_eigh(const InferArgs& args) {
  const TensorSpec& a = args.inputs[0];
  check_square_matrices("linalg_eigh", a);
  return {with_batch_of(a, {a.shape[a.shape.ndim() - 1]}), a};
}

void eigh_cpu(const KernelArgs& args) {
  const NDArray& a = args.in(0);
  const NDArray& w = args.out(0);
  const NDArray& vectors = args.out(1);
  const int64_t n = a.shape()[a.ndim() - 1];
  const auto n2 = static_cast<size_t>(n * n);
  std::vector<double> v(n2), values(static_cast<size_t>(n));
  std::vector<int64_t> order(static_cast<size_t>(n));
  for_each_matrix(a, vectors, [&](int64_t b, std::vector<double>& m) {
    for (int64_t i = 0; i < n; ++i) {  // the lower triangle, mirrored
      for (int64_t j = i + 1; j < n; ++j) m[static_cast<size_t>(i * n + j)] = m[j * n + i];
    }
    std::fill(v.begin(), v.end(), 0.0);
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i * n + i)] = 1.0;
    JANUS_CHECK(jacobi(m, v, n), ValueError,
                "linalg_eigh: the eigenvalues of matrix {} of the stack {} did not converge in "
                "{} sweeps, expected finite entries",
                b, a.shape(), kMaxSweeps);
    for (int64_t i = 0; i < n; ++i) values[static_cast<size_t>(i)] = m[i * n + i];
    std::iota(order.begin(), order.end(), int64_t{0});
    std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
      return values[static_cast<size_t>(x)] < values[static_cast<size_t>(y)];
    });
    for (int64_t j = 0; j < n; ++j) {  // column j of the result: eigenvector order[j]
      const int64_t src = order[static_cast<size_t>(j)];
      int64_t largest = 0;
      for (int64_t i = 1; i < n; ++i) {
        if (std::abs(v[i * n + src]) > std::abs(v[largest * n + src])) largest = i;
      }
      const double sign = v[largest * n + src] < 0 ? -1.0 : 1.0;
      for (int64_t i = 0; i < n; ++i) m[static_cast<size_t>(i * n + j)] = sign * v[i * n + src];
      const double value = values[static_cast<size_t>(src)];
      if (w.dtype() == DType::kFloat64) {
        w.data<double>()[b * n + j] = value;
      } else {
        w.data<float>()[b * n + j] = static_cast<float>(value);
      }
    }
  });
}

// With G = V (diag(dw) + F ∘ (Vᵀ dV)) Vᵀ, F_ij = 1 / (w_j - w_i) off the diagonal, the gradient
// of a symmetric A is (G + Gᵀ) / 2; the kernel reads only the lower triangle, whose entries below
// the diagonal stand for two of A's: dA = Φ(G + Gᵀ), Φ keeping the lower triangle with the
// diagonal halved (as linalg_cholesky). Assumes distinct eigenvalues, as every such rule.
std::vector<NDArray> eigh_grad(const GradArgs& g) {
  const NDArray& w = g.y(0);
  const NDArray& v = g.y(1);
  const int64_t n = v.shape()[v.ndim() - 1];
  const NDArray idx = arange(0, static_cast<double>(n), 1, DType::kInt64, v.device());
  const NDArray rows = reshape(idx, Shape{n, 1});
  const NDArray cols = reshape(idx, Shape{1, n});
  const NDArray diagonal = equal(rows, cols);
  const NDArray one = ones(Shape{1}, v.dtype(), v.device());
  const NDArray none = zeros(Shape{1}, v.dtype(), v.device());
  const NDArray gaps = subtract(expand_dims(w, -2), expand_dims(w, -1));  // (i, j): w_j - w_i
  const NDArray inner = where(diagonal, expand_dims(g.dy(0), -1),
                              divide(matmul(v, g.dy(1), true, false), where(diagonal, one, gaps)));
  const NDArray full = matmul(matmul(v, inner), v, false, true);
  const NDArray sym = add(full, matrix_transpose(full));
  return {where(greater(rows, cols), sym, where(diagonal, mul(sym, 0.5), none))};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "linalg_eigh",
    .doc = "The eigenvalues w [..., n] (ascending) and eigenvectors v [..., n, n] (columns, each "
           "with its largest component positive) of each symmetric matrix of a stack [..., n, "
           "n], read from its lower triangle (Jacobi rotations, in double).",
    .inputs = {"a"},
    .outputs = {"w", "v"},
    .infer = infer_eigh,
    .kernels = {{DeviceType::kCPU, eigh_cpu}},
    .grad = eigh_grad,
});

}  // namespace janus::ops

namespace janus {
std::pair<NDArray, NDArray> linalg_eigh(const NDArray& a) {
  static const ops::OpDef& op = ops::get_op("linalg_eigh");
  std::vector<NDArray> out = ops::invoke(op, {a}, {});
  return {std::move(out[0]), std::move(out[1])};
}
}  // namespace janus

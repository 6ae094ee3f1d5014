// linalg_inv(a) and linalg_slogdet(a): the inverse, and the sign and log |det|, of each square
// matrix of a stack [..., n, n], by Gaussian elimination with partial pivoting in double
// precision (NumPy's numbers for well-conditioned matrices; LAPACK's blocked routines matter
// only far above the sizes a Gluon model inverts).
#include <cmath>
#include <limits>
#include <utility>

#include "janus/base/error.h"
#include "janus/ops/linalg.h"
#include "janus/ops/ops.h"
#include "janus/ops/shape.h"

#include "square_matrices.h"

namespace janus::ops {
namespace {

// The row at or below `col` with the largest |m[row][col]| (partial pivoting).
int64_t pivot_row(const std::vector<double>& m, int64_t n, int64_t col) {
  int64_t best = col;
  for (int64_t r = col + 1; r < n; ++r) {
    if (std::abs(m[static_cast<size_t>(r * n + col)]) >
        std::abs(m[static_cast<size_t>(best * n + col)])) {
      best = r;
    }
  }
  return best;
}

void swap_rows(std::vector<double>& m, int64_t n, int64_t a, int64_t b) {
  if (a == b) return;
  std::swap_ranges(m.begin() + a * n, m.begin() + (a + 1) * n, m.begin() + b * n);
}

// Gauss-Jordan: m becomes its inverse; false when a pivot is zero (m is singular).
bool invert(std::vector<double>& m, int64_t n, std::vector<double>& work) {
  work.assign(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) work[static_cast<size_t>(i * n + i)] = 1.0;
  for (int64_t col = 0; col < n; ++col) {
    const int64_t p = pivot_row(m, n, col);
    const double pivot = m[static_cast<size_t>(p * n + col)];
    if (pivot == 0.0 || !std::isfinite(pivot)) return false;
    swap_rows(m, n, p, col);
    swap_rows(work, n, p, col);
    const double scale = 1.0 / pivot;
    for (int64_t j = 0; j < n; ++j) {
      m[static_cast<size_t>(col * n + j)] *= scale;
      work[static_cast<size_t>(col * n + j)] *= scale;
    }
    for (int64_t r = 0; r < n; ++r) {
      const double f = m[static_cast<size_t>(r * n + col)];
      if (r == col || f == 0.0) continue;
      for (int64_t j = 0; j < n; ++j) {
        m[static_cast<size_t>(r * n + j)] -= f * m[static_cast<size_t>(col * n + j)];
        work[static_cast<size_t>(r * n + j)] -= f * work[static_cast<size_t>(col * n + j)];
      }
    }
  }
  m.swap(work);
  return true;
}

void inv_cpu(const KernelArgs& args) {
  const NDArray& a = args.in(0);
  const int64_t n = a.shape()[a.ndim() - 1];
  std::vector<double> work;
  for_each_matrix(a, args.out(0), [&](int64_t b, std::vector<double>& m) {
    JANUS_CHECK(invert(m, n, work), ValueError,
                "linalg_inv: matrix {} of the stack {} is singular, expected an invertible matrix",
                b, a.shape());
  });
}

std::vector<TensorSpec> infer_inv(const InferArgs& args) {
  check_square_matrices("linalg_inv", args.inputs[0]);
  return {args.inputs[0]};
}

// Y = A⁻¹: dA = -Yᵀ · dY · Yᵀ.
std::vector<NDArray> inv_grad(const GradArgs& g) {
  const NDArray& y = g.y(0);
  return {mul(matmul(matmul(y, g.dy(0), true, false), y, false, true), -1.0)};
}

void slogdet_cpu(const KernelArgs& args) {
  const NDArray& a = args.in(0);
  const int64_t n = a.shape()[a.ndim() - 1];
  std::vector<double> sign(static_cast<size_t>(args.out(0).size()));
  std::vector<double> logabs(sign.size());
  for_each_matrix(a, NDArray(), [&](int64_t b, std::vector<double>& m) {
    double s = 1.0, l = 0.0;
    for (int64_t col = 0; col < n && s != 0.0; ++col) {
      const int64_t p = pivot_row(m, n, col);
      const double pivot = m[static_cast<size_t>(p * n + col)];
      if (pivot == 0.0) {
        s = 0.0;
        l = -std::numeric_limits<double>::infinity();
        break;
      }
      if (p != col) s = -s;
      swap_rows(m, n, p, col);
      if (pivot < 0) s = -s;
      l += std::log(std::abs(pivot));
      for (int64_t r = col + 1; r < n; ++r) {
        const double f = m[static_cast<size_t>(r * n + col)] / pivot;
        for (int64_t j = col; j < n; ++j) {
          m[static_cast<size_t>(r * n + j)] -= f * m[static_cast<size_t>(col * n + j)];
        }
      }
    }
    sign[static_cast<size_t>(b)] = s;
    logabs[static_cast<size_t>(b)] = l;
  });
  auto store = [&]<typename T>() {
    std::transform(sign.begin(), sign.end(), args.out(0).data<T>(),
                   [](double v) { return static_cast<T>(v); });
    std::transform(logabs.begin(), logabs.end(), args.out(1).data<T>(),
                   [](double v) { return static_cast<T>(v); });
  };
  if (a.dtype() == DType::kFloat64) {
    store.template operator()<double>();
  } else {
    store.template operator()<float>();
  }
}

std::vector<TensorSpec> infer_slogdet(const InferArgs& args) {
  const TensorSpec& a = args.inputs[0];
  check_square_matrices("linalg_slogdet", a);
  const TensorSpec out{batch_shape(a.shape), a.dtype, a.device};
  return {out, out};
}

// d log|det A| = tr(A⁻¹ dA): dA = dlogabs · A⁻ᵀ (broadcast over each matrix); the sign is
// piecewise constant.
std::vector<NDArray> slogdet_grad(const GradArgs& g) {
  const NDArray& a = g.x(0);
  const NDArray& dl = g.dy(1);
  std::vector<int64_t> dims(dl.shape().dims().begin(), dl.shape().dims().end());
  dims.push_back(1);
  dims.push_back(1);
  return {mul(reshape(dl, Shape(std::move(dims))), matrix_transpose(linalg_inv(a)))};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "linalg_inv",
    .doc = "The inverse of each square matrix of a stack [..., n, n] (Gauss-Jordan, partial "
           "pivoting, in double); a singular matrix is a ValueError at the wait.",
    .inputs = {"a"},
    .outputs = {"y"},
    .infer = infer_inv,
    .kernels = {{DeviceType::kCPU, inv_cpu}},
    .grad = inv_grad,
});

JANUS_DEFINE_OP({
    .name = "linalg_slogdet",
    .doc = "The sign and the natural log of |det| of each square matrix of a stack [..., n, n] "
           "(LU with partial pivoting, in double): sign 0 and -inf for a singular matrix.",
    .inputs = {"a"},
    .outputs = {"sign", "logabsdet"},
    .infer = infer_slogdet,
    .kernels = {{DeviceType::kCPU, slogdet_cpu}},
    .grad = slogdet_grad,
});

}  // namespace janus::ops

namespace janus {
NDArray linalg_inv(const NDArray& a) {
  static const ops::OpDef& op = ops::get_op("linalg_inv");
  return ops::invoke(op, {a}, {})[0];
}

std::pair<NDArray, NDArray> linalg_slogdet(const NDArray& a) {
  static const ops::OpDef& op = ops::get_op("linalg_slogdet");
  std::vector<NDArray> out = ops::invoke(op, {a}, {});
  return {out[0], out[1]};
}
}  // namespace janus

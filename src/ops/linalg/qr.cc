// linalg_qr(a): the QR decomposition A = Q R of each matrix of a stack [..., m, n] by Householder
// reflections in double precision, k = min(m, n): reduced q [..., m, k] and r [..., k, n], or
// with `complete` q [..., m, m] and r [..., m, n]. R's diagonal is made nonnegative (Q's columns
// following), so that the result is a function of A wherever A's leading k columns are
// independent.
#include <algorithm>
#include <cmath>

#include "janus/base/error.h"
#include "janus/ops/elementwise.h"
#include "janus/ops/linalg.h"
#include "janus/ops/ops.h"
#include "janus/ops/shape.h"

#include "../typed_attrs.h"
#include "square_matrices.h"

namespace janus::ops {
namespace {

struct QrAttrs {
  bool complete = false;
  static constexpr auto fields() { return std::tuple{field("complete", &QrAttrs::complete)}; }
  static QrAttrs from(const Attrs& attrs) { return read_attrs<QrAttrs>(attrs); }
};

// The extents of one call: A is m x n, k = min(m, n); q is m x qcols, r is qcols x n.
struct QrShape {
  int64_t m, n, k, count, qcols;
};

QrShape qr_shape(const Shape& a, bool complete) {
  QrShape s{a[a.ndim() - 2], a[a.ndim() - 1], 0, 1, 0};
  s.k = std::min(s.m, s.n);
  s.qcols = complete ? s.m : s.k;
  for (int i = 0; i + 2 < a.ndim(); ++i) s.count *= a[i];
  return s;
}

std::vector<TensorSpec> infer_qr(const InferArgs& args) {
  const TensorSpec& a = args.inputs[0];
  check_matrices("linalg_qr", a);
  const QrShape s = qr_shape(a.shape, QrAttrs::from(args.attrs).complete);
  return {with_batch_of(a, {s.m, s.qcols}), with_batch_of(a, {s.qcols, s.n})};
}

// One matrix: r (m x n, row-major) becomes R and q (m x m, identity on entry) Q, A = Q R, with
// R's first k diagonal entries nonnegative.
void householder(std::vector<double>& r, std::vector<double>& q, int64_t m, int64_t n) {
  auto R = [&](int64_t i, int64_t j) -> double& { return r[static_cast<size_t>(i * n + j)]; };
  auto Q = [&](int64_t i, int64_t j) -> double& { return q[static_cast<size_t>(i * m + j)]; };
  std::vector<double> v(static_cast<size_t>(m));
  for (int64_t j = 0; j < std::min(m, n); ++j) {
    // The reflection I - 2 v vᵀ that maps R[j:, j] onto a multiple of the first unit vector.
    double norm = 0.0;
    for (int64_t i = j; i < m; ++i) norm += R(i, j) * R(i, j);
    norm = std::sqrt(norm);
    const double alpha = R(j, j) > 0 ? -norm : norm;
    double vnorm = 0.0;
    for (int64_t i = j; i < m; ++i) {
      v[static_cast<size_t>(i)] = R(i, j) - (i == j ? alpha : 0.0);
      vnorm += v[static_cast<size_t>(i)] * v[static_cast<size_t>(i)];
    }
    if (vnorm == 0.0) continue;  // the column is zero below the diagonal already
    vnorm = std::sqrt(vnorm);
    for (int64_t i = j; i < m; ++i) v[static_cast<size_t>(i)] /= vnorm;
    for (int64_t c = 0; c < n; ++c) {  // R ← (I - 2 v vᵀ) R
      double d = 0.0;
      for (int64_t i = j; i < m; ++i) d += v[static_cast<size_t>(i)] * R(i, c);
      for (int64_t i = j; i < m; ++i) R(i, c) -= 2.0 * d * v[static_cast<size_t>(i)];
    }
    for (int64_t row = 0; row < m; ++row) {  // Q ← Q (I - 2 v vᵀ)
      double d = 0.0;
      for (int64_t i = j; i < m; ++i) d += Q(row, i) * v[static_cast<size_t>(i)];
      for (int64_t i = j; i < m; ++i) Q(row, i) -= 2.0 * d * v[static_cast<size_t>(i)];
    }
    for (int64_t i = j + 1; i < m; ++i) R(i, j) = 0.0;  // exactly, not rounding's residue
  }
  for (int64_t i = 0; i < std::min(m, n); ++i) {
    if (R(i, i) >= 0) continue;
    for (int64_t c = 0; c < n; ++c) R(i, c) = -R(i, c);
    for (int64_t row = 0; row < m; ++row) Q(row, i) = -Q(row, i);
  }
}

void qr_cpu(const KernelArgs& args) {
  const NDArray& a = args.in(0);
  const QrShape s = qr_shape(a.shape(), QrAttrs::from(args.attrs).complete);
  std::vector<double> r(static_cast<size_t>(s.m * s.n)), q(static_cast<size_t>(s.m * s.m));
  auto run = [&]<typename T>() {
    const T* in = a.data<T>();
    T* qo = args.out(0).data<T>();
    T* ro = args.out(1).data<T>();
    for (int64_t b = 0; b < s.count; ++b) {
      std::transform(in + b * s.m * s.n, in + (b + 1) * s.m * s.n, r.begin(),
                     [](T x) { return static_cast<double>(x); });
      std::fill(q.begin(), q.end(), 0.0);
      for (int64_t i = 0; i < s.m; ++i) q[static_cast<size_t>(i * s.m + i)] = 1.0;
      householder(r, q, s.m, s.n);
      for (int64_t i = 0; i < s.m; ++i) {
        for (int64_t j = 0; j < s.qcols; ++j) {
          qo[(b * s.m + i) * s.qcols + j] = static_cast<T>(q[static_cast<size_t>(i * s.m + j)]);
        }
      }
      for (int64_t i = 0; i < s.qcols; ++i) {
        for (int64_t j = 0; j < s.n; ++j) {
          ro[(b * s.qcols + i) * s.n + j] = static_cast<T>(r[static_cast<size_t>(i * s.n + j)]);
        }
      }
    }
  };
  if (a.dtype() == DType::kFloat64) {
    run.template operator()<double>();
  } else {
    run.template operator()<float>();
  }
}

// The rule for m >= n (reduced, R square and invertible): with M = R dRᵀ - dQᵀ Q and copyltu(M)
// its lower triangle mirrored onto the upper one, dA = (dQ + Q copyltu(M)) R⁻ᵀ. For m < n, with
// A = [X | Y] (X the first m columns, X = Q U, R = [U | V]): dY = Q dV and dX follows the square
// rule with dQ + Y dVᵀ in place of dQ.
NDArray qr_grad_tall(const NDArray& q, const NDArray& r, const NDArray& dq, const NDArray& dr) {
  const int64_t n = r.shape()[r.ndim() - 1];
  const NDArray idx = arange(0, static_cast<double>(n), 1, DType::kInt64, r.device());
  const NDArray below = greater(reshape(idx, Shape{n, 1}), reshape(idx, Shape{1, n}));
  const NDArray diagonal = equal(reshape(idx, Shape{n, 1}), reshape(idx, Shape{1, n}));
  const NDArray none = zeros(Shape{1}, r.dtype(), r.device());
  const NDArray m = subtract(matmul(r, dr, false, true), matmul(dq, q, true, false));
  const NDArray lower = where(below, m, none);
  const NDArray copyltu = add(add(lower, matrix_transpose(lower)), where(diagonal, m, none));
  return matmul(add(dq, matmul(q, copyltu)), matrix_transpose(linalg_inv(r)));
}

std::vector<NDArray> qr_grad(const GradArgs& g) {
  const Shape& shape = g.x(0).shape();
  const int64_t m = shape[shape.ndim() - 2], n = shape[shape.ndim() - 1];
  JANUS_CHECK(!QrAttrs::from(g.attrs).complete || m <= n, NotImplementedError,
              "linalg_qr: no gradient with complete for an input {} with more rows than columns "
              "(the added columns of Q are not a function of A), expected complete=false",
              shape);
  const NDArray& q = g.y(0);
  const NDArray& r = g.y(1);
  if (m >= n) return {qr_grad_tall(q, r, g.dy(0), g.dy(1))};
  const int axis = static_cast<int>(shape.ndim()) - 1;
  const NDArray y = slice_axis(g.x(0), axis, m, n);
  const NDArray u = slice_axis(r, axis, 0, m);
  const NDArray du = slice_axis(g.dy(1), axis, 0, m);
  const NDArray dv = slice_axis(g.dy(1), axis, m, n);
  const NDArray dx = qr_grad_tall(q, u, add(g.dy(0), matmul(y, dv, false, true)), du);
  return {concat(dx, matmul(q, dv), axis)};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "linalg_qr",
    .doc = "The QR decomposition A = Q R of each matrix of a stack [..., m, n] (Householder, in "
           "double): reduced q [..., m, k] and r [..., k, n], k = min(m, n), or with `complete` "
           "q [..., m, m] and r [..., m, n]; R's diagonal nonnegative.",
    .inputs = {"a"},
    .outputs = {"q", "r"},
    .attrs = {{"complete", AttrType::kBool, false, "Q square, R with A's shape"}},
    .attr_fields = attr_fields<QrAttrs>(),
    .infer = infer_qr,
    .kernels = {{DeviceType::kCPU, qr_cpu}},
    .grad = qr_grad,
});

}  // namespace janus::ops

namespace janus {
std::pair<NDArray, NDArray> linalg_qr(const NDArray& a, bool complete) {
  static const ops::OpDef& op = ops::get_op("linalg_qr");
  std::vector<NDArray> out = ops::invoke(op, {a}, {complete});
  return {std::move(out[0]), std::move(out[1])};
}
}  // namespace janus

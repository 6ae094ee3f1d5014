// linalg_svd(a): the reduced singular value decomposition A = U diag(s) Vᵀ of each matrix of a
// stack [..., m, n], k = min(m, n): u [..., m, k], s [..., k] descending, vt [..., k, n]; by
// one-sided Jacobi rotations (Hestenes) in double precision. Each right singular vector's largest
// component (the first of equal ones) is positive, u following, so that the result is a function
// of A wherever the singular values are distinct and nonzero.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "janus/base/error.h"
#include "janus/ops/elementwise.h"
#include "janus/ops/linalg.h"
#include "janus/ops/ops.h"
#include "janus/ops/shape.h"

#include "../typed_attrs.h"
#include "square_matrices.h"

namespace janus::ops {
namespace {

constexpr int kMaxSweeps = 100;

// A column-major r x c matrix of doubles: column j is data[j * r, (j + 1) * r).
struct Columns {
  int64_t r = 0, c = 0;
  std::vector<double> data;
  double* col(int64_t j) { return data.data() + j * r; }
};

double dot(const double* x, const double* y, int64_t n) {
  double acc = 0.0;
  for (int64_t i = 0; i < n; ++i) acc += x[i] * y[i];
  return acc;
}

// Rotates columns p and q of `x` by (c, s): x_p ← c x_p - s x_q, x_q ← s x_p + c x_q.
void rotate(Columns& x, int64_t p, int64_t q, double c, double s) {
  double* xp = x.col(p);
  double* xq = x.col(q);
  for (int64_t i = 0; i < x.r; ++i) {
    const double a = xp[i], b = xq[i];
    xp[i] = c * a - s * b;
    xq[i] = s * a + c * b;
  }
}

// Orthogonalizes the columns of `a` (r >= c) by rotations accumulated in `v` (identity on entry),
// so that A V has orthogonal columns. False when the sweeps did not converge (NaN or inf).
bool hestenes(Columns& a, Columns& v) {
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    bool rotated = false;
    for (int64_t p = 0; p < a.c; ++p) {
      for (int64_t q = p + 1; q < a.c; ++q) {
        const double alpha = dot(a.col(p), a.col(p), a.r);
        const double beta = dot(a.col(q), a.col(q), a.r);
        const double gamma = dot(a.col(p), a.col(q), a.r);
        if (!std::isfinite(alpha + beta + gamma)) return false;
        if (std::abs(gamma) <= 1e-15 * std::sqrt(alpha * beta)) continue;
        rotated = true;
        // The rotation that makes columns p and q orthogonal: cot 2φ = ζ, t = tan φ.
        const double zeta = (beta - alpha) / (2.0 * gamma);
        const double t = (zeta >= 0 ? 1.0 : -1.0) / (std::abs(zeta) + std::hypot(zeta, 1.0));
        const double c = 1.0 / std::hypot(t, 1.0), s = t * c;
        rotate(a, p, q, c, s);
        rotate(v, p, q, c, s);
      }
    }
    if (!rotated) return true;
  }
  return false;
}

// The first unit vector outside the span of `basis` (orthonormal vectors of r entries, one after
// another), orthonormalized against them (Gram-Schmidt, twice for accuracy).
std::vector<double> next_orthonormal(const std::vector<double>& basis, int64_t r) {
  std::vector<double> u(static_cast<size_t>(r));
  for (int64_t e = 0; e < r; ++e) {
    std::fill(u.begin(), u.end(), 0.0);
    u[static_cast<size_t>(e)] = 1.0;
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t p = 0; p < basis.size(); p += static_cast<size_t>(r)) {
        const double d = dot(u.data(), basis.data() + p, r);
        for (int64_t i = 0; i < r; ++i)
          u[static_cast<size_t>(i)] -= d * basis[p + static_cast<size_t>(i)];
      }
    }
    const double norm = std::sqrt(dot(u.data(), u.data(), r));
    if (norm > 0.5) {  // some unit vector keeps at least 1 / sqrt(r) of its length; take a long one
      for (double& x : u) x /= norm;
      return u;
    }
  }
  return u;  // unreachable while basis holds fewer than r vectors
}

struct SvdAttrs {
  bool full_matrices = false;
  static constexpr auto fields() {
    return std::tuple{field("full_matrices", &SvdAttrs::full_matrices)};
  }
  static SvdAttrs from(const Attrs& attrs) { return read_attrs<SvdAttrs>(attrs); }
};

// The extents of one call: A is m x n, k = min(m, n); u has ucols columns and vt vcols rows (k,
// or m and n with full_matrices).
struct SvdShape {
  int64_t m, n, k, count, ucols, vcols;
};

SvdShape svd_shape(const Shape& a, bool full) {
  SvdShape s{a[a.ndim() - 2], a[a.ndim() - 1], 0, 1, 0, 0};
  s.k = std::min(s.m, s.n);
  s.ucols = full ? s.m : s.k;
  s.vcols = full ? s.n : s.k;
  for (int i = 0; i + 2 < a.ndim(); ++i) s.count *= a[i];
  return s;
}

std::vector<TensorSpec> infer_svd(const InferArgs& args) {
  const TensorSpec& a = args.inputs[0];
  check_matrices("linalg_svd", a);
  const SvdShape s = svd_shape(a.shape, SvdAttrs::from(args.attrs).full_matrices);
  return {with_batch_of(a, {s.m, s.ucols}), with_batch_of(a, {s.k}),
          with_batch_of(a, {s.vcols, s.n})};
}

// One matrix: x is A (or Aᵀ when m < n) as r x c columns, r >= c = k. Writes the left vectors of
// x into `left` (r x w, row-major, w = k or r: then completed to an orthonormal basis), its
// singular values (descending) into `values` and its right vectors into `right` (c x k,
// row-major); the caller fixes the signs.
void decompose(Columns& x, int64_t w, std::vector<double>& left, std::vector<double>& values,
               std::vector<double>& right, int64_t b, const Shape& shape) {
  const int64_t r = x.r, k = x.c;
  Columns v{k, k, std::vector<double>(static_cast<size_t>(k * k), 0.0)};
  for (int64_t i = 0; i < k; ++i) v.col(i)[i] = 1.0;
  JANUS_CHECK(hestenes(x, v), ValueError,
              "linalg_svd: the singular values of matrix {} of the stack {} did not converge in {} "
              "sweeps, expected finite entries",
              b, shape, kMaxSweeps);
  std::vector<double> norms(static_cast<size_t>(k));
  for (int64_t j = 0; j < k; ++j)
    norms[static_cast<size_t>(j)] = std::sqrt(dot(x.col(j), x.col(j), r));
  std::vector<int64_t> order(static_cast<size_t>(k));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
    return norms[static_cast<size_t>(p)] > norms[static_cast<size_t>(q)];
  });
  std::vector<double> basis;  // the left vectors so far, r each, for completing the basis
  for (int64_t j = 0; j < w; ++j) {
    std::vector<double> u;
    if (j >= k) {  // a column that full_matrices adds
      u = next_orthonormal(basis, r);
      basis.insert(basis.end(), u.begin(), u.end());
      for (int64_t i = 0; i < r; ++i)
        left[static_cast<size_t>(i * w + j)] = u[static_cast<size_t>(i)];
      continue;
    }
    const int64_t src = order[static_cast<size_t>(j)];
    const double sigma = norms[static_cast<size_t>(src)];
    const double* vs = v.col(src);
    values[static_cast<size_t>(j)] = sigma;
    for (int64_t i = 0; i < k; ++i) right[static_cast<size_t>(i * k + j)] = vs[i];
    u.resize(static_cast<size_t>(r));
    if (sigma > 0.0) {
      for (int64_t i = 0; i < r; ++i) u[static_cast<size_t>(i)] = x.col(src)[i] / sigma;
    } else {  // a zero singular value leaves its left vector free
      u = next_orthonormal(basis, r);
    }
    basis.insert(basis.end(), u.begin(), u.end());
    for (int64_t i = 0; i < r; ++i)
      left[static_cast<size_t>(i * w + j)] = u[static_cast<size_t>(i)];
  }
}

void svd_cpu(const KernelArgs& args) {
  const NDArray& a = args.in(0);
  const bool full = SvdAttrs::from(args.attrs).full_matrices;
  const SvdShape s = svd_shape(a.shape(), full);
  const bool wide = s.m < s.n;  // decompose Aᵀ = V S Uᵀ instead
  const int64_t r = wide ? s.n : s.m;
  const int64_t w = full ? r : s.k;
  std::vector<double> left(static_cast<size_t>(r * w)), values(static_cast<size_t>(s.k)),
      right(static_cast<size_t>(s.k * s.k));
  auto run = [&]<typename T>() {
    const T* in = a.data<T>();
    T* u = args.out(0).data<T>();
    T* sv = args.out(1).data<T>();
    T* vt = args.out(2).data<T>();
    for (int64_t b = 0; b < s.count; ++b) {
      const T* m = in + b * s.m * s.n;
      Columns x{r, s.k, std::vector<double>(static_cast<size_t>(r * s.k))};
      for (int64_t i = 0; i < s.m; ++i) {
        for (int64_t j = 0; j < s.n; ++j) {
          const double e = static_cast<double>(m[i * s.n + j]);
          if (wide) {
            x.col(i)[j] = e;  // column i of Aᵀ is row i of A
          } else {
            x.col(j)[i] = e;
          }
        }
      }
      decompose(x, w, left, values, right, b, a.shape());
      // Not wide: U = left (m x ucols), V = right (k x k = n x vcols). Wide: U = right (m x m =
      // m x ucols), V = left (n x vcols).
      std::vector<double>& uu = wide ? right : left;
      std::vector<double>& vv = wide ? left : right;
      auto v_at = [&](int64_t i, int64_t j) -> double& {
        return vv[static_cast<size_t>(i * s.vcols + j)];
      };
      for (int64_t j = 0; j < s.k; ++j) {  // V's largest component positive (wide: V was left)
        int64_t largest = 0;
        for (int64_t i = 1; i < s.n; ++i) {
          if (std::abs(v_at(i, j)) > std::abs(v_at(largest, j))) largest = i;
        }
        if (v_at(largest, j) >= 0) continue;
        for (int64_t i = 0; i < s.n; ++i) v_at(i, j) *= -1.0;
        for (int64_t i = 0; i < s.m; ++i) uu[static_cast<size_t>(i * s.ucols + j)] *= -1.0;
      }
      for (int64_t i = 0; i < s.m * s.ucols; ++i) {
        u[b * s.m * s.ucols + i] = static_cast<T>(uu[static_cast<size_t>(i)]);
      }
      for (int64_t j = 0; j < s.k; ++j) {
        sv[b * s.k + j] = static_cast<T>(values[static_cast<size_t>(j)]);
      }
      for (int64_t j = 0; j < s.vcols; ++j) {  // vt[j][i] = V[i][j]
        for (int64_t i = 0; i < s.n; ++i)
          vt[(b * s.vcols + j) * s.n + i] = static_cast<T>(v_at(i, j));
      }
    }
  };
  if (a.dtype() == DType::kFloat64) {
    run.template operator()<double>();
  } else {
    run.template operator()<float>();
  }
}

// The reduced SVD's rule (real, distinct nonzero singular values), with F_ij = 1 / (s_j² - s_i²)
// off the diagonal, J = Uᵀ dU - dUᵀ U and K = Vᵀ dV - dVᵀ V:
//   dA = U [(F ∘ J) S + diag(ds) + S (F ∘ K)] Vᵀ + (I - U Uᵀ) dU S⁻¹ Vᵀ + U S⁻¹ dVᵀ (I - V Vᵀ).
std::vector<NDArray> svd_grad(const GradArgs& g) {
  const Shape& shape = g.x(0).shape();
  JANUS_CHECK(
      !SvdAttrs::from(g.attrs).full_matrices || shape[shape.ndim() - 1] == shape[shape.ndim() - 2],
      NotImplementedError,
      "linalg_svd: no gradient with full_matrices for a non-square input {} (the added "
      "columns are not a function of A), expected full_matrices=false",
      shape);
  const NDArray& u = g.y(0);
  const NDArray& s = g.y(1);
  const NDArray v = matrix_transpose(g.y(2));
  const NDArray& du = g.dy(0);
  const NDArray dv = matrix_transpose(g.dy(2));
  const int64_t k = s.shape()[s.ndim() - 1];
  const NDArray idx = arange(0, static_cast<double>(k), 1, DType::kInt64, s.device());
  const NDArray diagonal = equal(reshape(idx, Shape{k, 1}), reshape(idx, Shape{1, k}));
  const NDArray one = ones(Shape{1}, s.dtype(), s.device());
  const NDArray none = zeros(Shape{1}, s.dtype(), s.device());
  const NDArray s2 = mul(s, s);
  const NDArray gaps = subtract(expand_dims(s2, -2), expand_dims(s2, -1));  // s_j² - s_i²
  const NDArray f = where(diagonal, none, divide(one, where(diagonal, one, gaps)));
  const NDArray ut_du = matmul(u, du, true, false);
  const NDArray vt_dv = matmul(v, dv, true, false);
  const NDArray j = subtract(ut_du, matrix_transpose(ut_du));
  const NDArray kk = subtract(vt_dv, matrix_transpose(vt_dv));
  const NDArray inner =
      add(add(mul(mul(f, j), expand_dims(s, -2)), where(diagonal, expand_dims(g.dy(1), -1), none)),
          mul(expand_dims(s, -1), mul(f, kk)));
  const NDArray inv_s = expand_dims(divide(one, s), -2);  // scales columns by 1 / s_j
  const NDArray core = matmul(matmul(u, inner), v, false, true);
  const NDArray left = matmul(mul(subtract(du, matmul(u, ut_du)), inv_s), v, false, true);
  const NDArray right =
      matmul(mul(u, inv_s), subtract(matrix_transpose(dv), matmul(vt_dv, v, true, true)));
  return {add(add(core, left), right)};
}

}  // namespace

JANUS_DEFINE_OP({
    .name = "linalg_svd",
    .doc = "The reduced SVD A = U diag(s) Vᵀ of each matrix of a stack [..., m, n] (k = min(m, "
           "n)): u [..., m, k], s [..., k] descending, vt [..., k, n], each right singular "
           "vector's largest component positive (one-sided Jacobi, in double).",
    .inputs = {"a"},
    .outputs = {"u", "s", "vt"},
    .attrs = {{"full_matrices", AttrType::kBool, false,
               "u [..., m, m] and vt [..., n, n], completed to orthonormal bases"}},
    .attr_fields = attr_fields<SvdAttrs>(),
    .infer = infer_svd,
    .kernels = {{DeviceType::kCPU, svd_cpu}},
    .grad = svd_grad,
});

}  // namespace janus::ops

namespace janus {
std::tuple<NDArray, NDArray, NDArray> linalg_svd(const NDArray& a, bool full_matrices) {
  static const ops::OpDef& op = ops::get_op("linalg_svd");
  std::vector<NDArray> out = ops::invoke(op, {a}, {full_matrices});
  return {std::move(out[0]), std::move(out[1]), std::move(out[2])};
}
}  // namespace janus

// Conformance specifications of the linear-algebra operators.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "linalg/linalg_attrs.h"
#include "testing/op_spec.h"

namespace janus::testing {
namespace {

std::vector<RefTensor> ref_dot(const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
  const ops::ProductAttrs t = ops::ProductAttrs::from(attrs);
  const bool ta = t.transpose_a, tb = t.transpose_b;
  const RefTensor& a = in[0];
  const RefTensor& b = in[1];
  const int64_t m = ta ? a.shape[1] : a.shape[0], k = ta ? a.shape[0] : a.shape[1];
  const int64_t n = tb ? b.shape[0] : b.shape[1];
  RefTensor c = ref_zeros(Shape{m, n});
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p) {
        acc += (ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
      }
      c[i * n + j] = acc;
    }
  }
  return {c};
}

JANUS_OP_SPEC({.op = "dot",
               .reference = ref_dot,
               .samples = {{{{3, 4}, {4, 5}}},
                           {{{4, 3}, {4, 5}}, {true, false}},
                           {{{3, 4}, {5, 4}}, {false, true}},
                           {{{4, 3}, {5, 4}}, {true, true}},
                           {{{1, 7}, {7, 1}}},
                           {{{2, 0}, {0, 3}}},
                           {{{0, 3}, {3, 2}}}},
               .rtol32 = 1e-4,
               .atol32 = 1e-4});

// NumPy matmul in double: promote 1-D operands, broadcast the batch axes, drop added axes.
std::vector<RefTensor> ref_matmul(const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
  const ops::ProductAttrs t = ops::ProductAttrs::from(attrs);
  const bool ta = t.transpose_a, tb = t.transpose_b;
  Shape as = in[0].shape, bs = in[1].shape;
  if (as.ndim() == 1) as = Shape{1, as[0]};
  if (bs.ndim() == 1) bs = Shape{bs[0], 1};
  const int na = as.ndim(), nb = bs.ndim();
  const int64_t m = ta ? as[na - 1] : as[na - 2], k = ta ? as[na - 2] : as[na - 1];
  const int64_t n = tb ? bs[nb - 2] : bs[nb - 1];
  const int nd = std::max(na, nb) - 2;
  std::vector<int64_t> batch(static_cast<size_t>(nd), 1);
  auto extent = [&](const Shape& s, int d) {  // batch axis d of s, aligned from the right
    const int i = d - (nd - (s.ndim() - 2));
    return i < 0 ? int64_t{1} : s[i];
  };
  for (int d = 0; d < nd; ++d)
    batch[static_cast<size_t>(d)] = std::max(extent(as, d), extent(bs, d));
  int64_t count = 1;
  for (int64_t e : batch) count *= e;
  std::vector<int64_t> out_dims = batch;
  if (in[0].shape.ndim() > 1) out_dims.push_back(m);
  if (in[1].shape.ndim() > 1) out_dims.push_back(n);
  RefTensor c = ref_zeros(Shape(out_dims));
  for (int64_t e = 0; e < count; ++e) {
    int64_t ai = 0, bi = 0, rem = e, astr = 1, bstr = 1;
    for (int d = nd - 1; d >= 0; --d) {
      const int64_t idx = rem % batch[static_cast<size_t>(d)];
      rem /= batch[static_cast<size_t>(d)];
      const int64_t ea = extent(as, d), eb = extent(bs, d);
      ai += (ea == 1 ? 0 : idx) * astr;
      bi += (eb == 1 ? 0 : idx) * bstr;
      astr *= ea;
      bstr *= eb;
    }
    const double* a = in[0].data.data() + ai * m * k;
    const double* b = in[1].data.data() + bi * k * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          acc += (ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
        }
        c[e * m * n + i * n + j] = acc;
      }
    }
  }
  return {c};
}

JANUS_OP_SPEC({.op = "matmul",
               .reference = ref_matmul,
               .samples = {{{{3, 4}, {4, 2}}},
                           {{{2, 3, 4}, {2, 4, 2}}},
                           {{{2, 3, 4}, {4, 2}}},
                           {{{3, 4}, {2, 1, 4, 2}}},
                           {{{2, 1, 2, 3}, {3, 3, 2}}, {true, true}},
                           {{{2, 4, 3}, {4, 2}}, {true, false}},
                           {{{2, 3}, {2, 4, 3}}, {false, true}},
                           {{{4}, {4}}},
                           {{{4}, {2, 4, 3}}},
                           {{{2, 3, 4}, {4}}},
                           {{{2, 0, 3}, {3, 2}}},
                           {{{2, 3, 0}, {0, 2}}}},
               .rtol32 = 1e-4,
               .atol32 = 1e-4});

// The square-matrix operators. References by other routes than the kernels' eliminations:
// determinants by cofactor expansion, the inverse as the adjugate over the determinant, and the
// Cholesky factor column by column from L Lᵀ = A solved for each entry in turn.
using Matrix = std::vector<double>;

double ref_det(const Matrix& m, int64_t n) {
  if (n == 0) return 1.0;
  if (n == 1) return m[0];
  double det = 0.0;
  for (int64_t j = 0; j < n; ++j) {
    Matrix minor;
    for (int64_t r = 1; r < n; ++r) {
      for (int64_t c = 0; c < n; ++c) {
        if (c != j) minor.push_back(m[static_cast<size_t>(r * n + c)]);
      }
    }
    det += (j % 2 == 0 ? 1.0 : -1.0) * m[static_cast<size_t>(j)] * ref_det(minor, n - 1);
  }
  return det;
}

// Calls f(matrix index, matrix) for each n x n matrix of a stack [..., n, n].
template <typename F>
void ref_each_matrix(const RefTensor& a, F&& f) {
  const int64_t n = a.shape[a.shape.ndim() - 1];
  int64_t count = 1;
  for (int i = 0; i + 2 < a.shape.ndim(); ++i) count *= a.shape[i];
  for (int64_t b = 0; b < count; ++b) {
    f(b, Matrix(a.data.begin() + b * n * n, a.data.begin() + (b + 1) * n * n), n);
  }
}

std::vector<RefTensor> ref_inv(const std::vector<RefTensor>& in, const ops::Attrs&) {
  RefTensor y = ref_zeros(in[0].shape);
  ref_each_matrix(in[0], [&](int64_t b, const Matrix& m, int64_t n) {
    const double det = ref_det(m, n);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {  // y[i][j] = (-1)^(i+j) det(minor without row j, col i)
        Matrix minor;
        for (int64_t r = 0; r < n; ++r) {
          for (int64_t c = 0; c < n; ++c) {
            if (r != j && c != i) minor.push_back(m[static_cast<size_t>(r * n + c)]);
          }
        }
        y[b * n * n + i * n + j] = ((i + j) % 2 == 0 ? 1.0 : -1.0) * ref_det(minor, n - 1) / det;
      }
    }
  });
  return {y};
}

std::vector<RefTensor> ref_slogdet(const std::vector<RefTensor>& in, const ops::Attrs&) {
  std::vector<int64_t> batch;
  for (int i = 0; i + 2 < in[0].shape.ndim(); ++i) batch.push_back(in[0].shape[i]);
  RefTensor sign = ref_zeros(Shape(batch)), logabs = ref_zeros(Shape(batch));
  ref_each_matrix(in[0], [&](int64_t b, const Matrix& m, int64_t n) {
    const double det = ref_det(m, n);
    sign[b] = det > 0 ? 1.0 : det < 0 ? -1.0 : 0.0;
    logabs[b] = std::log(std::abs(det));
  });
  return {sign, logabs};
}

std::vector<RefTensor> ref_cholesky(const std::vector<RefTensor>& in, const ops::Attrs&) {
  RefTensor l = ref_zeros(in[0].shape);
  ref_each_matrix(in[0], [&](int64_t b, const Matrix& a, int64_t n) {
    auto L = [&](int64_t i, int64_t j) -> double& { return l[b * n * n + i * n + j]; };
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j <= i; ++j) {  // a[i][j] = sum_k L[i][k] L[j][k], for k <= j
        double rest = a[static_cast<size_t>(i * n + j)];
        for (int64_t k = 0; k < j; ++k) rest -= L(i, k) * L(j, k);
        L(i, j) = i == j ? std::sqrt(rest) : rest / L(j, j);
      }
    }
  });
  return {l};
}

// Eigenpairs of a symmetric n x n matrix (its lower triangle) by classical Jacobi: each rotation
// zeroes the largest off-diagonal entry (the kernels sweep them in order), stopping at 1e-14 of
// the largest entry; ascending, each vector (a column of `vectors`) with its largest component
// positive.
struct RefEigen {
  std::vector<double> values;
  Matrix vectors;
};

RefEigen ref_eigen(Matrix a, int64_t n) {
  auto A = [&](int64_t i, int64_t j) -> double& { return a[static_cast<size_t>(i * n + j)]; };
  Matrix v(a.size(), 0.0);
  auto V = [&](int64_t i, int64_t j) -> double& { return v[static_cast<size_t>(i * n + j)]; };
  for (int64_t i = 0; i < n; ++i) {
    V(i, i) = 1.0;
    for (int64_t j = i + 1; j < n; ++j) A(i, j) = A(j, i);
  }
  double scale = 0.0;
  for (const double e : a) scale = std::max(scale, std::abs(e));
  for (int step = 0; step < 10000; ++step) {
    int64_t p = 0, q = 1;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = i + 1; j < n; ++j) {
        if (std::abs(A(i, j)) > std::abs(A(p, q))) p = i, q = j;
      }
    }
    if (n < 2 || std::abs(A(p, q)) <= 1e-14 * scale) break;
    // Rotate rows and columns p, q by the angle φ with tan 2φ = 2 a_pq / (a_pp - a_qq).
    const double phi = 0.5 * std::atan2(2.0 * A(p, q), A(p, p) - A(q, q));
    const double c = std::cos(phi), s = std::sin(phi);
    for (int64_t k = 0; k < n; ++k) {
      const double kp = A(k, p), kq = A(k, q);
      A(k, p) = c * kp + s * kq;
      A(k, q) = -s * kp + c * kq;
    }
    for (int64_t k = 0; k < n; ++k) {
      const double pk = A(p, k), qk = A(q, k);
      A(p, k) = c * pk + s * qk;
      A(q, k) = -s * pk + c * qk;
    }
    for (int64_t k = 0; k < n; ++k) {
      const double kp = V(k, p), kq = V(k, q);
      V(k, p) = c * kp + s * kq;
      V(k, q) = -s * kp + c * kq;
    }
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return A(x, x) < A(y, y); });
  RefEigen out{std::vector<double>(static_cast<size_t>(n)), Matrix(a.size())};
  for (int64_t j = 0; j < n; ++j) {
    const int64_t src = order[static_cast<size_t>(j)];
    out.values[static_cast<size_t>(j)] = A(src, src);
    int64_t largest = 0;
    for (int64_t i = 1; i < n; ++i) {
      if (std::abs(V(i, src)) > std::abs(V(largest, src))) largest = i;
    }
    const double sign = V(largest, src) < 0 ? -1.0 : 1.0;
    for (int64_t i = 0; i < n; ++i) out.vectors[static_cast<size_t>(i * n + j)] = sign * V(i, src);
  }
  return out;
}

std::vector<RefTensor> ref_eigh(const std::vector<RefTensor>& in, const ops::Attrs&) {
  const int64_t n = in[0].shape[in[0].shape.ndim() - 1];
  std::vector<int64_t> dims;
  for (int i = 0; i + 1 < in[0].shape.ndim(); ++i) dims.push_back(in[0].shape[i]);
  RefTensor w = ref_zeros(Shape(dims)), vectors = ref_zeros(in[0].shape);
  ref_each_matrix(in[0], [&](int64_t b, const Matrix& a, int64_t) {
    const RefEigen e = ref_eigen(a, n);
    std::copy(e.values.begin(), e.values.end(), w.data.begin() + b * n);
    std::copy(e.vectors.begin(), e.vectors.end(), vectors.data.begin() + b * n * n);
  });
  return {w, vectors};
}

// The SVD from the eigenpairs of AᵀA: V its eigenvectors of the k largest eigenvalues s², and
// U = A V / s (the singular values of the specs' inputs are well apart from 0 and each other).
std::vector<RefTensor> ref_svd(const std::vector<RefTensor>& in, const ops::Attrs&) {
  const Shape& shape = in[0].shape;
  const int64_t m = shape[shape.ndim() - 2], n = shape[shape.ndim() - 1], k = std::min(m, n);
  std::vector<int64_t> batch;
  for (int i = 0; i + 2 < shape.ndim(); ++i) batch.push_back(shape[i]);
  auto with = [&](std::initializer_list<int64_t> tail) {
    std::vector<int64_t> dims = batch;
    dims.insert(dims.end(), tail);
    return ref_zeros(Shape(std::move(dims)));
  };
  RefTensor u = with({m, k}), s = with({k}), vt = with({k, n});
  int64_t count = 1;
  for (const int64_t d : batch) count *= d;
  for (int64_t b = 0; b < count; ++b) {
    const double* a = in[0].data.data() + b * m * n;
    Matrix ata(static_cast<size_t>(n * n), 0.0);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t r = 0; r < m; ++r)
          ata[static_cast<size_t>(i * n + j)] += a[r * n + i] * a[r * n + j];
      }
    }
    const RefEigen e = ref_eigen(ata, n);
    for (int64_t j = 0; j < k; ++j) {
      const int64_t src = n - 1 - j;  // descending
      const double sigma = std::sqrt(std::max(e.values[static_cast<size_t>(src)], 0.0));
      s[b * k + j] = sigma;
      for (int64_t i = 0; i < n; ++i)
        vt[(b * k + j) * n + i] = e.vectors[static_cast<size_t>(i * n + src)];
      for (int64_t r = 0; r < m; ++r) {
        double acc = 0.0;
        for (int64_t i = 0; i < n; ++i)
          acc += a[r * n + i] * e.vectors[static_cast<size_t>(i * n + src)];
        u[(b * m + r) * k + j] = acc / sigma;
      }
    }
  }
  return {u, s, vt};
}

// Columns c of the r x c block at `at` (row-major) orthonormalized in order (Gram-Schmidt).
void orthonormalize_columns(double* at, int64_t r, int64_t c) {
  auto Q = [&](int64_t i, int64_t k) -> double& { return at[i * c + k]; };
  for (int64_t k = 0; k < c; ++k) {
    for (int64_t l = 0; l < k; ++l) {
      double dot = 0.0;
      for (int64_t i = 0; i < r; ++i) dot += Q(i, k) * Q(i, l);
      for (int64_t i = 0; i < r; ++i) Q(i, k) -= dot * Q(i, l);
    }
    double norm = 0.0;
    for (int64_t i = 0; i < r; ++i) norm += Q(i, k) * Q(i, k);
    for (int64_t i = 0; i < r; ++i) Q(i, k) /= std::sqrt(norm);
  }
}

// Matrices P diag(σ) Qᵀ (P m x k, Q n x k with orthonormal columns from the random entries) with
// well-separated singular values σ_j = k - j + 0.5 + u, u in [0, 0.3]: finite differences of the
// singular vectors stay far from a crossing and from zero.
void fill_distinct_singular(int, RefTensor& t, std::mt19937& rng) {
  const int64_t m = t.shape[t.shape.ndim() - 2], n = t.shape[t.shape.ndim() - 1];
  const int64_t k = std::min(m, n);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> jitter(0.0, 0.3);
  for (int64_t base = 0; base < t.size(); base += m * n) {
    std::vector<double> p(static_cast<size_t>(m * k)), q(static_cast<size_t>(n * k));
    for (double& e : p) e = normal(rng);
    for (double& e : q) e = normal(rng);
    orthonormalize_columns(p.data(), m, k);
    orthonormalize_columns(q.data(), n, k);
    std::vector<double> sigma(static_cast<size_t>(k));
    for (int64_t l = 0; l < k; ++l) {
      sigma[static_cast<size_t>(l)] = static_cast<double>(k - l) + 0.5 + jitter(rng);
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0.0;
        for (int64_t l = 0; l < k; ++l) {
          const auto L = static_cast<size_t>(l);
          acc += p[static_cast<size_t>(i * k + l)] * sigma[L] * q[static_cast<size_t>(j * k + l)];
        }
        t[base + i * n + j] = acc;
      }
    }
  }
}

// Symmetric matrices Q diag(λ) Qᵀ with well-separated eigenvalues λ_k = k - n / 2 + u, u in
// [0, 0.3], Q orthonormalized from the random entries (Gram-Schmidt): finite differences of the
// eigenvectors stay far from a crossing.
void fill_symmetric_distinct(int, RefTensor& t, std::mt19937& rng) {
  const int64_t n = t.shape[t.shape.ndim() - 1];
  std::uniform_real_distribution<double> jitter(0.0, 0.3);
  for (int64_t base = 0; base < t.size(); base += n * n) {
    Matrix q(t.data.begin() + base, t.data.begin() + base + n * n);
    auto Q = [&](int64_t i, int64_t k) -> double& { return q[static_cast<size_t>(i * n + k)]; };
    for (int64_t k = 0; k < n; ++k) {  // column k orthogonal to the ones before, unit length
      for (int64_t l = 0; l < k; ++l) {
        double dot = 0.0;
        for (int64_t i = 0; i < n; ++i) dot += Q(i, k) * Q(i, l);
        for (int64_t i = 0; i < n; ++i) Q(i, k) -= dot * Q(i, l);
      }
      double norm = 0.0;
      for (int64_t i = 0; i < n; ++i) norm += Q(i, k) * Q(i, k);
      for (int64_t i = 0; i < n; ++i) Q(i, k) /= std::sqrt(norm);
    }
    std::vector<double> lambda(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) {
      lambda[static_cast<size_t>(k)] = static_cast<double>(k) - n / 2.0 + jitter(rng);
    }
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0.0;
        for (int64_t k = 0; k < n; ++k) acc += Q(i, k) * lambda[static_cast<size_t>(k)] * Q(j, k);
        t[base + i * n + j] = acc;
      }
    }
  }
}

// Q R by classical Gram-Schmidt on A's columns (the kernel reflects): R's diagonal positive, Q's
// first k columns orthonormal; `complete` adds unit vectors orthonormalized after them.
std::vector<RefTensor> ref_qr(const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
  const bool complete = attrs.get<bool>(0);
  const Shape& shape = in[0].shape;
  const int64_t m = shape[shape.ndim() - 2], n = shape[shape.ndim() - 1], k = std::min(m, n);
  const int64_t qcols = complete ? m : k;
  std::vector<int64_t> batch;
  for (int i = 0; i + 2 < shape.ndim(); ++i) batch.push_back(shape[i]);
  auto with = [&](int64_t rows, int64_t cols) {
    std::vector<int64_t> dims = batch;
    dims.push_back(rows);
    dims.push_back(cols);
    return ref_zeros(Shape(std::move(dims)));
  };
  RefTensor q = with(m, qcols), r = with(qcols, n);
  int64_t count = 1;
  for (const int64_t d : batch) count *= d;
  for (int64_t b = 0; b < count; ++b) {
    const double* a = in[0].data.data() + b * m * n;
    auto Q = [&](int64_t i, int64_t j) -> double& { return q[(b * m + i) * qcols + j]; };
    auto R = [&](int64_t i, int64_t j) -> double& { return r[(b * qcols + i) * n + j]; };
    for (int64_t j = 0; j < qcols; ++j) {
      std::vector<double> col(static_cast<size_t>(m));
      for (int64_t i = 0; i < m; ++i) {
        col[static_cast<size_t>(i)] = j < k ? a[i * n + j] : (i == j - k ? 1.0 : 0.0);
      }
      for (int64_t l = 0; l < j; ++l) {
        double d = 0.0;
        for (int64_t i = 0; i < m; ++i) d += Q(i, l) * col[static_cast<size_t>(i)];
        if (j < k) R(l, j) = d;
        for (int64_t i = 0; i < m; ++i) col[static_cast<size_t>(i)] -= d * Q(i, l);
      }
      double norm = 0.0;
      for (const double e : col) norm += e * e;
      norm = std::sqrt(norm);
      if (j < k) R(j, j) = norm;
      for (int64_t i = 0; i < m; ++i) Q(i, j) = col[static_cast<size_t>(i)] / norm;
    }
    for (int64_t i = 0; i < qcols; ++i) {  // R's columns after the k-th: Qᵀ A
      for (int64_t j = k; j < n; ++j) {
        for (int64_t l = 0; l < m; ++l) R(i, j) += Q(l, i) * a[l * n + j];
      }
    }
  }
  return {q, r};
}

// Well-conditioned matrices: the random entries plus n on the diagonal.
void fill_invertible(int, RefTensor& t, std::mt19937&) {
  const int64_t n = t.shape[t.shape.ndim() - 1];
  for (int64_t e = 0; e < t.size(); ++e) {
    if ((e % (n * n)) / n == e % n) t[e] += static_cast<double>(n);
  }
}

// Symmetric positive-definite matrices: M Mᵀ / n + I from the random entries M.
void fill_spd(int, RefTensor& t, std::mt19937&) {
  const int64_t n = t.shape[t.shape.ndim() - 1];
  const RefTensor m = t;
  for (int64_t e = 0; e < t.size(); ++e) {
    const int64_t base = e - e % (n * n), i = (e % (n * n)) / n, j = e % n;
    double acc = i == j ? 1.0 : 0.0;
    for (int64_t k = 0; k < n; ++k) acc += m[base + i * n + k] * m[base + j * n + k] / n;
    t[e] = acc;
  }
}

const std::vector<OpSample> kSquareSamples = {
    {{{3, 3}}}, {{{2, 4, 4}}}, {{{1, 1}}}, {{{2, 1, 2, 2}}}, {{{2, 0, 0}}}};

JANUS_OP_SPEC({.op = "linalg_inv",
               .reference = ref_inv,
               .samples = kSquareSamples,
               .make_input = fill_invertible,
               .rtol32 = 1e-5,
               .atol32 = 1e-5,
               .rtol64 = 1e-9,
               .atol64 = 1e-11});

JANUS_OP_SPEC({.op = "linalg_slogdet",
               .reference = ref_slogdet,
               .samples = kSquareSamples,
               .make_input = fill_invertible,
               .rtol64 = 1e-9,
               .atol64 = 1e-11});

// The gradient's finite differences move one entry of A at a time: A stops being symmetric, and
// the kernel, reading the lower triangle, sees only the moves below the diagonal, which is what
// the rule's Φ(S + Sᵀ) gives.
JANUS_OP_SPEC({.op = "linalg_cholesky",
               .reference = ref_cholesky,
               .samples = kSquareSamples,
               .make_input = fill_spd,
               .rtol64 = 1e-9,
               .atol64 = 1e-11});

// Finite differences move one entry at a time, as for linalg_cholesky: only the moves below the
// diagonal count.
JANUS_OP_SPEC({.op = "linalg_eigh",
               .reference = ref_eigh,
               .samples = kSquareSamples,
               .make_input = fill_symmetric_distinct,
               .rtol64 = 1e-9,
               .atol64 = 1e-11});

// Finite differences move every entry; wide samples take the rule for [X | Y].
JANUS_OP_SPEC({.op = "linalg_qr",
               .reference = ref_qr,
               .samples = {{{{3, 3}}},
                           {{{4, 2}}},
                           {{{2, 4}}},
                           {{{2, 3, 2}}},
                           {{{1, 1}}},
                           {{{2, 3}}, {true}},  // complete: square q, differentiable as m <= n
                           {{{2, 0, 3}}}},
               .make_input = fill_distinct_singular,
               .rtol64 = 1e-9,
               .atol64 = 1e-11});

// Finite differences move every entry: the rule's projections onto the complements of U's and V's
// columns matter for the non-square samples.
JANUS_OP_SPEC(
    {.op = "linalg_svd",
     .reference = ref_svd,
     .samples = {{{{3, 3}}}, {{{4, 2}}}, {{{2, 5}}}, {{{2, 3, 2}}}, {{{1, 1}}}, {{{2, 0, 3}}}},
     .make_input = fill_distinct_singular,
     .rtol64 = 1e-9,
     .atol64 = 1e-11});

}  // namespace
}  // namespace janus::testing

// Conformance specifications of the linear-algebra operators.
#include <algorithm>
#include <cmath>
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

}  // namespace
}  // namespace janus::testing

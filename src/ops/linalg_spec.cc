// Conformance specifications of the linear-algebra operators.
#include <algorithm>

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

}  // namespace
}  // namespace janus::testing

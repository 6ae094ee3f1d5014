// Conformance specifications of the linear-algebra operators.
#include "testing/op_spec.h"

namespace janus::testing {
namespace {

std::vector<RefTensor> ref_dot(const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
  const bool ta = attrs.get<bool>(0), tb = attrs.get<bool>(1);
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

}  // namespace
}  // namespace janus::testing

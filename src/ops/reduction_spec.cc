// Conformance specifications of the reductions.
#include <algorithm>

#include "testing/op_spec.h"

namespace janus::testing {
namespace {

// Generic reduction reference: fold over the reduced axes with `init` and `fold`, then
// `finish(acc, count)`.
ReferenceFn reduce_ref(double init, std::function<double(double, double)> fold,
                       std::function<double(double, int64_t)> finish) {
  return [=](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
    const RefTensor& x = in[0];
    std::vector<int64_t> axes = attrs.get<std::vector<int64_t>>(0);
    const bool keepdims = attrs.get<bool>(1);
    const int nd = x.shape.ndim();
    std::vector<bool> reduced(static_cast<size_t>(nd), axes.empty());
    for (int64_t a : axes) reduced[static_cast<size_t>(a < 0 ? a + nd : a)] = true;
    std::vector<int64_t> out_dims;
    for (int i = 0; i < nd; ++i) {
      if (!reduced[static_cast<size_t>(i)]) out_dims.push_back(x.shape[i]);
      else if (keepdims) out_dims.push_back(1);
    }
    RefTensor out = ref_zeros(Shape(out_dims));
    std::vector<double> acc(static_cast<size_t>(out.size()), init);
    std::vector<int64_t> count(static_cast<size_t>(out.size()), 0);
    for (int64_t e = 0; e < x.size(); ++e) {
      int64_t rem = e, o = 0, mul = 1;
      for (int d = nd - 1; d >= 0; --d) {
        const int64_t idx = rem % x.shape[d];
        rem /= x.shape[d];
        if (!reduced[static_cast<size_t>(d)]) {
          o += idx * mul;
          mul *= x.shape[d];
        }
      }
      acc[static_cast<size_t>(o)] = fold(acc[static_cast<size_t>(o)], x[e]);
      ++count[static_cast<size_t>(o)];
    }
    for (int64_t o = 0; o < out.size(); ++o) out[o] = finish(acc[static_cast<size_t>(o)], count[static_cast<size_t>(o)]);
    return std::vector<RefTensor>{out};
  };
}

const std::vector<OpSample> kReduceSamples = {
    {{{2, 3, 4}}, {std::vector<int64_t>{1}, false}},
    {{{2, 3, 4}}, {std::vector<int64_t>{0, 2}, true}},
    {{{2, 3, 4}}, {std::vector<int64_t>{}, false}},
    {{{5}}, {std::vector<int64_t>{-1}, true}},
    {{{}}, {std::vector<int64_t>{}, false}},
    {{{0, 3}}, {std::vector<int64_t>{0}, false}},
};

JANUS_OP_SPEC({.op = "sum",
               .reference = reduce_ref(0.0, std::plus<>(), [](double a, int64_t) { return a; }),
               .samples = kReduceSamples});

}  // namespace
}  // namespace janus::testing

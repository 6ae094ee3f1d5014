// Conformance specifications of the reductions.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "reduction/reduction_attrs.h"
#include "testing/op_spec.h"

namespace janus::testing {
namespace {

// Generic reduction reference: fold over the reduced axes with `init` and `fold`, then
// `finish(acc, count)`. S: the operator's attributes (axes and keepdims, and more for norm).
template <typename S = ops::ReduceAttrs>
ReferenceFn reduce_ref(double init, std::function<double(double, double)> fold,
                       std::function<double(double, int64_t)> finish) {
  return [=](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
    const RefTensor& x = in[0];
    const S a = S::from(attrs);
    std::vector<int64_t> axes = a.axes;
    const bool keepdims = a.keepdims;
    const int nd = x.shape.ndim();
    std::vector<bool> reduced(static_cast<size_t>(nd), axes.empty());
    for (int64_t a : axes) reduced[static_cast<size_t>(a < 0 ? a + nd : a)] = true;
    std::vector<int64_t> out_dims;
    for (int i = 0; i < nd; ++i) {
      if (!reduced[static_cast<size_t>(i)])
        out_dims.push_back(x.shape[i]);
      else if (keepdims)
        out_dims.push_back(1);
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
    for (int64_t o = 0; o < out.size(); ++o)
      out[o] = finish(acc[static_cast<size_t>(o)], count[static_cast<size_t>(o)]);
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
    {{{3, 2, 4}}, {std::vector<int64_t>{0}, false}},  // last axes kept: a row at a time
    {{{2, 3, 2, 2}}, {std::vector<int64_t>{0, 2}, true}},
};

JANUS_OP_SPEC({.op = "sum",
               .reference = reduce_ref(0.0, std::plus<>(), [](double a, int64_t) { return a; }),
               .samples = kReduceSamples});

constexpr double kInf = std::numeric_limits<double>::infinity();

// Distinct values (a shuffled grid with gaps of 0.25) so that max/min/argmax have one winner
// and finite differences never cross a tie.
void distinct_values(int, RefTensor& t, std::mt19937& rng) {
  std::vector<int64_t> order(static_cast<size_t>(t.size()));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  for (int64_t i = 0; i < t.size(); ++i) {
    t[i] = 0.25 * static_cast<double>(order[static_cast<size_t>(i)] - t.size() / 2) + 0.01;
  }
}

// Samples of max/min: no empty reduction with a non-empty result (that is an error).
const std::vector<OpSample> kExtremumSamples = {
    {{{2, 3, 4}}, {std::vector<int64_t>{1}, false}},
    {{{2, 3, 4}}, {std::vector<int64_t>{0, 2}, true}},
    {{{2, 3, 4}}, {std::vector<int64_t>{}, false}},
    {{{5}}, {std::vector<int64_t>{-1}, true}},
    {{{}}, {std::vector<int64_t>{}, false}},
    {{{0, 3}}, {std::vector<int64_t>{1}, false}},
    {{{3, 2, 4}}, {std::vector<int64_t>{0}, false}},
    {{{2, 3, 2, 2}}, {std::vector<int64_t>{0, 2}, true}},
};

JANUS_OP_SPEC({.op = "mean",
               .reference = reduce_ref(0.0, std::plus<>(),
                                       [](double a, int64_t n) {
                                         return a / static_cast<double>(n);
                                       }),
               .samples = kReduceSamples});

JANUS_OP_SPEC({.op = "max",
               .reference = reduce_ref(
                   -kInf, [](double a, double v) { return std::max(a, v); },
                   [](double a, int64_t) { return a; }),
               .samples = kExtremumSamples,
               .make_input = distinct_values});

JANUS_OP_SPEC({.op = "min",
               .reference = reduce_ref(
                   kInf, [](double a, double v) { return std::min(a, v); },
                   [](double a, int64_t) { return a; }),
               .samples = kExtremumSamples,
               .make_input = distinct_values});

JANUS_OP_SPEC({.op = "prod",
               .reference = reduce_ref(1.0, std::multiplies<>(),
                                       [](double a, int64_t) { return a; }),
               .samples = kReduceSamples,
               // A zero in every input of 3+ elements: the gradient must not divide by it.
               .make_input = [](int, RefTensor& t, std::mt19937&) {
                 if (t.size() >= 3) t[1] = 0.0;
               }});

JANUS_OP_SPEC({.op = "norm",
               .reference = reduce_ref<ops::NormAttrs>(
                   0.0, [](double a, double v) { return a + v * v; },
                   [](double a, int64_t) { return std::sqrt(a); }),
               .samples = kReduceSamples});

JANUS_OP_SPEC({.op = "logsumexp",
               .reference = reduce_ref(
                   -kInf,
                   [](double a, double v) {
                     const double m = std::max(a, v);
                     return m + std::log(std::exp(a - m) + std::exp(v - m));
                   },
                   [](double a, int64_t) { return a; }),
               .samples = kReduceSamples,
               .high = 30.0});  // exp(30) stresses the shift in float32

// argmax/argmin reference: index of the first extreme element along one axis.
ReferenceFn arg_ref(bool is_max) {
  return [=](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
    const RefTensor& x = in[0];
    const int nd = x.shape.ndim();
    const ops::ArgReduceAttrs arg = ops::ArgReduceAttrs::from(attrs);
    const int64_t a = arg.axis;
    const int axis = static_cast<int>(a < 0 ? a + nd : a);
    std::vector<int64_t> dims;
    for (int i = 0; i < nd; ++i) {
      if (i != axis)
        dims.push_back(x.shape[i]);
      else if (arg.keepdims)
        dims.push_back(1);
    }
    RefTensor out = ref_zeros(Shape(dims));
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; ++i) outer *= x.shape[i];
    for (int i = axis + 1; i < nd; ++i) inner *= x.shape[i];
    const int64_t n = x.shape[axis];
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        int64_t best = 0;
        for (int64_t k = 1; k < n; ++k) {
          const double v = x[(o * n + k) * inner + i], b = x[(o * n + best) * inner + i];
          if (is_max ? v > b : v < b) best = k;
        }
        out[o * inner + i] = static_cast<double>(best);
      }
    }
    return std::vector<RefTensor>{out};
  };
}

const std::vector<OpSample> kArgSamples = {
    {{{2, 3, 4}}, {int64_t{1}, false}}, {{{2, 3, 4}}, {int64_t{-1}, true}},
    {{{2, 3, 4}}, {int64_t{0}, false}}, {{{5}}, {int64_t{0}, false}},
    {{{0, 3}}, {int64_t{1}, false}},
};

JANUS_OP_SPEC({.op = "argmax",
               .reference = arg_ref(true),
               .samples = kArgSamples,
               .make_input = distinct_values});
JANUS_OP_SPEC({.op = "argmin",
               .reference = arg_ref(false),
               .samples = kArgSamples,
               .make_input = distinct_values});

}  // namespace
}  // namespace janus::testing

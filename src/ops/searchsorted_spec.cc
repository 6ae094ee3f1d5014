// Conformance specification of searchsorted against a float64 reference that counts, for each
// value, the elements of a before it (or not after it).
#include <algorithm>
#include <cmath>
#include <random>

#include "testing/op_spec.h"

namespace janus::testing {
namespace {

// Values on a grid of halves in [-2, 2], so that v meets a's elements exactly (ties) and float32
// holds them exactly; a (input 0) sorted, with repeats.
void on_grid(int index, RefTensor& t, std::mt19937& rng) {
  std::uniform_int_distribution<int> pick(-4, 4);
  for (double& x : t.data) x = 0.5 * pick(rng);
  if (index == 0) std::sort(t.data.begin(), t.data.end());
}

JANUS_OP_SPEC({.op = "searchsorted",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
                     const bool right = attrs.get<bool>(0);
                     RefTensor y = ref_zeros(in[1].shape);
                     for (int64_t i = 0; i < y.size(); ++i) {
                       for (double e : in[0].data) y[i] += right ? e <= in[1][i] : e < in[1][i];
                     }
                     return std::vector<RefTensor>{y};
                   },
               .samples = {{{{7}, {2, 3}}, {false}},
                           {{{7}, {2, 3}}, {true}},
                           {{{1}, {4}}, {true}},
                           {{{5}, {}}, {false}},
                           {{{0}, {3}}, {false}}},
               .make_input = on_grid});

}  // namespace
}  // namespace janus::testing

// Conformance specification of fused_elementwise: a program mixing unary, scalar and binary
// steps, against the same arithmetic in float64; sizes below, at and above one tile. Then the
// fused gradients relu_backward_bias and max_pool2d_relu_backward.
#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "nn/nn_attrs.h"
#include "testing/op_spec.h"

namespace janus::testing {
namespace {

JANUS_OP_SPEC(
    {.op = "fused_elementwise",
     .reference =
         [](const std::vector<RefTensor>& in, const ops::Attrs&) {
           // tanh(x0) * x1 + 0.5, then maximum with x0
           RefTensor t = ref_broadcast(ref_map(in[0], [](double v) { return std::tanh(v); }), in[1],
                                       [](double a, double b) { return a * b; });
           t = ref_map(t, [](double v) { return v + 0.5; });
           return std::vector<RefTensor>{
               ref_broadcast(t, in[0], [](double a, double b) { return std::max(a, b); })};
         },
     .samples = {{{{2, 3}, {2, 3}},
                  {std::string("tanh()[i0];mul()[t0,i1];add_scalar(0.5)[t1];maximum()[t2,i0]")}},
                 {{{4096}, {4096}},
                  {std::string("tanh()[i0];mul()[t0,i1];add_scalar(0.5)[t1];maximum()[t2,i0]")}},
                 {{{3, 4097}, {3, 4097}},
                  {std::string("tanh()[i0];mul()[t0,i1];add_scalar(0.5)[t1];maximum()[t2,i0]")}},
                 {{{0}, {0}},
                  {std::string("tanh()[i0];mul()[t0,i1];add_scalar(0.5)[t1];maximum()[t2,i0]")}}},
     .note = "not differentiable: built by a pass after gradients"});

// relu_backward then the sum over axis 0: widths below and above one strip of the kernel (16
// and 2048 columns), an empty batch.
JANUS_OP_SPEC({.op = "relu_backward_bias",
               .reference =
                   [](const std::vector<RefTensor>& in, const ops::Attrs&) {
                     RefTensor dx = ref_broadcast(
                         in[0], in[1], [](double y, double dy) { return y > 0 ? dy : 0.0; });
                     RefTensor db = ref_zeros(Shape{in[0].shape[1]});
                     for (int64_t r = 0; r < in[0].shape[0]; ++r)
                       for (int64_t c = 0; c < in[0].shape[1]; ++c)
                         db[c] += dx[r * in[0].shape[1] + c];
                     return std::vector<RefTensor>{dx, db};
                   },
               .samples = {{{{3, 5}, {3, 5}}},
                           {{{7, 40}, {7, 40}}},
                           {{{4, 1100}, {4, 1100}}},
                           {{{3, 4500}, {3, 4500}}},
                           {{{0, 6}, {0, 6}}}},
               .note = "not differentiable: built by a pass after gradients"});

// max_pool2d_backward (each window's dy to its first maximum, windows clipped to the input),
// then relu's gradient with x as relu's output, then the sum of dx over all axes but 1.
std::vector<RefTensor> ref_max_pool2d_relu_backward(const std::vector<RefTensor>& in,
                                                    const ops::Attrs& attrs) {
  const ops::PoolAttrs a = ops::PoolAttrs::from(attrs);
  auto pair = [](const std::vector<int64_t>& v) {
    return std::array<int64_t, 2>{v[0], v.size() == 2 ? v[1] : v[0]};
  };
  const auto k = pair(a.kernel_size), pad = pair(a.padding);
  const auto st = a.stride.empty() ? k : pair(a.stride);
  const RefTensor& x = in[0];
  const RefTensor& dy = in[1];
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
  const int64_t oh = dy.shape[2], ow = dy.shape[3];
  RefTensor dx = ref_zeros(x.shape);
  for (int64_t p = 0; p < n * c; ++p) {
    for (int64_t oy = 0; oy < oh; ++oy) {
      for (int64_t ox = 0; ox < ow; ++ox) {
        const int64_t ys = oy * st[0] - pad[0], xs = ox * st[1] - pad[1];
        const int64_t y0 = std::max<int64_t>(ys, 0), y1 = std::min(ys + k[0], h);
        const int64_t x0 = std::max<int64_t>(xs, 0), x1 = std::min(xs + k[1], w);
        if (y0 >= y1 || x0 >= x1) continue;
        int64_t arg = p * h * w + y0 * w + x0;
        for (int64_t iy = y0; iy < y1; ++iy)
          for (int64_t ix = x0; ix < x1; ++ix)
            if (x[p * h * w + iy * w + ix] > x[arg]) arg = p * h * w + iy * w + ix;
        dx[arg] += dy[(p * oh + oy) * ow + ox];
      }
    }
  }
  RefTensor db = ref_zeros(Shape{c});
  for (int64_t i = 0; i < dx.size(); ++i) {
    if (!(x[i] > 0)) dx[i] = 0;
    db[i / (h * w) % c] += dx[i];
  }
  return {dx, db};
}

ops::Attrs pool(std::vector<int64_t> kernel, std::vector<int64_t> stride,
                std::vector<int64_t> padding, bool ceil_mode = false) {
  return {std::move(kernel), std::move(stride), std::move(padding), ceil_mode};
}

// The pooling's inputs: distinct values (one maximum per window), half of them negative (relu
// stops those).
void distinct_around_zero(int index, RefTensor& t, std::mt19937& rng) {
  if (index != 0) return;
  std::vector<int64_t> order(static_cast<size_t>(t.size()));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  for (int64_t i = 0; i < t.size(); ++i)
    t[i] = 0.1 * (static_cast<double>(order[static_cast<size_t>(i)]) - 0.5 * t.size() + 0.5);
}

// LeNet's 2x2 windows (rows of 14 windows, and of 17: more than one 16-window group of the
// AVX-512 row), odd extents (rows and columns no window reads), the generic loop's windows
// (padded, overlapping, ceil mode), an empty batch.
JANUS_OP_SPEC({.op = "max_pool2d_relu_backward",
               .reference = ref_max_pool2d_relu_backward,
               .samples = {{{{2, 3, 28, 28}, {2, 3, 14, 14}}, pool({2}, {}, {0})},
                           {{{2, 2, 4, 34}, {2, 2, 2, 17}}, pool({2}, {2}, {0})},
                           {{{1, 2, 5, 7}, {1, 2, 2, 3}}, pool({2}, {2}, {0})},
                           {{{1, 2, 5, 7}, {1, 2, 3, 6}}, pool({3, 2}, {2, 1}, {1, 0})},
                           {{{1, 1, 5, 5}, {1, 1, 5, 5}}, pool({3}, {1}, {1})},
                           {{{1, 2, 6, 7}, {1, 2, 4, 4}}, pool({3, 2}, {2, 2}, {1, 0}, true)},
                           {{{0, 2, 4, 4}, {0, 2, 2, 2}}, pool({2}, {}, {0})}},
               .make_input = distinct_around_zero,
               .note = "not differentiable: built by a pass after gradients"});

}  // namespace
}  // namespace janus::testing

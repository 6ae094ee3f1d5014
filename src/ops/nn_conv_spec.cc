// Conformance specifications of convolution, pooling and batch normalisation. The references
// are written independently of the kernels: gradients as sums over output positions.
#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "nn/nn_attrs.h"
#include "testing/op_spec.h"

namespace janus::testing {
namespace {

using Ints = std::vector<int64_t>;

int64_t at4(const Shape& s, int64_t a, int64_t b, int64_t c, int64_t d) {
  return ((a * s[1] + b) * s[2] + c) * s[3] + d;
}

// A convolution's hyperparameters over three spatial axes (depth, height, width); fewer axes
// are the trailing ones, the leading axes neutral (extent 1, stride 1, padding 0).
struct Conv {
  std::array<int64_t, 3> s{1, 1, 1}, p{0, 0, 0}, d{1, 1, 1};
  int64_t groups = 1;
};

Conv conv_of(const ops::ConvAttrs& a, int dims) {
  auto spread = [dims](const Ints& v, int64_t neutral) {
    std::array<int64_t, 3> out{neutral, neutral, neutral};
    for (int i = 0; i < dims; ++i) {
      out[static_cast<size_t>(3 - dims + i)] = v.size() == 1 ? v[0] : v[static_cast<size_t>(i)];
    }
    return out;
  };
  return {spread(a.stride, 1), spread(a.padding, 0), spread(a.dilation, 1), a.groups};
}

// A shape [n, c, spatial...] as [n, c, d, h, w].
std::array<int64_t, 5> as5(const Shape& s) {
  std::array<int64_t, 5> out{s[0], s[1], 1, 1, 1};
  for (int i = 2; i < s.ndim(); ++i) out[static_cast<size_t>(5 - s.ndim() + i)] = s[i];
  return out;
}

int64_t at5(const std::array<int64_t, 5>& s, int64_t a, int64_t b, int64_t z, int64_t y,
            int64_t x) {
  return (((a * s[1] + b) * s[2] + z) * s[3] + y) * s[4] + x;
}

int64_t out_extent(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}

Shape conv_out_shape(const Shape& xs, const Shape& ws, const Conv& c) {
  Ints out{xs[0], ws[0]};
  for (int i = 2; i < xs.ndim(); ++i) {
    const size_t a = static_cast<size_t>(3 - (xs.ndim() - 2) + (i - 2));
    out.push_back(out_extent(xs[i], ws[i], c.s[a], c.p[a], c.d[a]));
  }
  return Shape(out);
}

// Visits every (y position, x position, weight position) product of a convolution of x shape
// `xs` with weight shape `ws`.
template <typename F>
void conv_products(const Shape& xs, const Shape& ws, const Conv& c, F f) {
  const auto x5 = as5(xs), w5 = as5(ws), y5 = as5(conv_out_shape(xs, ws, c));
  const int64_t og = ws[0] / c.groups;
  for (int64_t n = 0; n < x5[0]; ++n)
    for (int64_t o = 0; o < w5[0]; ++o)
      for (int64_t i = 0; i < w5[1]; ++i)
        for (int64_t z = 0; z < y5[2]; ++z)
          for (int64_t y = 0; y < y5[3]; ++y)
            for (int64_t x = 0; x < y5[4]; ++x)
              for (int64_t kz = 0; kz < w5[2]; ++kz)
                for (int64_t ky = 0; ky < w5[3]; ++ky)
                  for (int64_t kx = 0; kx < w5[4]; ++kx) {
                    const int64_t iz = z * c.s[0] - c.p[0] + kz * c.d[0];
                    const int64_t iy = y * c.s[1] - c.p[1] + ky * c.d[1];
                    const int64_t ix = x * c.s[2] - c.p[2] + kx * c.d[2];
                    if (iz < 0 || iz >= x5[2] || iy < 0 || iy >= x5[3] || ix < 0 || ix >= x5[4]) {
                      continue;
                    }
                    f(at5(y5, n, o, z, y, x), at5(x5, n, (o / og) * ws[1] + i, iz, iy, ix),
                      at5(w5, o, i, kz, ky, kx));
                  }
}

int dims_of(const Shape& s) { return s.ndim() - 2; }

std::vector<RefTensor> ref_conv(const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
  const ops::ConvolutionAttrs a = ops::ConvolutionAttrs::from(attrs);
  const Conv c = conv_of(a, dims_of(in[0].shape));
  RefTensor y = ref_zeros(conv_out_shape(in[0].shape, in[1].shape, c));
  const int64_t plane = y.size() / std::max<int64_t>(1, y.shape[0] * y.shape[1]);
  for (int64_t i = 0; i < y.size(); ++i) y[i] = in[2][(i / plane) % y.shape[1]];
  conv_products(in[0].shape, in[1].shape, c,
                [&](int64_t yi, int64_t xi, int64_t wi) { y[yi] += in[0][xi] * in[1][wi]; });
  for (int64_t i = 0; i < y.size(); ++i) y[i] = ref_post_op(a.activation, y[i]);
  if (!a.avg_pool_2x2) return {y};
  // The mean of each 2x2 window at stride 2; an odd last row or column is in none.
  const Shape& s = y.shape;
  RefTensor pooled = ref_zeros(Shape{s[0], s[1], s[2] / 2, s[3] / 2});
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t c = 0; c < s[1]; ++c)
      for (int64_t oy = 0; oy < s[2] / 2; ++oy)
        for (int64_t ox = 0; ox < s[3] / 2; ++ox) {
          double sum = 0;
          for (int64_t t = 0; t < 4; ++t) sum += y[at4(s, n, c, 2 * oy + t / 2, 2 * ox + t % 2)];
          pooled[at4(pooled.shape, n, c, oy, ox)] = sum / 4;
        }
  return {pooled};
}

// Inputs dy, weight; input_size the input's spatial extents.
std::vector<RefTensor> ref_conv_backward_data(const std::vector<RefTensor>& in,
                                              const ops::Attrs& attrs) {
  const ops::ConvBackwardDataAttrs a = ops::ConvBackwardDataAttrs::from(attrs);
  const Conv c = conv_of(a, dims_of(in[0].shape));
  Ints xs{in[0].shape[0], in[1].shape[1] * c.groups};
  xs.insert(xs.end(), a.input_size.begin(), a.input_size.end());
  RefTensor dx = ref_zeros(Shape(xs));
  conv_products(Shape(xs), in[1].shape, c,
                [&](int64_t yi, int64_t xi, int64_t wi) { dx[xi] += in[0][yi] * in[1][wi]; });
  return {dx};
}

// Inputs x, dy; kernel_size the kernel's spatial extents.
std::vector<RefTensor> ref_conv_backward_weight(const std::vector<RefTensor>& in,
                                                const ops::Attrs& attrs) {
  const ops::ConvBackwardWeightAttrs a = ops::ConvBackwardWeightAttrs::from(attrs);
  const Conv c = conv_of(a, dims_of(in[0].shape));
  Ints ws{in[1].shape[1], in[0].shape[1] / c.groups};
  ws.insert(ws.end(), a.kernel_size.begin(), a.kernel_size.end());
  RefTensor dw = ref_zeros(Shape(ws));
  conv_products(in[0].shape, Shape(ws), c,
                [&](int64_t yi, int64_t xi, int64_t wi) { dw[wi] += in[0][xi] * in[1][yi]; });
  return {dw};
}

// Inputs x [N, C, in...], weight [C, O / groups, k...], bias [O]: every product of x[n, c, i]
// and weight[c, o, k] lands in y[n, o, i * stride - padding + k * dilation], written directly
// (the scatter form, independent of the kernels' gather form).
std::vector<RefTensor> ref_conv_transpose(const std::vector<RefTensor>& in,
                                          const ops::Attrs& attrs) {
  const ops::ConvTransposeAttrs a = ops::ConvTransposeAttrs::from(attrs);
  const int dims = dims_of(in[0].shape);
  const Conv c = conv_of(a, dims);
  const Shape& xs = in[0].shape;
  const Shape& ws = in[1].shape;
  const Conv op = conv_of({a.output_padding, a.output_padding, a.output_padding, 1}, dims);
  Ints ys{xs[0], ws[1] * c.groups};
  for (int i = 2; i < xs.ndim(); ++i) {
    const size_t k = static_cast<size_t>(3 - dims + i - 2);
    ys.push_back((xs[i] - 1) * c.s[k] - 2 * c.p[k] + c.d[k] * (ws[i] - 1) + 1 + op.p[k]);
  }
  RefTensor y = ref_zeros(Shape(ys));
  const auto x5 = as5(xs), w5 = as5(ws), y5 = as5(y.shape);
  const int64_t cg = xs[1] / c.groups, og = ws[1];
  for (int64_t i = 0; i < y.size(); ++i) y[i] = in[2][(i / (y5[2] * y5[3] * y5[4])) % y5[1]];
  for (int64_t n = 0; n < x5[0]; ++n)
    for (int64_t ch = 0; ch < x5[1]; ++ch)
      for (int64_t o = 0; o < og; ++o)
        for (int64_t z = 0; z < x5[2]; ++z)
          for (int64_t yy = 0; yy < x5[3]; ++yy)
            for (int64_t x = 0; x < x5[4]; ++x)
              for (int64_t kz = 0; kz < w5[2]; ++kz)
                for (int64_t ky = 0; ky < w5[3]; ++ky)
                  for (int64_t kx = 0; kx < w5[4]; ++kx) {
                    const int64_t oz = z * c.s[0] - c.p[0] + kz * c.d[0];
                    const int64_t oy = yy * c.s[1] - c.p[1] + ky * c.d[1];
                    const int64_t ox = x * c.s[2] - c.p[2] + kx * c.d[2];
                    if (oz < 0 || oz >= y5[2] || oy < 0 || oy >= y5[3] || ox < 0 || ox >= y5[4]) {
                      continue;
                    }
                    y[at5(y5, n, (ch / cg) * og + o, oz, oy, ox)] +=
                        in[0][at5(x5, n, ch, z, yy, x)] * in[1][at5(w5, ch, o, kz, ky, kx)];
                  }
  return {y};
}

ops::Attrs conv(Ints stride, Ints padding, Ints dilation, int64_t groups) {
  return {std::move(stride), std::move(padding), std::move(dilation), groups};
}
ops::Attrs conv_with(ops::Attrs a, Ints extra) {
  a.values().push_back(std::move(extra));
  return a;
}
ops::Attrs conv_with_activation(ops::Attrs a, std::string activation) {
  a.values().push_back(std::move(activation));
  return a;
}
// With `activation` and the 2x2 average pooling in the call (fuse_conv_avg_pool).
ops::Attrs conv_pooled(ops::Attrs a, std::string activation) {
  a = conv_with_activation(std::move(a), std::move(activation));
  a.values().push_back(true);
  return a;
}

JANUS_OP_SPEC(
    {.op = "conv2d",
     .reference = ref_conv,
     .samples =
         {{{{2, 3, 5, 5}, {4, 3, 3, 3}, {4}}, conv({1}, {0}, {1}, 1)},
          {{{2, 3, 5, 5}, {4, 3, 3, 3}, {4}}, conv_with_activation(conv({1}, {1}, {1}, 1), "relu")},
          {{{2, 3, 5, 5}, {4, 3, 3, 3}, {4}},
           conv_with_activation(conv({1}, {1}, {1}, 1), "sigmoid")},
          // One input channel: conv_single_channel's epilogue.
          {{{2, 1, 6, 6}, {3, 1, 3, 3}, {3}},
           conv_with_activation(conv({1}, {1}, {1}, 1), "sigmoid")},
          {{{2, 1, 6, 6}, {3, 1, 3, 3}, {3}}, conv_with_activation(conv({1}, {0}, {1}, 1), "tanh")},
          // The pooling in the call: single channel (an odd 7x5 result: the
          // last row and column are in no window), oneDNN, float64 loops.
          {{{2, 1, 7, 5}, {3, 1, 3, 3}, {3}}, conv_pooled(conv({1}, {1}, {1}, 1), "sigmoid")},
          {{{2, 3, 6, 6}, {4, 3, 3, 3}, {4}}, conv_pooled(conv({1}, {1}, {1}, 1), "tanh")},
          {{{1, 2, 7, 6}, {2, 2, 2, 2}, {2}}, conv_pooled(conv({1}, {0}, {1}, 1), "")},
          {{{1, 2, 6, 5}, {2, 2, 3, 2}, {2}}, conv({2, 1}, {1, 0}, {1}, 1)},
          {{{1, 4, 5, 5}, {6, 2, 2, 2}, {6}}, conv({1}, {1}, {2}, 2)},
          {{{2, 1, 4, 4}, {2, 1, 5, 5}, {2}}, conv({1}, {2}, {1}, 1)},
          {{{0, 2, 3, 3}, {1, 2, 1, 1}, {1}}, conv({1}, {0}, {1}, 1)}},
     .rtol32 = 1e-4,
     .atol32 = 1e-4});

JANUS_OP_SPEC({.op = "conv1d",
               .reference = ref_conv,
               .samples = {{{{2, 3, 7}, {4, 3, 3}, {4}}, conv({1}, {0}, {1}, 1)},
                           {{{2, 3, 7}, {4, 3, 3}, {4}},
                            conv_with_activation(conv({1}, {1}, {1}, 1), "relu")},
                           {{{2, 3, 7}, {4, 3, 3}, {4}},
                            conv_with_activation(conv({1}, {1}, {1}, 1), "tanh")},
                           {{{1, 4, 9}, {6, 2, 2}, {6}}, conv({2}, {1}, {2}, 2)},
                           {{{0, 2, 3}, {1, 2, 1}, {1}}, conv({1}, {0}, {1}, 1)}},
               .rtol32 = 1e-4,
               .atol32 = 1e-4});

JANUS_OP_SPEC({.op = "conv3d",
               .reference = ref_conv,
               .samples = {{{{1, 2, 4, 4, 4}, {3, 2, 2, 3, 2}, {3}}, conv({1}, {0}, {1}, 1)},
                           {{{2, 2, 4, 5, 3}, {2, 2, 3, 3, 3}, {2}},
                            conv_with_activation(conv({2, 1, 1}, {1, 1, 0}, {1}, 1), "relu")},
                           {{{1, 4, 5, 4, 4}, {2, 2, 2, 2, 2}, {2}}, conv({1}, {1}, {2, 1, 2}, 2)}},
               .rtol32 = 1e-4,
               .atol32 = 1e-4});

JANUS_OP_SPEC(
    {.op = "conv2d_backward_data",
     .reference = ref_conv_backward_data,
     .samples = {{{{2, 4, 3, 3}, {4, 3, 3, 3}}, conv_with(conv({1}, {0}, {1}, 1), {5, 5})},
                 {{{1, 2, 3, 4}, {2, 2, 3, 2}}, conv_with(conv({2, 1}, {1, 0}, {1}, 1), {6, 5})},
                 {{{1, 6, 5, 5}, {6, 2, 2, 2}}, conv_with(conv({1}, {1}, {2}, 2), {5, 5})},
                 // stride 2 on an odd input: the last row is never read
                 {{{1, 2, 2, 2}, {2, 1, 3, 3}}, conv_with(conv({2}, {0}, {1}, 1), {6, 6})}},
     .rtol32 = 1e-4,
     .atol32 = 1e-4});

JANUS_OP_SPEC({.op = "conv1d_backward_data",
               .reference = ref_conv_backward_data,
               .samples = {{{{2, 4, 5}, {4, 3, 3}}, conv_with(conv({1}, {0}, {1}, 1), {7})},
                           {{{1, 6, 5}, {6, 2, 2}}, conv_with(conv({2}, {1}, {2}, 2), {9})}},
               .rtol32 = 1e-4,
               .atol32 = 1e-4});

JANUS_OP_SPEC({.op = "conv3d_backward_data",
               .reference = ref_conv_backward_data,
               .samples = {{{{1, 3, 3, 2, 3}, {3, 2, 2, 3, 2}},
                            conv_with(conv({1}, {0}, {1}, 1), {4, 4, 4})},
                           {{{1, 2, 2, 5, 2}, {2, 2, 3, 3, 3}},
                            conv_with(conv({2, 1, 1}, {1, 1, 0}, {1}, 1), {4, 5, 4})}},
               .rtol32 = 1e-4,
               .atol32 = 1e-4});

JANUS_OP_SPEC(
    {.op = "conv2d_backward_weight",
     .reference = ref_conv_backward_weight,
     .samples = {{{{2, 3, 5, 5}, {2, 4, 3, 3}}, conv_with(conv({1}, {0}, {1}, 1), {3, 3})},
                 {{{1, 2, 6, 5}, {1, 2, 3, 4}}, conv_with(conv({2, 1}, {1, 0}, {1}, 1), {3, 2})},
                 {{{1, 4, 5, 5}, {1, 6, 5, 5}}, conv_with(conv({1}, {1}, {2}, 2), {2, 2})}},
     .rtol32 = 1e-4,
     .atol32 = 1e-4});

JANUS_OP_SPEC({.op = "conv1d_backward_weight",
               .reference = ref_conv_backward_weight,
               .samples = {{{{2, 3, 7}, {2, 4, 5}}, conv_with(conv({1}, {0}, {1}, 1), {3})},
                           {{{1, 4, 9}, {1, 6, 5}}, conv_with(conv({2}, {1}, {2}, 2), {2})}},
               .rtol32 = 1e-4,
               .atol32 = 1e-4});

JANUS_OP_SPEC({.op = "conv3d_backward_weight",
               .reference = ref_conv_backward_weight,
               .samples = {{{{1, 2, 4, 4, 4}, {1, 3, 3, 2, 3}},
                            conv_with(conv({1}, {0}, {1}, 1), {2, 3, 2})},
                           {{{1, 4, 5, 4, 4}, {1, 2, 6, 5, 4}},
                            conv_with(conv({1}, {1}, {1, 1, 2}, 2), {2, 2, 2})}},
               .rtol32 = 1e-4,
               .atol32 = 1e-4});

ops::Attrs transpose(Ints stride, Ints padding, Ints dilation, int64_t groups, Ints out_pad) {
  return {std::move(stride), std::move(padding), std::move(dilation), groups, std::move(out_pad)};
}

// Strides with and without output_padding, padding, dilation and groups.
JANUS_OP_SPEC({.op = "conv1d_transpose",
               .reference = ref_conv_transpose,
               .samples = {{{{2, 3, 4}, {3, 2, 3}, {2}}, transpose({1}, {0}, {1}, 1, {0})},
                           {{{1, 4, 3}, {4, 3, 3}, {6}}, transpose({2}, {1}, {2}, 2, {1})},
                           {{{0, 2, 3}, {2, 1, 1}, {1}}, transpose({1}, {0}, {1}, 1, {0})}},
               .rtol32 = 1e-4,
               .atol32 = 1e-4});

JANUS_OP_SPEC({.op = "conv2d_transpose",
               .reference = ref_conv_transpose,
               .samples = {{{{2, 3, 3, 3}, {3, 2, 3, 3}, {2}}, transpose({1}, {0}, {1}, 1, {0})},
                           {{{1, 2, 3, 4}, {2, 3, 3, 2}, {3}},
                            transpose({2, 3}, {1, 0}, {1}, 1, {1, 2})},
                           {{{1, 4, 3, 3}, {4, 1, 2, 2}, {2}}, transpose({2}, {1}, {2}, 2, {0})}},
               .rtol32 = 1e-4,
               .atol32 = 1e-4});

JANUS_OP_SPEC({.op = "conv3d_transpose",
               .reference = ref_conv_transpose,
               .samples = {{{{1, 2, 2, 3, 2}, {2, 3, 2, 2, 3}, {3}},
                            transpose({1}, {0}, {1}, 1, {0})},
                           {{{1, 2, 2, 2, 3}, {2, 2, 3, 2, 2}, {4}},
                            transpose({2, 1, 2}, {1, 0, 0}, {1}, 2, {1, 0, 1})}},
               .rtol32 = 1e-4,
               .atol32 = 1e-4});

// Input dy; the sum over the batch and spatial axes per channel.
std::vector<RefTensor> ref_conv2d_backward_bias(const std::vector<RefTensor>& in,
                                                const ops::Attrs&) {
  const auto s = as5(in[0].shape);
  RefTensor db = ref_zeros(Shape{s[1]});
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t c = 0; c < s[1]; ++c)
      for (int64_t z = 0; z < s[2]; ++z)
        for (int64_t y = 0; y < s[3]; ++y)
          for (int64_t x = 0; x < s[4]; ++x) db[c] += in[0][at5(s, n, c, z, y, x)];
  return {db};
}

// Planes shorter and longer than the kernel's eight partial sums, an empty batch, and the
// 1-D and 3-D convolutions' dy.
JANUS_OP_SPEC({.op = "conv2d_backward_bias",
               .reference = ref_conv2d_backward_bias,
               .samples = {{{{2, 3, 5, 5}}, {}},
                           {{{3, 2, 1, 3}}, {}},
                           {{{1, 4, 4, 4}}, {}},
                           {{{0, 2, 3, 3}}, {}},
                           {{{2, 3, 9}}, {}},
                           {{{2, 2, 3, 2, 3}}, {}}}});

// Pooling windows: the taps of output (n, c, y, x) inside the input, and the padded count.
struct Pool {
  int64_t kh, kw, sh, sw, ph, pw;
  bool ceil;  // the output extent rounded up
};

Pool pool_of(const ops::PoolAttrs& a) {
  auto pair = [](const Ints& v) { return v.size() == 1 ? Ints{v[0], v[0]} : v; };
  const Ints k = pair(a.kernel_size);
  const Ints s = a.stride.empty() ? k : pair(a.stride);
  const Ints p = pair(a.padding);
  return {k[0], k[1], s[0], s[1], p[0], p[1], a.ceil_mode};
}

Shape pool_out_shape(const Shape& xs, const Pool& p) {
  const auto extent = [&](int64_t n, int64_t k, int64_t s, int64_t pad) {
    const int64_t span = n + 2 * pad - k;
    return (p.ceil ? (span + s - 1) / s : span / s) + 1;
  };
  return {xs[0], xs[1], extent(xs[2], p.kh, p.sh, p.ph), extent(xs[3], p.kw, p.sw, p.pw)};
}

// f(y index, taps inside x in row-major order, padded window size).
template <typename F>
void pool_windows(const Shape& xs, const Pool& p, F f) {
  const Shape ys = pool_out_shape(xs, p);
  for (int64_t n = 0; n < ys[0]; ++n)
    for (int64_t c = 0; c < ys[1]; ++c)
      for (int64_t y = 0; y < ys[2]; ++y)
        for (int64_t x = 0; x < ys[3]; ++x) {
          std::vector<int64_t> taps;
          int64_t padded = 0;
          for (int64_t ky = 0; ky < p.kh; ++ky)
            for (int64_t kx = 0; kx < p.kw; ++kx) {
              const int64_t iy = y * p.sh - p.ph + ky, ix = x * p.sw - p.pw + kx;
              if (iy >= xs[2] + p.ph || ix >= xs[3] + p.pw) continue;  // past the padding
              ++padded;
              if (iy >= 0 && iy < xs[2] && ix >= 0 && ix < xs[3])
                taps.push_back(at4(xs, n, c, iy, ix));
            }
          f(at4(ys, n, c, y, x), taps, padded);
        }
}

int64_t first_max(const RefTensor& x, const std::vector<int64_t>& taps) {
  int64_t best = taps[0];
  for (int64_t t : taps) {
    if (x[t] > x[best]) best = t;
  }
  return best;
}

std::vector<RefTensor> ref_max_pool2d(const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
  const ops::PoolAttrs a = ops::PoolAttrs::from(attrs);
  RefTensor y = ref_zeros(pool_out_shape(in[0].shape, pool_of(a)));
  pool_windows(in[0].shape, pool_of(a), [&](int64_t yi, const std::vector<int64_t>& taps, int64_t) {
    y[yi] = in[0][first_max(in[0], taps)];
  });
  return {y};
}

std::vector<RefTensor> ref_max_pool2d_backward(const std::vector<RefTensor>& in,
                                               const ops::Attrs& attrs) {
  const ops::PoolAttrs a = ops::PoolAttrs::from(attrs);
  RefTensor dx = ref_zeros(in[0].shape);
  pool_windows(in[0].shape, pool_of(a), [&](int64_t yi, const std::vector<int64_t>& taps, int64_t) {
    dx[first_max(in[0], taps)] += in[1][yi];
  });
  return {dx};
}

std::vector<RefTensor> ref_avg_pool2d(const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
  const ops::AvgPoolAttrs a = ops::AvgPoolAttrs::from(attrs);
  const bool count_pad = a.count_include_pad;
  RefTensor y = ref_zeros(pool_out_shape(in[0].shape, pool_of(a)));
  pool_windows(
      in[0].shape, pool_of(a), [&](int64_t yi, const std::vector<int64_t>& taps, int64_t padded) {
        double total = 0;
        for (int64_t t : taps) total += in[0][t];
        y[yi] = total / static_cast<double>(count_pad ? padded : static_cast<int64_t>(taps.size()));
      });
  return {y};
}

std::vector<RefTensor> ref_avg_pool2d_backward(const std::vector<RefTensor>& in,
                                               const ops::Attrs& attrs) {
  const ops::AvgPoolBackwardAttrs a = ops::AvgPoolBackwardAttrs::from(attrs);
  const bool count_pad = a.count_include_pad;
  const Ints size = a.input_size;
  const Shape xs{in[0].shape[0], in[0].shape[1], size[0], size[1]};
  RefTensor dx = ref_zeros(xs);
  pool_windows(xs, pool_of(a), [&](int64_t yi, const std::vector<int64_t>& taps, int64_t padded) {
    const double n = static_cast<double>(count_pad ? padded : static_cast<int64_t>(taps.size()));
    for (int64_t t : taps) dx[t] += in[0][yi] / n;
  });
  return {dx};
}

// Distinct values, so that each window has one maximum and finite differences never cross a
// tie.
void distinct(int index, RefTensor& t, std::mt19937& rng) {
  if (index != 0) return;
  std::vector<int64_t> order(static_cast<size_t>(t.size()));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  for (int64_t i = 0; i < t.size(); ++i)
    t[i] = 0.1 * static_cast<double>(order[static_cast<size_t>(i)]) - 1.0;
}

ops::Attrs pool(Ints kernel, Ints stride, Ints padding, bool ceil_mode = false) {
  return {std::move(kernel), std::move(stride), std::move(padding), ceil_mode};
}

const std::vector<OpSample> kMaxPoolSamples = {
    {{{2, 3, 4, 4}}, pool({2}, {}, {0})},
    {{{1, 2, 5, 7}}, pool({2}, {2}, {0})},  // 2x2 stride 2 on odd extents
    {{{1, 2, 5, 7}}, pool({3, 2}, {2, 1}, {1, 0})},
    {{{1, 1, 5, 5}}, pool({3}, {1}, {1})},
    {{{0, 2, 4, 4}}, pool({2}, {}, {0})},
    // ceil mode: last windows that run past the padding (clipped there)
    {{{1, 2, 6, 7}}, pool({3, 2}, {2, 2}, {1, 0}, true)},
    {{{1, 2, 5, 7}}, pool({2}, {2}, {0}, true)}};

JANUS_OP_SPEC({.op = "max_pool2d",
               .reference = ref_max_pool2d,
               .samples = kMaxPoolSamples,
               .make_input = distinct});

JANUS_OP_SPEC({.op = "max_pool2d_backward",
               .reference = ref_max_pool2d_backward,
               .samples = {{{{2, 3, 4, 4}, {2, 3, 2, 2}}, pool({2}, {}, {0})},
                           // odd extents: the last row and column belong to no window
                           {{{1, 2, 5, 7}, {1, 2, 2, 3}}, pool({2}, {2}, {0})},
                           {{{1, 2, 5, 7}, {1, 2, 3, 6}}, pool({3, 2}, {2, 1}, {1, 0})},
                           {{{1, 1, 5, 5}, {1, 1, 5, 5}}, pool({3}, {1}, {1})},
                           {{{1, 2, 6, 7}, {1, 2, 4, 4}}, pool({3, 2}, {2, 2}, {1, 0}, true)},
                           {{{1, 2, 5, 7}, {1, 2, 3, 4}}, pool({2}, {2}, {0}, true)}},
               .make_input = distinct});

ops::Attrs avg(Ints kernel, Ints stride, Ints padding, bool count_pad, bool ceil_mode = false) {
  return {std::move(kernel), std::move(stride), std::move(padding), ceil_mode, count_pad};
}

JANUS_OP_SPEC({.op = "avg_pool2d",
               .reference = ref_avg_pool2d,
               .samples = {{{{2, 3, 4, 4}}, avg({2}, {}, {0}, true)},
                           {{{1, 2, 5, 7}}, avg({3, 2}, {2, 1}, {1, 0}, true)},
                           {{{1, 2, 5, 5}}, avg({3}, {2}, {1}, false)},
                           {{{0, 2, 4, 4}}, avg({2}, {}, {0}, true)},
                           // ceil mode, the padding counted and not: windows past the padding
                           {{{1, 2, 6, 7}}, avg({3, 2}, {2, 2}, {1, 0}, true, true)},
                           {{{1, 2, 6, 7}}, avg({3, 2}, {2, 2}, {1, 0}, false, true)},
                           {{{1, 2, 5, 7}}, avg({2}, {2}, {0}, true, true)}}});

ops::Attrs avg_backward(Ints kernel, Ints stride, Ints padding, bool count_pad, Ints size,
                        bool ceil_mode = false) {
  return {std::move(kernel), std::move(stride), std::move(padding),
          ceil_mode,         count_pad,         std::move(size)};
}

JANUS_OP_SPEC({.op = "avg_pool2d_backward",
               .reference = ref_avg_pool2d_backward,
               .samples = {
                   {{{2, 3, 2, 2}}, avg_backward({2}, {}, {0}, true, {4, 4})},
                   {{{1, 2, 3, 6}}, avg_backward({3, 2}, {2, 1}, {1, 0}, true, {5, 7})},
                   {{{1, 2, 3, 3}}, avg_backward({3}, {2}, {1}, false, {5, 5})},
                   {{{1, 2, 4, 4}}, avg_backward({3, 2}, {2, 2}, {1, 0}, true, {6, 7}, true)},
                   {{{1, 2, 4, 4}}, avg_backward({3, 2}, {2, 2}, {1, 0}, false, {6, 7}, true)}}});

// Batch norm over axis `axis`: per channel mean and biased variance (training) or the running
// statistics (inference).
struct Channels {
  int64_t outer = 1, channels = 1, inner = 1;
};

Channels channels_of(const Shape& s, int64_t axis) {
  if (axis < 0) axis += s.ndim();
  Channels c;
  for (int i = 0; i < s.ndim(); ++i) {
    if (i < axis) c.outer *= s[i];
    if (i == axis) c.channels = s[i];
    if (i > axis) c.inner *= s[i];
  }
  return c;
}

std::vector<int64_t> channel_members(const Channels& c, int64_t ch) {
  std::vector<int64_t> idx;
  for (int64_t o = 0; o < c.outer; ++o)
    for (int64_t i = 0; i < c.inner; ++i) idx.push_back((o * c.channels + ch) * c.inner + i);
  return idx;
}

std::vector<RefTensor> ref_batch_norm(const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
  const ops::BatchNormAttrs a = ops::BatchNormAttrs::from(attrs);
  const double eps = a.eps;
  const bool training = a.training;
  const Channels c = channels_of(in[0].shape, a.axis);
  RefTensor y = ref_zeros(in[0].shape), mean = ref_zeros(Shape{c.channels}),
            var = ref_zeros(Shape{c.channels});
  for (int64_t ch = 0; ch < c.channels; ++ch) {
    const auto idx = channel_members(c, ch);
    if (training) {
      for (int64_t k : idx) mean[ch] += in[0][k] / static_cast<double>(idx.size());
      for (int64_t k : idx)
        var[ch] += std::pow(in[0][k] - mean[ch], 2) / static_cast<double>(idx.size());
    } else {
      mean[ch] = in[3][ch];
      var[ch] = in[4][ch];
    }
    for (int64_t k : idx)
      y[k] = (in[0][k] - mean[ch]) / std::sqrt(var[ch] + eps) * in[1][ch] + in[2][ch];
  }
  return {y, mean, var};
}

void positive_variance(int index, RefTensor& t, std::mt19937&) {
  if (index != 4) return;
  for (double& v : t.data) v = std::fabs(v) + 0.5;
}

ops::Attrs bn(double eps, bool training, int64_t axis) { return {eps, 0.9, training, axis}; }

JANUS_OP_SPEC({.op = "batch_norm",
               .reference = ref_batch_norm,
               .samples = {{{{4, 3}, {3}, {3}, {3}, {3}}, bn(1e-5, true, 1)},
                           {{{2, 3, 2, 2}, {3}, {3}, {3}, {3}}, bn(1e-3, true, 1)},
                           {{{2, 2, 3}, {3}, {3}, {3}, {3}}, bn(1e-5, true, -1)},
                           {{{2, 3, 2, 2}, {3}, {3}, {3}, {3}}, bn(1e-5, false, 1)},
                           {{{0, 3}, {3}, {3}, {3}, {3}}, bn(1e-5, false, 1)}},
               .make_input = positive_variance,
               .rtol32 = 1e-4,
               .atol32 = 1e-4,
               .grad_rtol = 1e-4,
               .grad_atol = 1e-5,
               .no_grad_inputs = {3, 4}});

// Inputs x, gamma, mean, var, dy, dmean, dvar: the textbook gradients, term by term.
std::vector<RefTensor> ref_batch_norm_backward(const std::vector<RefTensor>& in,
                                               const ops::Attrs& attrs) {
  const ops::BatchNormBackwardAttrs a = ops::BatchNormBackwardAttrs::from(attrs);
  const double eps = a.eps;
  const bool training = a.training;
  const Channels c = channels_of(in[0].shape, a.axis);
  const RefTensor &x = in[0], &gamma = in[1], &mean = in[2], &var = in[3], &dy = in[4];
  RefTensor dx = ref_zeros(x.shape), dgamma = ref_zeros(Shape{c.channels}),
            dbeta = ref_zeros(Shape{c.channels});
  for (int64_t ch = 0; ch < c.channels; ++ch) {
    const auto idx = channel_members(c, ch);
    const double m = static_cast<double>(idx.size()), rstd = 1 / std::sqrt(var[ch] + eps);
    double dxhat_sum = 0, dxhat_xhat_sum = 0;
    for (int64_t k : idx) {
      const double xhat = (x[k] - mean[ch]) * rstd;
      dbeta[ch] += dy[k];
      dgamma[ch] += dy[k] * xhat;
      dxhat_sum += dy[k] * gamma[ch];
      dxhat_xhat_sum += dy[k] * gamma[ch] * xhat;
    }
    for (int64_t k : idx) {
      const double xhat = (x[k] - mean[ch]) * rstd;
      if (!training) {
        dx[k] = dy[k] * gamma[ch] * rstd;
        continue;
      }
      dx[k] = rstd / m * (m * dy[k] * gamma[ch] - dxhat_sum - xhat * dxhat_xhat_sum) +
              in[5][ch] / m + in[6][ch] * 2 * (x[k] - mean[ch]) / m;
    }
  }
  return {dx, dgamma, dbeta};
}

JANUS_OP_SPEC({.op = "batch_norm_backward",
               .reference = ref_batch_norm_backward,
               .samples = {{{{4, 3}, {3}, {3}, {3}, {4, 3}, {3}, {3}}, {1e-5, true, int64_t{1}}},
                           {{{2, 3, 2, 2}, {3}, {3}, {3}, {2, 3, 2, 2}, {3}, {3}},
                            {1e-3, false, int64_t{1}}}},
               .make_input =
                   [](int index, RefTensor& t, std::mt19937&) {
                     if (index == 3) {
                       for (double& v : t.data) v = std::fabs(v) + 0.5;
                     }
                   },
               .rtol32 = 1e-4,
               .atol32 = 1e-4,
               .rtol64 = 1e-9,
               .atol64 = 1e-10});

}  // namespace
}  // namespace janus::testing

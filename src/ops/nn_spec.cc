// Conformance specifications of the neural-network operators.
#include <algorithm>
#include <cmath>

#include "nn/nn_attrs.h"
#include "testing/op_spec.h"

namespace janus::testing {
namespace {

struct Lanes {
  int64_t outer = 1, extent = 1, inner = 1;
};

Lanes lanes_of(const Shape& s, int64_t axis) {
  if (axis < 0) axis += s.ndim();
  Lanes l;
  for (int i = 0; i < s.ndim(); ++i) {
    if (i < axis) l.outer *= s[i];
    if (i == axis) l.extent = s[i];
    if (i > axis) l.inner *= s[i];
  }
  return l;
}

// log_softmax by the textbook formula, in double.
RefTensor ref_log_softmax_of(const RefTensor& x, int64_t axis) {
  const Lanes l = lanes_of(x.shape, axis);
  RefTensor y = ref_zeros(x.shape);
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t in = 0; in < l.inner; ++in) {
      auto at = [&](int64_t j) { return o * l.extent * l.inner + j * l.inner + in; };
      double mx = -INFINITY;
      for (int64_t j = 0; j < l.extent; ++j) mx = std::max(mx, x[at(j)]);
      double total = 0;
      for (int64_t j = 0; j < l.extent; ++j) total += std::exp(x[at(j)] - mx);
      for (int64_t j = 0; j < l.extent; ++j) y[at(j)] = x[at(j)] - mx - std::log(total);
    }
  }
  return y;
}

std::vector<RefTensor> ref_log_softmax(const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
  return {ref_log_softmax_of(in[0], ops::SoftmaxAttrs::from(attrs).axis)};
}

std::vector<RefTensor> ref_softmax(const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
  return {ref_map(ref_log_softmax_of(in[0], ops::SoftmaxAttrs::from(attrs).axis),
                  [](double v) { return std::exp(v); })};
}

const std::vector<OpSample> kSoftmaxSamples = {
    {{{2, 5}}}, {{{3, 4}}, {int64_t{0}}}, {{{2, 3, 4}}, {int64_t{1}}}, {{{6}}}, {{{2, 0}}}};

JANUS_OP_SPEC({.op = "softmax", .reference = ref_softmax, .samples = kSoftmaxSamples});
JANUS_OP_SPEC({.op = "log_softmax", .reference = ref_log_softmax, .samples = kSoftmaxSamples});

constexpr int kClasses = 4;  // every cross-entropy sample has at least this many classes

void fill_labels(int index, RefTensor& t, std::mt19937& rng) {
  if (index != 1) return;
  for (double& v : t.data) v = static_cast<double>(rng() % kClasses);
}

std::vector<RefTensor> ref_softmax_cross_entropy(const std::vector<RefTensor>& in,
                                                 const ops::Attrs&) {
  const RefTensor lsm = ref_log_softmax_of(in[0], -1);
  const int64_t n = in[0].shape[0], c = in[0].shape[1];
  RefTensor loss = ref_zeros(Shape{n});
  for (int64_t i = 0; i < n; ++i) loss[i] = -lsm[i * c + static_cast<int64_t>(in[1][i])];
  return {loss};
}

JANUS_OP_SPEC({.op = "softmax_cross_entropy",
               .reference = ref_softmax_cross_entropy,
               .samples = {{{{3, 4}, {3}}, {}, {DType::kFloat64, DType::kInt32}},
                           {{{5, 6}, {5}}, {}, {DType::kFloat64, DType::kInt64}},
                           {{{0, 4}, {0}}, {}, {DType::kFloat64, DType::kInt64}}},
               .make_input = fill_labels});

// (softmax - one_hot(label)) * dloss, row by row.
std::vector<RefTensor> ref_softmax_cross_entropy_backward(const std::vector<RefTensor>& in,
                                                          const ops::Attrs&) {
  const RefTensor lsm = ref_log_softmax_of(in[0], -1);
  const int64_t n = in[0].shape[0], c = in[0].shape[1];
  RefTensor dx = ref_zeros(in[0].shape);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < c; ++j) {
      const double hot = j == static_cast<int64_t>(in[1][i]) ? 1.0 : 0.0;
      dx[i * c + j] = (std::exp(lsm[i * c + j]) - hot) * in[2][i];
    }
  }
  return {dx};
}

JANUS_OP_SPEC({.op = "softmax_cross_entropy_backward",
               .reference = ref_softmax_cross_entropy_backward,
               .samples = {{{{3, 4}, {3}, {3}}, {}, {DType::kFloat64, DType::kInt32}},
                           {{{5, 6}, {5}, {5}}, {}, {DType::kFloat64, DType::kInt64}},
                           {{{0, 4}, {0}, {0}}, {}, {DType::kFloat64, DType::kInt64}}},
               .make_input = fill_labels});

std::vector<RefTensor> ref_one_hot(const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
  const int64_t depth = ops::OneHotAttrs::from(attrs).depth;
  std::vector<int64_t> dims = in[0].shape.dims();
  dims.push_back(depth);
  RefTensor y = ref_zeros(Shape(dims));
  for (int64_t i = 0; i < in[0].size(); ++i) y[i * depth + static_cast<int64_t>(in[0][i])] = 1;
  return {y};
}

JANUS_OP_SPEC({.op = "one_hot",
               .reference = ref_one_hot,
               .samples = {{{{5}}, {int64_t{kClasses}}, {DType::kInt32}},
                           {{{2, 3}}, {int64_t{kClasses}, DType::kFloat64}, {DType::kInt64}},
                           {{{0}}, {int64_t{kClasses}}, {DType::kInt64}}},
               .make_input = [](int, RefTensor& t, std::mt19937& rng) {
                 for (double& v : t.data) v = static_cast<double>(rng() % kClasses);
               }});

std::vector<RefTensor> ref_fully_connected(const std::vector<RefTensor>& in,
                                           const ops::Attrs& attrs) {
  const int64_t n = in[0].shape[0], k = in[0].shape[1], m = in[1].shape[0];
  const ops::Activation activation = ops::FullyConnectedAttrs::from(attrs).activation;
  RefTensor y = ref_zeros(Shape{n, m});
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < m; ++j) {
      double acc = in[2][j];
      for (int64_t p = 0; p < k; ++p) acc += in[0][i * k + p] * in[1][j * k + p];
      y[i * m + j] = ref_post_op(activation, acc);
    }
  }
  return {y};
}

JANUS_OP_SPEC({.op = "fully_connected",
               .reference = ref_fully_connected,
               .samples = {{{{3, 4}, {5, 4}, {5}}},
                           {{{3, 4}, {5, 4}, {5}}, {std::string("relu")}},
                           {{{3, 4}, {5, 4}, {5}}, {std::string("sigmoid")}},
                           {{{3, 4}, {5, 4}, {5}}, {std::string("tanh")}},
                           {{{1, 7}, {2, 7}, {2}}},
                           // One row: our matrix-vector loop (16-wide body, 4-row blocks, tails).
                           {{{1, 37}, {6, 37}, {6}}},
                           {{{1, 37}, {6, 37}, {6}}, {std::string("relu")}},
                           {{{1, 37}, {6, 37}, {6}}, {std::string("sigmoid")}},
                           {{{2, 0}, {3, 0}, {3}}},
                           {{{0, 3}, {2, 3}, {2}}}},
               .rtol32 = 1e-4,
               .atol32 = 1e-4});

// Only the deterministic cases have a reference (not training, p = 0, p = 1); the random masks
// are checked in nn_ops_test.cc (determinism under a seed, keep rate, scaling).
std::vector<RefTensor> ref_dropout(const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
  const ops::DropoutAttrs a = ops::DropoutAttrs::from(attrs);
  const double p = a.p;
  const bool training = a.training;
  const double m = !training || p == 0.0 ? 1.0 : 0.0;  // p == 1 drops everything
  return {ref_map(in[0], [m](double v) { return v * m; }),
          ref_map(in[0], [m](double) { return m; })};
}

JANUS_OP_SPEC({.op = "dropout",
               .reference = ref_dropout,
               .samples = {{{{3, 4}}, {0.5, false}},
                           {{{2, 3}}, {0.0, true}},
                           {{{5}}, {1.0, true}},
                           {{{0, 2}}, {0.5, true}}}});

void fill_indices(int index, RefTensor& t, std::mt19937& rng) {
  if (index != 0) return;
  for (double& v : t.data) v = static_cast<double>(rng() % kClasses);
}

std::vector<RefTensor> ref_embedding(const std::vector<RefTensor>& in, const ops::Attrs&) {
  const int64_t d = in[1].shape[1];
  std::vector<int64_t> dims = in[0].shape.dims();
  dims.push_back(d);
  RefTensor y = ref_zeros(Shape(dims));
  for (int64_t i = 0; i < in[0].size(); ++i) {
    for (int64_t j = 0; j < d; ++j) y[i * d + j] = in[1][static_cast<int64_t>(in[0][i]) * d + j];
  }
  return {y};
}

JANUS_OP_SPEC({.op = "embedding",
               .reference = ref_embedding,
               .samples = {{{{5}, {kClasses, 3}}, {}, {DType::kInt64}},
                           {{{2, 3}, {kClasses, 2}}, {}, {DType::kInt32}},
                           {{{0}, {kClasses, 2}}, {}, {DType::kInt32}}},
               .make_input = fill_indices});

std::vector<RefTensor> ref_embedding_backward(const std::vector<RefTensor>& in,
                                              const ops::Attrs& attrs) {
  const int64_t v = ops::EmbeddingBackwardAttrs::from(attrs).num_embeddings;
  const int64_t d = in[1].shape[in[1].shape.ndim() - 1];
  RefTensor dw = ref_zeros(Shape{v, d});
  for (int64_t i = 0; i < in[0].size(); ++i) {
    for (int64_t j = 0; j < d; ++j) dw[static_cast<int64_t>(in[0][i]) * d + j] += in[1][i * d + j];
  }
  return {dw};
}

JANUS_OP_SPEC({.op = "embedding_backward",
               .reference = ref_embedding_backward,
               .samples = {{{{6}, {6, 3}}, {int64_t{kClasses}}, {DType::kInt64}},
                           {{{2, 3}, {2, 3, 2}}, {int64_t{kClasses + 1}}, {DType::kInt32}}},
               .make_input = fill_indices});

// Statistics of each row of the last axis: xhat = (x - mean) / sqrt(var + eps).
std::vector<double> ref_xhat(const RefTensor& x, double eps) {
  const int64_t d = x.shape[x.shape.ndim() - 1];
  std::vector<double> xhat(x.data.size());
  for (int64_t r = 0; d > 0 && r < x.size() / d; ++r) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < d; ++j) mean += x[r * d + j] / static_cast<double>(d);
    for (int64_t j = 0; j < d; ++j)
      var += (x[r * d + j] - mean) * (x[r * d + j] - mean) / static_cast<double>(d);
    for (int64_t j = 0; j < d; ++j)
      xhat[static_cast<size_t>(r * d + j)] = (x[r * d + j] - mean) / std::sqrt(var + eps);
  }
  return xhat;
}

std::vector<RefTensor> ref_layer_norm(const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
  const std::vector<double> xhat = ref_xhat(in[0], ops::LayerNormAttrs::from(attrs).eps);
  const int64_t d = in[0].shape[in[0].shape.ndim() - 1];
  RefTensor y = ref_zeros(in[0].shape);
  for (int64_t i = 0; i < y.size(); ++i)
    y[i] = xhat[static_cast<size_t>(i)] * in[1][i % d] + in[2][i % d];
  return {y};
}

JANUS_OP_SPEC(
    {.op = "layer_norm",
     .reference = ref_layer_norm,
     .samples = {{{{3, 4}, {4}, {4}}}, {{{2, 2, 5}, {5}, {5}}, {0.1}}, {{{0, 3}, {3}, {3}}}},
     .rtol32 = 1e-4,
     .atol32 = 1e-4,
     .grad_rtol = 1e-4,
     .grad_atol = 1e-5});

// dx by the textbook formula; dgamma and dbeta summed over the rows.
std::vector<RefTensor> ref_layer_norm_backward(const std::vector<RefTensor>& in,
                                               const ops::Attrs& attrs) {
  const RefTensor& x = in[0];
  const RefTensor& gamma = in[1];
  const RefTensor& dy = in[2];
  const double eps = ops::LayerNormAttrs::from(attrs).eps;
  const std::vector<double> xhat = ref_xhat(x, eps);
  const int64_t d = x.shape[x.shape.ndim() - 1];
  RefTensor dx = ref_zeros(x.shape), dgamma = ref_zeros(Shape{d}), dbeta = ref_zeros(Shape{d});
  for (int64_t r = 0; d > 0 && r < x.size() / d; ++r) {
    double mean = 0, var = 0, mg = 0, mgx = 0;
    for (int64_t j = 0; j < d; ++j) mean += x[r * d + j] / static_cast<double>(d);
    for (int64_t j = 0; j < d; ++j)
      var += (x[r * d + j] - mean) * (x[r * d + j] - mean) / static_cast<double>(d);
    for (int64_t j = 0; j < d; ++j) {
      const double g = dy[r * d + j] * gamma[j];
      mg += g / static_cast<double>(d);
      mgx += g * xhat[static_cast<size_t>(r * d + j)] / static_cast<double>(d);
      dgamma[j] += dy[r * d + j] * xhat[static_cast<size_t>(r * d + j)];
      dbeta[j] += dy[r * d + j];
    }
    for (int64_t j = 0; j < d; ++j) {
      dx[r * d + j] = (dy[r * d + j] * gamma[j] - mg - xhat[static_cast<size_t>(r * d + j)] * mgx) /
                      std::sqrt(var + eps);
    }
  }
  return {dx, dgamma, dbeta};
}

JANUS_OP_SPEC({.op = "layer_norm_backward",
               .reference = ref_layer_norm_backward,
               .samples = {{{{3, 4}, {4}, {3, 4}}}, {{{2, 2, 5}, {5}, {2, 2, 5}}, {0.1}}},
               .rtol32 = 1e-4,
               .atol32 = 1e-4,
               .rtol64 = 1e-9,
               .atol64 = 1e-10});

// rnn in double, one cell at a time as the textbook writes it: for each layer and direction the
// weights read from the packed vector (weights of every layer and direction, then biases, each
// input-to-hidden then hidden-to-hidden), the gates of MXNet (lstm: i, f, g, o; gru: r, z, n
// with the reset gate scaling h's part after its bias).
std::vector<RefTensor> ref_rnn(const std::vector<RefTensor>& in, const ops::Attrs& attrs) {
  const ops::RnnAttrs a = ops::RnnAttrs::from(attrs);
  const int64_t steps = in[0].shape[0], batch = in[0].shape[1], features = in[0].shape[2];
  const int64_t hs = a.state_size, layers = a.num_layers, dirs = a.bidirectional ? 2 : 1;
  const int64_t gates = a.mode == "lstm" ? 4 : a.mode == "gru" ? 3 : 1;
  const int64_t num_states = a.mode == "lstm" ? 2 : 1;
  auto sigmoid = [](double x) { return 1 / (1 + std::exp(-x)); };
  // States of batch 1 are every sequence's.
  RefTensor states = ref_zeros(Shape{num_states, layers * dirs, batch, hs});
  for (int64_t row = 0; row < num_states * layers * dirs * batch; ++row) {
    const int64_t from = in[2].shape[2] == 1 ? row / batch : row;
    for (int64_t j = 0; j < hs; ++j) states[row * hs + j] = in[2][from * hs + j];
  }
  std::vector<double> x(in[0].data);  // this layer's input, [T, N, C_l]
  int64_t width = features;
  int64_t weight_offset = 0;
  int64_t bias_offset = 0;
  for (int64_t l = 0; l < layers; ++l)
    bias_offset += dirs * gates * hs * ((l == 0 ? features : dirs * hs) + hs);
  std::vector<double> y;
  for (int64_t l = 0; l < layers; ++l) {
    y.assign(static_cast<size_t>(steps * batch * dirs * hs), 0.0);
    for (int64_t d = 0; d < dirs; ++d) {
      const double* wi = in[1].data.data() + weight_offset;
      const double* wh = wi + gates * hs * width;
      weight_offset += gates * hs * (width + hs);
      const double* bi = in[1].data.data() + bias_offset;
      const double* bh = bi + gates * hs;
      bias_offset += 2 * gates * hs;
      const int64_t slot = l * dirs + d;
      for (int64_t b = 0; b < batch; ++b) {
        double* h = &states[(slot * batch + b) * hs];
        double* c = num_states == 2 ? &states[((layers * dirs + slot) * batch + b) * hs] : nullptr;
        for (int64_t k = 0; k < steps; ++k) {
          const int64_t t = d == 0 ? k : steps - 1 - k;
          const double* xt = &x[static_cast<size_t>((t * batch + b) * width)];
          // pre[g][j] = W_i x + b_i and W_h h + b_h, per gate row.
          std::vector<double> px(static_cast<size_t>(gates * hs)), ph(px.size());
          for (int64_t r = 0; r < gates * hs; ++r) {
            px[r] = bi[r];
            for (int64_t p = 0; p < width; ++p) px[r] += wi[r * width + p] * xt[p];
            ph[r] = bh[r];
            for (int64_t p = 0; p < hs; ++p) ph[r] += wh[r * hs + p] * h[p];
          }
          std::vector<double> next(static_cast<size_t>(hs));
          for (int64_t j = 0; j < hs; ++j) {
            if (a.mode == "lstm") {
              const double i = sigmoid(px[j] + ph[j]), f = sigmoid(px[hs + j] + ph[hs + j]);
              const double g = std::tanh(px[2 * hs + j] + ph[2 * hs + j]);
              const double o = sigmoid(px[3 * hs + j] + ph[3 * hs + j]);
              c[j] = f * c[j] + i * g;
              next[j] = o * std::tanh(c[j]);
            } else if (a.mode == "gru") {
              const double r = sigmoid(px[j] + ph[j]), z = sigmoid(px[hs + j] + ph[hs + j]);
              const double n = std::tanh(px[2 * hs + j] + r * ph[2 * hs + j]);
              next[j] = (1 - z) * n + z * h[j];
            } else {
              const double v = px[j] + ph[j];
              next[j] = a.mode == "rnn_relu" ? std::max(v, 0.0) : std::tanh(v);
            }
          }
          for (int64_t j = 0; j < hs; ++j) {
            h[j] = next[j];
            y[static_cast<size_t>((t * batch + b) * dirs * hs + d * hs + j)] = next[j];
          }
        }
      }
    }
    x = y;
    width = dirs * hs;
  }
  RefTensor out{Shape{steps, batch, dirs * hs}, y};
  return {out, states};
}

JANUS_OP_SPEC({.op = "rnn",
               .reference = ref_rnn,
               // params: the packed sizes of each configuration (rnn.cc's layout).
               .samples = {{{{3, 2, 3}, {240}, {2, 4, 2, 2}},
                            {std::string("lstm"), int64_t{2}, int64_t{2}, true}},
                           {{{4, 2, 3}, {42}, {1, 1, 2, 2}},
                            {std::string("gru"), int64_t{2}, int64_t{1}, false}},
                           // The same initial states for every sequence.
                           {{{3, 2, 3}, {240}, {2, 4, 1, 2}},
                            {std::string("lstm"), int64_t{2}, int64_t{2}, true}},
                           {{{2, 3, 3}, {72}, {1, 2, 3, 4}},
                            {std::string("rnn_tanh"), int64_t{4}, int64_t{1}, true}},
                           {{{3, 1, 2}, {45}, {1, 2, 1, 3}},
                            {std::string("rnn_relu"), int64_t{3}, int64_t{2}, false}},
                           // Three bidirectional layers: the middle one reads one of the
                           // kernel's buffers while its first direction writes the other.
                           {{{2, 2, 2}, {88}, {1, 6, 2, 2}},
                            {std::string("rnn_tanh"), int64_t{2}, int64_t{3}, true}}},
               .low = -1.0,
               .high = 1.0,
               .rtol32 = 1e-4,
               .atol32 = 1e-5,
               .check_grad = false});

}  // namespace
}  // namespace janus::testing

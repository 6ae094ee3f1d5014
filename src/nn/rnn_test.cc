// Recurrent cells and layers against a direct float64 implementation written here, gradients
// against finite differences, hybridized against imperative, export, and the errors.
#include "janus/nn/rnn.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>

#include "janus/autograd/autograd.h"
#include "janus/deploy/predictor.h"
#include "janus/engine/array.h"
#include "janus/nn/symbol_block.h"
#include "janus/ops/ops.h"

#include "testing/temp_dir.h"
#include "testing/test_util.h"

namespace janus::nn {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Vec = std::vector<double>;

NDArray randn(Shape s, uint64_t seed_value, double scale = 1.0) {
  seed(seed_value);
  return random_normal(0, scale, s);
}

Vec values(const NDArray& a) {
  const std::vector<float> f = to_vector<float>(a);
  return Vec(f.begin(), f.end());
}

void expect_near(const NDArray& got, const Vec& want, double tol, const std::string& what) {
  const Vec g = values(got);
  ASSERT_EQ(g.size(), want.size()) << what;
  for (size_t i = 0; i < g.size(); ++i) {
    EXPECT_NEAR(g[i], want[i], tol) << what << " at " << i;
  }
}

double sigm(double v) { return 1 / (1 + std::exp(-v)); }

// The weights of one layer and direction, row-major as stored: wi [G H, C], wh [G H, H].
struct RefWeights {
  Vec wi, wh, bi, bh;
};

// One step for one sequence: x [C], h and c [H] updated in place. Written from the equations
// of MXNet's documentation, one gate at a time.
void ref_step(RNNMode mode, const RefWeights& w, const Vec& x, Vec& h, Vec& c) {
  const size_t hs = h.size(), cs = x.size(), g = static_cast<size_t>(rnn_gates(mode));
  Vec xi(g * hs), hh(g * hs);
  for (size_t r = 0; r < g * hs; ++r) {
    xi[r] = w.bi[r];
    for (size_t k = 0; k < cs; ++k) xi[r] += w.wi[r * cs + k] * x[k];
    hh[r] = w.bh[r];
    for (size_t k = 0; k < hs; ++k) hh[r] += w.wh[r * hs + k] * h[k];
  }
  Vec nh(hs);
  for (size_t j = 0; j < hs; ++j) {
    switch (mode) {
      case RNNMode::kRNNRelu:
        nh[j] = std::max(0.0, xi[j] + hh[j]);
        break;
      case RNNMode::kRNNTanh:
        nh[j] = std::tanh(xi[j] + hh[j]);
        break;
      case RNNMode::kLSTM: {
        const double in = sigm(xi[j] + hh[j]);
        const double forget = sigm(xi[hs + j] + hh[hs + j]);
        const double cell = std::tanh(xi[2 * hs + j] + hh[2 * hs + j]);
        const double out = sigm(xi[3 * hs + j] + hh[3 * hs + j]);
        c[j] = forget * c[j] + in * cell;
        nh[j] = out * std::tanh(c[j]);
        break;
      }
      case RNNMode::kGRU: {
        const double reset = sigm(xi[j] + hh[j]);
        const double update = sigm(xi[hs + j] + hh[hs + j]);
        const double cand = std::tanh(xi[2 * hs + j] + reset * hh[2 * hs + j]);
        nh[j] = (1 - update) * cand + update * h[j];
        break;
      }
    }
  }
  h = nh;
}

struct RefResult {
  Vec out;   // [T, N, D H]
  Vec h, c;  // [L D, N, H]
};

// A whole layer stack over x [T, N, C] (TNC) from states h0, c0 [L D, N, H].
RefResult ref_layer(RNNMode mode, int64_t layers, bool bidir, int64_t hidden, const Vec& x,
                    int64_t t_len, int64_t n, int64_t c, const std::vector<RefWeights>& w,
                    const Vec& h0, const Vec& c0) {
  const int64_t dirs = bidir ? 2 : 1;
  RefResult r;
  r.h = h0;
  r.c = c0;
  Vec in = x;
  int64_t width = c;
  for (int64_t l = 0; l < layers; ++l) {
    Vec out(static_cast<size_t>(t_len * n * dirs * hidden));
    for (int64_t d = 0; d < dirs; ++d) {
      const int64_t s = l * dirs + d;
      for (int64_t b = 0; b < n; ++b) {
        Vec h(r.h.begin() + (s * n + b) * hidden, r.h.begin() + (s * n + b + 1) * hidden);
        Vec cc(r.c.begin() + (s * n + b) * hidden, r.c.begin() + (s * n + b + 1) * hidden);
        for (int64_t k = 0; k < t_len; ++k) {
          const int64_t t = d == 1 ? t_len - 1 - k : k;
          Vec xt(in.begin() + (t * n + b) * width, in.begin() + (t * n + b + 1) * width);
          ref_step(mode, w[static_cast<size_t>(s)], xt, h, cc);
          for (int64_t j = 0; j < hidden; ++j) {
            out[static_cast<size_t>(((t * n + b) * dirs + d) * hidden + j)] = h[j];
          }
        }
        std::copy(h.begin(), h.end(), r.h.begin() + (s * n + b) * hidden);
        std::copy(cc.begin(), cc.end(), r.c.begin() + (s * n + b) * hidden);
      }
    }
    in = out;
    width = dirs * hidden;
  }
  r.out = in;
  return r;
}

std::vector<RefWeights> weights_of(const RecurrentLayer& layer) {
  const ParameterDict params = layer.collect_params();
  std::vector<RefWeights> out;
  const int64_t dirs = layer.options().bidirectional ? 2 : 1;
  for (int64_t l = 0; l < layer.options().num_layers; ++l) {
    for (int64_t d = 0; d < dirs; ++d) {
      const std::string p = fmt::format("{}{}_", d == 0 ? 'l' : 'r', l);
      out.push_back(
          {values(params.at(p + "i2h_weight")->data()), values(params.at(p + "h2h_weight")->data()),
           values(params.at(p + "i2h_bias")->data()), values(params.at(p + "h2h_bias")->data())});
    }
  }
  return out;
}

// Initialises every parameter of `block` with N(0, 0.5) (biases too, so they are tested).
void randomize(Block& block, uint64_t seed_value) {
  block.initialize(Zero());
  for (const auto& [name, p] : block.collect_params()) {
    p->set_data(randn(p->shape(), seed_value++, 0.5));
  }
}

struct ModeCase {
  RNNMode mode;
  int64_t layers;
  bool bidir;
};

class EveryMode : public ::testing::TestWithParam<ModeCase> {};

TEST_P(EveryMode, LayerMatchesTheDirectImplementation) {
  const auto [mode, layers, bidir] = GetParam();
  const int64_t t_len = 4, n = 2, c = 3, h = 5, dirs = bidir ? 2 : 1;
  RecurrentLayer layer(mode, h, {.num_layers = layers, .bidirectional = bidir, .input_size = c});
  randomize(layer, 100);
  const NDArray x = randn({t_len, n, c}, 1);
  std::vector<NDArray> states;
  for (size_t i = 0; i < static_cast<size_t>(rnn_num_states(mode)); ++i) {
    states.push_back(randn({layers * dirs, n, h}, 2 + i, 0.5));
  }
  const Vec c0 = mode == RNNMode::kLSTM ? values(states[1]) : Vec(states[0].size(), 0.0);
  const RefResult want = ref_layer(mode, layers, bidir, h, values(x), t_len, n, c,
                                   weights_of(layer), values(states[0]), c0);
  std::vector<NDArray> xs{x};
  xs.insert(xs.end(), states.begin(), states.end());
  const std::vector<NDArray> ys = layer(xs);
  ASSERT_EQ(ys.size(), states.size() + 1);
  EXPECT_EQ(ys[0].shape(), (Shape{t_len, n, dirs * h}));
  expect_near(ys[0], want.out, 1e-5, "output");
  expect_near(ys[1], want.h, 1e-5, "h");
  if (mode == RNNMode::kLSTM) expect_near(ys[2], want.c, 1e-5, "c");
  // Without states: zeros, and only the output comes back.
  const RefResult from_zero =
      ref_layer(mode, layers, bidir, h, values(x), t_len, n, c, weights_of(layer),
                Vec(states[0].size(), 0.0), Vec(states[0].size(), 0.0));
  const std::vector<NDArray> y0 = layer(std::vector<NDArray>{x});
  ASSERT_EQ(y0.size(), 1u);
  expect_near(y0[0], from_zero.out, 1e-5, "output from zero states");
}

TEST_P(EveryMode, HybridizedEqualsImperativeAndExportsAndDeploys) {
  const auto [mode, layers, bidir] = GetParam();
  RecurrentLayer layer(mode, 4, {.num_layers = layers, .bidirectional = bidir});
  layer.initialize(Xavier());
  const NDArray x = randn({3, 2, 5}, 7);
  std::vector<NDArray> xs{x};
  for (const NDArray& s : layer.begin_state(2)) xs.push_back(s + 0.1);
  const std::vector<NDArray> imperative = layer(xs);
  layer.hybridize();
  const std::vector<NDArray> first = layer(xs);
  const std::vector<NDArray> second = layer(xs);
  EXPECT_EQ(layer.trace_count(), 1);
  ASSERT_EQ(first.size(), imperative.size());
  for (size_t i = 0; i < first.size(); ++i) {
    expect_near(first[i], values(imperative[i]), 1e-6, "hybridized output " + std::to_string(i));
    EXPECT_EQ(values(second[i]), values(first[i]));
  }
  const janus::testing::TempDir dir(
      fmt::format("janus_rnn_{}_{}_{}_", rnn_mode_name(mode), layers, bidir));
  const std::string prefix = (dir / "model").string();
  layer.export_model(prefix);
  std::vector<std::string> names;
  for (size_t i = 0; i < xs.size(); ++i) names.push_back(fmt::format("data{}", i));
  auto imported =
      SymbolBlock::imports(prefix + "-symbol.json", names, prefix + "-0000.safetensors");
  const std::vector<NDArray> yi = (*imported)(xs);
  deploy::Predictor predictor(prefix + "-symbol.json", prefix + "-0000.safetensors", names);
  const std::vector<NDArray> yp = predictor.run(xs);
  ASSERT_EQ(yi.size(), first.size());
  ASSERT_EQ(yp.size(), first.size());
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(values(yi[i]), values(first[i]));
    EXPECT_EQ(values(yp[i]), values(first[i]));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rnn, EveryMode,
    ::testing::Values(ModeCase{RNNMode::kRNNRelu, 1, false}, ModeCase{RNNMode::kRNNTanh, 2, true},
                      ModeCase{RNNMode::kLSTM, 1, false}, ModeCase{RNNMode::kLSTM, 2, true},
                      ModeCase{RNNMode::kGRU, 1, true}, ModeCase{RNNMode::kGRU, 3, false}),
    [](const auto& info) {
      return fmt::format("{}_{}layers{}", rnn_mode_name(info.param.mode), info.param.layers,
                         info.param.bidir ? "_bidirectional" : "");
    });

TEST(RecurrentLayer, NamesShapesAndLayoutsAreMXNets) {
  RecurrentLayer lstm(RNNMode::kLSTM, 6, {.num_layers = 2, .bidirectional = true});
  EXPECT_THAT(lstm.collect_params().names(),
              ElementsAre("l0_i2h_weight", "l0_h2h_weight", "l0_i2h_bias", "l0_h2h_bias",
                          "r0_i2h_weight", "r0_h2h_weight", "r0_i2h_bias", "r0_h2h_bias",
                          "l1_i2h_weight", "l1_h2h_weight", "l1_i2h_bias", "l1_h2h_bias",
                          "r1_i2h_weight", "r1_h2h_weight", "r1_i2h_bias", "r1_h2h_bias"));
  const ParameterDict p = lstm.collect_params();
  EXPECT_EQ(p.at("l0_i2h_weight")->shape(), (Shape{24, 0}));  // deferred until the first input
  EXPECT_EQ(p.at("l1_i2h_weight")->shape(), (Shape{24, 12}));
  EXPECT_EQ(p.at("r1_h2h_weight")->shape(), (Shape{24, 6}));
  lstm.initialize();
  const NDArray y = lstm(randn({5, 3, 7}, 1));
  EXPECT_EQ(y.shape(), (Shape{5, 3, 12}));
  EXPECT_EQ(p.at("l0_i2h_weight")->shape(), (Shape{24, 7}));
  EXPECT_EQ(p.at("r0_i2h_weight")->shape(), (Shape{24, 7}));
  EXPECT_THAT(lstm.begin_state(3),
              ElementsAre(::testing::Property(&NDArray::shape, Shape{4, 3, 6}),
                          ::testing::Property(&NDArray::shape, Shape{4, 3, 6})));
  EXPECT_EQ(lstm.describe(), "LSTM(7 -> 6, TNC, num_layers=2, bidirectional)");

  // NTC is the transpose of TNC, with the same parameters.
  RecurrentLayer gru_tnc(RNNMode::kGRU, 4, {.input_size = 3});
  RecurrentLayer gru_ntc(RNNMode::kGRU, 4, {.layout = RNNLayout::kNTC, .input_size = 3});
  randomize(gru_tnc, 5);
  randomize(gru_ntc, 5);
  const NDArray x = randn({5, 2, 3}, 3);
  const NDArray a = gru_tnc(x);
  const NDArray b = gru_ntc(transpose(x, {1, 0, 2}));
  EXPECT_EQ(b.shape(), (Shape{2, 5, 4}));
  EXPECT_EQ(values(transpose(b, {1, 0, 2})), values(a));
}

TEST(RecurrentLayer, DropoutActsBetweenLayersInTrainingOnly) {
  RecurrentLayer plain(RNNMode::kLSTM, 8, {.num_layers = 2, .input_size = 4});
  RecurrentLayer dropped(RNNMode::kLSTM, 8, {.num_layers = 2, .dropout = 0.5, .input_size = 4});
  randomize(plain, 9);
  randomize(dropped, 9);
  const NDArray x = randn({6, 3, 4}, 4);
  EXPECT_EQ(values(dropped(x)), values(plain(x)));  // predict mode: no dropout
  NDArray trained, reference;
  {
    autograd::RecordScope record(true);
    trained = dropped(x);
    reference = plain(x);
  }
  EXPECT_NE(values(trained), values(reference));
  // A single layer has nothing between layers to drop.
  RecurrentLayer one(RNNMode::kLSTM, 8, {.dropout = 0.5, .input_size = 4});
  RecurrentLayer one_plain(RNNMode::kLSTM, 8, {.input_size = 4});
  randomize(one, 9);
  randomize(one_plain, 9);
  autograd::RecordScope record(true);
  EXPECT_EQ(values(one(x)), values(one_plain(x)));
}

// d(sum(out * w))/d(param) against central differences of the same sum, in float32 on a tiny
// case (the step 1e-2 keeps the rounding error of the difference near 1e-5).
void check_gradient(RNNMode mode, bool bidir) {
  RecurrentLayer layer(mode, 2, {.bidirectional = bidir, .input_size = 2});
  randomize(layer, 20);
  const int64_t dirs = bidir ? 2 : 1;
  NDArray x = randn({3, 1, 2}, 21);
  const NDArray head = randn({3, 1, 2 * dirs}, 22);
  autograd::attach_grad(x);
  {
    autograd::RecordScope record(true);
    const NDArray loss = sum(layer(x) * head);
    autograd::backward(loss);
  }
  auto loss_value = [&] { return values(sum(layer(x) * head))[0]; };
  const double eps = 1e-2;
  // Perturbs each element of `value` through `set` and compares with `grad`.
  // `value` is taken by copy: `set` replaces the array it came from.
  auto check = [&](const NDArray value, const std::function<void(const NDArray&)>& set,
                   const NDArray& grad, const std::string& what) {
    const std::vector<float> v = to_vector<float>(value);
    const Vec g = values(grad);
    for (size_t i = 0; i < v.size(); ++i) {
      std::vector<float> f = v;
      f[i] = static_cast<float>(v[i] + eps);
      set(from_vector<float>(f, value.shape()));
      const double up = loss_value();
      f[i] = static_cast<float>(v[i] - eps);
      set(from_vector<float>(f, value.shape()));
      const double down = loss_value();
      set(from_vector<float>(v, value.shape()));
      EXPECT_NEAR(g[i], (up - down) / (2 * eps), 2e-3) << what << " element " << i;
    }
  };
  const ParameterDict p = layer.collect_params();
  std::vector<std::string> names{"l0_i2h_weight", "l0_h2h_weight", "l0_h2h_bias"};
  if (bidir) names.push_back("r0_h2h_weight");
  for (const std::string& name : names) {
    const ParameterPtr& param = p.at(name);
    const NDArray grad = param->grad();
    check(
        param->data(), [&](const NDArray& v) { param->set_data(v); }, grad, name);
  }
  const NDArray dx = autograd::grad(x);
  check(
      x, [&](const NDArray& v) { x = v; }, dx, "input");
}

TEST(RecurrentLayer, GradientsMatchFiniteDifferences) {
  check_gradient(RNNMode::kRNNTanh, false);
  check_gradient(RNNMode::kLSTM, true);
  check_gradient(RNNMode::kGRU, true);
}

TEST(RecurrentLayer, BadInputsNameTheLayer) {
  RecurrentLayer lstm(RNNMode::kLSTM, 4, {.input_size = 3});
  lstm.initialize();
  EXPECT_THAT(error_of<ShapeError>([&] {
                lstm(ones({2, 3}));
              }),
              HasSubstr(lstm.name() + ": input has shape [2, 3], expected [time, batch, features] "
                                      "(layout TNC)"));
  EXPECT_THAT(error_of<ShapeError>([&] {
                lstm(ones({5, 2, 6}));
              }),
              HasSubstr(lstm.name() + ": input of shape [5, 2, 6] has 6 features, expected 3"));
  EXPECT_THAT(error_of<ValueError>([&] {
                lstm({ones({5, 2, 3}), zeros({1, 2, 4})});
              }),
              HasSubstr(lstm.name() + ": called with 1 states, expected 2"));
  EXPECT_THAT(error_of<ShapeError>([&] {
                lstm({ones({5, 2, 3}), zeros({1, 2, 4}), zeros({1, 3, 4})});
              }),
              HasSubstr(lstm.name() + ": state 1 has shape [1, 3, 4], expected [1, 2, 4]"));
  EXPECT_THAT(error_of<ValueError>([&] { RecurrentLayer(RNNMode::kGRU, 0); }),
              HasSubstr("hidden_size is 0, expected a positive number"));
  EXPECT_THAT(error_of<ValueError>([&] { RecurrentLayer(RNNMode::kGRU, 3, {.num_layers = 0}); }),
              HasSubstr("num_layers is 0, expected >= 1"));
  EXPECT_THAT(error_of<ValueError>([&] { RecurrentLayer(RNNMode::kGRU, 3, {.dropout = 1.0}); }),
              HasSubstr("dropout is 1, expected a value in [0, 1)"));
  EXPECT_THAT(error_of<ValueError>([&] { parse_rnn_layout("NCT", "LSTM"); }),
              HasSubstr("LSTM: layout 'NCT' is not supported, expected 'TNC' or 'NTC'"));
}

TEST(RecurrentCell, UnrolledCellsEqualTheLayer) {
  for (RNNMode mode : {RNNMode::kRNNRelu, RNNMode::kLSTM, RNNMode::kGRU}) {
    RecurrentLayer layer(mode, 4, {.num_layers = 2, .layout = RNNLayout::kNTC, .input_size = 3});
    randomize(layer, 30);
    auto cells = std::make_shared<SequentialRNNCell>();
    cells->add(std::make_shared<GatedCell>(mode, 4));
    cells->add(std::make_shared<GatedCell>(mode, 4, 4));
    cells->initialize();
    const NDArray x = randn({2, 5, 3}, 31);
    cells->unroll(1, {slice_axis(x, 1, 0, 1)});  // infers the first cell's input size
    const ParameterDict lp = layer.collect_params();
    const ParameterDict cp = cells->collect_params();
    EXPECT_THAT(cp.names(),
                ElementsAre("0.i2h_weight", "0.h2h_weight", "0.i2h_bias", "0.h2h_bias",
                            "1.i2h_weight", "1.h2h_weight", "1.i2h_bias", "1.h2h_bias"));
    for (const char* local : {"i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias"}) {
      cp.at(std::string("0.") + local)->set_data(lp.at(std::string("l0_") + local)->data());
      cp.at(std::string("1.") + local)->set_data(lp.at(std::string("l1_") + local)->data());
    }
    std::vector<NDArray> xs{x};
    std::vector<NDArray> cell_states;
    for (const NDArray& s : layer.begin_state(2)) xs.push_back(s + 0.3);
    // The layer's [L, N, H] states are the cells' [N, H] states, layer by layer.
    for (int64_t l = 0; l < 2; ++l) {
      for (size_t k = 1; k < xs.size(); ++k) {
        cell_states.push_back(squeeze(slice_axis(xs[k], 0, l, l + 1), {0}));
      }
    }
    const std::vector<NDArray> want = layer(xs);
    const RecurrentCell::Unrolled got =
        cells->unroll(5, {x}, cell_states, RNNLayout::kNTC, /*merge_outputs=*/true);
    ASSERT_EQ(got.outputs.size(), 1u);
    EXPECT_EQ(got.outputs[0].shape(), (Shape{2, 5, 4}));
    expect_near(got.outputs[0], values(want[0]), 1e-6, rnn_mode_name(mode));
    ASSERT_EQ(got.states.size(), cell_states.size());
    expect_near(got.states[got.states.size() - cells->operator[](1)->num_states()],
                values(squeeze(slice_axis(want[1], 0, 1, 2), {0})), 1e-6, "last h");
    // Unmerged: one [N, H] array per step, the same values.
    const RecurrentCell::Unrolled steps = cells->unroll(5, {x}, cell_states, RNNLayout::kNTC);
    ASSERT_EQ(steps.outputs.size(), 5u);
    expect_near(steps.outputs[4], values(squeeze(slice_axis(want[0], 1, 4, 5), {1})), 1e-6,
                "step 4");
  }
}

TEST(RecurrentCell, StatesAndErrors) {
  GatedCell lstm(RNNMode::kLSTM, 3);
  lstm.initialize();
  const std::vector<NDArray> s = lstm.begin_state(2);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1].shape(), (Shape{2, 3}));
  const std::vector<NDArray> ys = lstm({ones({2, 5}), s[0], s[1]});
  ASSERT_EQ(ys.size(), 3u);
  EXPECT_EQ(values(ys[0]), values(ys[1]));  // the output is the new h
  EXPECT_EQ(lstm.collect_params().at("i2h_weight")->shape(), (Shape{12, 5}));
  EXPECT_EQ(lstm.describe(), "LSTMCell(5 -> 3)");
  EXPECT_THAT(error_of<ShapeError>([&] {
                lstm({ones({2, 5, 1}), s[0], s[1]});
              }),
              HasSubstr(lstm.name() + ": input has shape [2, 5, 1], expected [batch, features]"));
  EXPECT_THAT(error_of<ValueError>([&] {
                lstm({ones({2, 5}), s[0]});
              }),
              HasSubstr(lstm.name() + ": called with 1 states, expected 2"));
  EXPECT_THAT(error_of<ShapeError>([&] {
                lstm({ones({2, 4}), s[0], s[1]});
              }),
              HasSubstr(lstm.name() + ": input of shape [2, 4] has 4 features, expected 5"));
  EXPECT_THAT(error_of<ShapeError>([&] {
                lstm.unroll(3, {ones({2, 4, 5})});
              }),
              HasSubstr("unroll of 3 steps got inputs of shape [2, 4, 5], expected [N, T, C]"));
  EXPECT_THAT(error_of<ValueError>([&] { SequentialRNNCell().begin_state(0); }),
              HasSubstr("begin_state batch_size is 0, expected > 0"));
}

TEST(RecurrentLayer, MXNetsUnfusedSaveNamesMapToTheLayersNames) {
  EXPECT_EQ(rnn_param_name_from_mxnet("_unfused.1.r_cell.h2h_bias"), "r1_h2h_bias");
  EXPECT_EQ(rnn_param_name_from_mxnet("_unfused.0.l_cell.i2h_weight"), "l0_i2h_weight");
  EXPECT_EQ(rnn_param_name_from_mxnet("enc._unfused.2.i2h_weight"), "enc.l2_i2h_weight");
  EXPECT_EQ(rnn_param_name_from_mxnet("0.weight"), "");
  EXPECT_EQ(rnn_param_name_from_mxnet("_unfused.0.l_cell.h2r_weight"), "l0_h2r_weight");
  EXPECT_EQ(rnn_param_name_from_mxnet("_unfused.0.l_cell.h2r_bias"), "");
}

NDArray step_of_test(const NDArray& s, int64_t i) {
  return squeeze(slice_axis(s, 0, i, i + 1), {0});
}

// Copies `from`'s parameters into `to` under the names `rename` gives.
void copy_params(const Block& from, Block& to,
                 const std::function<std::string(const std::string&)>& rename) {
  ParameterDict dst = to.collect_params();
  for (const auto& [name, p] : from.collect_params()) dst.at(rename(name))->set_data(p->data());
}

TEST(BidirectionalCell, UnrollsAsABidirectionalLayer) {
  auto layer = std::make_shared<RecurrentLayer>(
      RNNMode::kGRU, 3, RecurrentLayerOptions{.bidirectional = true, .input_size = 2});
  layer->initialize(Uniform(0.5));
  BidirectionalCell cell(std::make_shared<GatedCell>(RNNMode::kGRU, 3, 2),
                         std::make_shared<GatedCell>(RNNMode::kGRU, 3, 2));
  cell.initialize();
  copy_params(*layer, cell, [](const std::string& n) {
    return (n[0] == 'l' ? "l_cell." : "r_cell.") + n.substr(3);
  });
  const NDArray x = randn({4, 2, 2}, 3);  // T, N, C
  const NDArray h0 = randn({2, 2, 3}, 4);
  const std::vector<NDArray> want = (*layer)({x, h0});
  const RecurrentCell::Unrolled got =
      cell.unroll(4, {x}, {step_of_test(h0, 0), step_of_test(h0, 1)}, RNNLayout::kTNC, true);
  expect_near(got.outputs[0], values(want[0]), 1e-5, "outputs");
  expect_near(got.states[1], values(step_of_test(want[1], 1)), 1e-5, "reverse final state");
  EXPECT_THAT(error_of<NotImplementedError>([&] {
                cell({x, h0});
              }),
              HasSubstr("a bidirectional cell cannot be stepped; use unroll"));
}

TEST(RecurrentLayer, FullSequenceLengthsGiveTheLayerWithoutThem) {
  RecurrentLayerOptions with_len{.num_layers = 2, .bidirectional = true, .input_size = 3};
  with_len.projection_size = 2;
  with_len.use_sequence_length = true;
  RecurrentLayerOptions plain_options = with_len;
  plain_options.use_sequence_length = false;
  RecurrentLayer layer(RNNMode::kLSTM, 4, with_len);
  RecurrentLayer plain(RNNMode::kLSTM, 4, plain_options);
  layer.initialize(Uniform(0.5));
  plain.initialize();
  copy_params(layer, plain, [](const std::string& n) { return n; });
  EXPECT_EQ(layer.collect_params().at("r1_h2r_weight")->shape(), (Shape{2, 4}));
  const NDArray x = randn({5, 3, 3}, 5);
  const std::vector<NDArray> states = layer.begin_state(3);
  EXPECT_EQ(states[0].shape(), (Shape{4, 3, 2}));
  const std::vector<NDArray> got = layer({x, states[0], states[1], full({3}, 5.0)});
  const std::vector<NDArray> want = plain({x, states[0], states[1]});
  for (size_t i = 0; i < 3; ++i) expect_near(got[i], values(want[i]), 1e-6, "output");
  // Shorter: zeros past each length.
  const NDArray out = layer({x, from_vector<int32_t>({5, 1, 3}, {3})})[0];
  const Vec v = values(out);  // [T, N, 2 P]
  for (int64_t t = 1; t < 5; ++t) {
    for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(v[static_cast<size_t>((t * 3 + 1) * 4 + k)], 0);
  }
  EXPECT_THAT(error_of<ValueError>([&] { layer({x}); }),
              HasSubstr("use_sequence_length is set, expected a sequence_length input"));
}

TEST(ModifierCells, OutsideTrainingTheyAreTheirBaseCells) {
  auto base = std::make_shared<GatedCell>(RNNMode::kLSTM, 3, 2);
  ZoneoutCell zoneout(base, 0.5, 0.5);
  zoneout.initialize();
  const NDArray x = randn({4, 2}, 6);
  const std::vector<NDArray> s = zoneout.begin_state(4);
  expect_near(zoneout({x, s[0], s[1]})[0], values((*base)({x, s[0], s[1]})[0]), 0, "zoneout");
  expect_near(DropoutCell(0.5)(std::vector<NDArray>{x})[0], values(x), 0, "dropout");
  auto gru = std::make_shared<GatedCell>(RNNMode::kGRU, 2, 2);
  ResidualCell residual(gru);
  residual.initialize();
  const NDArray h = randn({4, 2}, 7);
  expect_near(residual({x, h})[0], values((*gru)({x, h})[0] + x), 1e-7, "residual");
}

TEST(RecurrentCell, ValidLengthGivesEachSequenceUnrolledAlone) {
  auto make = [] {
    return std::make_shared<BidirectionalCell>(std::make_shared<GatedCell>(RNNMode::kLSTM, 3, 2),
                                               std::make_shared<GatedCell>(RNNMode::kGRU, 2, 2));
  };
  auto cell = make();
  cell->initialize(Uniform(0.5));
  const NDArray x = randn({3, 5, 2}, 8);  // N, T, C
  const std::vector<NDArray> s = cell->begin_state(3);
  const RecurrentCell::Unrolled got =
      cell->unroll(5, {x}, s, RNNLayout::kNTC, true, from_vector<int32_t>({5, 2, 0}, {3}));
  const int64_t lengths[] = {5, 2, 0};
  for (int64_t n = 0; n < 3; ++n) {
    const Vec out = values(slice_axis(got.outputs[0], 0, n, n + 1));  // [1, T, 5]
    const int64_t len = lengths[n];
    for (size_t i = static_cast<size_t>(len * 5); i < out.size(); ++i) EXPECT_EQ(out[i], 0);
    if (len == 0) {
      // No valid step: the begin states (zeros here).
      for (const NDArray& f : got.states) {
        for (double v : values(slice_axis(f, 0, n, n + 1))) EXPECT_EQ(v, 0);
      }
      continue;
    }
    std::vector<NDArray> alone_states;
    for (const NDArray& st : s) alone_states.push_back(slice_axis(st, 0, n, n + 1));
    const RecurrentCell::Unrolled alone =
        cell->unroll(len, {slice_axis(slice_axis(x, 0, n, n + 1), 1, 0, len)}, alone_states,
                     RNNLayout::kNTC, true);
    const Vec want = values(alone.outputs[0]);
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(out[i], want[i], 1e-6) << n << " " << i;
    for (size_t k = 0; k < got.states.size(); ++k) {
      expect_near(slice_axis(got.states[k], 0, n, n + 1), values(alone.states[k]), 1e-6,
                  "final state");
    }
  }
  EXPECT_THAT(error_of<ShapeError>([&] {
                cell->unroll(5, {x}, s, RNNLayout::kNTC, true, full({3, 1}, 2.0));
              }),
              HasSubstr("unroll valid_length has shape [3, 1], expected [3]"));
}

TEST(LSTMPCell, UnrollsAsAProjectedLSTMLayer) {
  auto layer = std::make_shared<RecurrentLayer>(
      RNNMode::kLSTM, 4, RecurrentLayerOptions{.input_size = 3, .projection_size = 2});
  layer->initialize(Uniform(0.5));
  LSTMPCell cell(4, 2);
  cell.initialize();
  EXPECT_THAT(cell.state_shapes(5), ElementsAre(Shape{5, 2}, Shape{5, 4}));
  cell({randn({1, 3}, 9), zeros({1, 2}), zeros({1, 4})});  // infers the input size
  copy_params(*layer, cell, [](const std::string& n) { return n.substr(3); });
  const NDArray x = randn({4, 2, 3}, 10);  // T, N, C
  const std::vector<NDArray> s = layer->begin_state(2);
  const std::vector<NDArray> want = (*layer)({x, s[0], s[1]});
  const RecurrentCell::Unrolled got =
      cell.unroll(4, {x}, {step_of_test(s[0], 0), step_of_test(s[1], 0)}, RNNLayout::kTNC, true);
  expect_near(got.outputs[0], values(want[0]), 1e-5, "outputs");
  expect_near(got.states[0], values(want[1]), 1e-5, "r");
  expect_near(got.states[1], values(want[2]), 1e-5, "c");
}

TEST(DropoutCell, AxesShareOneMaskAlongThem) {
  DropoutCell cell(0.5, {1});
  const NDArray x = ones({4, 6, 8});
  autograd::RecordScope training(/*train_mode=*/true);
  // Merged: the whole [N, T, C] sequence at once, one draw per (n, c) shared along time.
  const Vec v = values(cell.unroll(6, {x}, {}, RNNLayout::kNTC, true).outputs[0]);
  size_t kept = 0;
  for (size_t n = 0; n < 4; ++n) {
    for (size_t t = 0; t < 6; ++t) {
      for (size_t c = 0; c < 8; ++c) {
        const double e = v[(n * 6 + t) * 8 + c];
        EXPECT_TRUE(e == 0 || e == 2) << e;
        EXPECT_EQ(e, v[n * 6 * 8 + c]);
        kept += e != 0;
      }
    }
  }
  EXPECT_GT(kept, 0u);
  EXPECT_LT(kept, 4u * 6 * 8);
  EXPECT_THAT(error_of<ValueError>([&] { DropoutCell(0.5, {3})(std::vector<NDArray>{x}); }),
              HasSubstr("dropout axis 3 is out of range for an input of shape [4, 6, 8]"));
}

}  // namespace
}  // namespace janus::nn

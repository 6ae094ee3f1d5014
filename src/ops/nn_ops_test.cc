// Tests of the nn operators beyond the conformance suite: user errors carry the operator, the
// shapes and what was expected; a few exact values.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"

#include "elementwise/relu_backward.h"
#include "testing/test_util.h"

namespace janus {
namespace {

using ::testing::HasSubstr;

TEST(OpSoftmax, RowsSumToOneAndLargeValuesDoNotOverflow) {
  const NDArray x = from_vector<float>({1000, 1001, 1002, -5, 0, 5}, {2, 3});
  const std::vector<float> y = to_vector<float>(softmax(x));
  EXPECT_NEAR(y[0] + y[1] + y[2], 1.0f, 1e-6f);
  EXPECT_NEAR(y[3] + y[4] + y[5], 1.0f, 1e-6f);
  EXPECT_NEAR(y[2], 1.0 / (1.0 + std::exp(-1.0) + std::exp(-2.0)), 1e-6);
  const std::vector<float> ly = to_vector<float>(log_softmax(x));
  EXPECT_TRUE(std::isfinite(ly[0]));
}

TEST(OpSoftmax, RejectsScalarsIntegersAndBadAxes) {
  std::string msg = error_of<ShapeError>([] { softmax(from_vector<float>({1}, {})); });
  EXPECT_THAT(msg, HasSubstr("softmax: input has shape []"));
  EXPECT_THAT(msg, HasSubstr("expected at least 1 dimension"));
  msg = error_of<TypeError>([] { log_softmax(from_vector<int32_t>({1, 2}, {2})); });
  EXPECT_THAT(msg,
              HasSubstr("log_softmax: dtype int32 is not supported, expected float32 or float64"));
  msg = error_of<IndexError>([] { softmax(from_vector<float>({1, 2}, {1, 2}), 2); });
  EXPECT_THAT(msg, HasSubstr("softmax: axis 2 is out of range for input of shape [1, 2]"));
}

TEST(OpSoftmaxCrossEntropy, MatchesHandComputedLoss) {
  const NDArray logits = from_vector<double>({0, 0, 0, 1, 2, 3}, {2, 3});
  const NDArray labels = from_vector<int64_t>({1, 2}, {2});
  const std::vector<double> loss = to_vector<double>(softmax_cross_entropy(logits, labels));
  EXPECT_NEAR(loss[0], std::log(3.0), 1e-12);
  EXPECT_NEAR(loss[1], std::log(std::exp(-2.0) + std::exp(-1.0) + 1.0), 1e-12);
}

TEST(OpSoftmaxCrossEntropy, RejectsBadLogitsAndLabels) {
  const NDArray logits = from_vector<float>({0, 0, 0, 0, 0, 0}, {2, 3});
  std::string msg = error_of<TypeError>([&] {
    softmax_cross_entropy(logits, from_vector<float>({0, 1}, {2}));
  });
  EXPECT_THAT(msg, HasSubstr("softmax_cross_entropy: labels have dtype float32"));
  EXPECT_THAT(msg, HasSubstr("expected int32 or int64"));
  msg = error_of<ShapeError>([&] {
    softmax_cross_entropy(logits, from_vector<int32_t>({0, 1, 2}, {3}));
  });
  EXPECT_THAT(msg, HasSubstr("labels have shape [3] for logits of shape [2, 3], expected [2]"));
  msg = error_of<ShapeError>(
      [&] { softmax_cross_entropy(logits.reshape({6}), from_vector<int32_t>({0}, {1})); });
  EXPECT_THAT(msg,
              HasSubstr("softmax_cross_entropy: logits have shape [6], expected 2 dimensions"));
}

TEST(OpSoftmaxCrossEntropy, LabelOutOfRangeFailsAtTheWaitPoint) {
  const NDArray logits = from_vector<float>({0, 0, 0, 0, 0, 0}, {2, 3});
  const NDArray loss = softmax_cross_entropy(logits, from_vector<int32_t>({0, 3}, {2}));
  const std::string msg = error_of<Error>([&] { wait_to_read(loss); });
  EXPECT_THAT(msg, HasSubstr("label 3 of sample 1 is out of range, expected 0 <= label < 3"));
}

TEST(OpOneHot, RejectsFloatLabels) {
  const std::string msg = error_of<TypeError>([] { one_hot(from_vector<float>({0}, {1}), 3); });
  EXPECT_THAT(msg, HasSubstr("one_hot: labels have dtype float32, expected int32 or int64"));
}

TEST(OpFullyConnected, RejectsWrongRanksAndFeatureMismatch) {
  const NDArray x = from_vector<float>(std::vector<float>(6, 1.0f), {2, 3});
  const NDArray w = from_vector<float>(std::vector<float>(12, 1.0f), {4, 3});
  const NDArray b = from_vector<float>(std::vector<float>(4, 0.5f), {4});
  EXPECT_EQ(to_vector<float>(fully_connected(x, w, b)), std::vector<float>(8, 3.5f));
  std::string msg = error_of<ShapeError>([&] { fully_connected(x.reshape({6}), w, b); });
  EXPECT_THAT(msg, HasSubstr("fully_connected: input has shape [6], expected 2 dimensions"));
  msg = error_of<ShapeError>([&] { fully_connected(x, w.reshape({3, 4}), b); });
  EXPECT_THAT(
      msg, HasSubstr("fully_connected: input [2, 3] has 3 features but weight [3, 4] expects 4"));
  msg = error_of<ShapeError>([&] { fully_connected(x, w, b.reshape({2, 2})); });
  EXPECT_THAT(msg,
              HasSubstr("fully_connected: bias has shape [2, 2] for weight [4, 3], expected [4]"));
}

TEST(OpMatmul, RejectsMismatchedInnerAndBatchDimensions) {
  const NDArray a = from_vector<float>(std::vector<float>(24, 1.0f), {2, 3, 4});
  const NDArray b = from_vector<float>(std::vector<float>(30, 1.0f), {3, 5, 2});
  std::string msg = error_of<ShapeError>([&] { matmul(a, b); });
  EXPECT_THAT(msg,
              HasSubstr("matmul: inner dimensions differ: [2, 3, 4] @ [3, 5, 2] gives 4 and 5"));
  const NDArray c = from_vector<float>(std::vector<float>(24, 1.0f), {3, 4, 2});
  msg = error_of<ShapeError>([&] { matmul(a, c); });
  EXPECT_THAT(msg, HasSubstr("matmul: batch dimensions of [2, 3, 4] and [3, 4, 2] do not broadcast "
                             "(extents 2 and 3 at batch axis -1)"));
  msg = error_of<ValueError>([&] { matmul(a.reshape({24}), a.reshape({24}), true); });
  EXPECT_THAT(msg, HasSubstr("matmul: a 1-D operand cannot be transposed"));
}

TEST(OpDropout, SameSeedSameMaskAndKeptValuesAreScaled) {
  const NDArray x = from_vector<float>(std::vector<float>(4000, 1.0f), {40, 100});
  seed(11);
  const std::vector<float> first = to_vector<float>(dropout(x, 0.25, /*training=*/true));
  seed(11);
  const std::vector<float> again = to_vector<float>(dropout(x, 0.25, /*training=*/true));
  EXPECT_EQ(first, again);
  int kept = 0;
  for (float v : first) {
    if (v != 0.0f) {
      ++kept;
      EXPECT_FLOAT_EQ(v, 1.0f / 0.75f);
    }
  }
  EXPECT_NEAR(kept / 4000.0, 0.75, 0.03);
  EXPECT_EQ(to_vector<float>(dropout(x, 0.25, /*training=*/false)), std::vector<float>(4000, 1.0f));
}

TEST(OpDropout, RejectsProbabilitiesOutsideZeroOne) {
  const NDArray x = from_vector<float>({1, 2}, {2});
  const std::string msg = error_of<ValueError>([&] { dropout(x, 1.5, true); });
  EXPECT_THAT(msg, HasSubstr("dropout: p is 1.5, expected 0 <= p <= 1"));
}

TEST(OpEmbedding, RejectsBadIndicesAndWeights) {
  const NDArray w = from_vector<float>(std::vector<float>(6, 1.0f), {3, 2});
  std::string msg = error_of<TypeError>([&] { embedding(from_vector<float>({0}, {1}), w); });
  EXPECT_THAT(msg, HasSubstr("embedding: indices have dtype float32, expected int32 or int64"));
  msg = error_of<ShapeError>([&] { embedding(from_vector<int32_t>({0}, {1}), w.reshape({6})); });
  EXPECT_THAT(msg, HasSubstr("embedding: weight has shape [6], expected 2 dimensions"));
  const NDArray y = embedding(from_vector<int64_t>({0, 3}, {2}), w);
  msg = error_of<Error>([&] { wait_to_read(y); });
  EXPECT_THAT(
      msg, HasSubstr("embedding: index 3 at position 1 is out of range, expected 0 <= index < 3"));
}

TEST(OpLayerNorm, RejectsGammaOfTheWrongExtent) {
  const NDArray x = from_vector<float>(std::vector<float>(6, 1.0f), {2, 3});
  const NDArray g = from_vector<float>({1, 1}, {2});
  const std::string msg = error_of<ShapeError>([&] { layer_norm(x, g, g); });
  EXPECT_THAT(msg,
              HasSubstr("layer_norm: gamma [2] and beta [2] for input [2, 3], expected both [3]"));
}

// ---- numerics: relu keeps NaN on every path (docs/design/numerics.md) -------------------------

// The bit patterns of an array's values, so that NaN compares equal to the same NaN.
template <typename T>
std::vector<uint64_t> bits(const NDArray& a) {
  std::vector<uint64_t> out;
  for (T v : to_vector<T>(a)) {
    if constexpr (sizeof(T) == 8) {
      out.push_back(std::bit_cast<uint64_t>(v));
    } else {
      out.push_back(std::bit_cast<uint32_t>(v));
    }
  }
  return out;
}

template <typename T>
class FusedRelu : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(FusedRelu, FloatTypes);

// The fused operator called imperatively: its relu gives bitwise what relu of the unfused call
// gives, NaN included (row 0 reads a NaN, so all its outputs are NaN; row 1 has both signs).
TYPED_TEST(FusedRelu, FullyConnectedKeepsNanLikeRelu) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const NDArray x = from_vector<T>({nan, 1, 2, 3, -1, 0.5, -2, 1}, {2, 4});
  const NDArray w = from_vector<T>(
      {1, 0, 0, 0, -1, 0, 0, 0, 0, 1, -1, 0, 0.5, 0.5, 0.5, 0.5, -2, 1, 0, 0}, {5, 4});
  const NDArray b = from_vector<T>({0, 0, 0.25, -1, 0}, {5});
  static const ops::OpDef& fc = ops::get_op("fully_connected");
  const NDArray fused = ops::invoke(fc, {x, w, b}, {std::string("relu")})[0];
  const NDArray separate = relu(ops::invoke(fc, {x, w, b}, {std::string("")})[0]);
  EXPECT_EQ(bits<T>(fused), bits<T>(separate));
  const std::vector<T> y = to_vector<T>(fused);
  for (int j = 0; j < 5; ++j) EXPECT_TRUE(std::isnan(y[static_cast<size_t>(j)])) << j;
  EXPECT_EQ(std::vector<T>(y.begin() + 5, y.end()), (std::vector<T>{0, 1, 2.75, 0, 2.5}));
}

TYPED_TEST(FusedRelu, Conv2dKeepsNanLikeRelu) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  // x [1, 2, 2, 2] with a NaN in the first pixel of channel 0; 1x1 weights [3, 2, 1, 1].
  const NDArray x = from_vector<T>({nan, 1, -2, 3, 1, -1, 4, 0}, {1, 2, 2, 2});
  const NDArray w = from_vector<T>({1, 0, -1, 1, 0, 2}, {3, 2, 1, 1});
  const NDArray b = from_vector<T>({0, 0.5, -1}, {3});
  static const ops::OpDef& conv = ops::get_op("conv2d");
  auto call = [&](const char* activation) {
    return ops::invoke(conv, {x, w, b},
                       {std::vector<int64_t>{1}, std::vector<int64_t>{0}, std::vector<int64_t>{1},
                        int64_t{1}, std::string(activation)})[0];
  };
  const NDArray fused = call("relu");
  EXPECT_EQ(bits<T>(fused), bits<T>(relu(call(""))));
  const std::vector<T> y = to_vector<T>(fused);
  // Every output channel reads the NaN pixel (0 * NaN is NaN too); the other pixels have both
  // signs before the relu.
  for (size_t c = 0; c < 3; ++c) EXPECT_TRUE(std::isnan(y[4 * c])) << c;
  EXPECT_EQ((std::vector<T>{y[1], y[2], y[3], y[5], y[6], y[7], y[9], y[10], y[11]}),
            (std::vector<T>{1, 0, 3, 0, 6.5, 0, 0, 7, 0}));
}

// The sum that gemv.h documents for one output: 32 partial sums over p < k rounded down to 32,
// their two blocks of 16 added lane by lane, then the block of 16 below k rounded down to 16 if
// there is one, the 16 combined pairwise (lane l with l + 8, then + 4, + 2, + 1), then the tail
// in order, then the bias, each step rounded to float.
float gemv_documented_sum(const float* x, const float* row, float bias, int64_t k) {
  const int64_t kv2 = k / 32 * 32, kv = k / 16 * 16;
  float partial[32] = {};
  for (int64_t p = 0; p < kv2; ++p) partial[p % 32] += row[p] * x[p];
  float lanes[16];
  for (int l = 0; l < 16; ++l) lanes[l] = partial[l] + partial[l + 16];
  for (int64_t p = kv2; p < kv; ++p) lanes[p % 16] += row[p] * x[p];
  for (int l = 0; l < 8; ++l) lanes[l] += lanes[l + 8];
  for (int l = 0; l < 4; ++l) lanes[l] += lanes[l + 4];
  float sum = (lanes[0] + lanes[2]) + (lanes[1] + lanes[3]);
  for (int64_t p = kv; p < k; ++p) sum += row[p] * x[p];
  return sum + bias;
}

// One input row (below oneDNN's threading size) takes our own matrix-vector loop
// (linalg/gemv.h): the shapes cover its 32-wide body, its block of 16, both tails, and its passes
// of 16 rows with rows left over. Each output has the bits of the documented order of additions,
// whichever pass computed it; it agrees with the float64 product and with oneDNN's, which computes
// the same row inside a batch of two; its relu gives bitwise relu of the unfused call, NaN
// included; and it gives the same bits on every call.
TEST(OpFullyConnected, OneRowMatchesTheFloat64AndTheBatchedProduct) {
  static const ops::OpDef& fc = ops::get_op("fully_connected");
  seed(7);
  for (const auto& [k, m] : std::vector<std::pair<int64_t, int64_t>>{{512, 256},
                                                                     {37, 6},
                                                                     {16, 4},
                                                                     {5, 3},
                                                                     {100, 1},
                                                                     {48, 15},
                                                                     {33, 8},
                                                                     {128, 13},
                                                                     {64, 37}}) {
    SCOPED_TRACE(fmt::format("k={} m={}", k, m));
    const NDArray x = random_normal(0, 1, {1, k}), w = random_normal(0, 1, {m, k});
    const NDArray b = random_normal(0, 1, {m});
    const NDArray y = ops::invoke(fc, {x, w, b}, {std::string("")})[0];
    const std::vector<double> want = to_vector<double>(ops::invoke(
        fc, {cast(x, DType::kFloat64), cast(w, DType::kFloat64), cast(b, DType::kFloat64)},
        {std::string("")})[0]);
    const std::vector<float> got = to_vector<float>(y);
    const std::vector<float> xs = to_vector<float>(x), ws = to_vector<float>(w),
                             bs = to_vector<float>(b);
    for (int64_t j = 0; j < m; ++j) {
      const float documented =
          gemv_documented_sum(xs.data(), ws.data() + j * k, bs[static_cast<size_t>(j)], k);
      EXPECT_EQ(std::bit_cast<uint32_t>(got[static_cast<size_t>(j)]),
                std::bit_cast<uint32_t>(documented))
          << j;
    }
    const std::vector<float> batched =
        to_vector<float>(ops::invoke(fc, {concat(x, x), w, b}, {std::string("")})[0]);
    for (int64_t j = 0; j < m; ++j) {
      const double tol = 1e-5 * static_cast<double>(k);
      EXPECT_NEAR(got[static_cast<size_t>(j)], want[static_cast<size_t>(j)], tol) << j;
      EXPECT_NEAR(got[static_cast<size_t>(j)], batched[static_cast<size_t>(j)], tol) << j;
    }
    EXPECT_EQ(bits<float>(ops::invoke(fc, {x, w, b}, {std::string("")})[0]), bits<float>(y));
    EXPECT_EQ(bits<float>(ops::invoke(fc, {x, w, b}, {std::string("relu")})[0]),
              bits<float>(relu(y)));
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> xs(20, 1.0f);
  xs[17] = nan;  // in the tail: every output reads it
  const NDArray y = ops::invoke(fc, {from_vector<float>(xs, {1, 20}), ones({5, 20}), zeros({5})},
                                {std::string("relu")})[0];
  for (float v : to_vector<float>(y)) EXPECT_TRUE(std::isnan(v));
}

// relu's gradient passes where relu passed its input through: y > 0 or NaN; the fused
// operators' gradients follow the same rule, since they call relu_backward.
TYPED_TEST(FusedRelu, GradientPassesAtNanAndStopsAtZero) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const NDArray y = from_vector<T>({nan, -0.0, 0, 2, -3}, {5});
  const NDArray dy = from_vector<T>({1, 2, 3, 4, 5}, {5});
  EXPECT_EQ(to_vector<T>(ops::relu_backward(y, dy)), (std::vector<T>{1, 0, 0, 4, 0}));

  const NDArray x = from_vector<T>({nan, 1, -1, 2}, {2, 2});
  const NDArray w = from_vector<T>({1, 0, 0, 1}, {2, 2});
  const NDArray b = from_vector<T>({0, 0}, {2});
  autograd::attach_grad(b);
  {
    autograd::RecordScope record;
    static const ops::OpDef& fc = ops::get_op("fully_connected");
    autograd::backward(ops::invoke(fc, {x, w, b}, {std::string("relu")})[0]);
  }
  // y = [[nan, 1], [-1, 2]]: db sums dy = 1 over the rows where relu passed its input.
  const std::vector<T> db = to_vector<T>(autograd::grad(b));
  EXPECT_EQ(db, (std::vector<T>{1, 2}));
}

// rnn names what is wrong with its shapes, mode and dtypes; states of batch 1 serve every
// sequence (what an imported Gluon layer's zero begin states become).
TEST(OpRnn, NamesBadShapesAndModes) {
  static const ops::OpDef& rnn = ops::get_op("rnn");
  auto call = [](const Shape& data, int64_t params, const Shape& states, std::string mode) {
    return ops::invoke(rnn, {zeros(data), zeros({params}), zeros(states)},
                       {std::move(mode), int64_t{2}, int64_t{1}, false});
  };
  // lstm, C = 3, H = 2: 8 x (3 + 2) weights + 2 x 8 biases.
  EXPECT_EQ(call({4, 5, 3}, 56, {2, 1, 5, 2}, "lstm")[0].shape(), (Shape{4, 5, 2}));
  EXPECT_EQ(call({4, 5, 3}, 56, {2, 1, 1, 2}, "lstm")[1].shape(), (Shape{2, 1, 5, 2}));
  EXPECT_THAT(error_of<ShapeError>([&] {
                call({4, 5, 3}, 55, {2, 1, 5, 2}, "lstm");
              }),
              HasSubstr("rnn: params has shape [55], expected [56]: the packed weights and "
                        "biases of 1 layer of mode 'lstm' with 3 input features and state size 2"));
  EXPECT_THAT(error_of<ShapeError>([&] {
                call({4, 5, 3}, 56, {1, 1, 5, 2}, "lstm");
              }),
              HasSubstr("rnn: states has shape [1, 1, 5, 2], expected [2, 1, 5, 2] or, the same "
                        "for every sequence, [2, 1, 1, 2]"));
  EXPECT_THAT(error_of<ShapeError>([&] {
                call({4, 3}, 56, {2, 1, 5, 2}, "lstm");
              }),
              HasSubstr("rnn: data has shape [4, 3], expected 3 dimensions"));
  EXPECT_THAT(error_of<ValueError>([&] {
                call({4, 5, 3}, 56, {2, 1, 5, 2}, "lstmp");
              }),
              HasSubstr("rnn: mode 'lstmp' is not one of 'rnn_relu', 'rnn_tanh', 'lstm', 'gru'"));
}

}  // namespace
}  // namespace janus

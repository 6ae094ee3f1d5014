// Tests of the nn operators beyond the conformance suite: user errors carry the operator, the
// shapes and what was expected; a few exact values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"

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

}  // namespace
}  // namespace janus

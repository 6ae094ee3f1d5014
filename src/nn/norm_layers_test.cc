// GroupNorm and InstanceNorm against a direct computation in doubles, their gradients against
// central differences, their argument and shape errors; BatchNorm's use_global_stats.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "janus/autograd/autograd.h"
#include "janus/engine/array.h"
#include "janus/nn/layers.h"
#include "janus/ops/ops.h"

#include "testing/test_util.h"

namespace janus::nn {
namespace {

using ::testing::HasSubstr;

std::vector<float> iota_values(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i) * 1.7f) * 3.0f + 0.1f;
  return v;
}

// Normalises each of `rows` rows of `cols` contiguous values (x viewed as [rows, cols]) and
// applies scale[r % groups], shift[r % groups].
std::vector<double> reference(const std::vector<float>& x, size_t rows, size_t cols,
                              const std::vector<double>& scale, const std::vector<double>& shift,
                              double eps) {
  std::vector<double> y(x.size());
  for (size_t r = 0; r < rows; ++r) {
    double m = 0, v = 0;
    for (size_t c = 0; c < cols; ++c) m += x[r * cols + c];
    m /= static_cast<double>(cols);
    for (size_t c = 0; c < cols; ++c) v += (x[r * cols + c] - m) * (x[r * cols + c] - m);
    v /= static_cast<double>(cols);
    const size_t g = r % scale.size();
    for (size_t c = 0; c < cols; ++c) {
      y[r * cols + c] = (x[r * cols + c] - m) / std::sqrt(v + eps) * scale[g] + shift[g];
    }
  }
  return y;
}

void expect_near(const std::vector<float>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << i;
}

TEST(GroupNorm, NormalisesEachGroupOfChannelsPerSample) {
  // [2, 6, 3]: 3 groups of 2 channels x 3 positions = 6 values per (sample, group).
  const std::vector<float> xs = iota_values(36);
  GroupNorm gn(3, 1e-5);
  gn.initialize();
  gn.gamma()->set_data(from_vector<float>({1.0f, 2.0f, -0.5f}, {3}));
  gn.beta()->set_data(from_vector<float>({0.0f, 0.25f, 1.0f}, {3}));
  const NDArray y = gn(from_vector<float>(xs, {2, 6, 3}));
  EXPECT_EQ(y.shape(), Shape({2, 6, 3}));
  expect_near(to_vector<float>(y), reference(xs, 6, 6, {1, 2, -0.5}, {0, 0.25, 1}, 1e-5), 1e-4);
}

TEST(InstanceNorm, NormalisesEachChannelPerSampleOnAnyAxis) {
  const std::vector<float> xs = iota_values(2 * 3 * 4);
  InstanceNorm in(1, 1e-3, true, true);
  in.initialize();
  const NDArray y = in(from_vector<float>(xs, {2, 3, 4}));
  EXPECT_EQ(in.gamma()->shape(), Shape({3}));  // inferred
  expect_near(to_vector<float>(y), reference(xs, 6, 4, {1}, {0}, 1e-3), 1e-4);

  // Channels last ([2, 4, 3], axis 2 or -1) equals channels first, transposed.
  InstanceNorm last(-1, 1e-3);
  last.initialize();
  const NDArray xt = transpose(from_vector<float>(xs, {2, 3, 4}), {0, 2, 1});
  const NDArray yt = last(xt);
  const std::vector<float> back = to_vector<float>(transpose(yt, {0, 2, 1}));
  expect_near(back, reference(xs, 6, 4, {1}, {0}, 1e-3), 1e-4);
}

// d/dx of sum(w * layer(x)) against central differences, and gamma/beta receive gradients.
void check_gradient(Block& layer, const Shape& shape) {
  layer.initialize();
  const std::vector<float> xs = iota_values(static_cast<size_t>(shape.numel()));
  std::vector<float> ws = iota_values(xs.size() + 3);
  ws.erase(ws.begin(), ws.begin() + 3);
  const NDArray w = from_vector<float>(ws, shape);
  const NDArray x = from_vector<float>(xs, shape);
  autograd::attach_grad(x);
  {
    autograd::RecordScope record;
    autograd::backward(sum(mul(layer(x), w)));
  }
  const std::vector<float> g = to_vector<float>(autograd::grad(x));
  auto f = [&](const std::vector<float>& v) {
    return static_cast<double>(
        to_vector<float>(sum(mul(layer(from_vector<float>(v, shape)), w)))[0]);
  };
  constexpr float kH = 1e-2f;
  for (size_t i = 0; i < xs.size(); ++i) {
    std::vector<float> up = xs, down = xs;
    up[i] += kH;
    down[i] -= kH;
    EXPECT_NEAR(g[i], (f(up) - f(down)) / (2 * kH), 2e-2) << i;
  }
  for (const auto& [name, p] : layer.collect_params()) {
    if (p->grad_req() == autograd::GradReq::kNull) continue;
    double total = 0;
    for (float v : to_vector<float>(p->grad())) total += std::abs(v);
    EXPECT_GT(total, 0.0) << name;
  }
}

TEST(GroupNorm, GradientMatchesFiniteDifferences) {
  GroupNorm gn(2);
  check_gradient(gn, Shape{2, 4, 3});
}

TEST(InstanceNorm, GradientMatchesFiniteDifferences) {
  InstanceNorm in(1, 1e-5, true, true);
  check_gradient(in, Shape{2, 3, 4});
}

// use_global_stats: training normalises by the running statistics and leaves them unchanged;
// the input gradient is gamma / sqrt(running_var + eps) per channel (a scale and shift), gamma
// and beta still get theirs. Imperative and hybridized alike.
TEST(BatchNorm, UseGlobalStatsNormalisesByTheRunningStatisticsInTraining) {
  for (const bool hybrid : {false, true}) {
    BatchNorm bn(1, 0.9, 1e-5, true, true, 2, /*use_global_stats=*/true);
    bn.initialize();
    if (hybrid) bn.hybridize();
    const std::vector<float> mean = {0.5f, -1.0f}, var = {4.0f, 0.25f}, gamma = {2.0f, -1.0f};
    bn.running_mean()->set_data(from_vector<float>(mean, {2}));
    bn.running_var()->set_data(from_vector<float>(var, {2}));
    bn.gamma()->set_data(from_vector<float>(gamma, {2}));
    const std::vector<float> xs = iota_values(12);  // [3, 2, 2]
    const NDArray x = from_vector<float>(xs, {3, 2, 2});
    autograd::attach_grad(x);
    NDArray y;
    {
      autograd::RecordScope record;  // training mode
      y = bn(x);
      autograd::backward(sum(y));
    }
    const std::vector<float> got = to_vector<float>(y), dx = to_vector<float>(autograd::grad(x));
    for (size_t i = 0; i < xs.size(); ++i) {
      const size_t c = (i / 2) % 2;
      const double scale = gamma[c] / std::sqrt(var[c] + 1e-5);
      EXPECT_NEAR(got[i], (xs[i] - mean[c]) * scale, 1e-5) << hybrid << " " << i;
      EXPECT_NEAR(dx[i], scale, 1e-5) << hybrid << " " << i;
    }
    EXPECT_EQ(to_vector<float>(bn.running_mean()->data()), mean) << hybrid;
    EXPECT_EQ(to_vector<float>(bn.running_var()->data()), var) << hybrid;
    EXPECT_NEAR(to_vector<float>(bn.beta()->grad())[1], 6.0, 1e-6);
    EXPECT_THAT(bn.describe(), HasSubstr("use_global_stats=True"));
  }
}

TEST(NormLayers, ArgumentsAndShapesAreChecked) {
  EXPECT_THAT(error_of<ValueError>([] { GroupNorm(0); }),
              HasSubstr("GroupNorm: num_groups is 0, expected at least 1"));
  EXPECT_THAT(error_of<ValueError>([] { InstanceNorm(1, -1.0); }),
              HasSubstr("InstanceNorm: epsilon is -1, expected a positive value"));
  GroupNorm gn(4);
  gn.initialize();
  EXPECT_THAT(error_of<ShapeError>([&] {
                gn(ones({2, 6, 3}));
              }),
              HasSubstr("input of shape [2, 6, 3] has 6 channels on axis 1, expected a multiple "
                        "of num_groups=4"));
  EXPECT_THAT(error_of<ShapeError>([&] { gn(ones({6})); }),
              HasSubstr("input has shape [6], expected [batch, channels, ...]"));
  InstanceNorm in(1, 1e-5, true, false, nullptr, nullptr, 3);
  in.initialize();
  EXPECT_THAT(error_of<ShapeError>([&] {
                in(ones({2, 5, 4}));
              }),
              HasSubstr("input of shape [2, 5, 4] has 5 channels on axis 1, expected 3"));
  EXPECT_THAT(error_of<ShapeError>([&] {
                in(ones({2, 3}));
              }),
              HasSubstr("input has shape [2, 3], expected at least 3 dimensions"));
}

}  // namespace
}  // namespace janus::nn

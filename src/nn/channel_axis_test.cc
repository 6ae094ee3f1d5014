// Channels-last convolutions and pools against the channels-first ones on transposed arrays,
// their weights' shapes, and their errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "janus/engine/array.h"
#include "janus/nn/layers.h"
#include "janus/ops/ops.h"

#include "testing/test_util.h"

namespace janus::nn {
namespace {

using ::testing::HasSubstr;

NDArray wavy(const Shape& shape, float phase) {
  std::vector<float> v(static_cast<size_t>(shape.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<float>(i) * 1.37f + phase);
  return from_vector<float>(v, shape);
}

// [N, spatial..., C] -> [N, C, spatial...]
NDArray first(const NDArray& x) {
  std::vector<int64_t> perm{0, x.ndim() - 1};
  for (int64_t a = 1; a < x.ndim() - 1; ++a) perm.push_back(a);
  return transpose(x, perm);
}

void expect_near(const NDArray& a, const NDArray& b) {
  ASSERT_EQ(a.shape(), b.shape());
  const std::vector<float> u = to_vector<float>(a), v = to_vector<float>(b);
  for (size_t i = 0; i < u.size(); ++i) EXPECT_NEAR(u[i], v[i], 1e-5) << i;
}

TEST(ChannelsLast, ConvolutionEqualsChannelsFirstOnTransposedArrays) {
  Conv2D last(4, {3, 2}, {2, 1}, {1, 0}, {1}, 2, "relu", true, 6, nullptr, Zero(),
              ChannelAxis::kLast);
  Conv2D first_layer(4, {3, 2}, {2, 1}, {1, 0}, {1}, 2, "relu", true, 6);
  last.initialize();
  first_layer.initialize();
  // MXNet's channels-last weight: [channels, kh, kw, in_channels / groups].
  ASSERT_EQ(last.weight()->shape(), Shape({4, 3, 2, 3}));
  const NDArray w = wavy(Shape{4, 3, 2, 3}, 0.3f);
  last.weight()->set_data(w);
  first_layer.weight()->set_data(first(w));
  const NDArray x = wavy(Shape{2, 7, 5, 6}, 0.0f);
  expect_near(first(last(x)), first_layer(first(x)));
}

TEST(ChannelsLast, TransposedConvolutionWeightKeepsItsChannelsLast) {
  Conv3DTranspose last(4, {2}, {2}, {0}, {1}, {1}, 2, "", true, 6, nullptr, Zero(),
                       ChannelAxis::kLast);
  Conv3DTranspose first_layer(4, {2}, {2}, {0}, {1}, {1}, 2, "", true, 6);
  last.initialize();
  first_layer.initialize();
  // [in_channels, kd, kh, kw, channels / groups]
  ASSERT_EQ(last.weight()->shape(), Shape({6, 2, 2, 2, 2}));
  const NDArray w = wavy(Shape{6, 2, 2, 2, 2}, 0.7f);
  last.weight()->set_data(w);
  first_layer.weight()->set_data(first(w));
  const NDArray x = wavy(Shape{1, 2, 3, 2, 6}, 0.1f);
  expect_near(first(last(x)), first_layer(first(x)));
}

TEST(ChannelsLast, PoolsEqualChannelsFirstOnTransposedArrays) {
  const NDArray x2 = wavy(Shape{2, 6, 7, 3}, 0.2f);
  expect_near(first(MaxPool2D({3}, {2}, {1}, true, ChannelAxis::kLast)(x2)),
              MaxPool2D({3}, {2}, {1}, true)(first(x2)));
  expect_near(first(AvgPool2D({2}, {1}, {1}, false, false, ChannelAxis::kLast)(x2)),
              AvgPool2D({2}, {1}, {1}, false, false)(first(x2)));
  expect_near(first(GlobalAvgPool2D(ChannelAxis::kLast)(x2)), GlobalAvgPool2D()(first(x2)));
  const NDArray x1 = wavy(Shape{2, 9, 3}, 0.4f);
  expect_near(first(MaxPool1D({3}, {2}, {1}, false, ChannelAxis::kLast)(x1)),
              MaxPool1D({3}, {2}, {1})(first(x1)));
  expect_near(first(GlobalMaxPool1D(ChannelAxis::kLast)(x1)), GlobalMaxPool1D()(first(x1)));
  const NDArray x3 = wavy(Shape{1, 4, 4, 5, 2}, 0.5f);
  expect_near(first(AvgPool3D({2}, {}, {0}, true, true, ChannelAxis::kLast)(x3)),
              AvgPool3D({2}, {}, {0}, true)(first(x3)));
  expect_near(first(GlobalMaxPool3D(ChannelAxis::kLast)(x3)), GlobalMaxPool3D()(first(x3)));
}

TEST(ChannelsLast, ErrorsNameTheChannelsLastAxes) {
  Conv2D conv(4, {3}, {1}, {0}, {1}, 1, "", true, 3, nullptr, Zero(), ChannelAxis::kLast);
  conv.initialize();
  EXPECT_THAT(error_of<ShapeError>([&] {
                conv(ones(Shape{1, 5, 5, 4}));
              }),
              HasSubstr("input of shape [1, 5, 5, 4] has 4 channels, expected 3"));
  EXPECT_THAT(error_of<ShapeError>([&] {
                conv(ones(Shape{5, 5, 3}));
              }),
              HasSubstr("expected 4 dimensions [batch, height, width, channels]"));
  EXPECT_THAT(error_of<ShapeError>([] {
                MaxPool1D({3}, {}, {0}, false, ChannelAxis::kLast)(ones(Shape{1, 2, 4}));
              }),
              HasSubstr("input of shape [1, 2, 4] is smaller than the pool [3] with padding [0] on "
                        "axis 1"));
}

}  // namespace
}  // namespace janus::nn

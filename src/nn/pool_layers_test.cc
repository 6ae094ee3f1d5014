// The 1-D and 3-D pools against each window computed directly in doubles (the 3-D pools are
// separable compositions of the 2-D operators), the global pools, ReflectionPad2D, PixelShuffle,
// SELU and BatchNormReLU, and their errors (SyncBatchNorm: sync_batch_norm_test.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "janus/autograd/autograd.h"
#include "janus/engine/array.h"
#include "janus/nn/layers.h"
#include "janus/ops/ops.h"

#include "testing/test_util.h"

namespace janus::nn {
namespace {

using ::testing::HasSubstr;

std::vector<float> wavy(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i) * 1.37f) * 2.0f;
  return v;
}

struct Geometry {
  std::vector<int64_t> k, s, p;
  bool ceil_mode, count_include_pad;
};

// Each window of [N, C, D, H, W]: [o * s - p, o * s - p + k) clipped to the padded input; its
// maximum, or its sum over the elements inside x divided by the clipped window's volume
// (count_include_pad) or by the count of those elements.
std::vector<double> pool3d_reference(const std::vector<float>& x, const Shape& shape, bool max,
                                     const Geometry& g, Shape* out_shape) {
  int64_t out[3], in[3];
  for (size_t i = 0; i < 3; ++i) {
    in[i] = shape[static_cast<int>(i) + 2];
    const int64_t span = in[i] + 2 * g.p[i] - g.k[i];
    out[i] = (g.ceil_mode ? (span + g.s[i] - 1) / g.s[i] : span / g.s[i]) + 1;
  }
  *out_shape = Shape{shape[0], shape[1], out[0], out[1], out[2]};
  std::vector<double> y;
  for (int64_t nc = 0; nc < shape[0] * shape[1]; ++nc) {
    for (int64_t od = 0; od < out[0]; ++od) {
      for (int64_t oh = 0; oh < out[1]; ++oh) {
        for (int64_t ow = 0; ow < out[2]; ++ow) {
          const int64_t o[3] = {od, oh, ow};
          int64_t lo[3], hi[3], padded = 1, inside = 1;
          for (size_t i = 0; i < 3; ++i) {
            const int64_t start = o[i] * g.s[i] - g.p[i];
            const int64_t end = std::min(start + g.k[i], in[i] + g.p[i]);
            padded *= end - start;
            lo[i] = std::max<int64_t>(start, 0);
            hi[i] = std::min(end, in[i]);
            inside *= std::max<int64_t>(hi[i] - lo[i], 0);
          }
          double acc = max ? -std::numeric_limits<double>::infinity() : 0.0;
          for (int64_t d = lo[0]; d < hi[0]; ++d) {
            for (int64_t h = lo[1]; h < hi[1]; ++h) {
              for (int64_t w = lo[2]; w < hi[2]; ++w) {
                const double v = x[static_cast<size_t>(((nc * in[0] + d) * in[1] + h) * in[2] + w)];
                acc = max ? std::max(acc, v) : acc + v;
              }
            }
          }
          if (inside == 0) {
            // An empty window (ceil_mode, starting in the padding): the lowest value or 0, as
            // the 2-D operators give (MXNet gives the lowest value or, when it divides by the
            // elements inside, 0 / 0 = NaN).
            y.push_back(max ? std::numeric_limits<float>::lowest() : 0.0);
          } else {
            y.push_back(max ? acc
                            : acc / static_cast<double>(g.count_include_pad ? padded : inside));
          }
        }
      }
    }
  }
  return y;
}

void expect_pool3d(bool max, const Geometry& g, const Shape& shape) {
  const std::vector<float> xs = wavy(static_cast<size_t>(shape.numel()));
  Shape want_shape;
  const std::vector<double> want = pool3d_reference(xs, shape, max, g, &want_shape);
  const NDArray x = from_vector<float>(xs, shape);
  const NDArray y = max ? MaxPool3D(g.k, g.s, g.p, g.ceil_mode)(x)
                        : AvgPool3D(g.k, g.s, g.p, g.ceil_mode, g.count_include_pad)(x);
  ASSERT_EQ(y.shape(), want_shape);
  const std::vector<float> got = to_vector<float>(y);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-5 * (1 + std::abs(want[i]))) << i;
  }
}

TEST(Pool3D, MaxIsTheMaximumOfEachBox) {
  expect_pool3d(true, {{2, 2, 2}, {2, 2, 2}, {0, 0, 0}, false, true}, Shape{2, 2, 4, 5, 6});
  expect_pool3d(true, {{3, 2, 3}, {2, 1, 2}, {1, 0, 1}, true, true}, Shape{1, 2, 6, 4, 7});
  // Windows on H that start in the padding (empty): the lowest value.
  expect_pool3d(true, {{4, 2, 3}, {3, 2, 2}, {2, 1, 1}, true, true}, Shape{1, 2, 8, 5, 6});
}

TEST(Pool3D, AverageDividesByTheBoxOrByItsElementsInside) {
  for (bool include : {true, false}) {
    for (bool ceil_mode : {false, true}) {
      expect_pool3d(false, {{3, 2, 3}, {2, 1, 2}, {1, 1, 1}, ceil_mode, include},
                    Shape{2, 1, 6, 4, 8});
      expect_pool3d(false, {{4, 2, 3}, {3, 2, 2}, {2, 1, 1}, ceil_mode, include},
                    Shape{1, 2, 8, 5, 6});
    }
  }
}

TEST(Pool1D, PoolsTheLastAxis) {
  const NDArray x = from_vector<float>({1, 5, 2, 4, 3, 0, 6}, {1, 1, 7});
  EXPECT_EQ(to_vector<float>(MaxPool1D({3}, {2}, {1})(x)), (std::vector<float>{5, 5, 4, 6}));
  // Windows [-1, 2) [1, 4) [3, 6) [5, 8) clipped to [-1, 8): ceil_mode adds none here.
  EXPECT_EQ(to_vector<float>(AvgPool1D({3}, {2}, {1}, false, false)(x)),
            (std::vector<float>{3, 11.0f / 3, 7.0f / 3, 3}));
  EXPECT_EQ(MaxPool1D({2}, {2}, {0}, true)(x).shape(), Shape({1, 1, 4}));
}

TEST(GlobalPools, ReduceEverySpatialAxis) {
  const NDArray x = from_vector<float>(wavy(2 * 3 * 24), {2, 3, 2, 3, 4});
  EXPECT_EQ(GlobalMaxPool3D()(x).shape(), Shape({2, 3, 1, 1, 1}));
  EXPECT_EQ(to_vector<float>(GlobalAvgPool3D()(x)),
            to_vector<float>(mean(x, {2, 3, 4}, /*keepdims=*/true)));
  const NDArray x1 = from_vector<float>({1, 4, 2, -1, 0, -3}, {1, 2, 3});
  EXPECT_EQ(to_vector<float>(GlobalMaxPool1D()(x1)), (std::vector<float>{4, 0}));
  EXPECT_EQ(to_vector<float>(GlobalAvgPool1D()(x1)), (std::vector<float>{7.0f / 3, -4.0f / 3}));
}

TEST(ReflectionPad2D, ReflectsWithoutRepeatingTheEdge) {
  // [[0 1 2], [3 4 5]] padded top 1, bottom 0, left 2, right 1.
  const NDArray x = from_vector<float>({0, 1, 2, 3, 4, 5}, {1, 1, 2, 3});
  const NDArray y = ReflectionPad2D({0, 0, 0, 0, 1, 0, 2, 1})(x);
  EXPECT_EQ(y.shape(), Shape({1, 1, 3, 6}));
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{5, 4, 3, 4, 5, 4,  //
                                                     2, 1, 0, 1, 2, 1,  //
                                                     5, 4, 3, 4, 5, 4}));
}

TEST(ReflectionPad2D, GradientFoldsBackOntoTheReflectedElements) {
  const NDArray x = from_vector<float>({0, 1, 2}, {1, 1, 1, 3});
  autograd::attach_grad(x);
  {
    autograd::RecordScope record;
    autograd::backward(sum(ReflectionPad2D({0, 0, 0, 0, 0, 0, 2, 2})(x)));
  }
  // [2 1 0 1 2 1 0]: element 0 twice, 1 three times, 2 twice.
  EXPECT_EQ(to_vector<float>(autograd::grad(x)), (std::vector<float>{2, 3, 2}));
}

TEST(PixelShuffle, MovesChannelBlocksIntoPixels) {
  // [1, 4, 1, 1] with factors (2, 2): channel j1 * 2 + j2 lands at (j1, j2).
  const NDArray y = PixelShuffle2D({2})(from_vector<float>({0, 1, 2, 3}, {1, 4, 1, 1}));
  EXPECT_EQ(y.shape(), Shape({1, 1, 2, 2}));
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{0, 1, 2, 3}));
  // 1-D, factor 2, [1, 2, 3]: out[i * 2 + j] = in[j][i].
  const NDArray y1 = PixelShuffle1D({2})(from_vector<float>({0, 1, 2, 10, 11, 12}, {1, 2, 3}));
  EXPECT_EQ(to_vector<float>(y1), (std::vector<float>{0, 10, 1, 11, 2, 12}));
  EXPECT_EQ(PixelShuffle3D({1, 2, 3})(ones({2, 12, 2, 3, 4})).shape(), Shape({2, 2, 2, 6, 12}));
}

TEST(SELU, UsesKlambauersConstants) {
  const std::vector<float> y = to_vector<float>(SELU()(from_vector<float>({-1, 0, 2}, {3})));
  EXPECT_NEAR(y[0], 1.0507009873554805 * 1.6732632423543772 * (std::exp(-1.0) - 1), 1e-6);
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_NEAR(y[2], 2 * 1.0507009873554805, 1e-6);
}

TEST(BatchNormReLU, IsReluOfBatchNorm) {
  const NDArray x = from_vector<float>(wavy(24), {4, 3, 2});
  BatchNorm bn;
  BatchNormReLU bnr;
  bn.initialize();
  bnr.initialize();
  std::vector<float> want = to_vector<float>(bn(x));
  for (float& v : want) v = std::max(v, 0.0f);
  EXPECT_EQ(to_vector<float>(bnr(x)), want);
}

TEST(PoolLayers, ArgumentsAndShapesAreChecked) {
  EXPECT_THAT(error_of<ValueError>([] {
                MaxPool3D({2, 2});
              }),
              HasSubstr("MaxPool3D: pool_size has 2 values [2, 2], expected 1 or 3"));
  EXPECT_THAT(error_of<ValueError>([] {
                MaxPool1D({2, 2});
              }),
              HasSubstr("MaxPool1D: pool_size has 2 values [2, 2], expected 1 (width)"));
  EXPECT_THAT(error_of<ValueError>([] { AvgPool1D({3}, {}, {2}); }),
              HasSubstr("AvgPool1D: padding [2] is more than half the pool size [3]"));
  EXPECT_THAT(error_of<ShapeError>([] {
                MaxPool1D()(ones({2, 3}));
              }),
              HasSubstr("input has shape [2, 3], expected 3 dimensions [batch, channels, width]"));
  EXPECT_THAT(error_of<ShapeError>([] {
                AvgPool3D({3})(ones({1, 1, 2, 5, 5}));
              }),
              HasSubstr("input of shape [1, 1, 2, 5, 5] is smaller than the pool [3, 3, 3] with "
                        "padding [0, 0, 0] on axis 2"));
  EXPECT_THAT(error_of<ShapeError>([] {
                ReflectionPad2D({2})(ones({1, 1, 2, 5}));
              }),
              HasSubstr("is not below the height and width of input [1, 1, 2, 5]"));
  EXPECT_THAT(error_of<ShapeError>([] {
                PixelShuffle1D({2})(ones({1, 3, 2}));
              }),
              HasSubstr("has 3 channels, expected a multiple of 2"));
}

}  // namespace
}  // namespace janus::nn

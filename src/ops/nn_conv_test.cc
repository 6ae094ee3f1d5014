// Tests of conv2d, pooling and batch_norm beyond the conformance suite: the oneDNN path on
// LeNet's shapes against the float64 loops, batch norm's running statistics, and the errors.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"
#include "janus/ops/registry.h"

#include "testing/test_util.h"

namespace janus {
namespace {

using ::testing::HasSubstr;

void expect_near_f64(const NDArray& f32, const NDArray& f64, double tol, const char* what) {
  const std::vector<float> a = to_vector<float>(f32);
  const std::vector<double> b = to_vector<double>(f64);
  ASSERT_EQ(a.size(), b.size()) << what;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::fabs(a[i] - b[i]) / (1 + std::fabs(b[i])));
  EXPECT_LT(worst, tol) << what;
}

// oneDNN (float32, computing in channels-last layout) against the direct loops (float64), all
// three passes: LeNet's two layers (one input channel, whose NCHW and NHWC layouts coincide, and
// six, converted around each call) and a grouped, strided, padded convolution.
TEST(OpConv2d, OneDnnMatchesLoopsOnLeNetShapes) {
  struct Case {
    Shape x, w;
    int64_t stride, padding, groups;
  };
  for (const Case& c :
       {Case{{4, 1, 28, 28}, {6, 1, 5, 5}, 1, 2, 1}, Case{{4, 6, 14, 14}, {16, 6, 5, 5}, 1, 0, 1},
        Case{{2, 8, 9, 9}, {12, 4, 3, 3}, 2, 1, 2}}) {
    SCOPED_TRACE(fmt::format("x {} w {} groups {}", c.x, c.w, c.groups));
    seed(7);
    const NDArray x = random_uniform(-1, 1, c.x, DType::kFloat64);
    const NDArray w = random_uniform(-1, 1, c.w, DType::kFloat64);
    const NDArray b = random_uniform(-1, 1, {c.w[0]}, DType::kFloat64);
    const NDArray y = conv2d(x, w, b, {c.stride}, {c.padding}, {1}, c.groups);
    const NDArray dy = random_uniform(-1, 1, y.shape(), DType::kFloat64);
    auto f32 = [](const NDArray& a) { return cast(a, DType::kFloat32); };
    const std::vector<int64_t> in{c.x[2], c.x[3]}, kernel{c.w[2], c.w[3]};
    expect_near_f64(conv2d(f32(x), f32(w), f32(b), {c.stride}, {c.padding}, {1}, c.groups), y, 1e-4,
                    "forward");
    expect_near_f64(
        conv2d_backward_data(f32(dy), f32(w), in, {c.stride}, {c.padding}, {1}, c.groups),
        conv2d_backward_data(dy, w, in, {c.stride}, {c.padding}, {1}, c.groups), 1e-4,
        "backward data");
    expect_near_f64(
        conv2d_backward_weight(f32(x), f32(dy), kernel, {c.stride}, {c.padding}, {1}, c.groups),
        conv2d_backward_weight(x, dy, kernel, {c.stride}, {c.padding}, {1}, c.groups), 1e-3,
        "backward weight");
  }
}

NDArray invoke1(std::string_view op, const std::vector<NDArray>& in, ops::Attrs attrs) {
  return ops::invoke(ops::get_op(op), in, std::move(attrs))[0];
}

// One input channel into fewer than 16 output channels, stride and dilation 1 (a grayscale
// first layer, LeNet's): float32 takes conv_single_channel.cc's row-vectorized kernels, forward
// and weight gradient. Against the float64 loops: rows shorter and longer than a run of 16 wide
// outputs and exactly one (the copy of the outputs writes whole runs, past a row's end into the
// next; the weight gradient masks a row's last, partial run), padding on one axis, both or none,
// non-square kernels, odd and even numbers of taps (one: a 1x1 kernel; 25 in groups of 7, 6, 6
// and 7; 33 in five groups of 6 or 7), one output channel and fifteen, one output pixel; and with
// the fused relu, which must equal a separate relu bit for bit.
TEST(OpConv2d, SingleChannelKernelMatchesLoops) {
  struct Case {
    Shape x, w;
    std::vector<int64_t> padding;
  };
  for (const Case& c :
       {Case{{3, 1, 28, 28}, {6, 1, 5, 5}, {2, 2}}, Case{{2, 1, 7, 40}, {15, 1, 3, 2}, {0, 1}},
        Case{{1, 1, 5, 5}, {1, 1, 5, 5}, {0, 0}}, Case{{2, 1, 3, 9}, {4, 1, 4, 1}, {1, 0}},
        Case{{5, 1, 17, 3}, {7, 1, 2, 3}, {3, 2}}, Case{{2, 1, 4, 20}, {3, 1, 1, 1}, {0, 0}},
        Case{{4, 1, 9, 16}, {2, 1, 3, 1}, {1, 0}}, Case{{2, 1, 12, 35}, {3, 1, 3, 11}, {1, 5}}}) {
    SCOPED_TRACE(fmt::format("x {} w {} padding [{}]", c.x, c.w, fmt::join(c.padding, ", ")));
    seed(11);
    const NDArray x = random_uniform(-1, 1, c.x, DType::kFloat64);
    const NDArray w = random_uniform(-1, 1, c.w, DType::kFloat64);
    const NDArray b = random_uniform(-1, 1, {c.w[0]}, DType::kFloat64);
    auto f32 = [](const NDArray& a) { return cast(a, DType::kFloat32); };
    const NDArray y = conv2d(f32(x), f32(w), f32(b), {1}, c.padding, {1}, 1);
    expect_near_f64(y, conv2d(x, w, b, {1}, c.padding, {1}, 1), 1e-5, "forward");
    const NDArray fused = invoke1("conv2d", {f32(x), f32(w), f32(b)},
                                  {std::vector<int64_t>{1}, c.padding, std::vector<int64_t>{1},
                                   int64_t{1}, std::string("relu")});
    EXPECT_EQ(to_vector<float>(fused), to_vector<float>(relu(y))) << "fused relu";
    const NDArray dy = random_uniform(-1, 1, y.shape(), DType::kFloat64);
    const std::vector<int64_t> kernel{c.w[2], c.w[3]};
    expect_near_f64(conv2d_backward_weight(f32(x), f32(dy), kernel, {1}, c.padding, {1}, 1),
                    conv2d_backward_weight(x, dy, kernel, {1}, c.padding, {1}, 1), 1e-4,
                    "backward weight");
  }
}

// Fewer than 16 input channels, one group, stride and dilation 1 (LeNet's second layer): the
// float32 data gradient takes conv_gemm_backward_data.cc's matmul and column sums, and so does
// the transposed convolution (its forward pass is that gradient). Against the float64 loops:
// dx rows shorter than a run of 16, exactly one and longer (35: three runs, the last partial),
// padding on one axis, both or none and wider than the kernel's reach on one side, non-square
// kernels and a 1x1 one, one input channel and fifteen, one output channel and twenty; and a
// batch whose columns (7.5 MiB) go through in two chunks, of 3 and 2 images.
TEST(OpConv2d, FewInputChannelsDataGradientMatchesLoops) {
  struct Case {
    Shape x, w;
    std::vector<int64_t> padding;
  };
  auto f32 = [](const NDArray& a) { return cast(a, DType::kFloat32); };
  for (const Case& c :
       {Case{{3, 6, 14, 14}, {16, 6, 5, 5}, {0, 0}}, Case{{2, 1, 16, 16}, {4, 1, 3, 3}, {1, 1}},
        Case{{2, 15, 7, 35}, {20, 15, 3, 2}, {0, 1}}, Case{{1, 3, 9, 5}, {1, 3, 4, 1}, {2, 0}},
        Case{{2, 2, 6, 6}, {5, 2, 1, 1}, {0, 0}}, Case{{2, 4, 5, 8}, {3, 4, 2, 3}, {1, 2}},
        Case{{5, 15, 52, 56}, {4, 15, 3, 3}, {1, 1}}}) {
    SCOPED_TRACE(fmt::format("x {} w {} padding [{}]", c.x, c.w, fmt::join(c.padding, ", ")));
    seed(13);
    const NDArray w = random_uniform(-1, 1, c.w, DType::kFloat64);
    const NDArray b = random_uniform(-1, 1, {c.w[0]}, DType::kFloat64);
    const Shape y =
        conv2d(random_uniform(-1, 1, c.x, DType::kFloat64), w, b, {1}, c.padding, {1}, 1).shape();
    const NDArray dy = random_uniform(-1, 1, y, DType::kFloat64);
    const std::vector<int64_t> in{c.x[2], c.x[3]};
    expect_near_f64(conv2d_backward_data(f32(dy), f32(w), in, {1}, c.padding, {1}, 1),
                    conv2d_backward_data(dy, w, in, {1}, c.padding, {1}, 1), 1e-5, "backward data");
    const NDArray bx = random_uniform(-1, 1, {c.x[1]}, DType::kFloat64);
    expect_near_f64(conv_transpose(f32(dy), f32(w), f32(bx), {1}, c.padding, {0, 0}, {1}, 1),
                    conv_transpose(dy, w, bx, {1}, c.padding, {0, 0}, {1}, 1), 1e-5, "transpose");
  }
}

// The 1-D and 3-D convolutions and the transposed ones: oneDNN (float32; its NWC and NDHWC
// layouts and the backward-data primitive run forward) against the direct loops (float64),
// every pass.
TEST(OpConvNd, OneDnnMatchesLoopsForEveryRankAndTheTranspose) {
  struct Case {
    Shape x, w;
    std::vector<int64_t> stride, padding;
    int64_t groups;
  };
  auto f32 = [](const NDArray& a) { return cast(a, DType::kFloat32); };
  for (const Case& c : {Case{{3, 4, 18}, {6, 2, 3}, {2}, {1}, 2},
                        Case{{2, 3, 5, 6, 4}, {4, 3, 3, 2, 3}, {1, 2, 1}, {1, 0, 1}, 1},
                        Case{{2, 8, 9, 9}, {12, 4, 3, 3}, {2}, {1}, 2}}) {
    SCOPED_TRACE(fmt::format("x {} w {}", c.x, c.w));
    const int dims = c.x.ndim() - 2;
    const std::string conv = fmt::format("conv{}d", dims);
    seed(11);
    const NDArray x = random_uniform(-1, 1, c.x, DType::kFloat64);
    const NDArray w = random_uniform(-1, 1, c.w, DType::kFloat64);
    const NDArray b = random_uniform(-1, 1, {c.w[0]}, DType::kFloat64);
    const ops::Attrs attrs{c.stride, c.padding, std::vector<int64_t>{1}, c.groups};
    const NDArray y = invoke1(conv, {x, w, b}, attrs);
    expect_near_f64(invoke1(conv, {f32(x), f32(w), f32(b)}, attrs), y, 1e-4, "forward");
    const NDArray dy = random_uniform(-1, 1, y.shape(), DType::kFloat64);
    std::vector<int64_t> in, kernel;
    for (int i = 2; i < c.x.ndim(); ++i) {
      in.push_back(c.x[i]);
      kernel.push_back(c.w[i]);
    }
    ops::Attrs data_attrs = attrs, weight_attrs = attrs;
    data_attrs.values().push_back(in);
    weight_attrs.values().push_back(kernel);
    expect_near_f64(invoke1(conv + "_backward_data", {f32(dy), f32(w)}, data_attrs),
                    invoke1(conv + "_backward_data", {dy, w}, data_attrs), 1e-4, "backward data");
    expect_near_f64(invoke1(conv + "_backward_weight", {f32(x), f32(dy)}, weight_attrs),
                    invoke1(conv + "_backward_weight", {x, dy}, weight_attrs), 1e-3,
                    "backward weight");
    // The transpose of this convolution maps dy back to x's shape (output_padding recovers
    // the rows that the stride skipped) and equals the data gradient plus its bias.
    std::vector<int64_t> out_pad;
    for (size_t i = 0; i < in.size(); ++i) {
      const size_t a = c.stride.size() == 1 ? 0 : i;
      const size_t p = c.padding.size() == 1 ? 0 : i;
      const int64_t natural =
          (y.shape()[static_cast<int>(i) + 2] - 1) * c.stride[a] - 2 * c.padding[p] + kernel[i];
      out_pad.push_back(in[i] - natural);
    }
    const NDArray bx = random_uniform(-1, 1, {c.x[1]}, DType::kFloat64);
    const NDArray t = conv_transpose(dy, w, bx, c.stride, c.padding, out_pad, {1}, c.groups);
    ASSERT_EQ(t.shape(), c.x);
    const NDArray want = invoke1(conv + "_backward_data", {dy, w}, data_attrs);
    std::vector<int64_t> per_channel(static_cast<size_t>(c.x.ndim()), 1);
    per_channel[1] = c.x[1];
    expect_near_f64(cast(t, DType::kFloat32),
                    want + broadcast_to(reshape(bx, Shape(per_channel)), want.shape()), 1e-6,
                    "transpose = backward data + bias");
    expect_near_f64(
        conv_transpose(f32(dy), f32(w), f32(bx), c.stride, c.padding, out_pad, {1}, c.groups), t,
        1e-4, "transpose float32");
  }
}

TEST(OpConvNd, BadInputsNameTheOperatorAndWhatWasExpected) {
  std::string msg = error_of<ShapeError>([&] {
    invoke1("conv3d", {zeros({2, 3, 8, 8}), zeros({4, 3, 3, 3}), zeros({4})}, {});
  });
  EXPECT_THAT(msg, HasSubstr("conv3d: input has shape [2, 3, 8, 8], expected 5 dimensions "
                             "[batch, channels, depth, height, width]"));
  msg = error_of<ValueError>([&] {
    invoke1("conv1d", {zeros({2, 3, 8}), zeros({4, 3, 3}), zeros({4})},
            {std::vector<int64_t>{1, 1}});
  });
  EXPECT_THAT(msg, HasSubstr("conv1d: stride has 2 values [1, 1], expected 1 or 1 (width)"));
  msg = error_of<ValueError>([&] {
    conv_transpose(zeros({1, 2, 4, 4}), zeros({2, 3, 3, 3}), zeros({3}), {2}, {0}, {2});
  });
  EXPECT_THAT(msg, HasSubstr("conv2d_transpose: output_padding is [2, 2], expected each value "
                             "below the stride [2, 2]"));
  msg = error_of<ShapeError>([&] {
    conv_transpose(zeros({1, 3, 4, 4}), zeros({2, 3, 3, 3}), zeros({3}));
  });
  EXPECT_THAT(msg, HasSubstr("conv2d_transpose: input [1, 3, 4, 4] has 3 channels but weight "
                             "[2, 3, 3, 3] expects 2 (its first axis)"));
  msg = error_of<ShapeError>([&] {
    conv_transpose(zeros({1, 2, 4}), zeros({2, 3, 3}), zeros({2}));
  });
  EXPECT_THAT(msg, HasSubstr("conv1d_transpose: bias has shape [2] for weight [2, 3, 3], "
                             "expected [3]"));
  msg = error_of<ShapeError>([&] {
    conv_transpose(zeros({1, 2, 1}), zeros({2, 3, 1}), zeros({3}), {1}, {1});
  });
  EXPECT_THAT(msg, HasSubstr("gives an output extent of -1, expected at least 1"));
  msg = error_of<ShapeError>([&] { conv_transpose(zeros({1, 2}), zeros({2, 3}), zeros({3})); });
  EXPECT_THAT(msg, HasSubstr("conv_transpose: input has shape [1, 2], expected 3 to 5 "
                             "dimensions"));
}

TEST(OpConv2d, GradientsFlowToEveryInput) {
  NDArray x = ones({2, 3, 6, 6}), w = ones({4, 3, 3, 3}), b = zeros({4});
  autograd::attach_grad(x);
  autograd::attach_grad(w);
  autograd::attach_grad(b);
  NDArray loss;
  {
    autograd::RecordScope record;
    loss = sum(conv2d(x, w, b));
  }
  autograd::backward({loss});
  // Each output pixel (2 x 4 x 4 x 4) adds 1 to the bias gradient of its channel.
  EXPECT_EQ(to_vector<float>(autograd::grad(b)), std::vector<float>(4, 32.0f));
  // A weight tap sees every one of the 2 x 4 x 4 output pixels of its channel.
  EXPECT_EQ(to_vector<float>(autograd::grad(w))[0], 32.0f);
  // The centre pixel of the input is under all 9 taps of all 4 filters.
  EXPECT_EQ(to_vector<float>(autograd::grad(x))[2 * 6 + 2], 36.0f);
}

// conv2d(x, w, b) with `activation` and avg_pool_2x2, as the fuse_conv_avg_pool pass leaves it.
NDArray conv2d_pooled(const NDArray& x, const NDArray& w, const NDArray& b,
                      const std::string& activation) {
  return ops::invoke(ops::get_op("conv2d"), {x, w, b},
                     {std::vector<int64_t>{1}, std::vector<int64_t>{1}, std::vector<int64_t>{1},
                      int64_t{1}, activation, true})[0];
}

// The gradients of a call that pools (recomputing the unpooled activation, which the call does
// not keep) are bit for bit those of the separate conv2d, sigmoid and avg_pool2d calls; an odd
// extent's last row and column get no gradient from the pooling.
TEST(OpConv2d, PooledCallDifferentiatesAsTheSeparateCalls) {
  for (const Shape& xs : {Shape{2, 1, 8, 7}, Shape{2, 3, 6, 6}}) {
    SCOPED_TRACE(fmt::format("x {}", xs));
    std::vector<std::vector<float>> grads[2];
    for (const bool fused : {true, false}) {
      seed(4);  // the same values for both
      NDArray xv = random_normal(0, 1, xs), wv = random_normal(0, 1, {4, xs[1], 3, 3});
      NDArray bv = random_normal(0, 1, {4});
      const NDArray dy[] = {random_normal(0, 1, {2, 4, xs[2] / 2, xs[3] / 2})};
      for (NDArray* a : {&xv, &wv, &bv}) autograd::attach_grad(*a);
      NDArray y[1];
      {
        autograd::RecordScope record;
        y[0] = fused ? conv2d_pooled(xv, wv, bv, "sigmoid")
                     : avg_pool2d(sigmoid(conv2d(xv, wv, bv, {1}, {1})), {2}, {2});
      }
      autograd::backward(y, dy);
      for (const NDArray* a : {&xv, &wv, &bv}) {
        grads[fused].push_back(to_vector<float>(autograd::grad(*a)));
      }
    }
    for (size_t i = 0; i < 3; ++i) {
      ASSERT_EQ(grads[0][i].size(), grads[1][i].size());
      for (size_t k = 0; k < grads[0][i].size(); ++k) {
        EXPECT_EQ(std::bit_cast<uint32_t>(grads[0][i][k]), std::bit_cast<uint32_t>(grads[1][i][k]))
            << "input " << i << " element " << k;
      }
    }
  }
}

TEST(OpConv2d, BadInputsNameTheProblem) {
  const NDArray x = zeros({2, 3, 8, 8});
  std::string msg = error_of<ShapeError>([&] { conv2d(x, zeros({4, 2, 3, 3}), zeros({4})); });
  EXPECT_THAT(
      msg,
      HasSubstr("conv2d: input [2, 3, 8, 8] has 3 channels but weight [4, 2, 3, 3] expects 2"));
  msg = error_of<ShapeError>([&] { conv2d(zeros({3, 8, 8}), zeros({4, 3, 3, 3}), zeros({4})); });
  EXPECT_THAT(msg, HasSubstr("conv2d: input has shape [3, 8, 8], expected 4 dimensions [batch, "
                             "channels, height, width]"));
  msg = error_of<ShapeError>([&] { conv2d(x, zeros({4, 3, 3, 3}), zeros({3})); });
  EXPECT_THAT(msg, HasSubstr("conv2d: bias has shape [3] for weight [4, 3, 3, 3], expected [4]"));
  msg = error_of<ShapeError>([&] { conv2d(x, zeros({4, 3, 9, 9}), zeros({4})); });
  EXPECT_THAT(
      msg,
      HasSubstr("conv2d: kernel [9, 9] (dilation [1, 1]) does not fit input [8, 8] with padding "
                "[0, 0]"));
  msg = error_of<ValueError>([&] { conv2d(x, zeros({4, 1, 3, 3}), zeros({4}), {1}, {0}, {1}, 2); });
  EXPECT_THAT(
      msg,
      HasSubstr("conv2d: 3 input channels and 4 output channels must both divide into 2 groups"));
  msg = error_of<ValueError>([&] { conv2d(x, zeros({4, 3, 3, 3}), zeros({4}), {0}); });
  EXPECT_THAT(msg, HasSubstr("conv2d: stride is [0], expected values >= 1"));
  msg = error_of<ValueError>([&] { conv2d(x, zeros({4, 3, 3, 3}), zeros({4}), {1, 1, 1}); });
  EXPECT_THAT(msg,
              HasSubstr("conv2d: stride has 3 values [1, 1, 1], expected 1 or 2 (height, width)"));
  msg = error_of<TypeError>([&] { conv2d(x, zeros({4, 3, 3, 3}, DType::kFloat64), zeros({4})); });
  EXPECT_THAT(
      msg, HasSubstr("conv2d: operands have dtypes float32, float64, float32, expected one dtype"));
  msg = error_of<ShapeError>([&] {
    conv2d_backward_data(zeros({2, 4, 5, 5}), zeros({4, 3, 3, 3}), {8, 8});
  });
  EXPECT_THAT(msg, HasSubstr("conv2d_backward_data: dy has shape [2, 4, 5, 5], but input [2, 3, 8, "
                             "8] convolved with weight [4, 3, 3, 3] gives [2, 4, 6, 6]"));
  msg = error_of<ShapeError>([&] {
    conv2d_pooled(zeros({1, 3, 1, 4}), zeros({4, 3, 3, 3}), zeros({4}), "");
  });
  EXPECT_THAT(msg, HasSubstr("conv2d: avg_pool_2x2 needs a result of at least 2x2, got 1x4 (input "
                             "[1, 3, 1, 4], weight [4, 3, 3, 3])"));
  msg = error_of<ValueError>([&] {
    ops::invoke(ops::get_op("conv1d"), {zeros({1, 3, 8}), zeros({4, 3, 3}), zeros({4})},
                {std::vector<int64_t>{1}, std::vector<int64_t>{0}, std::vector<int64_t>{1},
                 int64_t{1}, std::string(), true});
  });
  EXPECT_THAT(msg, HasSubstr("conv1d: avg_pool_2x2 pools height and width, expected conv2d (2 "
                             "spatial axes)"));
}

TEST(OpPool, MaxAndAveragePoolSmallExample) {
  const NDArray x =
      from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, {1, 1, 4, 4});
  EXPECT_EQ(to_vector<float>(max_pool2d(x, {2})), (std::vector<float>{6, 8, 14, 16}));
  EXPECT_EQ(to_vector<float>(avg_pool2d(x, {2})), (std::vector<float>{3.5f, 5.5f, 11.5f, 13.5f}));
  // 3x3 windows with padding 1 and stride 2: the corner window holds 4 taps of 9.
  EXPECT_FLOAT_EQ(to_vector<float>(avg_pool2d(x, {3}, {2}, {1}))[0], (1 + 2 + 5 + 6) / 9.0f);
  EXPECT_FLOAT_EQ(to_vector<float>(avg_pool2d(x, {3}, {2}, {1}, false))[0], (1 + 2 + 5 + 6) / 4.0f);
}

// ceil_mode (MXNet's pooling_convention 'full'), as MXNet 1.9.1 computes it (checked against
// mx.nd.Pooling): a last window that runs past the padding is clipped there, and counts the
// padding inside it when count_include_pad; a window that starts past the input is empty: max
// pooling gives the lowest float, average pooling 0, and no gradient flows from it.
TEST(OpPool, CeilModeClipsWindowsAtThePaddingAndKeepsEmptyOnes) {
  const NDArray x =
      from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, {1, 1, 4, 4});
  // 3x3, stride 2, padding 1: 3x3 outputs (2x2 without ceil_mode); the last row and column of
  // windows cover input row/column 3 and one row/column of padding, not two.
  EXPECT_EQ(max_pool2d(x, {3}, {2}, {1}, true).shape(), (Shape{1, 1, 3, 3}));
  EXPECT_EQ(to_vector<float>(max_pool2d(x, {3}, {2}, {1}, true))[8], 16.0f);
  const std::vector<float> counted = to_vector<float>(avg_pool2d(x, {3}, {2}, {1}, true, true));
  EXPECT_FLOAT_EQ(counted[8], 16 / 4.0f);
  EXPECT_FLOAT_EQ(counted[2], (4 + 8) / 6.0f);  // rows -1..1, columns 3..4
  const std::vector<float> taps = to_vector<float>(avg_pool2d(x, {3}, {2}, {1}, false, true));
  EXPECT_FLOAT_EQ(taps[8], 16.0f);
  EXPECT_FLOAT_EQ(taps[2], (4 + 8) / 2.0f);

  // 1x1 windows with stride 3 over 5x5: the third window of each row and column starts at 6.
  std::vector<float> v(25);
  std::iota(v.begin(), v.end(), 1.0f);
  const NDArray x5 = from_vector<float>(v, {1, 1, 5, 5});
  const float lo = std::numeric_limits<float>::lowest();
  EXPECT_EQ(to_vector<float>(max_pool2d(x5, {1}, {3}, {0}, true)),
            (std::vector<float>{1, 4, lo, 16, 19, lo, lo, lo, lo}));
  for (bool count_pad : {true, false}) {
    EXPECT_EQ(to_vector<float>(avg_pool2d(x5, {1}, {3}, {0}, count_pad, true)),
              (std::vector<float>{1, 4, 0, 16, 19, 0, 0, 0, 0}));
  }
  const NDArray dy = ones({1, 1, 3, 3});
  std::vector<float> want(25, 0.0f);
  for (int i : {0, 3, 15, 18}) want[static_cast<size_t>(i)] = 1;
  EXPECT_EQ(to_vector<float>(max_pool2d_backward(x5, dy, {1}, {3}, {0}, true)), want);
  EXPECT_EQ(to_vector<float>(avg_pool2d_backward(dy, {5, 5}, {1}, {3}, {0}, false, true)), want);
}

// The 2x2, stride-2 backward (a branch-free loop of its own) against the rule every max pooling
// follows: dy goes to the first maximum of its window, row by row, where a tap wins only when
// strictly greater (ties and NaNs keep the earlier tap), and 0 everywhere else (the last row and
// column of an odd input too). Values from {0, 1, 2} make ties common; NaNs sit at every tap.
TEST(OpPool, MaxPool2x2BackwardSendsTheGradientToTheFirstMaximum) {
  const float nan = std::nanf("");
  // Rows of 3 and 4 windows, and of 11, 16 and 18 (the float32 AVX-512 loop takes 16 windows at
  // a time, the last group of a row masked).
  for (const Shape& shape : {Shape{2, 3, 6, 8}, Shape{1, 2, 5, 7}, Shape{2, 1, 3, 23},
                             Shape{1, 1, 2, 32}, Shape{1, 2, 4, 36}}) {
    const int64_t planes = shape[0] * shape[1], h = shape[2], w = shape[3];
    const int64_t oh = h / 2, ow = w / 2;
    std::vector<float> xs(static_cast<size_t>(planes * h * w)), dys;
    std::mt19937 rng(7);
    for (float& x : xs) x = rng() % 17 == 0 ? nan : static_cast<float>(rng() % 3);
    for (int64_t i = 0; i < planes * oh * ow; ++i) dys.push_back(i % 2 ? -0.0f : 1.0f + i);
    const NDArray dx = max_pool2d_backward(
        from_vector<float>(xs, shape), from_vector<float>(dys, {shape[0], shape[1], oh, ow}), {2});
    std::vector<float> want(xs.size(), 0.0f);
    for (int64_t p = 0; p < planes; ++p) {
      for (int64_t oy = 0; oy < oh; ++oy) {
        for (int64_t ox = 0; ox < ow; ++ox) {
          int64_t arg = (p * h + 2 * oy) * w + 2 * ox;
          for (int64_t t = 1; t < 4; ++t) {
            const int64_t i = (p * h + 2 * oy + t / 2) * w + 2 * ox + t % 2;
            if (xs[static_cast<size_t>(i)] > xs[static_cast<size_t>(arg)]) arg = i;
          }
          want[static_cast<size_t>(arg)] = 0.0f + dys[static_cast<size_t>((p * oh + oy) * ow + ox)];
        }
      }
    }
    const std::vector<float> got = to_vector<float>(dx);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i], want[i]) << "element " << i << " of " << fmt::format("{}", shape);
      EXPECT_FALSE(std::signbit(got[i])) << "element " << i << " of " << fmt::format("{}", shape);
    }
  }
}

// The 2x2, stride-2 average pooling (vectorized loops of their own) against the rule: each
// output is ((0 + a) + b + c + d) / 4 over its window row by row, bit for bit (NaN and the
// infinities included); backward gives each tap of a window 0 + dy / 4 (so -0.0 becomes +0.0)
// and 0 to the last row and column of an odd input. Rows of 3, 7 and 19 windows cover the
// vector bodies and their remainders.
TEST(OpPool, AvgPool2x2MatchesTheRuleBitForBit) {
  const float nan = std::nanf(""), inf = INFINITY;
  for (const Shape& shape : {Shape{2, 3, 6, 6}, Shape{1, 2, 5, 15}, Shape{1, 1, 4, 38}}) {
    const int64_t planes = shape[0] * shape[1], h = shape[2], w = shape[3];
    const int64_t oh = h / 2, ow = w / 2;
    std::vector<float> xs(static_cast<size_t>(planes * h * w)), dys;
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> value(-3, 3);
    for (float& x : xs) {
      const uint32_t k = rng() % 40;
      x = k == 0 ? nan : (k == 1 ? inf : (k == 2 ? -inf : value(rng)));
    }
    for (int64_t i = 0; i < planes * oh * ow; ++i) dys.push_back(i % 3 ? value(rng) : -0.0f);
    const Shape dy_shape{shape[0], shape[1], oh, ow};
    const std::vector<float> y = to_vector<float>(avg_pool2d(from_vector<float>(xs, shape), {2}));
    const std::vector<float> dx =
        to_vector<float>(avg_pool2d_backward(from_vector<float>(dys, dy_shape), {h, w}, {2}));
    std::vector<float> want_dx(xs.size(), 0.0f);
    ASSERT_EQ(y.size(), dys.size());
    for (int64_t p = 0; p < planes; ++p) {
      for (int64_t oy = 0; oy < oh; ++oy) {
        for (int64_t ox = 0; ox < ow; ++ox) {
          const auto at = [&](int64_t t) {
            return static_cast<size_t>((p * h + 2 * oy + t / 2) * w + 2 * ox + t % 2);
          };
          const size_t o = static_cast<size_t>((p * oh + oy) * ow + ox);
          const float want = (((0.0f + xs[at(0)]) + xs[at(1)]) + xs[at(2)] + xs[at(3)]) / 4;
          if (std::isnan(want)) {
            EXPECT_TRUE(std::isnan(y[o])) << "output " << o << " of " << fmt::format("{}", shape);
          } else {
            EXPECT_EQ(y[o], want) << "output " << o << " of " << fmt::format("{}", shape);
          }
          for (int64_t t = 0; t < 4; ++t) want_dx[at(t)] = 0.0f + dys[o] / 4;
        }
      }
    }
    for (size_t i = 0; i < dx.size(); ++i) {
      EXPECT_EQ(dx[i], want_dx[i]) << "element " << i << " of " << fmt::format("{}", shape);
      EXPECT_EQ(std::signbit(dx[i]), std::signbit(want_dx[i]))
          << "element " << i << " of " << fmt::format("{}", shape);
    }
  }
}

// Unpadded windows of any size and stride (a loop adding one tap of every window at a time)
// sum each window row by row from 0, as the generic loop does: the same bits, NaN included.
// Rows of 8 to 21 windows: vector bodies and remainders.
TEST(OpPool, AvgPoolUnpaddedMatchesTheRuleBitForBit) {
  struct Case {
    Shape shape;
    int64_t kh, kw, sh, sw;
  };
  const Case cases[] = {{{2, 2, 7, 23}, 3, 3, 1, 1},
                        {{1, 3, 9, 30}, 3, 2, 2, 3},
                        {{1, 1, 5, 17}, 2, 2, 1, 1},
                        {{1, 1, 4, 44}, 1, 4, 3, 2}};
  for (const Case& c : cases) {
    const int64_t planes = c.shape[0] * c.shape[1], h = c.shape[2], w = c.shape[3];
    const int64_t oh = (h - c.kh) / c.sh + 1, ow = (w - c.kw) / c.sw + 1;
    std::vector<float> xs(static_cast<size_t>(planes * h * w));
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> value(-3, 3);
    for (float& x : xs) x = rng() % 50 == 0 ? std::nanf("") : value(rng);
    const std::vector<float> y =
        to_vector<float>(avg_pool2d(from_vector<float>(xs, c.shape), {c.kh, c.kw}, {c.sh, c.sw}));
    ASSERT_EQ(y.size(), static_cast<size_t>(planes * oh * ow));
    for (int64_t p = 0; p < planes; ++p) {
      for (int64_t oy = 0; oy < oh; ++oy) {
        for (int64_t ox = 0; ox < ow; ++ox) {
          float total = 0;
          for (int64_t ky = 0; ky < c.kh; ++ky) {
            for (int64_t kx = 0; kx < c.kw; ++kx)
              total += xs[static_cast<size_t>((p * h + oy * c.sh + ky) * w + ox * c.sw + kx)];
          }
          const float want = total / static_cast<float>(c.kh * c.kw);
          const float got = y[static_cast<size_t>((p * oh + oy) * ow + ox)];
          const std::string where = fmt::format("window ({}, {}) of plane {} of {}, kernel {}x{}",
                                                oy, ox, p, c.shape, c.kh, c.kw);
          if (std::isnan(want)) {
            EXPECT_TRUE(std::isnan(got)) << where;
          } else {
            EXPECT_EQ(got, want) << where;
          }
        }
      }
    }
  }
}

TEST(OpPool, BadInputsNameTheProblem) {
  std::string msg = error_of<ValueError>([] { max_pool2d(zeros({1, 1, 4, 4}), {2}, {}, {2}); });
  EXPECT_THAT(msg, HasSubstr("max_pool2d: padding [2, 2] is more than half the kernel [2, 2]"));
  msg = error_of<ShapeError>([] { avg_pool2d(zeros({4, 4}), {2}); });
  EXPECT_THAT(msg, HasSubstr("avg_pool2d: input has shape [4, 4], expected 4 dimensions"));
  msg = error_of<ShapeError>([] { max_pool2d(zeros({1, 1, 2, 2}), {3}); });
  EXPECT_THAT(msg, HasSubstr("max_pool2d: window 3x3 does not fit input 2x2 with padding 0x0"));
  msg = error_of<TypeError>([] { max_pool2d(zeros({1, 1, 2, 2}, DType::kInt32), {2}); });
  EXPECT_THAT(msg,
              HasSubstr("max_pool2d: dtype int32 is not supported, expected float32 or float64"));
}

TEST(OpBatchNorm, TrainingUpdatesRunningStatisticsInPlace) {
  // One channel of values 1, 2, 3, 4 (mean 2.5, biased variance 1.25, which the running
  // variance follows as in MXNet; the unbiased one would be 5/3), and a second of constants.
  const NDArray x = from_vector<double>({1, 7, 2, 7, 3, 7, 4, 7}, {4, 2});
  const NDArray gamma = ones({2}, DType::kFloat64), beta = zeros({2}, DType::kFloat64);
  const NDArray rm = zeros({2}, DType::kFloat64), rv = ones({2}, DType::kFloat64);
  const std::vector<double> y =
      to_vector<double>(batch_norm(x, gamma, beta, rm, rv, true, 0.9, 1e-12));
  EXPECT_NEAR(y[0], (1 - 2.5) / std::sqrt(1.25), 1e-9);
  EXPECT_NEAR(y[1], 0.0, 1e-9);  // a constant channel: eps keeps it finite
  const std::vector<double> mean = to_vector<double>(rm), var = to_vector<double>(rv);
  EXPECT_NEAR(mean[0], 0.1 * 2.5, 1e-12);
  EXPECT_NEAR(mean[1], 0.1 * 7, 1e-12);
  EXPECT_NEAR(var[0], 0.9 + 0.1 * 1.25, 1e-12);
  EXPECT_NEAR(var[1], 0.9, 1e-12);
  // Inference uses (and leaves) the running statistics.
  const std::vector<double> yi =
      to_vector<double>(batch_norm(x, gamma, beta, rm, rv, false, 0.9, 1e-12));
  EXPECT_NEAR(yi[0], (1 - mean[0]) / std::sqrt(var[0]), 1e-9);
  EXPECT_EQ(to_vector<double>(rm), mean);
}

TEST(OpBatchNorm, BackwardUnderRecordLeavesRunningStatisticsWithoutGradient) {
  NDArray x = from_vector<float>({1, 2, 3, 4, 5, 6, 7, 9}, {4, 2});
  NDArray gamma = ones({2}), beta = zeros({2});
  const NDArray rm = zeros({2}), rv = ones({2});
  autograd::attach_grad(x);
  autograd::attach_grad(gamma);
  autograd::attach_grad(beta);
  NDArray loss;
  {
    autograd::RecordScope record(true);
    loss = sum(mul(batch_norm(x, gamma, beta, rm, rv, true), x));
  }
  autograd::backward({loss});
  EXPECT_EQ(to_vector<float>(autograd::grad(beta)),
            (std::vector<float>{16, 21}));  // column sums of x
  EXPECT_FALSE(autograd::requires_grad(rm));
  EXPECT_NE(to_vector<float>(rm)[0], 0.0f);
}

TEST(OpBatchNorm, BadInputsNameTheProblem) {
  const NDArray x = zeros({4, 3}), c3 = zeros({3});
  std::string msg = error_of<ShapeError>([&] { batch_norm(x, zeros({2}), c3, c3, c3, true); });
  EXPECT_THAT(
      msg,
      HasSubstr("batch_norm: gamma has shape [2], expected [3] (the channels of input [4, 3])"));
  msg = error_of<ValueError>([&] { batch_norm(zeros({1, 3}), c3, c3, c3, c3, true); });
  EXPECT_THAT(
      msg,
      HasSubstr(
          "batch_norm: input [1, 3] has 1 value(s) per channel, expected more than 1 in training"));
  msg = error_of<IndexError>([&] { batch_norm(x, c3, c3, c3, c3, false, 0.9, 1e-5, 2); });
  EXPECT_THAT(msg,
              HasSubstr("batch_norm: axis 2 is out of range for input [4, 3] with 2 dimensions"));
  msg = error_of<ValueError>([&] { batch_norm(x, c3, c3, c3, c3, true, 1.5); });
  EXPECT_THAT(msg, HasSubstr("batch_norm: momentum is 1.5, expected a value in [0, 1]"));
}

}  // namespace
}  // namespace janus

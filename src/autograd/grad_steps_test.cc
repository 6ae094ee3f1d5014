// Tests of backward's steps (grad_steps.h): LeNet's layers, recorded with their relu as
// a post-op, get the bits of the same layers recorded with a separate relu call (whose rules
// run the unfused operators); backward calls the fused operators
// instead of the unfused ones; and it leaves a convolution whose output has another reader alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "janus/autograd/autograd.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"
#include "janus/ops/registry.h"
#include "janus/ops/shape.h"
#include "janus/ops/unary.h"

namespace janus::autograd {
namespace {

using Ints = std::vector<int64_t>;

// Values in [-1, 1], half of them 0 when `zeros`: a convolution gives exact zeros on empty
// patches, the relu edge case, and its pooling windows ties.
NDArray sample(const Shape& shape, std::mt19937& rng, bool zeros) {
  std::vector<float> v(static_cast<size_t>(shape.numel()));
  for (float& x : v) {
    const float r = static_cast<float>(static_cast<int>(rng() % 2001) - 1000) / 1000;
    x = zeros && rng() % 2 == 0 ? 0.0f : r;
  }
  return from_vector<float>(v, shape);
}

std::vector<uint32_t> bits(const NDArray& a) {
  std::vector<uint32_t> b;
  for (float v : to_vector<float>(a)) b.push_back(std::bit_cast<uint32_t>(v));
  return b;
}

// The operators that this thread invokes while the scope lives, and the memory of their outputs.
class OpNames final : public ops::InvokeObserver {
 public:
  OpNames() : scope_(this) {}
  void on_invoke(const ops::OpDef& op, std::span<const NDArray>, const ops::Attrs&,
                 std::span<const NDArray> outputs) override {
    names.emplace_back(op.name);
    for (const NDArray& y : outputs) written.insert(y.storage().get());
  }
  size_t count(std::string_view name) const { return std::count(names.begin(), names.end(), name); }
  std::vector<std::string> names;
  std::set<const Storage*> written;

 private:
  ops::ScopedInvokeObserver scope_;
};

// conv2d with its relu as the call's post-op (`fused`) or as a relu call after it.
NDArray conv_relu(const NDArray& x, const NDArray& w, const NDArray& b, Ints padding, bool fused) {
  static const ops::OpDef& conv = ops::get_op("conv2d");
  const NDArray y = ops::invoke(
      conv, {x, w, b},
      {Ints{1}, std::move(padding), Ints{1}, int64_t{1}, std::string(fused ? "relu" : "")})[0];
  return fused ? y : relu(y);
}

NDArray dense(const NDArray& x, const NDArray& w, const NDArray& b, bool relu_after, bool fused) {
  static const ops::OpDef& fc = ops::get_op("fully_connected");
  const bool post_op = relu_after && fused;
  const NDArray y = ops::invoke(fc, {x, w, b}, {std::string(post_op ? "relu" : "")})[0];
  return relu_after && !post_op ? relu(y) : y;
}

// LeNet (training/models.cc, narrower dense layers) on fixed data, its loss summed, and the
// parameters' gradients after backward. `other_reader`: the first convolution's output is also
// summed into the loss, so the pooling's gradient is not all of it.
// `passes` forward and backward passes, the gradients stored by `req`.
std::vector<NDArray> lenet_grads(bool fused, bool other_reader, GradReq req = GradReq::kWrite,
                                 int passes = 1) {
  std::mt19937 rng(11);
  const NDArray x = sample({3, 1, 28, 28}, rng, /*zeros=*/true);
  std::vector<NDArray> p;
  for (const Shape& s : std::vector<Shape>{
           {6, 1, 5, 5}, {6}, {16, 6, 5, 5}, {16}, {12, 400}, {12}, {10, 12}, {10}}) {
    p.push_back(sample(s, rng, /*zeros=*/s.ndim() == 1));
    attach_grad(p.back(), req);
  }
  for (int pass = 0; pass < passes; ++pass) {
    NDArray loss;
    {
      RecordScope record;
      const NDArray c1 = conv_relu(x, p[0], p[1], Ints{2}, fused);
      NDArray h = max_pool2d(c1, Ints{2});
      h = max_pool2d(conv_relu(h, p[2], p[3], Ints{0}, fused), Ints{2});
      h = dense(flatten(h), p[4], p[5], /*relu_after=*/true, fused);
      h = dense(h, p[6], p[7], /*relu_after=*/false, fused);
      loss = other_reader ? sum(h) + sum(c1) : sum(h);
    }
    backward(loss);
  }
  std::vector<NDArray> grads;
  for (const NDArray& a : p) grads.push_back(grad(a));
  // Finished here, so that no test leaves a pass in flight to the process's exit (a
  // primitive's first run on the worker's threads can still race oneDNN's exit: onednn.h).
  wait_all();
  return grads;
}

TEST(GradSteps, LeNetGetsTheBitsOfTheUnfusedRules) {
  for (const bool other_reader : {false, true}) {
    SCOPED_TRACE(other_reader ? "the convolution has another reader" : "LeNet");
    const std::vector<NDArray> fused = lenet_grads(true, other_reader);
    const std::vector<NDArray> unfused = lenet_grads(false, other_reader);
    for (size_t i = 0; i < fused.size(); ++i) EXPECT_EQ(bits(fused[i]), bits(unfused[i])) << i;
    // Not a dead network: the first convolution's weights get a gradient.
    const std::vector<float> g = to_vector<float>(unfused[0]);
    EXPECT_TRUE(std::any_of(g.begin(), g.end(), [](float v) { return v != 0; }));
  }
}

TEST(GradSteps, BackwardCallsTheFusedOperators) {
  OpNames calls;
  lenet_grads(/*fused=*/true, /*other_reader=*/false);
  EXPECT_EQ(calls.count("max_pool2d_relu_backward"), 2u);
  EXPECT_EQ(calls.count("relu_backward_bias"), 1u);
  for (const char* gone : {"max_pool2d_backward", "relu_backward", "conv2d_backward_bias"}) {
    EXPECT_EQ(calls.count(gone), 0u) << gone;
  }
  // The first convolution's output read elsewhere too: its pooling's gradient stays apart.
  OpNames apart;
  lenet_grads(/*fused=*/true, /*other_reader=*/true);
  EXPECT_EQ(apart.count("max_pool2d_relu_backward"), 1u);
  EXPECT_EQ(apart.count("max_pool2d_backward"), 1u);
  EXPECT_EQ(apart.count("conv2d_backward_bias"), 1u);
}

// A convolution that pools its relu's result in its call (avg_pool_2x2) has that pooling
// between the relu and a max pooling after it: no fused step applies, and the gradients are
// those of the separate conv2d, relu, avg_pool2d and max_pool2d calls.
TEST(GradSteps, AConvolutionThatPoolsInItsCallIsNotFused) {
  static const ops::OpDef& conv = ops::get_op("conv2d");
  std::mt19937 rng(5);
  const NDArray x = sample({2, 1, 12, 12}, rng, /*zeros=*/true);
  auto grads = [&](bool in_call) {
    NDArray w = sample({3, 1, 3, 3}, rng, false), b = sample({3}, rng, true);
    attach_grad(w);
    attach_grad(b);
    OpNames calls;
    {
      RecordScope record;
      NDArray y;
      if (in_call) {
        y = ops::invoke(conv, {x, w, b},
                        {Ints{1}, Ints{1}, Ints{1}, int64_t{1}, std::string("relu"), true})[0];
      } else {
        y = avg_pool2d(relu(conv2d(x, w, b, {1}, {1})), {2}, {2});
      }
      backward(sum(max_pool2d(y, Ints{2})));
    }
    EXPECT_EQ(calls.count("max_pool2d_relu_backward"), 0u);
    return std::vector<NDArray>{grad(w), grad(b)};
  };
  rng.seed(5);
  sample({2, 1, 12, 12}, rng, true);
  const std::vector<NDArray> fused = grads(true);
  rng.seed(5);
  sample({2, 1, 12, 12}, rng, true);
  const std::vector<NDArray> apart = grads(false);
  for (size_t i = 0; i < fused.size(); ++i) {
    const std::vector<float> f = to_vector<float>(fused[i]), a = to_vector<float>(apart[i]);
    ASSERT_EQ(f.size(), a.size());
    for (size_t k = 0; k < f.size(); ++k) EXPECT_NEAR(f[k], a[k], 1e-5f) << i << " " << k;
  }
}

// Each parameter's gradient is written where it goes by the call that computes it (no copy),
// fused or not.
TEST(GradSteps, EachGradientIsWrittenIntoItsBuffer) {
  for (const bool fused : {true, false}) {
    OpNames calls;
    const std::vector<NDArray> grads = lenet_grads(fused, /*other_reader=*/false);
    for (size_t i = 0; i < grads.size(); ++i) {
      EXPECT_TRUE(calls.written.contains(grads[i].storage().get()))
          << "fused " << fused << " " << i;
    }
  }
}

// Written into the buffer, the gradient still overwrites it on every backward (kWrite), and
// kAdd buffers still accumulate.
TEST(GradSteps, WriteOverwritesAndAddAccumulates) {
  const std::vector<NDArray> once = lenet_grads(true, false);
  const std::vector<NDArray> written_twice = lenet_grads(true, false, GradReq::kWrite, 2);
  const std::vector<NDArray> added_twice = lenet_grads(true, false, GradReq::kAdd, 2);
  for (size_t i = 0; i < once.size(); ++i) {
    EXPECT_EQ(bits(written_twice[i]), bits(once[i])) << i;
    EXPECT_EQ(bits(added_twice[i]), bits(once[i] * 2.0)) << i;  // g + g, exactly
  }
}

// y = W (W x + b) + b: W's and b's gradients are the sums of two contributions, as with two
// separate copies of them (the outer layer's gradient first).
TEST(GradSteps, AParameterUsedTwiceGetsTheSumOfItsGradients) {
  std::mt19937 rng(3);
  const NDArray x = sample({4, 5}, rng, false), w = sample({5, 5}, rng, false);
  const NDArray b = sample({5}, rng, false);
  auto grads = [&](bool shared) {
    std::vector<NDArray> p = {w * 1.0, b * 1.0, w * 1.0, b * 1.0};
    for (const NDArray& a : p) attach_grad(a);
    NDArray loss;
    {
      RecordScope record;
      const NDArray inner = dense(x, p[0], p[1], /*relu_after=*/true, /*fused=*/true);
      loss =
          sum(shared ? dense(inner, p[0], p[1], true, true) : dense(inner, p[2], p[3], true, true));
    }
    backward(loss);
    return shared ? std::vector<NDArray>{grad(p[0]), grad(p[1])}
                  : std::vector<NDArray>{grad(p[2]) + grad(p[0]), grad(p[3]) + grad(p[1])};
  };
  const std::vector<NDArray> shared = grads(true), apart = grads(false);
  EXPECT_EQ(bits(shared[0]), bits(apart[0]));
  EXPECT_EQ(bits(shared[1]), bits(apart[1]));
}

// A gradient buffer that a recorded call reads (v * grad(w)): backward's rules read its old
// value, and w's gradient arrives after them.
TEST(GradSteps, ABufferThatTheTapeReadsIsWrittenAfterTheRules) {
  std::mt19937 rng(5);
  const NDArray x1 = sample({4, 5}, rng, false), x2 = sample({4, 5}, rng, false);
  const NDArray w = sample({3, 5}, rng, false), b = sample({3}, rng, false);
  const NDArray v = sample({3, 5}, rng, false);
  for (const NDArray& a : {w, b, v}) attach_grad(a);
  auto pass = [&](const NDArray& x) {
    NDArray loss;
    {
      RecordScope record;
      // In this order backward reaches the dense layer before the product.
      loss = sum(v * grad(w)) + sum(dense(x, w, b, /*relu_after=*/true, /*fused=*/true));
    }
    backward(loss);
  };
  pass(x1);
  const std::vector<float> first = to_vector<float>(grad(w));
  pass(x2);  // v's gradient is the buffer as it was: w's gradient of the first pass
  EXPECT_EQ(to_vector<float>(grad(v)), first);
  EXPECT_NE(to_vector<float>(grad(w)), first);  // another input, another gradient
}

}  // namespace
}  // namespace janus::autograd

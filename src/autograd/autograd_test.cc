// Autograd: recording, backward through broadcasting and matrix products (checked against
// finite differences), gradient requests, retain_graph, and the error messages.
#include "janus/autograd/autograd.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "janus/engine/array.h"
#include "janus/ops/ops.h"
#include "janus/ops/registry.h"
#include "janus/ops/transfer.h"

namespace janus::ops {
namespace {
std::vector<TensorSpec> infer_same_as_input_for_test(const InferArgs& args) {
  return {args.inputs[0]};
}
// A test-only operator whose gradient is undefined (argmax-like).
void no_grad_cpu(const KernelArgs& args) {
  std::fill_n(args.out(0).data<double>(), args.out(0).size(), 0.0);
}
JANUS_DEFINE_OP({
    .name = "test_not_differentiable",
    .doc = "Test-only: an operator without a gradient.",
    .inputs = {"x"},
    .outputs = {"y"},
    .infer = infer_same_as_input_for_test,
    .kernels = {{DeviceType::kCPU, no_grad_cpu}},
    .not_differentiable = true,
});
}  // namespace
}  // namespace janus::ops

namespace janus::autograd {
namespace {

using testing::HasSubstr;

NDArray vec(std::vector<double> v, Shape s) { return from_vector<double>(v, s); }

std::vector<double> values(const NDArray& a) { return to_vector<double>(a); }

// Central differences of f (a scalar function) with respect to every element of inputs[k].
std::vector<double> numeric_grad(const std::function<NDArray(std::vector<NDArray>)>& f,
                                 std::vector<std::vector<double>> data, std::vector<Shape> shapes,
                                 size_t k) {
  constexpr double kEps = 1e-6;
  std::vector<double> g(data[k].size());
  for (size_t i = 0; i < g.size(); ++i) {
    auto eval = [&](double delta) {
      auto d = data;
      d[k][i] += delta;
      std::vector<NDArray> xs;
      for (size_t j = 0; j < d.size(); ++j) xs.push_back(vec(d[j], shapes[j]));
      return item<double>(f(xs));
    };
    g[i] = (eval(kEps) - eval(-kEps)) / (2 * kEps);
  }
  return g;
}

void expect_grads_match(const std::function<NDArray(std::vector<NDArray>)>& f,
                        std::vector<Shape> shapes, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<std::vector<double>> data;
  std::vector<NDArray> xs;
  for (const Shape& s : shapes) {
    std::vector<double> d(static_cast<size_t>(s.numel()));
    for (double& v : d) v = dist(rng);
    data.push_back(d);
    xs.push_back(vec(d, s));
    attach_grad(xs.back());
  }
  NDArray loss;
  {
    RecordScope record;
    loss = f(xs);
  }
  backward(loss);
  for (size_t k = 0; k < xs.size(); ++k) {
    const auto expected = numeric_grad(f, data, shapes, k);
    const auto got = values(grad(xs[k]));
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], expected[i], 1e-6) << "input " << k << " element " << i;
    }
  }
}

TEST(Autograd, SquareSum) {
  NDArray x = vec({1, -2, 3}, {3});
  attach_grad(x);
  NDArray y;
  {
    RecordScope record;
    y = sum(x * x);
  }
  backward(y);
  EXPECT_EQ(values(grad(x)), (std::vector<double>{2, -4, 6}));
}

TEST(Autograd, BroadcastingSumsGradientsBack) {
  expect_grads_match([](std::vector<NDArray> x) { return sum((x[0] + x[1]) * x[1]); },
                     {{2, 3}, {3}}, 1);
  expect_grads_match([](std::vector<NDArray> x) { return sum(x[0] * x[1] + 2.0); },
                     {{4, 1}, {1, 5}}, 2);
  expect_grads_match([](std::vector<NDArray> x) { return sum(x[0] * 3.0, {0}); }, {{1}}, 3);
}

TEST(Autograd, MatrixProductInEveryLayout) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const Shape a = ta ? Shape{4, 3} : Shape{3, 4};
      const Shape b = tb ? Shape{2, 4} : Shape{4, 2};
      expect_grads_match(
          [&](std::vector<NDArray> x) { return sum(dot(x[0], x[1], ta, tb) * x[2]); },
          {a, b, {3, 2}}, 10 + 2 * ta + tb);
    }
  }
}

TEST(Autograd, SumOverAxesAndReshape) {
  expect_grads_match(
      [](std::vector<NDArray> x) { return sum(reshape(sum(x[0], {1}, true), {-1}) * x[1]); },
      {{2, 3, 4}, {8}}, 4);
}

TEST(Autograd, GradReqAddAccumulatesAndWriteOverwrites) {
  NDArray a = vec({1, 2}, {2});
  NDArray w = vec({1, 2}, {2});
  attach_grad(a, GradReq::kAdd);
  attach_grad(w, GradReq::kWrite);
  for (int i = 0; i < 2; ++i) {
    NDArray y;
    {
      RecordScope record;
      y = sum(a * w);
    }
    backward(y);
  }
  EXPECT_EQ(values(grad(a)), (std::vector<double>{2, 4}));  // w added twice
  EXPECT_EQ(values(grad(w)), (std::vector<double>{1, 2}));  // a written once, then again
}

// A recorded function that writes its input's gradient into the buffer backward overwrites
// (what a hybridized block's compiled backward does): backward copies nothing more into it,
// and still adds another contribution to it.
TEST(Autograd, AFunctionMayWriteTheGradientIntoItsBuffer) {
  for (const bool other_use : {false, true}) {
    NDArray w = vec({1, 2}, {2});
    attach_grad(w, GradReq::kWrite);
    const NDArray buffer = overwritten_grad(w);
    ASSERT_TRUE(buffer.defined());
    EXPECT_TRUE(buffer.is_same(grad(w)));
    NDArray y = w * 1.0;  // the function's output (recorded by record_function below)
    NDArray total;
    {
      RecordScope record;
      NDArray inputs[] = {w};
      NDArray outputs[] = {y};
      record_function("times three", inputs, outputs, [buffer](const ops::GradArgs& ga) {
        copy_into(buffer, ga.dy(0) * 3.0);  // dy * 3, written where the gradient goes
        return std::vector<NDArray>{buffer};
      });
      total = other_use ? sum(y) + sum(w * w) : sum(y);
    }
    backward(total);
    EXPECT_EQ(values(grad(w)), other_use ? (std::vector<double>{5, 7})  // 3 + 2w
                                         : (std::vector<double>{3, 3}));
  }
  NDArray a = vec({1, 2}, {2});
  attach_grad(a, GradReq::kAdd);  // accumulates: nobody may overwrite it
  EXPECT_FALSE(overwritten_grad(a).defined());
  EXPECT_FALSE(overwritten_grad(vec({1, 2}, {2})).defined());
}

TEST(Autograd, HeadGradientsScaleTheResult) {
  NDArray x = vec({1, 2}, {2});
  attach_grad(x);
  NDArray y;
  {
    RecordScope record;
    y = x * 3.0;
  }
  NDArray hg = vec({10, 100}, {2});
  backward(std::span<const NDArray>(&y, 1), std::span<const NDArray>(&hg, 1));
  EXPECT_EQ(values(grad(x)), (std::vector<double>{30, 300}));
}

TEST(Autograd, RetainGraphAllowsASecondBackward) {
  NDArray x = vec({1, 2}, {2});
  attach_grad(x, GradReq::kAdd);
  NDArray y;
  {
    RecordScope record;
    y = sum(x * x);
  }
  backward(y, /*retain_graph=*/true);
  backward(y);
  EXPECT_EQ(values(grad(x)), (std::vector<double>{4, 8}));
  try {
    backward(y);
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_THAT(e.what(), HasSubstr("was freed by an earlier backward"));
    EXPECT_THAT(e.what(), HasSubstr("retain_graph=true"));
  }
}

TEST(Autograd, NothingRecordedIsAnError) {
  NDArray x = vec({1}, {1});
  attach_grad(x);
  NDArray y = x * 2.0;  // outside RecordScope
  try {
    backward(y);
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_THAT(e.what(), HasSubstr("head 0 (shape [1]) has no recorded history"));
  }
}

TEST(Autograd, NonDifferentiableOperatorIsNamed) {
  NDArray x = vec({1, 2}, {2});
  attach_grad(x);
  NDArray y;
  {
    RecordScope record;
    const ops::OpDef& op = ops::get_op("test_not_differentiable");
    y = sum(ops::invoke(op, {x * 2.0})[0]);
  }
  try {
    backward(y);
    FAIL();
  } catch (const NotImplementedError& e) {
    EXPECT_THAT(e.what(), HasSubstr("operator 'test_not_differentiable' is not differentiable"));
  }
}

TEST(Autograd, PauseAndDetachStopRecording) {
  NDArray x = vec({1, 2}, {2});
  attach_grad(x);
  NDArray y, z;
  {
    RecordScope record;
    EXPECT_TRUE(is_recording());
    EXPECT_TRUE(is_training());
    {
      PauseScope pause;
      EXPECT_FALSE(is_recording());
      z = x * 5.0;
    }
    y = sum(detach(x) * x);  // the detached factor is a constant
  }
  EXPECT_FALSE(is_recording());
  EXPECT_FALSE(requires_grad(z));
  backward(y);
  EXPECT_EQ(values(grad(x)), (std::vector<double>{1, 2}));
}

TEST(Autograd, GradErrors) {
  NDArray x = vec({1}, {1});
  try {
    grad(x);
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no gradient buffer; call autograd::attach_grad"));
  }
  try {
    attach_grad(from_vector<int32_t>({1}, {1}));
    FAIL();
  } catch (const TypeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("dtype int32 cannot have a gradient"));
  }
}

TEST(Autograd, BackwardIsAsynchronousLikeAnyOperator) {
  NDArray x = random_normal(0, 1, {256, 256});
  attach_grad(x);
  NDArray y;
  {
    RecordScope record;
    y = sum(dot(x, x));
  }
  backward(y);  // returns once the gradient operations are pushed
  wait_to_read(grad(x));
  EXPECT_EQ(grad(x).shape(), (Shape{256, 256}));
}

// Counts the products that backward issues.
class DotCounter : public ops::InvokeObserver {
 public:
  void on_invoke(const ops::OpDef& op, std::span<const NDArray>, const ops::Attrs&,
                 std::span<const NDArray>) override {
    dots += op.name == "dot" || op.name == "conv2d_backward_data" ? 1 : 0;
  }
  int dots = 0;
};

int products_in_backward(bool x_needs_grad) {
  NDArray x = random_normal(0, 1, {8, 1, 6, 6}), w = random_normal(0, 1, {3, 1, 3, 3});
  NDArray v = random_normal(0, 1, {3 * 4 * 4, 5}), b = zeros({3});
  attach_grad(w);
  attach_grad(v);
  if (x_needs_grad) attach_grad(x);
  NDArray loss;
  {
    RecordScope record;
    loss = sum(dot(reshape(conv2d(x, w, b), Shape{8, 48}), v));
  }
  DotCounter counter;
  {
    ops::ScopedInvokeObserver observe(&counter);
    backward(loss);
  }
  wait_all();  // no oneDNN kernel left running at process exit (see engine_test)
  return counter.dots;
}

// The data input of a first layer needs no gradient: backward does not compute one (the
// gradient rules see GradArgs::needs). Here: dot's gradient for its left operand is still needed
// (conv2d's output), conv2d's for x only when x asked for it.
TEST(Autograd, InputsThatNeedNoGradientGetNoGradientWork) {
  EXPECT_EQ(products_in_backward(false), 2);  // dot: both operands; conv2d: none for x
  EXPECT_EQ(products_in_backward(true), 3);   // and conv2d_backward_data for x
}

}  // namespace
}  // namespace janus::autograd

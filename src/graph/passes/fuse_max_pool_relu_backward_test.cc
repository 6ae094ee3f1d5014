// Tests of the pass fuse_max_pool_relu_backward: it rewrites LeNet's training graph, the fused
// graph computes the bits of the unfused one (NaN, 0 and -0 included), and it leaves the
// pooling's gradient alone where something else reads it or relu reads another array.
#include <gtest/gtest.h>

#include <bit>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "janus/graph/cached_op.h"
#include "janus/graph/gradient.h"
#include "janus/graph/passes.h"
#include "janus/graph/symbol.h"

#include "testing/test_util.h"

namespace janus::graph {
namespace {

using Ints = std::vector<int64_t>;

size_t count_op(const Graph& g, std::string_view name) {
  size_t n = 0;
  for (const NodePtr& node : g.nodes) n += !node->is_variable() && node->op->name == name;
  return n;
}

// Values with relu's edge cases: NaN, 0 and -0 (one in eight each), negatives and positives.
NDArray edgy(const Shape& shape, std::mt19937& rng) {
  std::vector<float> v(static_cast<size_t>(shape.numel()));
  for (float& x : v) {
    const uint32_t r = rng() % 8;
    x = r == 0   ? std::numeric_limits<float>::quiet_NaN()
        : r == 1 ? 0.0f
        : r == 2 ? -0.0f
                 : static_cast<float>(static_cast<int>(rng() % 2001) - 1000) / 250;
  }
  return from_vector<float>(v, shape);
}

void expect_same_bits(const NDArray& a, const NDArray& b, size_t output) {
  ASSERT_EQ(a.shape(), b.shape()) << "output " << output;
  std::vector<uint32_t> ba, bb;
  for (float v : to_vector<float>(a)) ba.push_back(std::bit_cast<uint32_t>(v));
  for (float v : to_vector<float>(b)) bb.push_back(std::bit_cast<uint32_t>(v));
  EXPECT_EQ(ba, bb) << "output " << output;
}

// Compiles `sym` (with the passes) and runs it, and runs its source graph call by call
// (run_imperative, no passes), on the same edgy arguments: the same bits.
void expect_fused_equals_unfused(const Symbol& sym, const std::vector<ops::TensorSpec>& specs) {
  std::mt19937 rng(7);
  std::vector<NDArray> args;
  for (const ops::TensorSpec& s : specs) args.push_back(edgy(s.shape, rng));
  CachedOp op(sym, specs);
  const std::vector<NDArray> fused = op(args), unfused = op.run_imperative(args);
  ASSERT_EQ(fused.size(), unfused.size());
  for (size_t i = 0; i < fused.size(); ++i) expect_same_bits(fused[i], unfused[i], i);
}

Graph passed(const Symbol& sym, const std::vector<ops::TensorSpec>& specs) {
  Graph g = sym.graph().clone();
  const std::vector<NodePtr> args = g.arguments();
  for (size_t i = 0; i < args.size(); ++i) args[i]->specs = {specs[i]};
  run_passes(g);
  return g;
}

ops::TensorSpec f32(Shape s) { return ops::TensorSpec{std::move(s), DType::kFloat32, cpu()}; }

// LeNet (training/models.cc, batch 3): conv(relu), pool, conv(relu), pool, dense.
TEST(FuseMaxPoolReluBackward, RewritesLeNetsTrainingGraphBitForBit) {
  const Symbol x = Symbol::var("x"), w1 = Symbol::var("w1"), b1 = Symbol::var("b1"),
               w2 = Symbol::var("w2"), b2 = Symbol::var("b2"), w3 = Symbol::var("w3"),
               b3 = Symbol::var("b3");
  Symbol h = Symbol::op("conv2d", {x, w1, b1},
                        {{"padding", Ints{2}}, {"activation", std::string("relu")}});
  h = Symbol::op("max_pool2d", {h}, {{"kernel_size", Ints{2}}});
  h = Symbol::op("conv2d", {h, w2, b2}, {{"activation", std::string("relu")}});
  h = Symbol::op("max_pool2d", {h}, {{"kernel_size", Ints{2}}});
  h = Symbol::op("fully_connected", {Symbol::op("flatten", {h}), w3, b3});
  const std::vector<ops::TensorSpec> specs = {
      f32({3, 1, 28, 28}), f32({6, 1, 5, 5}), f32({6}), f32({16, 6, 5, 5}),
      f32({16}),           f32({10, 400}),    f32({10})};
  const GradientGraphs gg = make_gradient_graphs(h, specs, {"w1", "b1", "w2", "b2", "w3", "b3"});
  // The backward graph's arguments: the inputs, the values forward saved, the head gradient.
  Graph fwd = gg.forward.graph().clone();
  const std::vector<NodePtr> fwd_args = fwd.arguments();
  for (size_t i = 0; i < fwd_args.size(); ++i) fwd_args[i]->specs = {specs[gg.forward_args[i]]};
  infer_specs(fwd);
  std::vector<ops::TensorSpec> bw_specs;
  for (const BackwardArg& a : gg.backward_args) {
    if (a.kind == BackwardArg::Kind::kInput) {
      bw_specs.push_back(specs[a.index]);
    } else {
      const NodeEntry& e =
          fwd.outputs[a.kind == BackwardArg::Kind::kSaved ? gg.num_outputs + a.index : a.index];
      bw_specs.push_back(e.node->specs.at(e.index));
    }
  }
  const Graph before = gg.backward.graph().clone();
  ASSERT_EQ(count_op(before, "max_pool2d_backward"), 2u);
  const Graph g = passed(gg.backward, bw_specs);
  EXPECT_EQ(count_op(g, "max_pool2d_relu_backward"), 2u);
  EXPECT_EQ(count_op(g, "max_pool2d_backward"), 0u);
  EXPECT_EQ(count_op(g, "relu_backward"), 0u);
  EXPECT_EQ(count_op(g, "conv2d_backward_bias"), 0u);  // both bias gradients folded in
  expect_fused_equals_unfused(gg.backward, bw_specs);
}

// The pattern alone, with and without the bias gradient, on windows of the generic loop
// (3x3, stride 2, padding 1: overlapping windows) and on LeNet's 2x2 ones.
TEST(FuseMaxPoolReluBackward, FusesWithOrWithoutTheBiasGradient) {
  const Symbol y = Symbol::var("y"), d = Symbol::var("d");
  for (const auto& [attrs, dshape] :
       {std::pair{NamedAttrs{{"kernel_size", Ints{2}}}, Shape{2, 3, 5, 17}},
        std::pair{NamedAttrs{{"kernel_size", Ints{3}}, {"stride", Ints{2}}, {"padding", Ints{1}}},
                  Shape{2, 3, 5, 18}}}) {
    const Symbol dx =
        Symbol::op("relu_backward", {y, Symbol::op("max_pool2d_backward", {y, d}, attrs)});
    const std::vector<ops::TensorSpec> specs = {f32({2, 3, 10, 35}), f32(dshape)};
    for (const Symbol& out : {dx, Symbol::group({dx, Symbol::op("conv2d_backward_bias", {dx})}),
                              Symbol::group({Symbol::op("conv2d_backward_bias", {dx}),
                                             Symbol::op("conv2d_backward_bias", {dx})})}) {
      const Graph g = passed(out, specs);
      EXPECT_EQ(count_op(g, "max_pool2d_relu_backward"), 1u);
      EXPECT_EQ(count_op(g, "max_pool2d_backward"), 0u);
      expect_fused_equals_unfused(out, specs);
    }
  }
}

// The pooling's gradient read elsewhere too (by another node or as an output): it must be
// computed anyway, so nothing fuses. relu masking with another array than the pooling's input:
// not this pattern.
TEST(FuseMaxPoolReluBackward, LeavesOtherPatternsAlone) {
  const Symbol y = Symbol::var("y"), z = Symbol::var("z"), d = Symbol::var("d");
  const NamedAttrs attrs = {{"kernel_size", Ints{2}}};
  const Symbol pool_grad = Symbol::op("max_pool2d_backward", {y, d}, attrs);
  const Symbol dx = Symbol::op("relu_backward", {y, pool_grad});
  const std::vector<ops::TensorSpec> specs = {f32({2, 3, 8, 8}), f32({2, 3, 4, 4})};
  for (const Symbol& out :
       {Symbol::group({dx, pool_grad}), Symbol::group({dx, Symbol::op("exp", {pool_grad})})}) {
    Graph g = out.graph().clone();
    const std::vector<NodePtr> args = g.arguments();
    for (size_t i = 0; i < args.size(); ++i) args[i]->specs = {specs[i]};
    infer_specs(g);
    EXPECT_EQ(fuse_max_pool_relu_backward(g).changed, 0);
    expect_fused_equals_unfused(out, specs);
  }
  const Symbol other = Symbol::op("relu_backward", {z, pool_grad});
  Graph g = other.graph().clone();
  const std::vector<NodePtr> args = g.arguments();
  ASSERT_EQ(other.list_arguments(), (std::vector<std::string>{"z", "y", "d"}));
  const std::vector<ops::TensorSpec> other_specs = {specs[0], specs[0], specs[1]};
  for (size_t i = 0; i < args.size(); ++i) args[i]->specs = {other_specs[i]};
  infer_specs(g);
  EXPECT_EQ(fuse_max_pool_relu_backward(g).changed, 0);
  expect_fused_equals_unfused(other, other_specs);
}

}  // namespace
}  // namespace janus::graph

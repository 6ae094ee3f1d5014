// Tests of the graph layer: the Symbol API, the JSON format, the passes (before and after),
// memory planning, tracing and the executor against imperative execution.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/graph/cached_op.h"
#include "janus/graph/gradient.h"
#include "janus/graph/passes.h"
#include "janus/graph/symbol.h"
#include "janus/graph/trace.h"
#include "janus/ops/elementwise.h"
#include "janus/ops/nn.h"
#include "janus/ops/ops.h"
#include "janus/ops/unary.h"

#include "testing/test_util.h"

namespace janus::graph {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

NDArray randn(Shape s, uint64_t seed_value) {
  seed(seed_value);
  return random_normal(0, 1, s);
}

void expect_equal(const NDArray& a, const NDArray& b) {
  ASSERT_EQ(a.shape(), b.shape());
  EXPECT_EQ(to_vector<float>(a), to_vector<float>(b));
}

// The value of node n's attribute `name`, looked up by the name its operator registered.
template <typename T>
const T& attr_of(const Node& n, std::string_view name) {
  const int i = n.op->attr_index(name);
  if (i < 0) throw std::out_of_range(fmt::format("{} has no attribute '{}'", n.op->name, name));
  return n.attrs.get<T>(static_cast<size_t>(i));
}

// Equal bit patterns, so that a NaN equals the same NaN.
void expect_same_bits(const NDArray& a, const NDArray& b) {
  ASSERT_EQ(a.shape(), b.shape());
  std::vector<uint32_t> ba, bb;
  for (float v : to_vector<float>(a)) ba.push_back(std::bit_cast<uint32_t>(v));
  for (float v : to_vector<float>(b)) bb.push_back(std::bit_cast<uint32_t>(v));
  EXPECT_EQ(ba, bb);
}

size_t op_count(const Graph& g) {
  size_t n = 0;
  for (const NodePtr& node : g.nodes) n += node->is_variable() ? 0 : 1;
  return n;
}

TEST(Symbol, ArgumentsOutputsAndShapes) {
  auto x = Symbol::var("x");
  auto w = Symbol::var("w");
  auto b = Symbol::var("b");
  auto y = Symbol::op("relu", {Symbol::op("fully_connected", {x, w, b}, {}, "fc")}, {}, "act");
  EXPECT_THAT(y.list_arguments(), ElementsAre("x", "w", "b"));
  EXPECT_THAT(y.list_outputs(), ElementsAre("act_y"));
  auto [args, outs] = y.infer_shape({{"x", Shape{4, 3}}, {"w", Shape{5, 3}}, {"b", Shape{5}}});
  EXPECT_THAT(args, ElementsAre(Shape{4, 3}, Shape{5, 3}, Shape{5}));
  EXPECT_THAT(outs, ElementsAre(Shape{4, 5}));
}

TEST(Symbol, InferNamesTheMissingVariableAndTheFailingNode) {
  auto y = Symbol::var("x") + Symbol::var("z");
  EXPECT_THAT(error_of<ShapeError>([&] {
                y.infer_shape({{"x", Shape{2}}});
              }),
              HasSubstr("the shape of variable 'z' is unknown"));
  EXPECT_THAT(error_of<ShapeError>([&] {
                y.infer_shape({{"x", Shape{2}}, {"z", Shape{3}}});
              }),
              HasSubstr("infer_shape: node 'add"));
}

TEST(Symbol, OpChecksInputsAndAttributes) {
  EXPECT_THAT(error_of<ValueError>([] { Symbol::op("relu", {}); }),
              HasSubstr("operator 'relu' takes 1 inputs (x), got 0"));
  EXPECT_THAT(error_of<ValueError>([] {
                Symbol::op("sum", {Symbol::var("x")}, {{"axis", int64_t{1}}});
              }),
              HasSubstr("sum: no attribute named 'axis', expected one of [axes, keepdims]"));
  EXPECT_THAT(error_of<ValueError>([] { Symbol::op("no_such_op", {}); }),
              HasSubstr("no operator named 'no_such_op'"));
}

TEST(Symbol, EvalMatchesImperative) {
  const NDArray a = randn({3, 4}, 1), b = randn({3, 4}, 2);
  auto y = Symbol::op("tanh", {Symbol::var("a") * Symbol::var("b")}) - Symbol::var("a");
  auto out = y.eval({{"a", a}, {"b", b}});
  ASSERT_EQ(out.size(), 1u);
  expect_equal(out[0], subtract(tanh(mul(a, b)), a));
  EXPECT_THAT(error_of<ValueError>([&] {
                y.eval({{"a", a}});
              }),
              HasSubstr("argument 'b' was not given"));
  EXPECT_THAT(error_of<ValueError>([&] {
                y.eval({{"a", a}, {"b", b}, {"c", a}});
              }),
              HasSubstr("'c' is not an argument of the symbol"));
}

TEST(Symbol, JsonRoundTripKeepsTheGraph) {
  auto x = Symbol::var("x", Shape{2, 3});
  auto y = Symbol::op("sum", {Symbol::op("exp", {x})},
                      {{"axes", std::vector<int64_t>{1}}, {"keepdims", true}});
  const std::string text = y.tojson();
  EXPECT_THAT(text, HasSubstr("\"format\": \"janus.graph\""));
  Symbol z = Symbol::fromjson(text);
  EXPECT_EQ(z.tojson(), text);
  const NDArray a = randn({2, 3}, 3);
  expect_equal(z.eval({{"x", a}})[0], y.eval({{"x", a}})[0]);
  EXPECT_THAT(z.summary(), HasSubstr("sum(exp"));
  EXPECT_THAT(z.to_dot(), HasSubstr("digraph janus"));
}

TEST(Symbol, MalformedJsonIsAFormatErrorNamingTheProblem) {
  auto bad = [](const std::string& text) {
    return error_of<FormatError>([&] { Symbol::fromjson(text, "m.json"); });
  };
  EXPECT_THAT(bad("{"), HasSubstr("graph file 'm.json': not valid JSON"));
  EXPECT_THAT(bad("[]"), HasSubstr("expected a JSON object"));
  EXPECT_THAT(bad(R"({"format":"janus.graph","version":7,"nodes":[],"outputs":[]})"),
              HasSubstr("format version 7 is not supported, expected 1"));
  const std::string head =
      R"({"format":"janus.graph","version":1,"nodes":[{"name":"x","op":null},)";
  EXPECT_THAT(bad(head + R"({"name":"y","op":"nope","inputs":[[0,0]]}],"outputs":[[1,0]]})"),
              HasSubstr("node 'y' calls operator 'nope'"));
  EXPECT_THAT(bad(head + R"({"name":"y","op":"relu","inputs":[[5,0]]}],"outputs":[[1,0]]})"),
              HasSubstr("input 0 of node 'y' refers to node 5, but only 1 nodes come before it"));
  EXPECT_THAT(bad(head + R"({"name":"y","op":"relu","inputs":[]}],"outputs":[[1,0]]})"),
              HasSubstr("node 'y' (relu) has 0 inputs, the operator takes 1"));
  EXPECT_THAT(
      bad(head +
          R"({"name":"y","op":"sum","attrs":{"axes":"no"},"inputs":[[0,0]]}],"outputs":[[1,0]]})"),
      HasSubstr("attribute 'axes' of node 'y' must be a list of integers"));
  EXPECT_THAT(
      bad(head +
          R"({"name":"y","op":"sum","attrs":{"bogus":1},"inputs":[[0,0]]}],"outputs":[[1,0]]})"),
      HasSubstr("node 'y' (sum) has an unknown attribute 'bogus'"));
  EXPECT_THAT(bad(head + R"({"name":"y","op":"relu","inputs":[[0,3]]}],"outputs":[[1,0]]})"),
              HasSubstr("refers to output 3 of node 'x', which has 1"));
  EXPECT_THAT(bad(R"({"format":"janus.graph","version":1,"nodes":[],"outputs":[]})"),
              HasSubstr("the graph has no outputs"));
}

// Seeded random corruptions of a valid file: each either loads or is a FormatError.
TEST(Symbol, RandomCorruptionsNeverCrash) {
  auto y = Symbol::op("relu", {Symbol::var("x", Shape{2}) + Symbol::var("w", Shape{2})});
  const std::string good = y.tojson();
  std::mt19937 rng(7);
  int refused = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string text = good;
    if (trial % 3 == 0) {
      text.resize(std::uniform_int_distribution<size_t>(0, good.size() - 1)(rng));
    } else {
      text[std::uniform_int_distribution<size_t>(0, text.size() - 1)(rng)] =
          "0123456789[]{}\",:-x"[std::uniform_int_distribution<int>(0, 18)(rng)];
    }
    try {
      Symbol::fromjson(text, "fuzz.json");
    } catch (const FormatError& e) {
      ++refused;
      EXPECT_THAT(e.what(), HasSubstr("fuzz.json"));
    }
  }
  EXPECT_GT(refused, 100);
}

TEST(Passes, DeadCodeDropsUnusedNodes) {
  auto x = Symbol::var("x", Shape{4});
  auto used = Symbol::op("exp", {x});
  auto unused = Symbol::op("log", {x});
  Graph g;
  g.nodes = Graph::from_outputs({used.outputs()[0], unused.outputs()[0]}).nodes;
  g.outputs = used.outputs();
  ASSERT_EQ(op_count(g), 2u);
  EXPECT_EQ(eliminate_dead_code(g).changed, 1);
  EXPECT_EQ(op_count(g), 1u);
  EXPECT_EQ(g.nodes.back()->op->name, "exp");
}

TEST(Passes, CseMergesIdenticalCallsButNotRandomOnes) {
  auto x = Symbol::var("x", Shape{4});
  auto y = Symbol::op("exp", {x}) + Symbol::op("exp", {x});
  Graph g = y.graph().clone();
  ASSERT_EQ(op_count(g), 3u);
  EXPECT_EQ(eliminate_common_subexpressions(g).changed, 1);
  EXPECT_EQ(op_count(g), 2u);
  const NodePtr& add = g.outputs[0].node;
  EXPECT_EQ(add->inputs[0].node, add->inputs[1].node);

  auto d =
      Symbol::op("dropout", {x}, {{"p", 0.5}})[0] + Symbol::op("dropout", {x}, {{"p", 0.5}})[0];
  Graph gd = d.graph().clone();
  EXPECT_EQ(eliminate_common_subexpressions(gd).changed, 0);
  // Different attributes are different calls.
  auto s = Symbol::op("sum", {x}, {{"keepdims", true}}) + Symbol::op("sum", {x});
  Graph gs = s.graph().clone();
  EXPECT_EQ(eliminate_common_subexpressions(gs).changed, 0);
}

TEST(Passes, ConstantFoldingComputesConstantsOnce) {
  Tracer tracer;
  NDArray x = tracer.input("x", {{3}, DType::kFloat32, cpu()});
  const NDArray c = from_vector<float>({1, 2, 3}, {3});
  NDArray y;
  {
    TraceScope scope(tracer);
    y = add(x, exp(mul(c, 2.0)));  // exp(c * 2) depends only on a constant
  }
  Graph g = tracer.finish({&y, 1}).graph().clone();
  infer_specs(g);
  ASSERT_EQ(op_count(g), 3u);
  EXPECT_EQ(fold_constants(g).changed, 2);
  EXPECT_EQ(op_count(g), 1u);
  const NDArray xv = from_vector<float>({1, 1, 1}, {3});
  auto out = Symbol(g.outputs).eval({{"x", xv}});
  expect_equal(out[0], add(xv, exp(mul(c, 2.0))));
}

TEST(Passes, DumpIrPrintsTheGraphAfterAPass) {
  setenv("JANUS_DUMP_IR", "cse", 1);
  testing::internal::CaptureStderr();
  auto x = Symbol::var("x");
  (Symbol::op("exp", {x}) + Symbol::op("exp", {x})).eval({{"x", zeros({2})}});
  const std::string err = testing::internal::GetCapturedStderr();
  unsetenv("JANUS_DUMP_IR");
  EXPECT_THAT(err, HasSubstr("JANUS_DUMP_IR after cse (1 changed)"));
  EXPECT_THAT(err, HasSubstr("Graph: 3 nodes (2 operators)"));  // exp, add: one exp merged
}

TEST(CachedOp, ReluGradientMasksItsIncomingGradientInPlace) {
  // where(y > 0, dy, 0), the shape of relu's gradient: where writes over dy when dy dies there.
  auto y = Symbol::var("y"), g = Symbol::var("g");
  auto dy = Symbol::op("softmax", {g});
  auto out = Symbol::op(
      "softmax",
      {Symbol::op("where",
                  {Symbol::op("greater", {y, Symbol::op("zeros", {}, {{"shape", Shape{}}})}), dy,
                   Symbol::op("zeros", {}, {{"shape", Shape{}}})})});
  CachedOp op(out, {{{64}, DType::kFloat32, cpu()}, {{64}, DType::kFloat32, cpu()}});
  EXPECT_EQ(op.memory_plan().inplace, 1);
  const NDArray yv = randn({64}, 5), gv = randn({64}, 6);
  const NDArray zero = zeros({});
  const NDArray ref = ops::invoke(
      ops::get_op("softmax"),
      {where(greater(yv, zero), ops::invoke(ops::get_op("softmax"), {gv})[0], zero)})[0];
  const NDArray args[] = {yv, gv};
  expect_equal(op(args)[0], ref);
}

TEST(CachedOp, MemoryPlanGrowsAFreeBufferRatherThanAddOne) {
  // a = softmax(x) [8, 1] dies at c = softmax(a); d = c · cᵀ [8, 8] needs more than a's buffer
  // holds: that free buffer grows to d's size instead of a third buffer joining it.
  auto x = Symbol::var("x");
  auto c = Symbol::op("softmax", {Symbol::op("softmax", {x})});
  auto d = Symbol::op("dot", {c, c}, {{"transpose_b", true}});
  CachedOp op(Symbol::op("softmax", {d}), {{{8, 1}, DType::kFloat32, cpu()}});
  const MemoryPlan& plan = op.memory_plan();
  EXPECT_EQ(plan.entries, 3);
  EXPECT_EQ(plan.buffers, 2);
  EXPECT_EQ(plan.planned_bytes, 256 + 64);  // d's 256 bytes in a's grown buffer, c's 64
  const NDArray xv = randn({8, 1}, 9);
  const ops::OpDef& softmax = ops::get_op("softmax");
  const NDArray cv = ops::invoke(softmax, {ops::invoke(softmax, {xv})[0]})[0];
  expect_equal(op({&xv, 1})[0], ops::invoke(softmax, {dot(cv, cv, false, true)})[0]);
}

TEST(CachedOp, ViewsOfAnArgumentAreBoundAsViewsNotCopied) {
  // flatten(x) then reshape: both views of the argument x, made at the call; softmax reads them
  // without a copy of x. A view that is a graph output is a view of x too, as imperatively.
  auto x = Symbol::var("x");
  auto flat = Symbol::op("reshape", {Symbol::op("flatten", {x})}, {{"shape", Shape{4, 6}}});
  auto y = Symbol::op("softmax", {flat});
  auto out = Symbol::op("reshape", {x}, {{"shape", Shape{24}}});
  CachedOp op(Symbol::group({y, out}), {{{4, 2, 3}, DType::kFloat32, cpu()}});
  EXPECT_EQ(op.memory_plan().argument_views, 3);
  EXPECT_EQ(op.memory_plan().entries, 0);  // softmax's value is an output; no copy of x planned
  const NDArray xv = randn({4, 2, 3}, 7);
  const std::vector<float> before = to_vector<float>(xv);
  const std::vector<NDArray> got = op({&xv, 1});
  expect_equal(got[0], ops::invoke(ops::get_op("softmax"), {reshape(xv, Shape{4, 6})})[0]);
  expect_equal(got[1], reshape(xv, Shape{24}));
  EXPECT_EQ(got[1].storage(), xv.storage());
  EXPECT_EQ(to_vector<float>(xv), before);
  // A second call with another argument sees that argument, not the first one's.
  const NDArray xw = randn({4, 2, 3}, 8);
  expect_equal(op({&xw, 1})[0], ops::invoke(ops::get_op("softmax"), {reshape(xw, Shape{4, 6})})[0]);
}

TEST(CachedOp, AViewThatIsAnOutputIsAViewOfTheValueNotACopy) {
  // p = softmax(x) [4, 2, 3]; outputs: flatten(p) (as a training forward graph saves a dense
  // layer's flattened input) and softmax(p). flatten is no step: p becomes an output of its own
  // (allocated per call, not planned) and the first output is a view of it, also when the caller
  // gives it an array to write into (left alone, as for a view of an argument).
  auto x = Symbol::var("x");
  auto p = Symbol::op("softmax", {x});
  CachedOp op(Symbol::group({Symbol::op("flatten", {p}), Symbol::op("softmax", {p})}),
              {{{4, 2, 3}, DType::kFloat32, cpu()}});
  EXPECT_EQ(op.memory_plan().output_views, 1);
  EXPECT_EQ(op.memory_plan().entries, 0);
  const ops::OpDef& softmax = ops::get_op("softmax");
  const ops::OpDef& flatten = ops::get_op("flatten");
  for (uint64_t seed = 30; seed < 32; ++seed) {
    const NDArray xv = randn({4, 2, 3}, seed);
    const NDArray pv = ops::invoke(softmax, {xv})[0];
    const NDArray given[] = {zeros({4, 6}), zeros({4, 2, 3})};
    for (const bool with_outs : {false, true}) {
      const std::vector<NDArray> got =
          with_outs ? op({&xv, 1}, given) : op({&xv, 1}, std::span<const NDArray>{});
      expect_equal(got[0], ops::invoke(flatten, {pv})[0]);
      expect_equal(got[1], ops::invoke(softmax, {pv})[0]);
      EXPECT_NE(got[0].storage(), got[1].storage());
      if (with_outs) {
        EXPECT_NE(got[0].storage(), given[0].storage());  // the view, not the given array
        EXPECT_EQ(got[1].storage(), given[1].storage());
        EXPECT_EQ(to_vector<float>(given[0]), std::vector<float>(24, 0.0f));
      }
    }
  }
}

TEST(CachedOp, MemoryPlanReusesBuffersAndWritesInPlace) {
  // softmax, reshape, softmax, reshape, softmax, reshape: each value dies at its single reader,
  // so two buffers serve the four intermediate values, and each reshape but the last writes over
  // its input; the last is the output, a view of the last softmax's value (an output too).
  auto x = Symbol::var("x");
  Symbol y = x;
  for (int k = 0; k < 3; ++k) {
    y = Symbol::op("softmax", {y});
    y = Symbol::op("reshape", {y}, {{"shape", Shape(k % 2 == 0 ? Shape{16, 16} : Shape{256})}});
  }
  CachedOp op(y, {{{256}, DType::kFloat32, cpu()}});
  const MemoryPlan& plan = op.memory_plan();
  EXPECT_EQ(plan.entries, 4);  // the last two values are outputs, not planned
  EXPECT_EQ(plan.buffers, 2);
  EXPECT_EQ(plan.inplace, 2);
  EXPECT_EQ(plan.output_views, 1);
  EXPECT_EQ(plan.unplanned_bytes, 4 * 1024);
  EXPECT_EQ(plan.planned_bytes, 2 * 1024);
  const NDArray a = randn({256}, 4);
  NDArray ref = a;
  for (int k = 0; k < 3; ++k) {
    ref = reshape(ops::invoke(ops::get_op("softmax"), {ref})[0],
                  k % 2 == 0 ? Shape{16, 16} : Shape{256});
  }
  expect_equal(op({&a, 1})[0], ref);
}

TEST(Passes, ElementwiseTreesFuseIntoOneNode) {
  auto a = Symbol::var("a"), b = Symbol::var("b");
  // tanh(a) * b + exp(a): a tree of four elementwise calls; its inputs a and b are read once.
  auto y = Symbol::op("tanh", {a}) * b + Symbol::op("exp", {a});
  Graph g = y.graph().clone();
  for (const NodePtr& n : g.arguments())
    n->specs = {ops::TensorSpec{{5000}, DType::kFloat32, cpu()}};
  infer_specs(g);
  EXPECT_EQ(fuse_elementwise(g).changed, 4);
  ASSERT_EQ(op_count(g), 1u);
  EXPECT_EQ(g.outputs[0].node->op->name, "fused_elementwise");
  EXPECT_EQ(g.outputs[0].node->inputs.size(), 2u);
  const NDArray av = randn({5000}, 1), bv = randn({5000}, 2);
  expect_equal(y.eval({{"a", av}, {"b", bv}})[0], add(mul(tanh(av), bv), exp(av)));
}

TEST(Passes, FullyConnectedTakesItsReluAsAPostOp) {
  auto x = Symbol::var("x"), w = Symbol::var("w"), b = Symbol::var("b");
  auto y = Symbol::op("relu", {Symbol::op("fully_connected", {x, w, b})});
  Graph g = y.graph().clone();
  const Shape shapes[] = {{4, 8}, {5, 8}, {5}};
  for (size_t i = 0; i < 3; ++i)
    g.arguments()[i]->specs = {ops::TensorSpec{shapes[i], DType::kFloat32, cpu()}};
  infer_specs(g);
  EXPECT_EQ(fuse_bias_activation(g).changed, 1);
  ASSERT_EQ(op_count(g), 1u);
  EXPECT_EQ(g.outputs[0].node->op->name, "fully_connected");
  EXPECT_EQ(attr_of<std::string>(*g.outputs[0].node, "activation"), "relu");
  const NDArray xv = randn({4, 8}, 1), wv = randn({5, 8}, 2), bv = randn({5}, 3);
  expect_equal(y.eval({{"x", xv}, {"w", wv}, {"b", bv}})[0], relu(fully_connected(xv, wv, bv)));
  // The product read elsewhere too: no fusion.
  auto fc = Symbol::op("fully_connected", {x, w, b});
  Graph g2 = Symbol::group({Symbol::op("relu", {fc}), fc}).graph().clone();
  for (size_t i = 0; i < 3; ++i)
    g2.arguments()[i]->specs = {ops::TensorSpec{shapes[i], DType::kFloat32, cpu()}};
  infer_specs(g2);
  EXPECT_EQ(fuse_bias_activation(g2).changed, 0);
}

// relu_backward read by a sum over axis 0 (a fully_connected layer's relu and bias gradients)
// becomes one relu_backward_bias call, whose outputs are bit for bit the two calls' (y with
// zeros, negatives and NaN; dy with -0.0; 37 columns: more than one strip of the kernel on two
// threads). A sum over the other axis, or keeping dims, stays apart.
TEST(Passes, ReluBackwardAndItsBiasSumFuseIntoOneCall) {
  auto y = Symbol::var("y"), d = Symbol::var("d");
  auto dx = Symbol::op("relu_backward", {y, d});
  auto out = Symbol::group({dx, Symbol::op("sum", {dx}, {{"axes", std::vector<int64_t>{0}}})});
  const std::vector<ops::TensorSpec> specs(2, ops::TensorSpec{{6, 37}, DType::kFloat32, cpu()});
  Graph g = out.graph().clone();
  for (size_t i = 0; i < 2; ++i) g.arguments()[i]->specs = {specs[i]};
  infer_specs(g);
  EXPECT_EQ(fuse_relu_backward_bias(g).changed, 1);
  ASSERT_EQ(op_count(g), 1u);
  EXPECT_EQ(g.outputs[0].node->op->name, "relu_backward_bias");
  EXPECT_EQ(g.outputs[1].node, g.outputs[0].node);
  EXPECT_EQ(g.outputs[0].index, 0u);
  EXPECT_EQ(g.outputs[1].index, 1u);

  std::vector<float> ys, ds;
  std::mt19937 rng(3);
  for (int i = 0; i < 6 * 37; ++i) {
    const uint32_t r = rng() % 11;
    ys.push_back(r == 0  ? std::numeric_limits<float>::quiet_NaN()
                 : r < 3 ? 0.0f
                         : static_cast<float>(rng() % 2001) / 100 - 10);
    ds.push_back(i % 9 == 0 ? -0.0f : static_cast<float>(rng() % 1001) / 37 - 13);
  }
  const NDArray yv = from_vector<float>(ys, {6, 37}), dv = from_vector<float>(ds, {6, 37});
  CachedOp op(out, specs);
  const NDArray args[] = {yv, dv};
  const std::vector<NDArray> got = op(args);
  const NDArray want = ops::invoke(ops::get_op("relu_backward"), {yv, dv})[0];
  expect_same_bits(got[0], want);
  expect_same_bits(got[1], sum(want, {0}));

  for (const NamedAttrs& attrs :
       {NamedAttrs{{"axes", std::vector<int64_t>{1}}},
        NamedAttrs{{"axes", std::vector<int64_t>{0}}, {"keepdims", true}}}) {
    Graph g2 = Symbol::op("sum", {dx}, attrs).graph().clone();
    for (size_t i = 0; i < 2; ++i) g2.arguments()[i]->specs = {specs[i]};
    infer_specs(g2);
    EXPECT_EQ(fuse_relu_backward_bias(g2).changed, 0);
  }
}

TEST(Passes, ConvolutionTakesItsReluAsAPostOp) {
  auto x = Symbol::var("x"), w = Symbol::var("w"), b = Symbol::var("b");
  auto y =
      Symbol::op("relu", {Symbol::op("conv2d", {x, w, b}, {{"padding", std::vector<int64_t>{1}}})});
  Graph g = y.graph().clone();
  const Shape shapes[] = {{2, 3, 6, 6}, {4, 3, 3, 3}, {4}};
  for (size_t i = 0; i < 3; ++i)
    g.arguments()[i]->specs = {ops::TensorSpec{shapes[i], DType::kFloat32, cpu()}};
  infer_specs(g);
  EXPECT_EQ(fuse_bias_activation(g).changed, 1);
  ASSERT_EQ(op_count(g), 1u);
  EXPECT_EQ(g.outputs[0].node->op->name, "conv2d");
  EXPECT_EQ(attr_of<std::string>(*g.outputs[0].node, "activation"), "relu");
  EXPECT_EQ(attr_of<std::vector<int64_t>>(*g.outputs[0].node, "padding"),
            (std::vector<int64_t>{1}));
  const NDArray xv = randn({2, 3, 6, 6}, 1), wv = randn({4, 3, 3, 3}, 2), bv = randn({4}, 3);
  // Compiled (fused) against the two operators one by one.
  CachedOp fused(y, {ops::TensorSpec{shapes[0], DType::kFloat32, cpu()},
                     ops::TensorSpec{shapes[1], DType::kFloat32, cpu()},
                     ops::TensorSpec{shapes[2], DType::kFloat32, cpu()}});
  const NDArray args[] = {xv, wv, bv};
  expect_equal(fused(args)[0], relu(conv2d(xv, wv, bv, {1}, {1})));
}

// The graph that fuse_bias_activation fuses gives bitwise what the imperative calls give, NaN
// included: relu keeps NaN, fused or not (docs/design/numerics.md).
TEST(Passes, FusedReluKeepsNanAsTheImperativeCallsDo) {
  auto x = Symbol::var("x"), w = Symbol::var("w"), b = Symbol::var("b");
  const std::vector<float> nan_row = {std::numeric_limits<float>::quiet_NaN(), 1, 2, 3};
  std::vector<float> xs = nan_row;
  for (int i = 0; i < 12; ++i) xs.push_back(static_cast<float>(i % 5) - 2.0f);
  const NDArray xv = from_vector<float>(xs, {4, 4}), wv = randn({6, 4}, 2), bv = randn({6}, 3);
  const Symbol fc = Symbol::op("relu", {Symbol::op("fully_connected", {x, w, b})});
  CachedOp fused_fc(fc, {ops::TensorSpec{{4, 4}, DType::kFloat32, cpu()},
                         ops::TensorSpec{{6, 4}, DType::kFloat32, cpu()},
                         ops::TensorSpec{{6}, DType::kFloat32, cpu()}});
  ASSERT_EQ(op_count(fused_fc.graph()), 1u);  // the pass fused the relu
  const NDArray fc_args[] = {xv, wv, bv};
  expect_same_bits(fused_fc(fc_args)[0], relu(fully_connected(xv, wv, bv)));
  EXPECT_TRUE(std::isnan(to_vector<float>(fused_fc(fc_args)[0])[0]));

  const NDArray image = xv.reshape({1, 1, 4, 4}), kernel = randn({2, 1, 3, 3}, 4);
  const NDArray kb = randn({2}, 5);
  const Symbol conv = Symbol::op("relu", {Symbol::op("conv2d", {x, w, b})});
  CachedOp fused_conv(conv, {ops::TensorSpec{{1, 1, 4, 4}, DType::kFloat32, cpu()},
                             ops::TensorSpec{{2, 1, 3, 3}, DType::kFloat32, cpu()},
                             ops::TensorSpec{{2}, DType::kFloat32, cpu()}});
  ASSERT_EQ(op_count(fused_conv.graph()), 1u);
  const NDArray conv_args[] = {image, kernel, kb};
  const NDArray y = fused_conv(conv_args)[0];
  expect_same_bits(y, relu(conv2d(image, kernel, kb)));
  EXPECT_TRUE(std::isnan(to_vector<float>(y)[0]));
}

// Values of `shape` for the fused activations' tests: NaN, the infinities, -0, large |x| and
// values whose sigmoid or tanh rounds to 0 or 1 first; the rest spread over [-12, 12).
NDArray special_values(const Shape& shape, uint32_t seed) {
  const float kSpecial[] = {std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            -0.0f,
                            0.0f,
                            1e30f,
                            -1e30f,
                            88.5f,
                            -88.5f,
                            -104.5f,
                            17.0f,
                            -17.0f,
                            9.0f,
                            -9.0f,
                            1e-7f,
                            -1e-7f};
  std::vector<float> v(kSpecial, kSpecial + std::size(kSpecial));
  std::mt19937 rng(seed);
  while (static_cast<int64_t>(v.size()) < shape.numel()) {
    v.push_back(static_cast<float>(rng() % 2400) / 100 - 12);
  }
  v.resize(static_cast<size_t>(shape.numel()));
  return from_vector<float>(v, shape);
}

// sigmoid and tanh fuse into the product as relu does, and the fused kernels apply the very
// functions of the sigmoid and tanh operators: bit for bit what the separate calls give, on
// every path that computes the product (conv2d: oneDNN and the single-channel kernel; the
// matmul and the one-row loop of fully_connected), at NaN, infinities, -0, large |x| and
// values that round to 0 or 1.
TEST(Passes, FusedSigmoidAndTanhGiveTheSeparateCallsBitForBit) {
  const auto values = special_values;
  auto x = Symbol::var("x"), w = Symbol::var("w"), b = Symbol::var("b");
  // The 1x1 convolutions of one channel with weights of one pass the special values through
  // (as they are or as +0 for -0); the others mix them.
  struct Case {
    const char* op;
    Shape xs, ws, bs;
    bool ones;
  };
  const Case cases[] = {{"conv2d", {2, 1, 6, 7}, {3, 1, 1, 1}, {3}, true},    // single channel
                        {"conv2d", {2, 1, 6, 7}, {3, 1, 3, 3}, {3}, false},   // single channel
                        {"conv2d", {2, 1, 6, 6}, {20, 1, 1, 1}, {20}, true},  // oneDNN
                        {"conv2d", {2, 3, 6, 6}, {8, 3, 3, 3}, {8}, false},   // oneDNN
                        {"fully_connected", {5, 8}, {7, 8}, {7}, false},      // matmul
                        {"fully_connected", {1, 37}, {6, 37}, {6}, false}};   // one row
  for (const Case& c : cases) {
    for (const std::string act : {"sigmoid", "tanh"}) {
      SCOPED_TRACE(std::string(c.op) + " " + act);
      const Symbol y = Symbol::op(act, {Symbol::op(c.op, {x, w, b})});
      CachedOp fused(y, {ops::TensorSpec{c.xs, DType::kFloat32, cpu()},
                         ops::TensorSpec{c.ws, DType::kFloat32, cpu()},
                         ops::TensorSpec{c.bs, DType::kFloat32, cpu()}});
      ASSERT_EQ(op_count(fused.graph()), 1u);  // the pass fused the activation
      EXPECT_EQ(attr_of<std::string>(*fused.graph().outputs[0].node, "activation"), act);
      const NDArray xv = values(c.xs, 1), bv = c.ones ? zeros(c.bs) : randn(c.bs, 3);
      const NDArray wv = c.ones ? ones(c.ws) : values(c.ws, 2) * 0.25;
      const NDArray args[] = {xv, wv, bv};
      const NDArray product = ops::invoke(ops::get_op(c.op), {xv, wv, bv})[0];
      const NDArray want = ops::invoke(ops::get_op(act), {product})[0];
      expect_same_bits(fused(args)[0], want);
    }
  }
}

// A 2x2 stride-2 average pooling of a convolution's (activated) result goes into the
// convolution's call (fuse_conv_avg_pool, after fuse_bias_activation): one node, bit for bit the
// separate conv2d, activation and avg_pool2d calls, on every path that computes the convolution
// (the single-channel kernel, oneDNN with its channels-last output and with one output channel,
// the float64 loops, without an activation: fuse_bias_activation fuses float32 only), with odd
// extents (the last row and column are in no window), at NaN,
// infinities and -0.
TEST(Passes, AveragePoolingGoesIntoTheConvolutionsCall) {
  using Ints = std::vector<int64_t>;
  auto x = Symbol::var("x"), w = Symbol::var("w"), b = Symbol::var("b");
  struct Case {
    Shape xs, ws;
    Ints padding;
    std::string act;  // "" for none
    DType dtype;
  };
  const Case cases[] = {
      {{3, 1, 12, 12}, {6, 1, 5, 5}, {2}, "sigmoid", DType::kFloat32},  // LeNet's first layer
      {{2, 1, 11, 9}, {3, 1, 3, 3}, {1}, "tanh", DType::kFloat32},      // single channel, odd
      {{2, 1, 6, 6}, {2, 1, 1, 1}, {0}, "", DType::kFloat32},           // single channel
      {{3, 6, 9, 9}, {16, 6, 5, 5}, {2}, "sigmoid", DType::kFloat32},   // oneDNN, odd
      {{2, 3, 8, 8}, {20, 3, 3, 3}, {1}, "relu", DType::kFloat32},      // oneDNN
      {{2, 3, 6, 7}, {1, 3, 3, 3}, {0}, "tanh", DType::kFloat32},       // oneDNN, one channel
      {{2, 3, 7, 6}, {4, 3, 3, 3}, {1}, "", DType::kFloat64},           // loops
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(fmt::format("x {} weight {} {}", c.xs, c.ws, c.act));
    const Shape bs{c.ws[0]};
    Symbol y = Symbol::op("conv2d", {x, w, b}, {{"padding", c.padding}});
    if (!c.act.empty()) y = Symbol::op(c.act, {y});
    y = Symbol::op("avg_pool2d", {y}, {{"kernel_size", Ints{2}}, {"stride", Ints{2}}});
    CachedOp fused(y, {ops::TensorSpec{c.xs, c.dtype, cpu()}, ops::TensorSpec{c.ws, c.dtype, cpu()},
                       ops::TensorSpec{bs, c.dtype, cpu()}});
    ASSERT_EQ(op_count(fused.graph()), 1u);
    const Node& call = *fused.graph().outputs[0].node;
    EXPECT_EQ(call.op->name, "conv2d");
    EXPECT_TRUE(attr_of<bool>(call, "avg_pool_2x2"));
    EXPECT_EQ(attr_of<Ints>(call, "padding"), c.padding);
    const NDArray xv = cast(special_values(c.xs, 1), c.dtype);
    const NDArray wv = cast(special_values(c.ws, 2) * 0.25, c.dtype);
    const NDArray bv = cast(randn(bs, 3), c.dtype);
    const NDArray args[] = {xv, wv, bv};
    NDArray want = conv2d(xv, wv, bv, {1}, c.padding);
    if (!c.act.empty()) want = ops::invoke(ops::get_op(c.act), {want})[0];
    want = avg_pool2d(want, {2}, {2});
    const NDArray got = fused(args)[0];
    if (c.dtype == DType::kFloat32) {
      expect_same_bits(got, want);
    } else {
      ASSERT_EQ(got.shape(), want.shape());
      const std::vector<double> a = to_vector<double>(got), e = to_vector<double>(want);
      for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(std::bit_cast<uint64_t>(a[i]), std::bit_cast<uint64_t>(e[i])) << i;
      }
    }
  }
}

// Only the windows that the fused call computes fuse: kernel 2x2 and stride 2 without padding
// (count_include_pad then changes nothing; ceil mode only on even extents), and only when the
// convolution's result has no other reader (a training graph's activation gradient reads it).
TEST(Passes, AveragePoolingStaysApartWhereTheCallWouldDiffer) {
  using Ints = std::vector<int64_t>;
  auto x = Symbol::var("x"), w = Symbol::var("w"), b = Symbol::var("b");
  auto changed = [&](const Shape& xs, const NamedAttrs& pool, bool shared = false) {
    const Symbol conv = Symbol::op("sigmoid", {Symbol::op("conv2d", {x, w, b})});
    const Symbol pooled = Symbol::op("avg_pool2d", {conv}, pool);
    Graph g = (shared ? Symbol::group({pooled, conv}) : pooled).graph().clone();
    const Shape shapes[] = {xs, {4, 3, 3, 3}, {4}};
    for (size_t i = 0; i < 3; ++i)
      g.arguments()[i]->specs = {ops::TensorSpec{shapes[i], DType::kFloat32, cpu()}};
    infer_specs(g);
    fuse_bias_activation(g);
    return fuse_conv_avg_pool(g).changed;
  };
  const Shape even{2, 3, 8, 8}, odd{2, 3, 9, 9};            // results 6x6 and 7x7
  EXPECT_EQ(changed(even, {{"kernel_size", Ints{2}}}), 1);  // stride: the kernel's
  EXPECT_EQ(changed(odd, {{"kernel_size", Ints{2, 2}}, {"stride", Ints{2, 2}}}), 1);
  EXPECT_EQ(changed(even, {{"kernel_size", Ints{2}}, {"count_include_pad", false}}), 1);
  EXPECT_EQ(changed(even, {{"kernel_size", Ints{2}}, {"ceil_mode", true}}), 1);
  EXPECT_EQ(changed(odd, {{"kernel_size", Ints{2}}, {"ceil_mode", true}}), 0);
  EXPECT_EQ(changed(even, {{"kernel_size", Ints{2}}, {"padding", Ints{1}}}), 0);
  EXPECT_EQ(changed(even, {{"kernel_size", Ints{3}}, {"stride", Ints{2}}}), 0);
  EXPECT_EQ(changed(even, {{"kernel_size", Ints{2}}, {"stride", Ints{1}}}), 0);
  EXPECT_EQ(changed(even, {{"kernel_size", Ints{2, 1}}, {"stride", Ints{2}}}), 0);
  EXPECT_EQ(changed(even, {{"kernel_size", Ints{2}}}, /*shared=*/true), 0);

  // Training: the forward graph saves the sigmoid's output for its gradient, so the pooling
  // stays apart; without an activation the convolution's gradient reads x and w only, and the
  // pooling goes into the call.
  const std::vector<ops::TensorSpec> specs = {ops::TensorSpec{even, DType::kFloat32, cpu()},
                                              ops::TensorSpec{{4, 3, 3, 3}, DType::kFloat32, cpu()},
                                              ops::TensorSpec{{4}, DType::kFloat32, cpu()}};
  for (const bool sigmoid : {true, false}) {
    SCOPED_TRACE(sigmoid ? "sigmoid" : "no activation");
    Symbol conv = Symbol::op("conv2d", {x, w, b});
    if (sigmoid) conv = Symbol::op("sigmoid", {conv});
    const Symbol y = Symbol::op("avg_pool2d", {conv}, {{"kernel_size", Ints{2}}});
    const GradientGraphs gg = make_gradient_graphs(y, specs, {"x", "w", "b"});
    std::vector<ops::TensorSpec> forward_specs;
    for (size_t i : gg.forward_args) forward_specs.push_back(specs[i]);
    const CachedOp forward(gg.forward, forward_specs);
    size_t pools = 0;
    for (const NodePtr& n : forward.graph().nodes) {
      pools += !n->is_variable() && n->op->name == "avg_pool2d" ? 1 : 0;
    }
    EXPECT_EQ(pools, sigmoid ? 1u : 0u);
  }
}

TEST(Passes, ScheduleRunsTheLastOutputsWorkFirst) {
  // A backward graph lists the first layer's gradient first; its work should run last.
  auto a = Symbol::var("a"), b = Symbol::var("b");
  auto first = Symbol::op("softmax", {a}), second = Symbol::op("softmax", {b});
  Graph g = Symbol::group({first, second}).graph().clone();
  auto position = [&](const Graph& graph, std::string_view op_input) {
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      const NodePtr& n = graph.nodes[i];
      if (!n->is_variable() && n->inputs[0].node->name == op_input) return i;
    }
    return graph.nodes.size();
  };
  EXPECT_LT(position(g, "a"), position(g, "b"));
  EXPECT_EQ(schedule(g).changed, 4);  // a, softmax(a), b, softmax(b) -> b, softmax(b), a, ...
  EXPECT_GT(position(g, "a"), position(g, "b"));
  EXPECT_EQ(g.outputs[0].node->inputs[0].node->name, "a");  // the outputs keep their order
  EXPECT_EQ(schedule(g).changed, 0);  // the order depends on the outputs only: stable
}

TEST(Passes, FusionStopsAtSharedValuesAndShapeChanges) {
  auto a = Symbol::var("a");
  auto t = Symbol::op("tanh", {a});  // read by two nodes: computed once, not fused
  auto y = Symbol::group({Symbol::op("exp", {t}), Symbol::op("negative", {t})});
  Graph g = y.graph().clone();
  g.arguments()[0]->specs = {ops::TensorSpec{{8}, DType::kFloat32, cpu()}};
  infer_specs(g);
  EXPECT_EQ(fuse_elementwise(g).changed, 0);
  // A broadcasting add does not fuse with its inputs of another shape.
  auto z = Symbol::op("exp", {Symbol::var("p")}) + Symbol::op("exp", {Symbol::var("q")});
  Graph gz = z.graph().clone();
  gz.arguments()[0]->specs = {ops::TensorSpec{{4, 3}, DType::kFloat32, cpu()}};
  gz.arguments()[1]->specs = {ops::TensorSpec{{3}, DType::kFloat32, cpu()}};
  infer_specs(gz);
  EXPECT_EQ(fuse_elementwise(gz).changed, 0);
}

TEST(CachedOp, ChecksArgumentsAgainstTheCompiledSpecs) {
  auto y = Symbol::op("relu", {Symbol::var("x")});
  CachedOp op(y, {{{2, 3}, DType::kFloat32, cpu()}});
  const NDArray wrong = zeros({3, 2});
  EXPECT_THAT(error_of<ShapeError>([&] {
                op({&wrong, 1});
              }),
              HasSubstr("argument 'x' has shape [3, 2], the graph was compiled for [2, 3]"));
  const NDArray wrong_type = zeros({2, 3}, DType::kFloat64);
  EXPECT_THAT(error_of<TypeError>([&] {
                op({&wrong_type, 1});
              }),
              HasSubstr("argument 'x' has dtype float64"));
}

// Outputs written into arrays the caller gives (a gradient buffer): the same values, in those
// arrays; an output that is an argument is returned as it is, its array left alone.
TEST(CachedOp, WritesOutputsIntoGivenArrays) {
  auto x = Symbol::var("x");
  CachedOp op(Symbol::group({Symbol::op("tanh", {x * x}), Symbol::op("relu", {x}), x}),
              {{{2, 3}, DType::kFloat32, cpu()}});
  const NDArray a = randn({2, 3}, 3);
  const NDArray into0 = zeros({2, 3}), into2 = zeros({2, 3});
  const NDArray outs[] = {into0, NDArray(), into2};
  const std::vector<NDArray> got = op({&a, 1}, outs);
  EXPECT_TRUE(got[0].is_same(into0));
  expect_equal(into0, tanh(mul(a, a)));
  expect_equal(got[1], relu(a));
  EXPECT_EQ(got[2].storage(), a.storage());
  EXPECT_EQ(to_vector<float>(into2), std::vector<float>(6, 0.0f));

  const NDArray wrong_shape[] = {zeros({3, 2}), NDArray(), NDArray()};
  EXPECT_THAT(error_of<ShapeError>([&] {
                op({&a, 1}, wrong_shape);
              }),
              HasSubstr("output array 0 has shape [3, 2], output 0 has shape [2, 3]"));
  const NDArray the_argument[] = {NDArray(), a, NDArray()};
  EXPECT_THAT(error_of<ValueError>([&] {
                op({&a, 1}, the_argument);
              }),
              HasSubstr("output array 1 shares its storage with argument 0"));
  const NDArray twice[] = {into0, into0, NDArray()};
  EXPECT_THAT(error_of<ValueError>([&] {
                op({&a, 1}, twice);
              }),
              HasSubstr("output arrays 0 and 1 share their storage"));
  const NDArray too_few[] = {into0};
  EXPECT_THAT(error_of<ValueError>([&] {
                op({&a, 1}, too_few);
              }),
              HasSubstr("got 1 output arrays, expected none or one per output (3)"));
}

TEST(CachedOp, StaticAllocGivesTheSameResultsCallAfterCall) {
  auto x = Symbol::var("x");
  auto y = Symbol::op("tanh", {x * x});
  CachedOp op(y, {{{64}, DType::kFloat32, cpu()}}, {.static_alloc = true});
  for (int i = 0; i < 5; ++i) {
    const NDArray a = randn({64}, 10 + static_cast<uint64_t>(i));
    expect_equal(op({&a, 1})[0], tanh(mul(a, a)));
  }
}

// A graph whose intermediates all have zero elements needs no buffer, with or without
// static_alloc, and runs (also twice on the same arrays, which keeps a list).
TEST(CachedOp, IntermediatesOfZeroElementsNeedNoBuffer) {
  auto x = Symbol::var("x");
  const Symbol y = Symbol::op("tanh", {Symbol::op("transpose", {x * x})});
  for (const bool static_alloc : {false, true}) {
    CachedOp op(y, {{{0, 3}, DType::kFloat32, cpu()}}, {.static_alloc = static_alloc});
    const NDArray a = zeros({0, 3});
    for (int i = 0; i < 3; ++i) {
      const NDArray out = op({&a, 1})[0];
      EXPECT_EQ(out.shape(), Shape({3, 0}));
      wait_to_read(out);
    }
  }
}

// With static_alloc consecutive calls share the intermediates' buffers: each call still binds
// its own arrays, also while calls with other arrays are in flight.
TEST(CachedOp, StaticAllocBindsTheArraysOfEachCall) {
  auto x = Symbol::var("x"), w = Symbol::var("w");
  const Symbol y = Symbol::op("tanh", {x * w});
  const ops::TensorSpec spec{{16}, DType::kFloat32, cpu()};
  CachedOp op(y, {spec, spec}, {.static_alloc = true});
  const NDArray a = randn({16}, 30), b = randn({16}, 31), c = randn({16}, 32);
  const NDArray ab[] = {a, b}, cb[] = {c, b}, ac[] = {a, c}, a_view[] = {a.reshape({16}), b};
  // Pushed back to back, none waiting for the one before.
  const std::vector<NDArray> outs = {op(ab)[0], op(ab)[0], op(cb)[0],
                                     op(ab)[0], op(ac)[0], op(a_view)[0]};
  const std::vector<NDArray> want = {tanh(mul(a, b)), tanh(mul(a, b)), tanh(mul(c, b)),
                                     tanh(mul(a, b)), tanh(mul(a, c)), tanh(mul(a, b))};
  for (size_t i = 0; i < outs.size(); ++i) expect_equal(outs[i], want[i]);
}

// Writes `src`'s values over `dst` (same shape) in place, as an optimizer's update does.
void overwrite(const NDArray& dst, const NDArray& src) {
  engine().push(
      [dst, src](const RunContext&) { std::memcpy(dst.raw_data(), src.raw_data(), dst.nbytes()); },
      {src.var()}, {dst.var()}, cpu());
}

// With static_alloc a call on the arrays of the call before takes the list it kept and writes
// the outputs' storage again, but only once the caller has dropped the outputs that were in it:
// an output still held keeps its values when an argument changes in place.
TEST(CachedOp, StaticAllocWritesAnOutputAgainOnlyOnceItIsDropped) {
  auto x = Symbol::var("x"), w = Symbol::var("w");
  const ops::TensorSpec spec{{16}, DType::kFloat32, cpu()};
  CachedOp op(Symbol::op("tanh", {x * w}), {spec, spec}, {.static_alloc = true});
  const NDArray a = randn({16}, 40), b = randn({16}, 41), c = randn({16}, 42);
  const NDArray b_before = add(b, zeros({16}));
  const NDArray args[] = {a, b};
  const NDArray first = op(args)[0];
  const NDArray second = op(args)[0];  // the same arrays: a list is kept from here on
  overwrite(b, c);
  NDArray third = op(args)[0];  // second is held: new storage
  expect_equal(first, tanh(mul(a, b_before)));
  expect_equal(second, tanh(mul(a, b_before)));
  expect_equal(third, tanh(mul(a, c)));
  EXPECT_NE(third.storage(), second.storage());
  const Storage* dropped = third.storage().get();
  third = NDArray();
  overwrite(b, b_before);
  const NDArray fourth = op(args)[0];
  EXPECT_EQ(fourth.storage().get(), dropped);
  expect_equal(fourth, tanh(mul(a, b_before)));
  expect_equal(second, tanh(mul(a, b_before)));
  // Other arrays: the call binds them, not the kept ones.
  const NDArray other[] = {c, b};
  expect_equal(op(other)[0], tanh(mul(c, b_before)));
  expect_equal(op(args)[0], tanh(mul(a, b_before)));
}

// Two threads calling on the same arrays share the kept list: each output a caller holds is its
// own storage, never written again by the other thread's calls.
TEST(CachedOp, StaticAllocCallsFromTwoThreadsNeverShareAHeldOutput) {
  auto x = Symbol::var("x"), w = Symbol::var("w");
  const ops::TensorSpec spec{{16}, DType::kFloat32, cpu()};
  CachedOp op(Symbol::op("tanh", {x * w}), {spec, spec}, {.static_alloc = true});
  const NDArray a = randn({16}, 44), b = randn({16}, 45);
  const NDArray args[] = {a, b};
  std::vector<NDArray> held[2];
  auto calls = [&](std::vector<NDArray>& kept_here) {
    for (int i = 0; i < 200; ++i) {
      NDArray y = op(args)[0];
      if (i % 3 == 0) kept_here.push_back(std::move(y));  // the others are dropped at once
    }
  };
  std::thread other(calls, std::ref(held[1]));
  calls(held[0]);
  other.join();
  const NDArray want = tanh(mul(a, b));
  std::set<const Storage*> storages;
  for (const std::vector<NDArray>& outs : held) {
    for (const NDArray& y : outs) {
      expect_equal(y, want);
      storages.insert(y.storage().get());
    }
  }
  EXPECT_EQ(storages.size(), held[0].size() + held[1].size());
}

// A kept list's views: of an argument (returned as a view of the caller's array) and of an
// output (the storage the next call writes again once the caller dropped both).
TEST(CachedOp, StaticAllocKeptListsBindViewsOfArgumentsAndOutputs) {
  auto x = Symbol::var("x");
  auto p = Symbol::op("softmax", {x});
  CachedOp op(Symbol::group({Symbol::op("flatten", {p}), Symbol::op("softmax", {p}),
                             Symbol::op("reshape", {x}, {{"shape", Shape{24}}})}),
              {{{4, 2, 3}, DType::kFloat32, cpu()}}, {.static_alloc = true});
  EXPECT_EQ(op.memory_plan().output_views, 1);
  EXPECT_EQ(op.memory_plan().argument_views, 1);
  const ops::OpDef& softmax = ops::get_op("softmax");
  const NDArray xv = randn({4, 2, 3}, 43);
  const NDArray pv = ops::invoke(softmax, {xv})[0];
  std::vector<NDArray> held;
  for (int call = 0; call < 4; ++call) {
    std::vector<NDArray> got = op({&xv, 1});
    expect_equal(got[0], reshape(pv, Shape{4, 6}));
    expect_equal(got[1], ops::invoke(softmax, {pv})[0]);
    expect_equal(got[2], reshape(xv, Shape{24}));
    EXPECT_EQ(got[2].storage(), xv.storage());
    if (call == 1) held = got;  // keeps the storages of the second call's outputs
  }
  expect_equal(held[0], reshape(pv, Shape{4, 6}));
  expect_equal(held[1], ops::invoke(softmax, {pv})[0]);
}

// A step that reads a value the call returns beside an argument gets both, in order; a step
// that reads only returned values reads this call's.
TEST(CachedOp, StepsMixingReturnedAndBoundValues) {
  auto x = Symbol::var("x");
  const Symbol t = Symbol::op("tanh", {x});
  const Symbol u = t * x;  // reads t (returned) and x (bound)
  for (const bool static_alloc : {false, true}) {
    CachedOp op(Symbol::group({t, u, Symbol::op("relu", {u})}), {{{12}, DType::kFloat32, cpu()}},
                {.static_alloc = static_alloc});
    for (uint64_t seed = 34; seed < 36; ++seed) {
      const NDArray a = randn({12}, seed);
      const std::vector<NDArray> out = op({&a, 1});
      ASSERT_EQ(out.size(), 3u);
      expect_equal(out[0], tanh(a));
      expect_equal(out[1], mul(tanh(a), a));
      expect_equal(out[2], relu(mul(tanh(a), a)));
    }
  }
}

TEST(CachedOp, BuffersShareOneBlockWithoutOverlapping) {
  // a = softmax(x) and b = softmax(a) are both alive when y = a + b reads them: two buffers, in
  // one block at distinct offsets, with and without static_alloc. Placed on top of each other,
  // b would overwrite a and y would be 2b.
  auto x = Symbol::var("x");
  auto a = Symbol::op("softmax", {x});
  const Symbol y = a + Symbol::op("softmax", {a});
  const ops::OpDef& softmax = ops::get_op("softmax");
  for (const bool static_alloc : {false, true}) {
    CachedOp op(y, {{{64}, DType::kFloat32, cpu()}}, {.static_alloc = static_alloc});
    EXPECT_EQ(op.memory_plan().buffers, 2);
    for (uint64_t seed = 20; seed < 23; ++seed) {
      const NDArray xv = randn({64}, seed);
      const NDArray av = ops::invoke(softmax, {xv})[0];
      expect_equal(op({&xv, 1})[0], add(av, ops::invoke(softmax, {av})[0]));
    }
  }
}

TEST(CachedOp, KernelErrorsReachTheBlockerNamingTheNode) {
  // take with an index out of range fails inside the kernel, not in shape inference.
  auto y = Symbol::op("take", {Symbol::var("a"), Symbol::var("i")}, {}, "gather");
  const NDArray a = zeros({3});
  const NDArray i = from_vector<int64_t>({0, 7}, {2});
  auto out = y.eval({{"a", a}, {"i", i}});
  const std::string msg = error_of<Error>([&] { wait_to_read(out[0]); });
  EXPECT_THAT(msg, HasSubstr("graph node 'gather' (take)"));
}

TEST(Trace, RecordsCallsOnPlaceholdersWithoutRunningThem) {
  const NDArray w = randn({3, 4}, 5);
  Tracer tracer([&](const NDArray& a) -> std::optional<std::string> {
    if (a.storage() == w.storage()) return "w";
    return std::nullopt;
  });
  NDArray x = tracer.input("x", {{2, 3}, DType::kFloat32, cpu()});
  NDArray y;
  {
    TraceScope scope(tracer);
    EXPECT_TRUE(is_tracing());
    y = relu(dot(x, w));
    EXPECT_TRUE(y.is_placeholder());
    EXPECT_EQ(y.shape(), Shape({2, 4}));
  }
  EXPECT_FALSE(is_tracing());
  EXPECT_EQ(tracer.recorded(), 2u);
  Symbol s = tracer.finish({&y, 1});
  EXPECT_THAT(s.list_arguments(), ElementsAre("x", "w"));
  const NDArray xv = randn({2, 3}, 6);
  expect_equal(s.eval({{"x", xv}, {"w", w}})[0], relu(dot(xv, w)));
}

TEST(Trace, ReadingAValueIsATraceErrorNamingTheCall) {
  Tracer tracer;
  NDArray x = tracer.input("x", {{2}, DType::kFloat32, cpu()});
  TraceScope scope(tracer);
  NDArray y = exp(x);
  EXPECT_THAT(error_of<TraceError>([&] { to_vector<float>(y); }),
              HasSubstr("to_vector: reads the value of a symbolic array (shape [2], float32) while "
                        "a hybridized block is traced"));
  EXPECT_THAT(error_of<TraceError>([&] { item<float>(sum(y)); }), HasSubstr("item: reads"));
  EXPECT_THAT(error_of<TraceError>([&] { wait_to_read(y); }), HasSubstr("wait_to_read: reads"));
  std::ostringstream os;
  EXPECT_THAT(error_of<TraceError>([&] { os << y; }), HasSubstr("printing an array"));
}

TEST(Trace, PlaceholdersCannotEscapeTheTrace) {
  Tracer tracer;
  NDArray x = tracer.input("x", {{2}, DType::kFloat32, cpu()});
  EXPECT_THAT(error_of<TraceError>([&] { exp(x); }),
              HasSubstr("exp: input 'x' is a symbolic placeholder of a traced graph"));
}

TEST(Trace, CoreViewsBecomeReshapeNodes) {
  Tracer tracer;
  NDArray x = tracer.input("x", {{2, 3}, DType::kFloat32, cpu()});
  NDArray y;
  {
    TraceScope scope(tracer);
    y = exp(x.reshape({6}));
  }
  Symbol s = tracer.finish({&y, 1});
  const NDArray xv = randn({2, 3}, 8);
  expect_equal(s.eval({{"x", xv}})[0], exp(xv.reshape({6})));
}

TEST(Trace, CapturedArraysBecomeConstants) {
  const NDArray c = from_vector<float>({1, 2}, {2});
  Tracer tracer;
  NDArray x = tracer.input("x", {{2}, DType::kFloat32, cpu()});
  NDArray y;
  {
    TraceScope scope(tracer);
    y = add(x, c);
  }
  Symbol s = tracer.finish({&y, 1});
  EXPECT_THAT(s.list_arguments(), ElementsAre("x"));
  expect_equal(s.eval({{"x", ones({2})}})[0], from_vector<float>({2, 3}, {2}));
}

// Random graphs of elementwise, reduction and matrix operators: the compiled graph (one engine
// operation, planned buffers) gives bitwise the imperative results.
TEST(CachedOp, RandomGraphsMatchImperativeExecution) {
  std::mt19937 rng(42);
  const char* unary[] = {"exp", "tanh", "negative", "sigmoid", "relu", "square", "abs"};
  const char* binary[] = {"add", "subtract", "mul", "maximum"};
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<Symbol> pool = {Symbol::var("a"), Symbol::var("b")};
    const int n = std::uniform_int_distribution<int>(1, 12)(rng);
    for (int k = 0; k < n; ++k) {
      const int kind = std::uniform_int_distribution<int>(0, 9)(rng);
      auto pick = [&] {
        return pool[std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng)];
      };
      if (kind < 5) {
        pool.push_back(Symbol::op(unary[std::uniform_int_distribution<int>(0, 6)(rng)], {pick()}));
      } else if (kind < 9) {
        pool.push_back(
            Symbol::op(binary[std::uniform_int_distribution<int>(0, 3)(rng)], {pick(), pick()}));
      } else {
        pool.push_back(Symbol::op("dot", {pick(), pick()}));
      }
    }
    Symbol out = Symbol::group({pool.back(), pool[pool.size() / 2]});
    const NDArray a = randn({4, 4}, 100 + static_cast<uint64_t>(trial));
    const NDArray b = randn({4, 4}, 200 + static_cast<uint64_t>(trial));
    std::map<std::string, NDArray> args{{"a", a}, {"b", b}};
    const std::vector<std::string> names = out.list_arguments();
    std::vector<NDArray> bound;
    std::vector<ops::TensorSpec> specs;
    for (const auto& name : names) {
      bound.push_back(args.at(name));
      specs.push_back({{4, 4}, DType::kFloat32, cpu()});
    }
    CachedOp op(out, specs);
    const auto compiled = op(bound);
    const auto imperative = op.run_imperative(bound);
    ASSERT_EQ(compiled.size(), imperative.size());
    for (size_t i = 0; i < compiled.size(); ++i) expect_equal(compiled[i], imperative[i]);
  }
}

// Backward as a graph: the gradients of random graphs equal autograd's, bitwise; only what
// backward reads is saved by forward.
TEST(Gradient, RandomGraphsMatchAutograd) {
  std::mt19937 rng(7);
  const char* unary[] = {"exp", "tanh", "sigmoid", "relu", "square", "negative"};
  const char* binary[] = {"add", "subtract", "mul", "dot"};
  for (int trial = 0; trial < 15; ++trial) {
    std::vector<Symbol> pool = {Symbol::var("a"), Symbol::var("b")};
    const int n = std::uniform_int_distribution<int>(1, 8)(rng);
    auto pick = [&] {
      return pool[std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng)];
    };
    for (int k = 0; k < n; ++k) {
      if (std::uniform_int_distribution<int>(0, 1)(rng) == 0) {
        pool.push_back(Symbol::op(unary[std::uniform_int_distribution<int>(0, 5)(rng)], {pick()}));
      } else {
        pool.push_back(
            Symbol::op(binary[std::uniform_int_distribution<int>(0, 3)(rng)], {pick(), pick()}));
      }
    }
    const Symbol y = Symbol::op("sum", {pool.back()});
    const std::vector<std::string> names = y.list_arguments();
    std::map<std::string, NDArray> values{{"a", randn({3, 3}, 300 + static_cast<uint64_t>(trial))},
                                          {"b", randn({3, 3}, 400 + static_cast<uint64_t>(trial))}};
    std::vector<ops::TensorSpec> specs(names.size(),
                                       ops::TensorSpec{{3, 3}, DType::kFloat32, cpu()});
    const GradientGraphs gg = make_gradient_graphs(y, specs, names);
    EXPECT_EQ(gg.num_outputs, 1u);
    // Reference: the same graph run imperatively under autograd.
    std::vector<NDArray> leaves;
    for (const auto& name : names) {
      leaves.push_back(values.at(name).detach());
      autograd::attach_grad(leaves.back());
    }
    CachedOp plain(y, specs);
    NDArray ref;
    {
      autograd::RecordScope record;
      ref = plain.run_imperative(leaves)[0];
    }
    autograd::backward(ref);
    // The split graphs.
    std::vector<NDArray> fargs;
    for (size_t a : gg.forward_args) fargs.push_back(values.at(names.at(a)));
    std::vector<ops::TensorSpec> fspecs(fargs.size(),
                                        ops::TensorSpec{{3, 3}, DType::kFloat32, cpu()});
    CachedOp forward(gg.forward, fspecs);
    const std::vector<NDArray> fo = forward(fargs);
    expect_equal(fo[0], ref);
    std::vector<NDArray> bargs;
    std::vector<ops::TensorSpec> bspecs;
    ASSERT_EQ(gg.backward_args.size(), gg.backward.list_arguments().size());
    for (const BackwardArg& a : gg.backward_args) {
      switch (a.kind) {
        case BackwardArg::Kind::kHeadGrad:
          EXPECT_EQ(a.index, 0u);
          bargs.push_back(ones({}));
          break;
        case BackwardArg::Kind::kSaved:
          bargs.push_back(fo.at(gg.num_outputs + a.index));
          break;
        case BackwardArg::Kind::kInput:
          bargs.push_back(values.at(names.at(a.index)));
          break;
      }
      bspecs.push_back({bargs.back().shape(), bargs.back().dtype(), cpu()});
    }
    CachedOp backward(gg.backward, bspecs);
    const std::vector<NDArray> grads = backward(bargs);
    ASSERT_EQ(grads.size(), names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      expect_equal(grads[i], autograd::grad(leaves[i]));
    }
  }
}

// abs's gradient is dy * sign(x): sign(x) depends on forward values only, but backward has x
// anyway (an argument), so sign runs in backward instead of being saved by forward.
TEST(Gradient, CheapValuesBackwardCanRecomputeAreNotSaved) {
  auto x = Symbol::var("x"), w = Symbol::var("w");
  const Symbol y = Symbol::op("sum", {Symbol::op("dot", {Symbol::op("abs", {x}), w})});
  const ops::TensorSpec s{{4, 4}, DType::kFloat32, cpu()};
  const GradientGraphs gg = make_gradient_graphs(y, {s, s}, {"x", "w"});
  std::vector<std::string> saved_ops;
  for (const NodeEntry& e : gg.forward.graph().outputs) {
    if (!e.node->is_variable()) saved_ops.push_back(std::string(e.node->op->name));
  }
  EXPECT_THAT(saved_ops, ::testing::Not(::testing::Contains("sign")));
  EXPECT_THAT(saved_ops, ::testing::Contains("abs"));  // dot's gradient for w reads it
  bool backward_has_sign = false;
  for (const NodePtr& n : gg.backward.graph().nodes) {
    backward_has_sign |= !n->is_variable() && n->op->name == "sign";
  }
  EXPECT_TRUE(backward_has_sign);
}

TEST(Gradient, NonDifferentiableOperatorsAreNamed) {
  auto x = Symbol::var("x");
  auto y = Symbol::op("sum", {Symbol::op("argmax", {x}, {{"axis", int64_t{0}}}, "am")});
  const ops::TensorSpec s{{3}, DType::kFloat32, cpu()};
  EXPECT_THAT(error_of<NotImplementedError>([&] { make_gradient_graphs(y, {s}, {"x"}); }),
              HasSubstr("gradient: operator 'argmax' (node 'am') is not differentiable"));
}

// The roles of the split graphs' arguments go by node, not by name: arguments named like the
// variables that the split invents keep their role.
TEST(Gradient, ArgumentRolesAreTypedNotParsedFromNames) {
  auto x = Symbol::var("_head_grad0"), w = Symbol::var("_saved0");
  const Symbol y = Symbol::op("sum", {Symbol::op("dot", {Symbol::op("relu", {x}), w})});
  const std::vector<std::string> names = y.list_arguments();
  const ops::TensorSpec s{{4, 4}, DType::kFloat32, cpu()};
  const GradientGraphs gg = make_gradient_graphs(y, {s, s}, names);
  const std::vector<std::string> fnames = gg.forward.list_arguments();
  ASSERT_EQ(gg.forward_args.size(), fnames.size());
  for (size_t i = 0; i < fnames.size(); ++i) EXPECT_EQ(fnames[i], names.at(gg.forward_args[i]));
  const std::vector<std::string> bnames = gg.backward.list_arguments();
  ASSERT_EQ(gg.backward_args.size(), bnames.size());
  int head_grads = 0;
  for (size_t i = 0; i < bnames.size(); ++i) {
    const BackwardArg& a = gg.backward_args[i];
    switch (a.kind) {
      case BackwardArg::Kind::kInput:
        EXPECT_EQ(bnames[i], names.at(a.index));
        break;
      case BackwardArg::Kind::kHeadGrad:
        EXPECT_EQ(a.index, 0u);
        ++head_grads;
        break;
      case BackwardArg::Kind::kSaved:
        EXPECT_LT(gg.num_outputs + a.index, gg.forward.num_outputs());
        break;
    }
  }
  EXPECT_EQ(head_grads, 1);
}

}  // namespace
}  // namespace janus::graph

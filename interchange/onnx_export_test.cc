// ONNX export: what each mapping writes (read back through the ONNX protobuf classes) and the
// errors that name the node, the operator or the file. check_onnx.py runs the exported models
// through ONNX Runtime.
#include "onnx_export.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "janus/base/error.h"
#include "janus/ops/fused.h"
#include "janus/ops/ops.h"

#include "onnx/onnx_pb.h"
#include "testing/test_util.h"

namespace janus::interchange {
namespace {

using graph::Symbol;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

::onnx::ModelProto parse(const std::string& bytes) {
  ::onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromString(bytes));
  return model;
}

std::vector<std::string> op_types(const ::onnx::ModelProto& model) {
  std::vector<std::string> types;
  for (const ::onnx::NodeProto& n : model.graph().node()) types.push_back(n.op_type());
  return types;
}

// The extents of an input or output: kBatch for the symbolic "batch", kUnknown for an extent
// with neither a value nor a name.
constexpr int64_t kBatch = -1, kUnknown = -2;
std::vector<int64_t> dims(const ::onnx::ValueInfoProto& v) {
  std::vector<int64_t> out;
  for (const auto& d : v.type().tensor_type().shape().dim()) {
    if (d.has_dim_param()) {
      EXPECT_EQ(d.dim_param(), "batch");
      out.push_back(kBatch);
    } else {
      out.push_back(d.has_dim_value() ? d.dim_value() : kUnknown);
    }
  }
  return out;
}

// The values of the int64 initializer `name` (a Reshape's target).
std::vector<int64_t> int64s(const ::onnx::ModelProto& m, const std::string& name) {
  for (const ::onnx::TensorProto& t : m.graph().initializer()) {
    if (t.name() != name) continue;
    std::vector<int64_t> values(t.raw_data().size() / sizeof(int64_t));
    std::memcpy(values.data(), t.raw_data().data(), values.size() * sizeof(int64_t));
    return values;
  }
  ADD_FAILURE() << "no initializer " << name;
  return {};
}

// The int attribute `name` of node n.
int64_t int_attr(const ::onnx::NodeProto& n, const std::string& name) {
  for (const ::onnx::AttributeProto& a : n.attribute()) {
    if (a.name() == name) return a.i();
  }
  ADD_FAILURE() << n.op_type() << " has no attribute " << name;
  return -1;
}

// The ints attribute `name` of node n.
std::vector<int64_t> ints_attr(const ::onnx::NodeProto& n, const std::string& name) {
  for (const ::onnx::AttributeProto& a : n.attribute()) {
    if (a.name() == name) return {a.ints().begin(), a.ints().end()};
  }
  ADD_FAILURE() << n.op_type() << " has no attribute " << name;
  return {};
}

TEST(OnnxExport, FullyConnectedWithReluIsGemmThenRelu) {
  const Symbol x = Symbol::var("data", Shape{2, 3});
  const Symbol y = Symbol::op("fully_connected", {x, Symbol::var("w"), Symbol::var("b")},
                              {{"activation", std::string("relu")}}, "fc");
  const graph::NamedArrays params = {{"w", ones({4, 3})}, {"b", zeros({4})}};
  const ::onnx::ModelProto m = parse(export_onnx(y, params));
  ASSERT_EQ(m.opset_import_size(), 1);
  EXPECT_EQ(m.opset_import(0).version(), kOnnxOpset);
  EXPECT_THAT(op_types(m), ElementsAre("Gemm", "Relu"));
  EXPECT_EQ(m.graph().node(0).attribute(0).name(), "transB");
  ASSERT_EQ(m.graph().input_size(), 1);
  EXPECT_EQ(m.graph().input(0).name(), "data");
  EXPECT_THAT(dims(m.graph().input(0)), ElementsAre(kBatch, 3));  // a dynamic batch by default
  ASSERT_EQ(m.graph().output_size(), 1);
  EXPECT_EQ(m.graph().output(0).name(), y.list_outputs()[0]);
  EXPECT_THAT(dims(m.graph().output(0)), ElementsAre(kBatch, 4));
  ASSERT_EQ(m.graph().initializer_size(), 2);
  EXPECT_EQ(m.graph().initializer(0).name(), "w");
  EXPECT_EQ(m.graph().initializer(0).raw_data().size(), 12 * sizeof(float));
}

// The sigmoid and tanh that fuse_bias_activation puts into a product's call come back out as
// their own ONNX nodes, as relu does; an activation that is not a post-op is refused by the
// operator before the exporter sees it.
TEST(OnnxExport, ProductsWithSigmoidOrTanhAreFollowedByTheirNode) {
  const Symbol x = Symbol::var("data", Shape{2, 1, 6, 6});
  const Symbol conv = Symbol::op("conv2d", {x, Symbol::var("w"), Symbol::var("b")},
                                 {{"activation", std::string("sigmoid")}}, "conv");
  const Symbol y = Symbol::op("fully_connected",
                              {Symbol::op("flatten", {conv}), Symbol::var("w2"), Symbol::var("b2")},
                              {{"activation", std::string("tanh")}}, "fc");
  const graph::NamedArrays params = {
      {"w", ones({3, 1, 3, 3})}, {"b", zeros({3})}, {"w2", ones({4, 48})}, {"b2", zeros({4})}};
  const ::onnx::ModelProto m = parse(export_onnx(y, params));
  EXPECT_THAT(op_types(m), ElementsAre("Conv", "Sigmoid", "Flatten", "Gemm", "Tanh"));
  EXPECT_EQ(m.graph().node(1).input(0), m.graph().node(0).output(0));
  EXPECT_EQ(m.graph().node(4).output(0), y.list_outputs()[0]);
}

// A convolution whose 2x2 average pooling fuse_conv_avg_pool put into its call exports as its
// steps: Conv, the activation if any, and AveragePool of 2x2 windows with stride 2 (floor mode,
// no padding), each reading the one before.
TEST(OnnxExport, ConvolutionsWithTheirPoolingAreFollowedByAveragePool) {
  const Symbol x = Symbol::var("data", Shape{2, 1, 7, 7});
  const Symbol act =
      Symbol::op("conv2d", {x, Symbol::var("w"), Symbol::var("b")},
                 {{"activation", std::string("sigmoid")}, {"avg_pool_2x2", true}}, "conv");
  const Symbol y = Symbol::op("conv2d", {act, Symbol::var("w2"), Symbol::var("b2")},
                              {{"padding", std::vector<int64_t>{1}}, {"avg_pool_2x2", true}}, "c2");
  const graph::NamedArrays params = {
      {"w", ones({3, 1, 2, 2})}, {"b", zeros({3})}, {"w2", ones({4, 3, 3, 3})}, {"b2", zeros({4})}};
  const ::onnx::ModelProto m = parse(export_onnx(y, params));
  EXPECT_THAT(op_types(m), ElementsAre("Conv", "Sigmoid", "AveragePool", "Conv", "AveragePool"));
  for (int i = 1; i < 5; ++i) {
    EXPECT_EQ(m.graph().node(i).input(0), m.graph().node(i - 1).output(0)) << "node " << i;
  }
  EXPECT_EQ(m.graph().node(4).output(0), y.list_outputs()[0]);
  EXPECT_EQ(ints_attr(m.graph().node(2), "kernel_shape"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(ints_attr(m.graph().node(2), "strides"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(ints_attr(m.graph().node(2), "pads"), (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_THAT(dims(m.graph().output(0)), ElementsAre(kBatch, 4, 1, 1));  // 6x6, 3x3, 3x3, 1x1
}

TEST(OnnxExport, GivenInputShapeReplacesTheRecordedOne) {
  const Symbol y = Symbol::op("flatten", {Symbol::var("data", Shape{2, 3, 4})});
  OnnxExportOptions o;
  o.dynamic_batch = false;
  o.input_shapes["data"] = Shape{5, 3, 4};
  const ::onnx::ModelProto m = parse(export_onnx(y, {}, o));
  EXPECT_THAT(dims(m.graph().input(0)), ElementsAre(5, 3, 4));
  EXPECT_THAT(dims(m.graph().output(0)), ElementsAre(5, 12));
}

// MXNet's codes (0 copies an extent, -3 merges two axes) are resolved for the input's shape: the
// Reshape gets the plain target shape, as for reshape.
TEST(OnnxExport, MxnetReshapeIsReshapeToTheResolvedShape) {
  const Symbol y = Symbol::op("mxnet_reshape", {Symbol::var("data", Shape{2, 3, 4})},
                              {{"shape", std::vector<int64_t>{0, -3}}}, "r");
  OnnxExportOptions o;
  o.dynamic_batch = false;
  o.input_shapes["data"] = Shape{5, 3, 4};
  const ::onnx::ModelProto m = parse(export_onnx(y, {}, o));
  EXPECT_THAT(op_types(m), ElementsAre("Reshape"));
  ASSERT_EQ(m.graph().initializer_size(), 1);
  const ::onnx::TensorProto& target = m.graph().initializer(0);
  EXPECT_EQ(target.name(), m.graph().node(0).input(1));
  std::vector<int64_t> values(2);
  ASSERT_EQ(target.raw_data().size(), values.size() * sizeof(int64_t));
  std::memcpy(values.data(), target.raw_data().data(), target.raw_data().size());
  EXPECT_THAT(values, ElementsAre(5, 12));
  EXPECT_THAT(dims(m.graph().output(0)), ElementsAre(5, 12));
}

// sort and argsort are a TopK of the whole axis, topk one of k; positions are cast to the
// operator's dtype; take_along_axis is GatherElements.
TEST(OnnxExport, OrderingIsTopKAndTakeAlongAxisIsGatherElements) {
  const Symbol x = Symbol::var("data", Shape{2, 5});
  OnnxExportOptions o;
  o.dynamic_batch = false;
  const ::onnx::ModelProto sorted =
      parse(export_onnx(Symbol::op("sort", {x}, {{"descending", true}}, "s"), {}, o));
  ASSERT_THAT(op_types(sorted), ElementsAre("TopK"));
  EXPECT_EQ(int_attr(sorted.graph().node(0), "axis"), 1);
  EXPECT_EQ(int_attr(sorted.graph().node(0), "largest"), 1);
  EXPECT_THAT(int64s(sorted, sorted.graph().node(0).input(1)), ElementsAre(5));
  const ::onnx::ModelProto order = parse(export_onnx(
      Symbol::op("argsort", {x}, {{"axis", int64_t{0}}, {"dtype", DType::kInt32}}), {}, o));
  ASSERT_THAT(op_types(order), ElementsAre("TopK", "Cast"));
  EXPECT_EQ(int_attr(order.graph().node(0), "largest"), 0);
  EXPECT_THAT(int64s(order, order.graph().node(0).input(1)), ElementsAre(2));
  const Symbol both =
      Symbol::op("topk", {x}, {{"k", int64_t{3}}, {"ret_typ", std::string("both")}});
  const ::onnx::ModelProto top = parse(export_onnx(Symbol::group({both[0], both[1]}), {}, o));
  ASSERT_THAT(op_types(top), ElementsAre("TopK", "Cast"));  // float32 positions, as MXNet
  EXPECT_EQ(int_attr(top.graph().node(1), "to"), ::onnx::TensorProto::FLOAT);
  EXPECT_THAT(dims(top.graph().output(0)), ElementsAre(2, 3));
  const Symbol mask = Symbol::op("topk", {x}, {{"ret_typ", std::string("mask")}}, "m")[0];
  EXPECT_THAT(error_of<NotImplementedError>([&] { export_onnx(mask, {}, o); }),
              HasSubstr("node 'm' (operator 'topk'): ret_typ 'mask'"));
  const Symbol picked =
      Symbol::op("take_along_axis", {x, Symbol::var("idx", Shape{2, 2}, DType::kInt64)});
  EXPECT_THAT(op_types(parse(export_onnx(picked, {{"idx", zeros({2, 2}, DType::kInt64)}}, o))),
              ElementsAre("GatherElements"));
  // With a dynamic batch, sorting along the batch axis has no constant K.
  EXPECT_THAT(error_of<NotImplementedError>([&] {
                export_onnx(Symbol::op("sort", {x}, {{"axis", int64_t{0}}}, "b"), {});
              }),
              HasSubstr("node 'b' (operator 'sort'): it orders axis 0, whose extent follows the "
                        "dynamic batch"));
}

// gather_nd's tuples move to the last axis as int64 (ONNX's GatherND); slice_like's ends are
// like's extents read at run time, so that they follow a dynamic batch.
TEST(OnnxExport, GatherNdAndSliceLike) {
  const Symbol x = Symbol::var("data", Shape{2, 5, 3});
  const Symbol at = Symbol::var("at", Shape{2, 4}, DType::kInt32);
  const ::onnx::ModelProto gathered =
      parse(export_onnx(Symbol::op("gather_nd", {x, at}), {{"at", zeros({2, 4}, DType::kInt32)}}));
  ASSERT_THAT(op_types(gathered), ElementsAre("Cast", "Transpose", "GatherND"));
  EXPECT_THAT(dims(gathered.graph().output(0)), ElementsAre(4, 3));
  const Symbol like = Symbol::var("like", Shape{2, 3, 3});
  const ::onnx::ModelProto sliced = parse(
      export_onnx(Symbol::op("slice_like", {x, like}, {{"axes", std::vector<int64_t>{0, -2}}}),
                  {{"like", zeros({2, 3, 3})}}));
  ASSERT_THAT(op_types(sliced), ElementsAre("Shape", "Gather", "Slice"));
  EXPECT_THAT(int64s(sliced, sliced.graph().node(1).input(1)), ElementsAre(0, 1));
  EXPECT_THAT(dims(sliced.graph().output(0)), ElementsAre(2, 3, 3));
}

// reshape_like with axis ranges reshapes to x's extents before the range, like's in its range and
// x's after it, each read at run time (Slices of the two Shapes, concatenated); a part that is
// empty is left out, and without ranges like's Shape is the target itself.
TEST(OnnxExport, ReshapeLikeRangesConcatenateSlicesOfBothShapes) {
  const Symbol x = Symbol::var("data", Shape{2, 6, 3, 4});
  const Symbol like = Symbol::var("like", Shape{3, 4, 9, 2});
  const graph::NamedArrays params{{"like", zeros({3, 4, 9, 2})}};
  const ::onnx::ModelProto middle = parse(export_onnx(
      Symbol::op("reshape_like", {x, like},
                 {{"x_axes", std::vector<int64_t>{1, 3}}, {"like_axes", std::vector<int64_t>{2}}}),
      params));
  ASSERT_THAT(op_types(middle),
              ElementsAre("Shape", "Slice", "Shape", "Slice", "Slice", "Concat", "Reshape"));
  EXPECT_THAT(int64s(middle, middle.graph().node(3).input(1)), ElementsAre(2));
  EXPECT_THAT(int64s(middle, middle.graph().node(3).input(2)), ElementsAre(4));
  EXPECT_THAT(dims(middle.graph().output(0)), ElementsAre(kBatch, 9, 2, 4));
  const Symbol front = Symbol::op(
      "reshape_like", {x, like},
      {{"x_axes", std::vector<int64_t>{0, -2}}, {"like_axes", std::vector<int64_t>{0, 2}}});
  // x's batch axis is in the range: at another batch size the extents no longer match.
  EXPECT_THAT(error_of<Error>([&] { export_onnx(front, params); }),
              HasSubstr("does not hold at batch size 3"));
  OnnxExportOptions fixed_batch;
  fixed_batch.dynamic_batch = false;
  const ::onnx::ModelProto fixed = parse(export_onnx(front, params, fixed_batch));
  ASSERT_THAT(op_types(fixed),
              ElementsAre("Shape", "Slice", "Shape", "Slice", "Concat", "Reshape"));
  EXPECT_THAT(dims(fixed.graph().output(0)), ElementsAre(3, 4, 3, 4));
  const ::onnx::ModelProto whole = parse(export_onnx(
      Symbol::op("reshape_like", {Symbol::var("data", Shape{6, 36}), like}), params, fixed_batch));
  EXPECT_THAT(op_types(whole), ElementsAre("Shape", "Reshape"));
}

// ceil_mode (MXNet's "full" pooling) is ONNX's ceil_mode while every last window starts inside
// the input; ONNX drops one that starts past it, so such a node is refused, naming it.
TEST(OnnxExport, CeilModePoolingUnlessAWindowStartsPastTheInput) {
  const Symbol x = Symbol::var("data", Shape{1, 2, 8, 9});
  const Symbol y = Symbol::op("avg_pool2d", {x},
                              {{"kernel_size", std::vector<int64_t>{3, 4}},
                               {"stride", std::vector<int64_t>{2, 3}},
                               {"padding", std::vector<int64_t>{0, 1}},
                               {"ceil_mode", true},
                               {"count_include_pad", false}},
                              "pool");
  const ::onnx::ModelProto m = parse(export_onnx(y, {}));
  EXPECT_THAT(op_types(m), ElementsAre("AveragePool"));
  std::map<std::string, int64_t> ints;
  for (const auto& a : m.graph().node(0).attribute()) ints[a.name()] = a.i();
  EXPECT_EQ(ints.at("ceil_mode"), 1);
  EXPECT_EQ(ints.at("count_include_pad"), 0);
  EXPECT_THAT(dims(m.graph().output(0)), ElementsAre(kBatch, 2, 4, 4));
  const Symbol empty = Symbol::op("max_pool2d", {Symbol::var("data", Shape{1, 1, 5, 7})},
                                  {{"kernel_size", std::vector<int64_t>{1}},
                                   {"stride", std::vector<int64_t>{3}},
                                   {"ceil_mode", true}},
                                  "mp");
  EXPECT_THAT(error_of<NotImplementedError>([&] { export_onnx(empty, {}); }),
              HasSubstr("node 'mp' (operator 'max_pool2d'): in ceil mode its last window along "
                        "the height starts at 6, outside the input's 5"));
}

// With a dynamic batch, a reshape's extent that depends on the batch is ONNX's 0 (copy) where it
// is the input's extent on that axis, else -1; the others stay fixed. An output extent that
// depends on the batch but is not the batch size is unknown.
TEST(OnnxExport, DynamicBatchReshapeCopiesOrInfersTheExtentsThatDependOnIt) {
  const Symbol x = Symbol::var("data", Shape{2, 3, 4});
  const Symbol merged =
      Symbol::op("mxnet_reshape", {x}, {{"shape", std::vector<int64_t>{0, -3}}}, "merged");
  const Symbol flat = Symbol::op("reshape", {x}, {{"shape", Shape{-1}}}, "flat");
  const Symbol rows = Symbol::op("reshape", {x}, {{"shape", Shape{-1, 2}}}, "rows");
  const ::onnx::ModelProto m = parse(export_onnx(Symbol::group({merged, flat, rows}), {}));
  EXPECT_THAT(int64s(m, "merged/shape"), ElementsAre(0, 12));
  EXPECT_THAT(int64s(m, "flat/shape"), ElementsAre(-1));
  EXPECT_THAT(int64s(m, "rows/shape"), ElementsAre(-1, 2));
  EXPECT_THAT(dims(m.graph().input(0)), ElementsAre(kBatch, 3, 4));
  EXPECT_THAT(dims(m.graph().output(0)), ElementsAre(kBatch, 12));
  EXPECT_THAT(dims(m.graph().output(1)), ElementsAre(kUnknown));
  EXPECT_THAT(dims(m.graph().output(2)), ElementsAre(kUnknown, 2));
}

// A graph that fixes its batch size is refused with shape inference's error at the other batch
// size, which names the node; so is a reshape with two extents that depend on the batch; both
// export with a fixed batch.
TEST(OnnxExport, DynamicBatchRefusalsNameTheNode) {
  const Symbol x = Symbol::var("data", Shape{2, 3});
  const Symbol fixed = Symbol::op("add", {x, Symbol::var("w", Shape{2, 3})}, {}, "plus");
  const std::string msg = error_of<Error>([&] { export_onnx(fixed, {{"w", ones({2, 3})}}); });
  EXPECT_THAT(msg, HasSubstr("ONNX export with a dynamic batch: the graph '<graph>' does not hold "
                             "at batch size 3 (it was given 2)"));
  EXPECT_THAT(msg, HasSubstr("node 'plus'"));
  EXPECT_THAT(msg, HasSubstr("--fixed-batch"));
  OnnxExportOptions fixed_batch;
  fixed_batch.dynamic_batch = false;
  EXPECT_THAT(dims(parse(export_onnx(fixed, {{"w", ones({2, 3})}}, fixed_batch)).graph().input(0)),
              ElementsAre(2, 3));

  // [N, 3] x [N, 3] outer product [N, 3, N, 3], merged to [3N, 3N]: two inferred extents.
  const Symbol rows =
      Symbol::op("expand_dims", {Symbol::op("expand_dims", {x}, {{"axis", int64_t{2}}})},
                 {{"axis", int64_t{3}}});
  const Symbol cols =
      Symbol::op("expand_dims", {Symbol::op("expand_dims", {x}, {{"axis", int64_t{0}}})},
                 {{"axis", int64_t{0}}});
  const Symbol square = Symbol::op("mxnet_reshape", {Symbol::op("mul", {rows, cols})},
                                   {{"shape", std::vector<int64_t>{-3, -3}}}, "square");
  EXPECT_THAT(error_of<NotImplementedError>([&] { export_onnx(square, {}); }),
              HasSubstr("node 'square' (operator 'mxnet_reshape'): with a dynamic batch: output "
                        "axes 0 and 1 both depend on the batch size"));
  EXPECT_NO_THROW(export_onnx(square, {}, fixed_batch));

  const Symbol two = Symbol::var("data0", Shape{2, 3}) + Symbol::var("data1", Shape{1, 3});
  OnnxExportOptions both;
  both.input_names = {"data0", "data1"};
  EXPECT_THAT(error_of<ValueError>([&] { export_onnx(two, {}, both); }),
              HasSubstr("inputs 'data0' and 'data1' have 2 and 1 rows, expected one batch size"));
}

// The rounding, trigonometric and logarithm operators that ONNX lacks are composed.
TEST(OnnxExport, ComposedUnaryOperators) {
  const Symbol x = Symbol::var("data", Shape{3});
  const std::vector<ops::FusedStep> steps = {{&ops::get_op("cbrt"), {}, {0}},
                                             {&ops::get_op("log2"), {}, {-1}},
                                             {&ops::get_op("expm1"), {}, {-2}},
                                             {&ops::get_op("rint"), {}, {-3}},
                                             {&ops::get_op("arcsin"), {}, {-4}}};
  const Symbol y = Symbol::op("fused_elementwise", {x},
                              {{"program", ops::encode_fused_program(steps)}}, "fused");
  const ::onnx::ModelProto m = parse(export_onnx(y, {}));
  EXPECT_THAT(op_types(m), ElementsAre("Abs", "Pow", "Sign", "Mul", "Log", "Div", "Exp", "Sub",
                                       "Round", "Asin"));
}

TEST(OnnxExport, FusedElementwiseIsItsStepsInOrder) {
  const Symbol x = Symbol::var("data", Shape{3});
  const std::vector<ops::FusedStep> steps = {{&ops::get_op("exp"), {}, {0}},
                                             {&ops::get_op("mul_scalar"), {2.0}, {-1}},
                                             {&ops::get_op("rsqrt"), {}, {-2}}};
  const Symbol y = Symbol::op("fused_elementwise", {x},
                              {{"program", ops::encode_fused_program(steps)}}, "fused");
  const ::onnx::ModelProto m = parse(export_onnx(y, {}));
  EXPECT_THAT(op_types(m), ElementsAre("Exp", "Mul", "Sqrt", "Reciprocal"));
  // The last step writes the graph's output.
  EXPECT_EQ(m.graph().node(3).output(0), m.graph().output(0).name());
}

// ONNX's Mod takes the divisor's sign only for integers (fmod = 0); a float mod is fmod's
// remainder shifted by b where the signs differ.
TEST(OnnxExport, ModIsOnnxModForIntegersAndFmodWithAShiftForFloats) {
  for (const DType dtype : {DType::kInt32, DType::kFloat32}) {
    const Symbol a = Symbol::var("a", Shape{2}, dtype);
    const Symbol b = Symbol::var("b", Shape{2}, dtype);
    OnnxExportOptions o;
    o.input_names = {"a", "b"};
    const ::onnx::ModelProto m = parse(export_onnx(Symbol::op("mod", {a, b}), {}, o));
    ASSERT_GE(m.graph().node_size(), 1);
    const ::onnx::NodeProto& first = m.graph().node(0);
    EXPECT_EQ(first.op_type(), "Mod");
    ASSERT_EQ(first.attribute_size(), 1);
    EXPECT_EQ(first.attribute(0).i(), dtype == DType::kInt32 ? 0 : 1);
    EXPECT_EQ(m.graph().node_size() == 1, dtype == DType::kInt32);
  }
}

// The operators that have no ONNX form, each group with the reason.
const std::set<std::string, std::less<>>& refused_on_purpose() {
  static const std::set<std::string, std::less<>> refused = {
      // random numbers
      "permutation", "randint", "random_gamma", "random_normal", "random_poisson", "random_uniform",
      // training steps and in-place updates
      "adam_update", "sgd_mom_update", "sgd_update", "add_into", "copy_into", "fill_into",
      "concat_into",
      // reads another device: never in a compiled graph
      "peer_add",
      // an accumulating scatter is opset 16
      "scatter_add", "scatter_along_axis",
      // ONNX has no connectionist temporal classification operator
      "ctc_loss",
      // standard ONNX has no inverse, slogdet, Cholesky, eigen, singular value or QR
      // decomposition (Det only)
      "linalg_cholesky", "linalg_eigh", "linalg_inv", "linalg_qr", "linalg_slogdet", "linalg_svd",
      // no Atan2, Hypot or CopySign in ONNX; composing them loses the quadrant, the range or
      // the sign of zero
      "arctan2", "hypot", "copysign"};
  return refused;
}

// Every operator that the fuse_elementwise pass may put into a program can be exported inside
// one, apart from gradients (never in an inference graph) and those refused on purpose.
TEST(OnnxExport, EveryFusableOperatorExportsAsAStep) {
  std::vector<std::string> refused;
  int tried = 0;
  for (const ops::OpDef* op : ops::all_ops()) {
    if (!ops::fusable(*op) || op->name.find("_backward") != std::string_view::npos ||
        refused_on_purpose().contains(op->name)) {
      continue;
    }
    ++tried;
    ops::FusedStep step{op, {}, {}};
    for (const ops::AttrDef& a : op->attrs) {
      if (a.default_value) {
        step.attrs.values().push_back(*a.default_value);
      } else if (a.type == ops::AttrType::kFloat) {
        step.attrs.values().push_back(0.5);
      } else if (a.type == ops::AttrType::kInt) {
        step.attrs.values().push_back(int64_t{1});
      } else {
        step.attrs.values().push_back(false);
      }
    }
    std::vector<Symbol> inputs;
    for (size_t i = 0; i < op->inputs.size(); ++i) {
      step.inputs.push_back(static_cast<int>(i));
      inputs.push_back(Symbol::var(fmt::format("data{}", i), Shape{2}));
    }
    OnnxExportOptions o;
    o.input_names.clear();
    for (const Symbol& v : inputs) o.input_names.push_back(v.list_arguments()[0]);
    const Symbol y = Symbol::op("fused_elementwise", inputs,
                                {{"program", ops::encode_fused_program({step})}}, "fused");
    try {
      export_onnx(y, {}, o);
    } catch (const Error& e) {
      refused.push_back(fmt::format("{}: {}", op->name, e.what()));
    }
  }
  EXPECT_THAT(refused, ::testing::IsEmpty());
  EXPECT_GE(tried, 40);  // unary, binary, scalar and comparison operators
}

TEST(OnnxExport, ScalarsTakeTheDtypeOfTheArray) {
  for (const DType dtype : {DType::kFloat16, DType::kFloat64, DType::kInt32}) {
    const Symbol y =
        Symbol::op("mul_scalar", {Symbol::var("data", Shape{2}, dtype)}, {{"scalar", 3.0}});
    const ::onnx::ModelProto m = parse(export_onnx(y, {}));
    ASSERT_EQ(m.graph().initializer_size(), 1);
    const ::onnx::TensorProto& c = m.graph().initializer(0);
    EXPECT_EQ(c.dims_size(), 0);
    EXPECT_EQ(c.raw_data().size(), dtype_size(dtype)) << dtype_name(dtype);
    EXPECT_EQ(c.data_type(), m.graph().input(0).type().tensor_type().elem_type());
  }
}

// Every registered operator is mapped, computed (creation operators) or refused on purpose: a
// new operator fails this test until its ONNX form is written or its refusal listed here.
TEST(OnnxExport, EveryOperatorIsMappedOrRefusedOnPurpose) {
  const std::vector<std::string> mapped = onnx_mapped_operators();
  const std::set<std::string, std::less<>>& refused = refused_on_purpose();
  std::vector<std::string> undecided;
  for (const ops::OpDef* op : ops::all_ops()) {
    const std::string name(op->name);
    const bool creation = op->inputs.empty() && !op->random;
    if (std::binary_search(mapped.begin(), mapped.end(), name) || creation ||
        refused.contains(name) || name.find("_backward") != std::string::npos) {
      continue;
    }
    undecided.push_back(name);
  }
  EXPECT_THAT(undecided, ::testing::IsEmpty());
  for (const std::string& name : mapped) EXPECT_NE(ops::find_op(name), nullptr) << name;
}

TEST(OnnxExport, OutputThatIsAnInputGoesThroughIdentity) {
  const Symbol x = Symbol::var("data", Shape{2});
  const ::onnx::ModelProto m = parse(export_onnx(Symbol::group({x, Symbol::op("relu", {x})}), {}));
  EXPECT_THAT(op_types(m), ElementsAre("Relu", "Identity"));
  EXPECT_EQ(m.graph().output_size(), 2);
}

TEST(OnnxExport, OperatorsWithoutOnnxEquivalentNameTheNodeAndTheOperator) {
  const Symbol x = Symbol::var("data", Shape{2, 3});
  const Symbol noise = Symbol::op("random_uniform", {}, {{"shape", Shape{2, 3}}}, "noise") + x;
  OnnxExportOptions fixed_batch;  // the noise's shape fixes the batch size
  fixed_batch.dynamic_batch = false;
  EXPECT_THAT(error_of<NotImplementedError>([&] { export_onnx(noise, {}, fixed_batch); }),
              HasSubstr("ONNX export: node 'noise' (operator 'random_uniform') cannot be "
                        "exported: it draws random numbers"));
  const Symbol grad = Symbol::op("relu_backward", {x, x}, {}, "relu_grad");
  EXPECT_THAT(error_of<NotImplementedError>([&] { export_onnx(grad, {}); }),
              HasSubstr("node 'relu_grad' (operator 'relu_backward') cannot be exported: it is "
                        "a gradient"));
  // A gradient whose name does not end in _backward.
  const Symbol bias_grad =
      Symbol::op("conv2d_backward_bias", {Symbol::var("data", Shape{2, 3, 4, 4})}, {}, "bias_grad");
  EXPECT_THAT(error_of<NotImplementedError>([&] { export_onnx(bias_grad, {}); }),
              HasSubstr("node 'bias_grad' (operator 'conv2d_backward_bias') cannot be exported: "
                        "it is a gradient"));
  const Symbol drop = Symbol::op("dropout", {x}, {{"p", 0.5}, {"training", true}}, "drop")[0];
  EXPECT_THAT(error_of<NotImplementedError>([&] { export_onnx(drop, {}); }),
              HasSubstr("node 'drop' (operator 'dropout'): dropout in training mode"));
  const Symbol c = Symbol::var("c", Shape{3});
  const Symbol bn = Symbol::op("batch_norm", {x, c, c, c, c}, {{"training", true}}, "bn")[0];
  EXPECT_THAT(error_of<NotImplementedError>([&] {
                export_onnx(bn, {{"c", ones({3})}});
              }),
              HasSubstr("node 'bn' (operator 'batch_norm'): batch statistics in training mode"));
}

TEST(OnnxExport, ParametersMustMatchTheGraph) {
  const Symbol y = Symbol::op(
      "fully_connected", {Symbol::var("data", Shape{2, 3}), Symbol::var("w"), Symbol::var("b")});
  OnnxExportOptions o;
  o.symbol_file = "net-symbol.json";
  o.params_file = "net-0003.safetensors";
  EXPECT_THAT(error_of<ValueError>([&] {
                export_onnx(y, {{"w", ones({4, 3})}}, o);
              }),
              HasSubstr("the graph 'net-symbol.json' needs parameter 'b', which is neither an "
                        "input nor in 'net-0003.safetensors'"));
  EXPECT_THAT(error_of<ValueError>([&] {
                export_onnx(y, {{"w", ones({4, 3})}, {"b", ones({4})}, {"extra", ones({1})}}, o);
              }),
              HasSubstr("'net-0003.safetensors' holds 'extra'"));
  o.input_names = {"x"};
  EXPECT_THAT(error_of<ValueError>([&] { export_onnx(y, {}, o); }),
              HasSubstr("the graph has no argument named 'x'"));
}

TEST(OnnxExport, InputWithoutShapeAsksForOne) {
  const Symbol y = Symbol::op("relu", {Symbol::var("data")});
  OnnxExportOptions o;
  o.symbol_file = "net-symbol.json";
  EXPECT_THAT(error_of<ValueError>([&] { export_onnx(y, {}, o); }),
              HasSubstr("'net-symbol.json' does not record the shape of its input 'data'"));
}

TEST(OnnxExport, SaveNamesAPathItCannotWrite) {
  const Symbol y = Symbol::op("relu", {Symbol::var("data", Shape{2})});
  EXPECT_THAT(error_of<IOError>([&] { save_onnx("/nonexistent-dir/net.onnx", y, {}); }),
              HasSubstr("cannot write '/nonexistent-dir/net.onnx'"));
}

}  // namespace
}  // namespace janus::interchange

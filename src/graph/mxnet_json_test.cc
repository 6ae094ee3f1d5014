// The MXNet graph reader: the fixtures exported by MXNet 1.9.1 give MXNet's outputs, and each
// kind of bad file is a FormatError naming the file, the node and the operator.
#include "janus/graph/mxnet_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/graph/mxnet_params.h"
#include "janus/graph/npy.h"
#include "janus/ops/ops.h"

#include "testing/mxnet_fixtures.h"
#include "testing/test_util.h"

namespace janus::graph {
namespace {

using ::testing::HasSubstr;
using Ints = std::vector<int64_t>;
using testing::mxnet_fixture;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs the fixture through the graph layer alone: the parameters and the input bound by name.
std::vector<NDArray> run_fixture(const std::string& prefix) {
  const Symbol net =
      mxnet_symbol_from_json(read_text(prefix + "-symbol.json"), prefix + "-symbol.json");
  std::map<std::string, NDArray> args;
  for (auto& [name, a] : load_mxnet_params(prefix + "-0000.params")) args[name] = a;
  args["data"] = load_npy(prefix + "-input.npy");
  return net.eval(args);
}

TEST(MxnetJson, FixturesMatchMxnetOutputs) {
  for (const char* flavour : testing::kMxnetFlavours) {
    for (const char* model : testing::kMxnetModels) {
      SCOPED_TRACE(std::string(flavour) + "/" + model);
      const std::string prefix = mxnet_fixture(flavour, model);
      const std::vector<NDArray> ys = run_fixture(prefix);
      ASSERT_EQ(ys.size(), 1u);
      testing::expect_matches_mxnet(ys[0], prefix + "-output0.npy");
    }
  }
}

// Pooling with the "full" convention (Gluon's ceil_mode): average pooling with and without the
// padding counted, windows past the padded edge, uneven kernels and strides, max pooling whose
// last window runs past the input; four heads, both flavours.
TEST(MxnetJson, FullPoolingFixtureMatchesMxnetOutputs) {
  for (const char* flavour : testing::kMxnetFlavours) {
    SCOPED_TRACE(flavour);
    const std::string prefix = mxnet_fixture(flavour, "pools");
    const std::vector<NDArray> ys = run_fixture(prefix);
    ASSERT_EQ(ys.size(), 4u);
    for (size_t k = 0; k < ys.size(); ++k) {
      testing::expect_matches_mxnet(ys[k], prefix + "-output" + std::to_string(k) + ".npy");
    }
  }
}

// Module-era symbol API: Convolution with stride, tanh/softrelu, avg pooling without the
// padding counted, Reshape codes -3 and -4, transpose, clip, mean, sum, Flatten, Dropout,
// FullyConnected with flatten=False and no_bias, broadcast_*, elemwise_sub, scalar ops,
// LeakyReLU, log_softmax, SoftmaxActivation and SoftmaxOutput (its label dropped): three heads.
TEST(MxnetJson, SymbolApiFixtureMatchesMxnetOutputs) {
  const std::string prefix = mxnet_fixture("legacy", "symops");
  const std::vector<NDArray> ys = run_fixture(prefix);
  ASSERT_EQ(ys.size(), 3u);
  for (size_t k = 0; k < ys.size(); ++k) {
    testing::expect_matches_mxnet(ys[k], prefix + "-output" + std::to_string(k) + ".npy");
  }
}

// The fixture's outputs, each of MXNet's dtype (positions as float32, int32 or int64) and
// within 1e-5 of its numbers.
void expect_fixture_outputs(const std::string& prefix, size_t count) {
  const std::vector<NDArray> ys = run_fixture(prefix);
  ASSERT_EQ(ys.size(), count);
  for (size_t k = 0; k < ys.size(); ++k) {
    const std::string expected = prefix + "-output" + std::to_string(k) + ".npy";
    SCOPED_TRACE(expected);
    EXPECT_EQ(ys[k].dtype(), load_npy(expected).dtype());
    testing::expect_matches_mxnet(ys[k], expected);
  }
}

// sort, argsort and topk: descending and ascending, axis None (flattened), positions in
// float32, int32 and int64, and topk's every ret_typ ('both' gives two heads); norm over every
// axis (shape (1,)).
TEST(MxnetJson, OrderingFixtureMatchesMxnetOutputs) {
  expect_fixture_outputs(mxnet_fixture("legacy", "orderops"), 11);
}

// L2Normalization (instance, channel, spatial), InstanceNorm, LayerNorm, GroupNorm, smooth_l1,
// norm (ord 1, one axis), MakeLoss and the regression outputs at inference, BlockGrad,
// UpSampling (nearest, bilinear) and Pad.
TEST(MxnetJson, NormalizationFixtureMatchesMxnetOutputs) {
  expect_fixture_outputs(mxnet_fixture("legacy", "normops"), 17);
}

// take (clip mode, a negative position), Embedding (positions clipped), where with a row
// condition and a full one, squeeze, slice with open ends and a step, slice_axis, stack of two
// and three, tile, repeat (an axis, the last axis, flattened), SequenceMask, SequenceLast
// (axis 0 and 1), Cast, hard_sigmoid, softsign (operator and Activation), argmax and argmin
// (float32 positions; an axis, None, keepdims), one_hot (labels out of range, on and off values,
// int32) and broadcast_to.
TEST(MxnetJson, IndexingFixtureMatchesMxnetOutputs) {
  expect_fixture_outputs(mxnet_fixture("legacy", "shapeops"), 29);
}

// The numpy front end's graph of the same operators: np.sort, np.argsort, npx.topk, np.tile,
// np.where, np.stack, np.repeat, np.take, basic slicing with steps, linalg.norm, np.pad,
// np.square, np.squeeze, LayerNorm and Embedding blocks.
TEST(MxnetJson, NumpyOperatorFixtureMatchesMxnetOutputs) {
  expect_fixture_outputs(mxnet_fixture("numpy", "npops"), 17);
}

// split and SliceChannel (squeeze_axis, a negative axis), reverse and flip, SequenceReverse,
// broadcast_axis/broadcast_axes, broadcast_like, LRN (two windows), every legacy comparison
// (broadcast_, elementwise, with a scalar; ties included), take in clip and wrap mode with
// positions past the end and below -n, tile with more reps than axes, SwapAxis, slice_like
// (every axis; two, one negative), gather_nd (tuples of two and three, negative positions) and
// reshape_like (whole shapes; ranges of both, with a begin or an end of None, one negative).
TEST(MxnetJson, ArrayFixtureMatchesMxnetOutputs) {
  expect_fixture_outputs(mxnet_fixture("legacy", "arrayops"), 43);
}

// The numpy front end's split (sections and boundaries), flip (two axes, every axis),
// comparisons, swapaxes and hsplit.
TEST(MxnetJson, NumpyArrayFixtureMatchesMxnetOutputs) {
  expect_fixture_outputs(mxnet_fixture("numpy", "nparrayops"), 16);
}

// The remainders with MXNet's 0 for a zero divisor (broadcast, elementwise, with a scalar and
// reversed) and hypot; numpy mode's mod, arctan2, hypot and copysign.
TEST(MxnetJson, MathFixturesMatchMxnetOutputs) {
  expect_fixture_outputs(mxnet_fixture("legacy", "mathops"), 7);
  expect_fixture_outputs(mxnet_fixture("numpy", "npmathops"), 6);
}

// reverse along two axes: the second reversal's subtract (its positions' largest, [2, 6, 1],
// minus the positions) must not be planned over its broadcast input, which lands in a freed
// buffer of the output's size (a bug of plan_memory's in-place reuse that this caught).
TEST(MxnetJson, ReverseAlongTwoAxes) {
  const std::string text = R"J({"nodes": [{"op": "null", "name": "data", "inputs": []},
    {"op": "reverse", "name": "r", "attrs": {"axis": "(0, 2)"}, "inputs": [[0, 0, 0]]}],
    "arg_nodes": [0], "heads": [[1, 0, 0]]})J";
  const Symbol net = mxnet_symbol_from_json(text, "reverse-symbol.json");
  const std::vector<NDArray> ys =
      net.eval({{"data", arange(0, 48, 1, DType::kFloat32).reshape(Shape{2, 6, 4})}});
  ASSERT_EQ(ys[0].shape(), (Shape{2, 6, 4}));
  const std::vector<float> y = to_vector<float>(ys[0]);
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 6; ++j) {
      for (int64_t k = 0; k < 4; ++k) {
        EXPECT_EQ(y[static_cast<size_t>((i * 6 + j) * 4 + k)],
                  static_cast<float>(((1 - i) * 6 + j) * 4 + (3 - k)));
      }
    }
  }
}

// take along axis 0 (the extent counted without slicing leading axes): clip moves 5 to the last
// row and -3 to the first, wrap takes 5 to 2 and -4 to 2, as MXNet.
TEST(MxnetJson, TakeClipsAndWrapsAlongTheFirstAxis) {
  for (const auto& [mode, want] : std::vector<std::pair<std::string, std::vector<float>>>{
           {"clip", {4, 5, 0, 1, 2, 3}}, {"wrap", {4, 5, 4, 5, 2, 3}}}) {
    SCOPED_TRACE(mode);
    const std::string text =
        fmt::format(R"J({{"nodes": [{{"op": "null", "name": "data", "inputs": []}},
      {{"op": "null", "name": "idx", "inputs": []}},
      {{"op": "take", "name": "t", "attrs": {{"mode": "{}"}}, "inputs": [[0, 0, 0], [1, 0, 0]]}}],
      "arg_nodes": [0, 1], "heads": [[2, 0, 0]]}})J",
                    mode);
    const Symbol net = mxnet_symbol_from_json(text, "take-symbol.json");
    const NDArray idx = mode == "clip" ? from_vector<float>({5, -3, 1}, Shape{3})
                                       : from_vector<float>({5, -4, 1}, Shape{3});
    const std::vector<NDArray> ys =
        net.eval({{"data", arange(0, 6, 1, DType::kFloat32).reshape(Shape{3, 2})}, {"idx", idx}});
    ASSERT_EQ(ys[0].shape(), (Shape{3, 2}));
    EXPECT_EQ(to_vector<float>(ys[0]), want);
  }
}

TEST(MxnetJson, ArgumentsAreTheMxnetVariablesThatTheOutputsUse) {
  const Symbol net = mxnet_symbol_from_json(
      read_text(mxnet_fixture("legacy", "symops") + "-symbol.json"), "symops");
  const auto args = net.list_arguments();
  EXPECT_EQ(args.front(), "data");
  EXPECT_EQ(std::count(args.begin(), args.end(), "softmax_label"), 0);  // training only
}

TEST(MxnetJson, DetectsMxnetGraphsAndNotJanusOnes) {
  EXPECT_TRUE(is_mxnet_json(read_text(mxnet_fixture("numpy", "mlp") + "-symbol.json")));
  EXPECT_FALSE(is_mxnet_json(Symbol::op("relu", {Symbol::var("x")}).tojson()));
  EXPECT_FALSE(is_mxnet_json("not json"));
  EXPECT_FALSE(is_mxnet_json("[1, 2]"));
}

// A small graph: data -> OP(attrs) -> head.
std::string one_op(const std::string& op, const std::string& attrs, int inputs = 1) {
  std::string nodes = R"({"op": "null", "name": "data", "inputs": []})";
  std::string refs = "[0, 0, 0]";
  for (int i = 1; i < inputs; ++i) {
    nodes += fmt::format(R"(, {{"op": "null", "name": "in{}", "inputs": []}})", i);
    refs += fmt::format(", [{}, 0, 0]", i);
  }
  return fmt::format(R"({{"nodes": [{}, {{"op": "{}", "name": "n", "attrs": {{{}}},
                        "inputs": [{}]}}], "arg_nodes": [0], "heads": [[{}, 0, 0]],
                        "attrs": {{"mxnet_version": ["int", 10901]}}}})",
                     nodes, op, attrs, refs, inputs);
}

std::string format_error(const std::string& text) {
  return error_of<FormatError>([&] { mxnet_symbol_from_json(text, "bad-symbol.json"); });
}

TEST(MxnetJson, UnsupportedOperatorNamesNodeOperatorAndFile) {
  const std::string msg = format_error(one_op("ROIPooling", R"j("pooled_size": "(7, 7)")j"));
  EXPECT_THAT(msg, HasSubstr("bad-symbol.json"));
  EXPECT_THAT(msg, HasSubstr("node 'n'"));
  EXPECT_THAT(msg, HasSubstr("'ROIPooling'"));
  EXPECT_THAT(msg, HasSubstr("does not support"));
}

TEST(MxnetJson, UnknownAttributeIsAnErrorNotSkipped) {
  const std::string msg = format_error(one_op("Activation", R"("act_type": "relu", "foo": "1")"));
  EXPECT_THAT(msg, HasSubstr("node 'n' (Activation): attribute foo = '1' is not understood"));
}

TEST(MxnetJson, UnsupportedAttributeValuesNameTheNode) {
  EXPECT_THAT(format_error(one_op("Activation", R"("act_type": "mish")")),
              HasSubstr("node 'n' (Activation): act_type 'mish' is not supported"));
  EXPECT_THAT(format_error(one_op("Pooling", R"j("kernel": "(2, 2)", "stride": "(2, 2)",
                                               "pool_type": "avg", "pooling_convention": "same")j")),
              HasSubstr("pooling_convention 'same' is not supported (valid, full)"));
  EXPECT_THAT(format_error(one_op("Pooling", R"j("kernel": "(2, 2, 2)")j")), HasSubstr("only 2-D"));
  EXPECT_THAT(format_error(one_op("sum", R"("axis": "1", "exclude": "True")")),
              HasSubstr("attribute exclude = 'True' is not supported"));
  EXPECT_THAT(format_error(one_op("FullyConnected", R"("num_hidden": "x")", 3)),
              HasSubstr("attribute num_hidden = 'x', expected an integer"));
  EXPECT_THAT(format_error(one_op("FullyConnected", R"("num_hidden": "4")", 1)),
              HasSubstr("has 1 inputs, expected 3"));
  EXPECT_THAT(format_error(one_op("Convolution", R"j("num_filter": "4", "kernel": "(3 3)")j", 3)),
              HasSubstr("attribute kernel = '(3 3)', expected a tuple of integers"));
  EXPECT_THAT(format_error(one_op("RNN", R"j("mode": "lstm", "state_size": "4",
                                           "use_sequence_length": "True")j",
                                  5)),
              HasSubstr("node 'n' (RNN): attribute use_sequence_length = 'True' is not supported"));
  EXPECT_THAT(format_error(one_op("RNN", R"j("mode": "lstm", "state_size": "4",
                                           "projection_size": "2")j",
                                  4)),
              HasSubstr("attribute projection_size = '2' is not supported"));
  EXPECT_THAT(format_error(one_op("RNN", R"j("mode": "lstmp", "state_size": "4")j", 4)),
              HasSubstr("attribute mode = 'lstmp', expected rnn_relu, rnn_tanh, lstm or gru"));
  EXPECT_THAT(format_error(one_op("RNN", R"j("mode": "lstm", "state_size": "4")j", 3)),
              HasSubstr("has 3 inputs, expected 4"));
  const std::string zeros =
      R"j({"nodes": [{"op": "_zeros", "name": "n", "inputs": [], "attrs": {"shape": "(2, -1)"}}],
          "arg_nodes": [], "heads": [[0, 0, 0]]})j";
  EXPECT_THAT(format_error(zeros),
              HasSubstr("node 'n' (_zeros): attribute shape has the extent -1, expected extents "
                        ">= 0"));
  EXPECT_THAT(format_error(one_op("_npx_reshape", R"j("newshape": "(-7, 4)")j")),
              HasSubstr("has the code -7, which is not supported"));
  EXPECT_THAT(format_error(one_op("_npx_reshape", R"j("newshape": "(-2, -6, 2)")j")),
              HasSubstr("ends in the code -6, which needs two extents after it"));
}

// npx.reshape's -3 drops an axis of extent 1 (integer indexing), counted among the input axes
// that the codes before it consume; -6 splits one with -1 allowed in its extents.
TEST(MxnetJson, NumpyReshapeDropsAxesOfExtentOne) {
  const auto reshaped = [](const char* codes, Shape in) {
    const std::string attrs = fmt::format(R"j("newshape": "{}")j", codes);
    const NDArray x = arange(0, static_cast<double>(in.numel())).reshape(in);
    const NDArray y = mxnet_symbol_from_json(one_op("_npx_reshape", attrs)).eval({{"data", x}})[0];
    EXPECT_EQ(to_vector<float>(y), to_vector<float>(x));
    return y.shape();
  };
  EXPECT_EQ(reshaped("(-3, -4)", {1, 3, 4}), (Shape{3, 4}));
  EXPECT_EQ(reshaped("(-1, -3, -2)", {2, 1, 3}), (Shape{2, 3}));
  EXPECT_EQ(reshaped("(-5, -3, -6, -1, 2)", {2, 3, 1, 4}), (Shape{6, 2, 2}));
  EXPECT_THAT(error_of<ShapeError>([&] {
                reshaped("(2, -1, -3, -2)", {4, 1, 3});
              }),
              HasSubstr("squeeze"));
}

// What the importer cannot compute is a FormatError naming the file, the node, the operator and
// the attribute with its value.
TEST(MxnetJson, UnsupportedValuesOfTheNewerOperatorsNameNodeAndAttribute) {
  EXPECT_THAT(format_error(one_op("Pad", R"j("mode": "edge", "pad_width": "(0, 0, 1, 1)")j")),
              HasSubstr("MXNet graph file 'bad-symbol.json': node 'n' (Pad): mode 'edge' is not "
                        "supported (constant)"));
  const std::pair<std::string, std::string> cases[] = {
      {one_op("_mod_scalar", R"("scalar": "0")"),
       "(_mod_scalar): attribute scalar = 0: every element would be 0"},
      {one_op("topk", R"("k": "0")"),
       "(topk): attribute k = 0 (a sort of the whole axis) is not supported"},
      {one_op("topk", R"("ret_typ": "values")"), "(topk): ret_typ 'values' is not supported"},
      {one_op("topk", R"("axis": "last")"),
       "(topk): attribute axis = 'last', expected an integer or None"},
      {one_op("argsort", R"("dtype": "float16")"),
       "(argsort): attribute dtype = 'float16' is not supported (expected float32, float64, "
       "int32, int64)"},
      {one_op("sort", R"("is_ascend": "maybe")"),
       "(sort): attribute is_ascend = 'maybe', expected True or False"},
      {one_op("L2Normalization", R"("mode": "batch")"),
       "(L2Normalization): mode 'batch' is not supported (instance, channel, spatial)"},
      {one_op("LayerNorm", R"("axis": "1")", 3),
       "(LayerNorm): attribute axis = 1 is not supported (expected -1, the last axis)"},
      {one_op("GroupNorm", R"("num_groups": "0")", 3),
       "(GroupNorm): attribute num_groups = 0, expected a positive count"},
      {one_op("LayerNorm", R"("output_mean_var": "True")", 3),
       "(LayerNorm): attribute output_mean_var = 'True' is not supported"},
      {one_op("UpSampling", R"("scale": "2", "sample_type": "area")"),
       "(UpSampling): sample_type 'area' is not supported (nearest, bilinear)"},
      {one_op("UpSampling", R"("scale": "2", "num_args": "2")", 2),
       "(UpSampling): attribute num_args = 2: nearest upsampling of several inputs"},
      {one_op("UpSampling", R"("scale": "2", "sample_type": "bilinear")", 2),
       "(UpSampling): attribute num_filter = 0, expected the channel count"},
      {one_op("_npi_pad", R"j("mode": "reflect", "pad_width": "((1, 1),)")j"),
       "(_npi_pad): mode 'reflect' is not supported"},
      {one_op("Pad", R"j("pad_width": "(1, 2, 3)")j"),
       "(Pad): attribute pad_width = '(1, 2, 3)', expected (before, after) for each axis"},
      {one_op("SequenceMask", R"("use_sequence_length": "True")", 1),
       "(SequenceMask): has 1 inputs, expected 2"},
      {one_op("SequenceLast", R"("axis": "2")"),
       "(SequenceLast): attribute axis = 2, expected 0 or 1"},
      {one_op("slice", R"j("begin": "(None,)", "end": "(None,)", "step": "(-1,)")j"),
       "(slice): step -1 on axis 0 is not supported (positive steps only)"},
      {one_op("slice", R"j("begin": "(0, 1)", "end": "(2,)")j"),
       "(slice): begin, end and step have 2, 1 and 0 entries"},
      {one_op("slice", R"j("begin": "(0, x)", "end": "(2, 3)")j"),
       "(slice): attribute begin = '(0, x)', expected a tuple of integers or None"},
      {one_op("norm", R"("ord": "3")"), "(norm): attribute ord = 3 is not supported (1, 2)"},
      {one_op("norm", R"("out_dtype": "float64")"),
       "(norm): attribute out_dtype = 'float64' is not supported"},
      {one_op("_npi_norm", R"j("ord": "2", "axis": "(0, 1)", "flag": "2")j"),
       "(_npi_norm): attribute flag = 2 with axis (0, 1) is not supported (the norms of vectors "
       "and of all elements only)"},
      {one_op("_npi_norm", R"j("ord": "2", "axis": "(0, 1)", "flag": "0")j"),
       "(_npi_norm): attribute flag = 0 with axis (0, 1) is not supported"},
      {one_op("_npi_norm", R"j("ord": "1", "axis": "None", "flag": "-1")j"),
       "(_npi_norm): attribute flag = -1 with axis () is not supported"},
      {one_op("take", R"("mode": "fill")", 2),
       "(take): mode 'fill' is not supported (clip, wrap, raise)"},
      {one_op("smooth_l1", R"("scalar": "0")"),
       "(smooth_l1): attribute scalar = 0, expected a positive sigma"},
      {one_op("tile", R"j("reps": "(2, 0)")j"),
       "(tile): attribute reps = (2, 0), expected positive counts"},
      {one_op("repeat", R"("repeats": "2", "axis": "x")"),
       "(repeat): attribute axis = 'x', expected an integer or None"},
      {one_op("Embedding", R"("input_dim": "10", "output_dim": "3", "dtype": "float16")", 2),
       "(Embedding): attribute dtype = 'float16' is not supported"},
      {one_op("argmax", R"("keepdims": "True")"),
       "(argmax): keepdims = True without an axis is not supported"},
      {one_op("one_hot", R"("depth": "0")"),
       "(one_hot): attribute depth = 0, expected a positive count"},
      {one_op("broadcast_to", R"j("shape": "(0, 3)")j"),
       "(broadcast_to): attribute shape = (0, 3) has the extent 0, which is not supported"},
      {one_op("Cast", R"("dtype": "int8")"), "(Cast): attribute dtype = 'int8' is not supported"},
      {one_op("SliceChannel", R"("num_outputs": "0")"),
       "(SliceChannel): attribute num_outputs = 0, expected a positive count"},
      {one_op("split", R"("axis": "1")"), "(split): lacks the attribute num_outputs"},
      {one_op("split", R"("num_outputs": "2", "squeeze_axis": "maybe")"),
       "(split): attribute squeeze_axis = 'maybe', expected True or False"},
      {one_op("_split_v2", R"j("indices": "[]", "sections": "0")j"),
       "(_split_v2): attribute sections = 0 with indices = (), expected positive sections or "
       "boundaries"},
      {one_op("_split_v2", R"j("indices": "[0, 3, 1]")j"),
       "(_split_v2): attribute indices = (0, 3, 1), expected ascending boundaries >= 0"},
      {one_op("LRN", R"("nsize": "4")"),
       "(LRN): attribute nsize = 4, expected an odd positive window"},
      {one_op("LRN", R"("nsize": "3", "beta": "x")"),
       "(LRN): attribute beta = 'x', expected a number"},
      {one_op("broadcast_axis", R"j("axis": "(0, 1)", "size": "(2,)")j"),
       "(broadcast_axis): attribute axis = (0, 1) and size = (2) differ in length"},
      {one_op("broadcast_axes", R"j("axis": "(-1,)", "size": "(2,)")j"),
       "(broadcast_axes): attribute axis = (-1) has the negative axis -1, which MXNet refuses"},
      {one_op("broadcast_axis", R"j("axis": "1", "size": "0")j"),
       "(broadcast_axis): attribute size = (0) has the size 0, expected positive sizes"},
      {one_op("broadcast_like", R"j("lhs_axes": "(0,)")j", 2),
       "(broadcast_like): attribute lhs_axes = '(0,)' is not supported"},
      {one_op("reverse", ""), "(reverse): lacks the attribute axis"},
      {one_op("reshape_like", R"("lhs_begin": "first")", 2),
       "(reshape_like): attribute lhs_begin = 'first', expected an integer"},
      {one_op("SequenceReverse", R"("axis": "1")"),
       "(SequenceReverse): attribute axis = 1, expected 0"},
      {one_op("_greater_scalar", R"("scalar": "x")"),
       "(_greater_scalar): attribute scalar = 'x', expected a number"},
      {one_op("SwapAxis", R"("dim1": "x", "dim2": "2")"),
       "(SwapAxis): attribute dim1 = 'x', expected an integer"},
  };
  for (const auto& [text, message] : cases) {
    SCOPED_TRACE(message);
    EXPECT_THAT(format_error(text), HasSubstr("node 'n' " + message));
  }
}

// numpy-mode linalg.norm as MXNet 1.9.1 writes it: neither ord nor axis (flag -2: every
// element, a scalar), no ord over two axes (flag 1: Frobenius), ord 1 over one axis (flag -1).
TEST(MxnetJson, NumpyNormFlags) {
  const NDArray x = from_vector<float>({3, -4, 6, 8}, {2, 2});
  const auto norm_of = [&](const char* attrs) {
    return mxnet_symbol_from_json(one_op("_npi_norm", attrs)).eval({{"data", x}})[0];
  };
  const NDArray all = norm_of(R"j("ord": "2", "axis": "None", "flag": "-2", "keepdims": "False")j");
  EXPECT_EQ(all.shape(), Shape{});
  EXPECT_FLOAT_EQ(item<float>(all), std::sqrt(125.0f));
  const NDArray fro = norm_of(R"j("ord": "2", "axis": "(0, 1)", "flag": "1")j");
  EXPECT_FLOAT_EQ(item<float>(fro), std::sqrt(125.0f));
  EXPECT_THAT(to_vector<float>(norm_of(R"j("ord": "1", "axis": "(1,)", "flag": "-1")j")),
              ::testing::ElementsAre(7, 14));
}

// MXNet's topk shows one output for ret_typ 'value', 'indices' and 'mask': a file that reads a
// second is refused, naming it.
TEST(MxnetJson, TopkHasTwoOutputsOnlyForBoth) {
  const std::string text = R"j({"nodes": [{"op": "null", "name": "data", "inputs": []},
      {"op": "topk", "name": "t", "attrs": {"k": "2"}, "inputs": [[0, 0, 0]]}],
      "heads": [[1, 1, 0]]})j";
  EXPECT_THAT(format_error(text), HasSubstr("head 0 refers to output 1 of node 't', which has 1"));
}

// Convolution with a 1-D or 3-D kernel and Deconvolution (adj as output_padding, no bias by
// MXNet's default) map to the operators of their rank and compute what those compute.
TEST(MxnetJson, ConvolutionsOfEveryRankAndDeconvolution) {
  struct Case {
    std::string op, attrs;
    int inputs;
    Shape x, w;
    std::string janus_op;
  };
  for (const Case& c : {Case{"Convolution",
                             R"j("num_filter": "4", "kernel": "(3,)",
                                                 "stride": "(2,)", "pad": "(1,)")j",
                             3,
                             {2, 3, 9},
                             {4, 3, 3},
                             "conv1d"},
                        Case{"Convolution",
                             R"j("num_filter": "2", "kernel": "(2, 2, 2)",
                                                 "layout": "NCDHW", "no_bias": "True")j",
                             2,
                             {1, 3, 4, 4, 4},
                             {2, 3, 2, 2, 2},
                             "conv3d"},
                        Case{"Deconvolution",
                             R"j("num_filter": "4", "kernel": "(3, 3)",
                                                   "stride": "(2, 2)", "pad": "(1, 1)",
                                                   "adj": "(1, 1)", "num_group": "2")j",
                             2,
                             {1, 2, 4, 5},
                             {2, 2, 3, 3},
                             "conv2d_transpose"}}) {
    SCOPED_TRACE(c.op + " " + c.janus_op);
    const Symbol net = mxnet_symbol_from_json(one_op(c.op, c.attrs, c.inputs));
    seed(3);
    const NDArray x = random_uniform(-1, 1, c.x);
    const NDArray w = random_uniform(-1, 1, c.w);
    const int64_t filters = c.janus_op == "conv2d_transpose" ? c.w[1] * 2 : c.w[0];
    const NDArray b = c.inputs == 3 ? random_uniform(-1, 1, {filters}) : zeros({filters});
    std::map<std::string, NDArray> args{{"data", x}, {"in1", w}};
    if (c.inputs == 3) args["in2"] = b;
    const NDArray y = net.eval(args)[0];
    const Ints one = {1};
    const NDArray want =
        c.janus_op == "conv2d_transpose"
            ? conv_transpose(x, w, b, {2}, {1}, {1}, {1}, 2)
            : ops::invoke(ops::get_op(c.janus_op), {x, w, b},
                          {c.janus_op == "conv1d" ? Ints{2} : Ints{1},
                           c.janus_op == "conv1d" ? Ints{1} : Ints{0}, one, int64_t{1}})[0];
    EXPECT_EQ(y.shape(), want.shape());
    EXPECT_EQ(to_vector<float>(y), to_vector<float>(want));
  }
  EXPECT_THAT(format_error(one_op("Deconvolution", R"j("num_filter": "4", "kernel": "(3, 3)",
                                                      "target_shape": "(8, 8)")j",
                                  2)),
              HasSubstr("target_shape is not supported"));
  EXPECT_THAT(format_error(one_op("Convolution", R"j("num_filter": "4", "kernel": "(3,)",
                                                    "stride": "(1, 1)")j",
                                  3)),
              HasSubstr("attribute stride = (1, 1), expected 1 values like the kernel"));
  EXPECT_THAT(format_error(one_op("Convolution", R"j("num_filter": "4", "kernel": "(3,)",
                                                    "layout": "NCHW")j",
                                  3)),
              HasSubstr("attribute layout = 'NCHW' is not supported (expected NCW)"));
}

TEST(MxnetJson, MalformedStructureIsAFormatErrorNamingTheFile) {
  EXPECT_THAT(format_error("{"), HasSubstr("'bad-symbol.json': not valid JSON"));
  EXPECT_THAT(format_error(R"({"nodes": []})"), HasSubstr("field 'heads' must be a list"));
  EXPECT_THAT(format_error(R"({"nodes": [], "heads": []})"), HasSubstr("has no heads"));
  EXPECT_THAT(format_error(R"({"nodes": [{"op": "null"}], "heads": []})"),
              HasSubstr("node 0 must be an object with string fields 'op' and 'name'"));
  EXPECT_THAT(format_error(R"({"nodes": [{"op": "null", "name": "x", "inputs": []}],
                               "heads": [[1, 0, 0]]})"),
              HasSubstr("head 0 refers to node 1, but only 1 nodes come before it"));
  EXPECT_THAT(format_error(R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
                                         {"op": "relu", "name": "r", "inputs": [[0, 1, 0]]}],
                               "heads": [[1, 0, 0]]})"),
              HasSubstr("input 0 of node 'r' refers to output 1 of node 'x', which has 1"));
  EXPECT_THAT(format_error(R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
                                         {"op": "relu", "name": "r", "inputs": [[1, 0, 0]]}],
                               "heads": [[1, 0, 0]]})"),
              HasSubstr("refers to node 1, but only 1 nodes come before it"));
  EXPECT_THAT(format_error(R"({"nodes": [{"op": "null", "name": "x", "inputs": []}],
                               "arg_nodes": [3], "heads": [[0, 0, 0]]})"),
              HasSubstr("arg_nodes lists 3, which is not a variable node"));
}

TEST(MxnetJson, ReshapeCodesResolveAgainstTheInputShape) {
  const Symbol net = mxnet_symbol_from_json(one_op("Reshape", R"j("shape": "(-4, 2, -1, -3)")j"));
  const NDArray x = arange(0, 2 * 3 * 4 * 5).reshape({6, 4, 5});
  const NDArray y = net.eval({{"data", x}})[0];
  EXPECT_EQ(y.shape(), (Shape{2, 3, 20}));
  EXPECT_EQ(to_vector<float>(y), to_vector<float>(x));
  EXPECT_THAT(error_of<ShapeError>([&] {
                net.eval({{"data", zeros({5, 4, 5})}});
              }),
              HasSubstr("-4 cannot split extent 5 into"));
  // reverse matches the codes from the last axis (MXNet's example: [10, 5, 4] with (-1, 0)).
  const NDArray x3 = zeros({10, 5, 4});
  const auto reshaped = [&](const char* reverse) {
    const std::string attrs = fmt::format(R"j("shape": "(-1, 0)", "reverse": "{}")j", reverse);
    return mxnet_symbol_from_json(one_op("Reshape", attrs)).eval({{"data", x3}})[0].shape();
  };
  EXPECT_EQ(reshaped("False"), (Shape{40, 5}));
  EXPECT_EQ(reshaped("True"), (Shape{50, 4}));
}

TEST(MxnetJson, VariablesKeepFullyKnownShapes) {
  const Symbol net = mxnet_symbol_from_json(R"j({"nodes": [
      {"op": "null", "name": "a", "attrs": {"__shape__": "(2, 3)"}, "inputs": []},
      {"op": "null", "name": "b", "attrs": {"__shape__": "(2, 0)"}, "inputs": []},
      {"op": "elemwise_add", "name": "s", "inputs": [[0, 0, 0], [1, 0, 0]]}],
      "heads": [[2, 0, 0]]})j");
  const auto args = net.graph().arguments();
  ASSERT_EQ(args.size(), 2u);
  ASSERT_EQ(args[0]->specs.size(), 1u);
  EXPECT_EQ(args[0]->specs[0].shape, (Shape{2, 3}));
  EXPECT_TRUE(args[1]->specs.empty());  // legacy 0 = unknown
}

}  // namespace
}  // namespace janus::graph

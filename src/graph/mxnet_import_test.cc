// Loading either format by its contents, and the rewrite of MXNet models into Janus's format.
#include "janus/graph/mxnet_import.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <filesystem>
#include <map>

#include "janus/base/error.h"
#include "janus/graph/cached_op.h"
#include "janus/graph/npy.h"

#include "testing/mxnet_fixtures.h"
#include "testing/temp_dir.h"
#include "testing/test_util.h"

namespace janus::graph {
namespace {

using ::testing::HasSubstr;
using testing::mxnet_fixture;

std::vector<NDArray> run(const Symbol& net, const NamedArrays& params, const NDArray& x) {
  std::map<std::string, NDArray> args(params.begin(), params.end());
  args["data"] = x;
  return net.eval(args);
}

// Converted models load with Janus's own readers (no MXNet importer involved: Symbol::load and
// load_safetensors) and still give MXNet's outputs; the constants that the import introduced
// (zero biases, SequenceLast's position) travel with the parameters.
TEST(MxnetImport, ConvertedModelsLoadAsJanusFilesAndMatchMxnet) {
  const testing::TempDir dir("janus_mxnet_");
  std::vector<std::pair<std::string, std::string>> fixtures;
  for (const std::string flavour : {"legacy", "numpy"}) {
    for (const std::string model : {"mlp", "lenet", "blocks", "pools", "rnns"}) {
      fixtures.emplace_back(flavour, model);
    }
  }
  for (const std::string model :
       {"symops", "seqops", "orderops", "normops", "shapeops", "arrayops", "mathops"}) {
    fixtures.emplace_back("legacy", model);
  }
  fixtures.emplace_back("numpy", "npops");
  fixtures.emplace_back("numpy", "nparrayops");
  fixtures.emplace_back("numpy", "npmathops");
  for (const auto& [flavour, model] : fixtures) {
    SCOPED_TRACE(flavour + "/" + model);
    const std::string prefix = mxnet_fixture(flavour, model);
    const std::string out = (dir / (flavour + "_" + model)).string();
    convert_mxnet_model(prefix + "-symbol.json", prefix + "-0000.params", out, 3);
    const Symbol net = Symbol::load(out + "-symbol.json");
    Metadata meta;
    const NamedArrays params = load_safetensors(out + "-0003.safetensors", &meta);
    EXPECT_EQ(meta.at("inputs"), "data");
    const std::vector<NDArray> ys = run(net, params, load_npy(prefix + "-input.npy"));
    for (size_t k = 0; k < ys.size(); ++k) {
      testing::expect_matches_mxnet(ys[k], prefix + "-output" + std::to_string(k) + ".npy");
    }
  }
}

// d2l's LeNet as MXNet exports it (sigmoid after both convolutions and two dense layers, a 2x2
// average pooling after each convolution's): the compiled graph computes each of the four
// sigmoids inside its product's call (fuse_bias_activation) and each pooling inside its
// convolution's (fuse_conv_avg_pool), bit for bit what the imported graph gives call by call,
// and MXNet's outputs.
TEST(MxnetImport, LenetsSigmoidsFuseIntoTheirProducts) {
  for (const std::string flavour : {"legacy", "numpy"}) {
    SCOPED_TRACE(flavour);
    const std::string prefix = mxnet_fixture(flavour, "lenet");
    const Symbol net = load_symbol_file(prefix + "-symbol.json");
    const NamedArrays params = load_params_file(prefix + "-0000.params");
    std::map<std::string, NDArray> named(params.begin(), params.end());
    named["data"] = load_npy(prefix + "-input.npy");
    std::vector<NDArray> args;
    std::vector<ops::TensorSpec> specs;
    for (const std::string& name : net.list_arguments()) {
      args.push_back(named.at(name));
      specs.push_back(ops::TensorSpec{args.back().shape(), args.back().dtype(), cpu()});
    }
    const CachedOp op(net, specs);
    std::map<std::string, int> calls;  // operator[activation] (+ "pooled") -> count
    for (const NodePtr& n : op.graph().nodes) {
      if (n->is_variable()) continue;
      std::string call(n->op->name);
      const int a = n->op->attr_index("activation");
      if (a >= 0) {  // attributes past the ones given keep their default ("": none)
        const auto at = static_cast<size_t>(a);
        call += "[" + (at < n->attrs.values().size() ? n->attrs.get<std::string>(at) : "") + "]";
      }
      const auto pooled = static_cast<size_t>(n->op->attr_index("avg_pool_2x2"));
      if (pooled < n->attrs.values().size() && n->attrs.get<bool>(pooled)) call += " pooled";
      ++calls[call];
    }
    EXPECT_EQ(calls["conv2d[sigmoid] pooled"], 2);
    EXPECT_FALSE(calls.contains("avg_pool2d"));
    EXPECT_EQ(calls["fully_connected[sigmoid]"], 2);
    EXPECT_EQ(calls["fully_connected[]"], 1);
    EXPECT_FALSE(calls.contains("sigmoid"));
    const std::vector<NDArray> fused = op(args), separate = op.run_imperative(args);
    ASSERT_EQ(fused.size(), 1u);
    ASSERT_EQ(fused[0].shape(), separate[0].shape());
    const std::vector<float> a = to_vector<float>(fused[0]), b = to_vector<float>(separate[0]);
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(std::bit_cast<uint32_t>(a[i]), std::bit_cast<uint32_t>(b[i])) << i;
    }
    testing::expect_matches_mxnet(fused[0], prefix + "-output0.npy");
  }
}

TEST(MxnetImport, DetectsEachFormatFromTheContents) {
  const testing::TempDir dir("janus_mxnet_");
  const std::string prefix = mxnet_fixture("legacy", "mlp");
  convert_mxnet_model(prefix + "-symbol.json", prefix + "-0000.params", (dir / "mlp").string());
  const Symbol from_mxnet = load_symbol_file(prefix + "-symbol.json");
  const Symbol from_janus = load_symbol_file((dir / "mlp-symbol.json").string());
  EXPECT_EQ(from_mxnet.list_arguments(), from_janus.list_arguments());
  const NamedArrays a = load_params_file(prefix + "-0000.params");
  const NamedArrays b = load_params_file((dir / "mlp-0000.safetensors").string());
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(to_vector<float>(a[0].second), to_vector<float>(b[0].second));
}

TEST(MxnetImport, ConvertNamesWhatIsWrong) {
  const testing::TempDir dir("janus_mxnet_");
  const std::string out = (dir / "x").string();
  const std::string janus_graph = (dir / "j-symbol.json").string();
  Symbol::op("relu", {Symbol::var("data")}).save(janus_graph);
  EXPECT_THAT(error_of<FormatError>([&] { convert_mxnet_model(janus_graph, janus_graph, out); }),
              HasSubstr("'" + janus_graph + "' is not an MXNet graph file"));
  const std::string lenet = mxnet_fixture("legacy", "lenet");
  const std::string mlp = mxnet_fixture("legacy", "mlp");
  EXPECT_THAT(error_of<ValueError>(
                  [&] { convert_mxnet_model(lenet + "-symbol.json", mlp + "-0000.params", out); }),
              HasSubstr("mlp-0000.params"));
  EXPECT_THAT(error_of<FormatError>([&] {
                convert_mxnet_model(lenet + "-symbol.json", lenet + "-symbol.json", out);
              }),
              HasSubstr("MXNet params file '" + lenet + "-symbol.json': at byte 0"));
  EXPECT_THAT(error_of<ValueError>([&] {
                convert_mxnet_model(lenet + "-symbol.json", lenet + "-0000.params", out, 10000);
              }),
              HasSubstr("epoch 10000 must be in [0, 9999]"));
}

}  // namespace
}  // namespace janus::graph

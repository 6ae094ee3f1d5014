// `janus convert`: a Janus model rewritten in Janus's format equals the original; MXNet's
// fixtures rewritten in it compute MXNet's outputs; ONNX written from a model; bad prefixes and
// options refused with messages that name them.
#include "convert.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "janus/base/error.h"
#include "janus/deploy/predictor.h"
#include "janus/engine/array.h"
#include "janus/graph/npy.h"
#include "janus/graph/safetensors.h"
#include "janus/nn/initializer.h"
#include "janus/ops/ops.h"

#include "models.h"
#include "run_model.h"
#include "testing/mxnet_fixtures.h"
#include "testing/test_util.h"
#include "tools_test_util.h"

namespace janus::tools {
namespace {

using ::testing::HasSubstr;
using testing::read_file;

// The lenet demo model with random weights, exported after one call at batch 2.
std::string export_lenet(const std::filesystem::path& dir) {
  auto net = training::make_model("lenet");
  net->initialize(nn::Xavier());
  net->hybridize();
  seed(3);
  wait_to_read((*net)(random_normal(0, 1, {2, 1, 28, 28})));
  const std::string prefix = (dir / "lenet").string();
  net->export_model(prefix, 5);
  return prefix;
}

TEST(Convert, ToJanusRewritesTheSameModel) {
  const testing::TempDir dir("janus_convert_");
  ConvertOptions o;
  o.prefix = export_lenet(dir);
  o.to = "janus";
  o.output = (dir / "copy").string();
  std::ostringstream out;
  convert_model(o, out);
  EXPECT_THAT(out.str(), HasSubstr("copy-0005.safetensors"));  // the epoch is kept
  EXPECT_EQ(read_file(dir / "copy-symbol.json"), read_file(dir / "lenet-symbol.json"));
  graph::Metadata metadata;
  const graph::NamedArrays a = graph::load_safetensors((dir / "lenet-0005.safetensors").string());
  const graph::NamedArrays b =
      graph::load_safetensors((dir / "copy-0005.safetensors").string(), &metadata);
  EXPECT_EQ(metadata["inputs"], "data");
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first, b[i].first);
    EXPECT_EQ(to_vector<float>(a[i].second), to_vector<float>(b[i].second)) << a[i].first;
  }
  seed(4);
  const NDArray x = random_normal(0, 1, {3, 1, 28, 28});
  deploy::Predictor original(o.prefix + "-symbol.json", o.prefix + "-0005.safetensors");
  deploy::Predictor copy(o.output + "-symbol.json", o.output + "-0005.safetensors");
  EXPECT_EQ(to_vector<float>(original.run(x)), to_vector<float>(copy.run(x)));
}

// The MXNet 1.9.1 fixtures rewritten in Janus's format: Janus's loaders run them (without the
// MXNet importer) to MXNet's outputs, through deploy::Predictor and `janus run`.
TEST(Convert, MxnetFixturesToJanusRunAsInMxnet) {
  const testing::TempDir dir("janus_convert_mxnet_");
  for (const char* flavour : janus::testing::kMxnetFlavours) {
    for (const char* model : janus::testing::kMxnetModels) {
      SCOPED_TRACE(fmt::format("{}/{}", flavour, model));
      const std::string fixture = janus::testing::mxnet_fixture(flavour, model);
      ConvertOptions o;
      o.prefix = fixture;
      o.to = "janus";
      o.output = (dir / fmt::format("{}_{}", flavour, model)).string();
      std::ostringstream out;
      convert_model(o, out);
      EXPECT_THAT(out.str(), HasSubstr(model + std::string("-0000.params")));
      const std::string params_file = o.output + "-0000.safetensors";
      ASSERT_TRUE(std::filesystem::exists(params_file)) << out.str();
      deploy::Predictor converted(o.output + "-symbol.json", params_file);
      janus::testing::expect_matches_mxnet(converted.run(graph::load_npy(fixture + "-input.npy")),
                                           fixture + "-output0.npy");
    }
  }
  // The symbol-API net (three outputs) through `janus run`, which finds the .safetensors.
  const std::string symops = janus::testing::mxnet_fixture("legacy", "symops");
  ConvertOptions o;
  o.prefix = symops;
  o.to = "janus";
  o.output = (dir / "symops").string();
  std::ostringstream out;
  convert_model(o, out);
  RunOptions r;
  r.prefix = o.output;
  r.input = symops + "-input.npy";
  r.repeat = 0;
  r.output = (dir / "symops.npy").string();
  run_model(r, out);
  EXPECT_THAT(out.str(), HasSubstr("symops-0000.safetensors"));
  for (int k = 0; k < 3; ++k) {
    janus::testing::expect_matches_mxnet(
        graph::load_npy((dir / fmt::format("symops-{}.npy", k)).string()),
        fmt::format("{}-output{}.npy", symops, k));
  }
}

TEST(Convert, ToOnnxWritesTheFile) {
  const testing::TempDir dir("janus_convert_onnx_");
  ConvertOptions o;
  o.prefix = export_lenet(dir);
  o.to = "onnx";
  o.output = (dir / "lenet.onnx").string();
  o.shape = {1, 1, 28, 28};
  std::ostringstream out;
  convert_model(o, out);
  EXPECT_THAT(out.str(), HasSubstr("lenet.onnx (ONNX opset 13)"));
  // The weights (about 44,000 float32) are in it.
  EXPECT_GT(std::filesystem::file_size(o.output), 44000u * 4);
}

TEST(Convert, BadPrefixNamesItsFolder) {
  const testing::TempDir dir("janus_convert_bad_");
  ConvertOptions o;
  o.prefix = (dir / "missing").string();
  o.to = "onnx";
  o.output = (dir / "m.onnx").string();
  std::ostringstream out;
  EXPECT_THAT(error_of<IOError>([&] { convert_model(o, out); }),
              HasSubstr(fmt::format("no missing-NNNN.safetensors or missing-NNNN.params found "
                                    "in '{}'",
                                    dir.string())));
  o.epoch = 3;
  EXPECT_THAT(error_of<IOError>([&] { convert_model(o, out); }),
              HasSubstr("no missing-0003.safetensors or missing-0003.params"));
  // Parameters without their graph: the graph loader names the missing file.
  o.epoch.reset();
  testing::write_file(dir / "missing-0001.safetensors", "");
  EXPECT_THAT(error_of<IOError>([&] { convert_model(o, out); }), HasSubstr("missing-symbol.json"));
}

TEST(Convert, RefusesBadOptions) {
  ConvertOptions o;
  o.prefix = "net";
  o.output = "out";
  std::ostringstream out;
  o.to = "xml";
  EXPECT_THAT(error_of<ValueError>([&] { convert_model(o, out); }),
              HasSubstr("--to is 'xml', expected onnx or janus"));
  o.to = "janus";
  o.shape = {1, 2};
  EXPECT_THAT(error_of<ValueError>([&] { convert_model(o, out); }),
              HasSubstr("--shape is for --to onnx"));
  o.to = "onnx";
  o.inputs = {"a", ""};
  EXPECT_THAT(error_of<ValueError>([&] { convert_model(o, out); }),
              HasSubstr("--inputs 'a,' names an empty input"));
  o.inputs = {"a", "b"};
  EXPECT_THAT(error_of<ValueError>([&] { convert_model(o, out); }),
              HasSubstr("--shape gives one input's shape, but --inputs names 2"));
}

// `janus convert ARGS` in DIR: its exit status and what it printed on stderr.
std::pair<int, std::string> janus_convert(const std::filesystem::path& dir,
                                          const std::string& args) {
  const auto err = dir / "err";
  const std::string command = fmt::format("cd '{}' && '{}' convert {} >/dev/null 2>'{}'",
                                          dir.string(), JANUS_CLI, args, err.string());
  const int raw = std::system(command.c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, read_file(err)};
}

TEST(Convert, CommandLineReportsOneLine) {
  const testing::TempDir dir("janus_convert_cli_");
  EXPECT_EQ(janus_convert(dir, "missing --to onnx m.onnx"),
            std::make_pair(1, std::string("janus convert: no missing-NNNN.safetensors or "
                                          "missing-NNNN.params found in '.'\n")));
  EXPECT_EQ(janus_convert(dir, "missing --to xml out"),
            std::make_pair(1, std::string("janus convert: --to: 'xml' is not one of onnx, "
                                          "janus\n")));
  export_lenet(dir);
  EXPECT_EQ(janus_convert(dir, "lenet --to onnx m.onnx --inputs data,label").second,
            "janus convert: ONNX export ('lenet-symbol.json'): the graph has no argument named "
            "'label' (an input); its arguments are [data, 0.weight, 0.bias, 2.weight, 2.bias, "
            "5.weight, 5.bias, 6.weight, 6.bias, 7.weight, 7.bias]\n");
  const auto [status, err] = janus_convert(dir, "lenet --to onnx lenet.onnx --epoch 5");
  EXPECT_EQ(status, 0) << err;
  EXPECT_TRUE(std::filesystem::exists(dir / "lenet.onnx"));
}

}  // namespace
}  // namespace janus::tools

// `janus train --hybridize --export` then `janus run`.
#include "run_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "janus/base/error.h"
#include "janus/graph/npy.h"

#include "testing/mxnet_fixtures.h"
#include "testing/test_util.h"
#include "tools_test_util.h"
#include "train.h"

namespace janus::tools {
namespace {

using ::testing::HasSubstr;

using training::train;
using training::TrainOptions;

TEST(Run, TrainHybridizedExportAndRunTheExportedModel) {
  const testing::TempDir dir("janus_run_");
  TrainOptions o;
  o.model = "mlp";
  o.epochs = 1;
  o.limit = 1200;
  o.progress = false;
  o.hybridize = true;
  o.export_prefix = (dir / "mlp").string();
  std::ostringstream train_out;
  train(o, train_out);
  EXPECT_THAT(train_out.str(), HasSubstr("exported the model to"));
  ASSERT_TRUE(std::filesystem::exists(dir / "mlp-0001.safetensors"));
  RunOptions r;
  r.prefix = o.export_prefix;
  r.random = true;
  r.shape = {2, 1, 28, 28};
  r.repeat = 2;
  std::ostringstream out;
  run_model(r, out);
  EXPECT_THAT(out.str(), HasSubstr("mlp-0001.safetensors"));  // the latest epoch was found
  EXPECT_THAT(out.str(), HasSubstr("([2, 10])"));
  r.shape.clear();  // the input shape that the exported graph records
  std::ostringstream recorded;
  run_model(r, recorded);
  EXPECT_THAT(recorded.str(), ::testing::ContainsRegex(R"(input: \[[0-9]+, 1, 28, 28\] float32)"));
  r.epoch = 7;
  EXPECT_THAT(error_of<IOError>([&] { run_model(r, out); }), HasSubstr("mlp-0007.safetensors"));
  r.random = false;
  EXPECT_THAT(error_of<ValueError>([&] { run_model(r, out); }),
              HasSubstr("give exactly one of --input FILE.npy and --random [--shape ...]"));
  o.hybridize = false;
  EXPECT_THAT(error_of<ValueError>([&] { train(o, train_out); }), HasSubstr("needs --hybridize"));
}

// An MXNet 1.9.1 export runs as it is (PREFIX-symbol.json + PREFIX-0000.params, the latest
// epoch found), and --output writes what MXNet computed: one file for one output, numbered files
// for several.
TEST(Run, MxnetModelsWithOutputFiles) {
  const testing::TempDir dir("janus_run_mxnet_");
  for (const char* flavour : janus::testing::kMxnetFlavours) {
    SCOPED_TRACE(flavour);
    const std::string prefix = janus::testing::mxnet_fixture(flavour, "lenet");
    RunOptions r;
    r.prefix = prefix;
    r.input = prefix + "-input.npy";
    r.repeat = 1;
    r.output = (dir / (std::string(flavour) + ".npy")).string();
    std::ostringstream out;
    run_model(r, out);
    EXPECT_THAT(out.str(), HasSubstr("lenet-0000.params"));
    EXPECT_THAT(out.str(), HasSubstr("wrote output"));
    janus::testing::expect_matches_mxnet(graph::load_npy(r.output), prefix + "-output0.npy");
  }
  const std::string symops = janus::testing::mxnet_fixture("legacy", "symops");
  RunOptions r;
  r.prefix = symops;
  r.input = symops + "-input.npy";
  r.repeat = 0;
  r.output = (dir / "symops.npy").string();
  std::ostringstream out;
  run_model(r, out);
  for (int k = 0; k < 3; ++k) {
    const auto file = dir / fmt::format("symops-{}.npy", k);
    EXPECT_THAT(out.str(), HasSubstr(file.string()));
    janus::testing::expect_matches_mxnet(graph::load_npy(file.string()),
                                         fmt::format("{}-output{}.npy", symops, k));
  }
  r.output = (dir / "out.txt").string();
  EXPECT_THAT(error_of<ValueError>([&] { run_model(r, out); }),
              HasSubstr("--output " + r.output + ": expected a file name ending in .npy"));
  r.output.clear();
  r.epoch = 3;
  EXPECT_THAT(error_of<IOError>([&] { run_model(r, out); }), HasSubstr("symops-0003.params"));
}

}  // namespace
}  // namespace janus::tools

// Integration: `janus train` learns Fashion-MNIST. One short epoch on a subset must reach an
// accuracy far above chance (10%); the full accuracy targets are checked by the benchmarks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "janus/base/error.h"
#include "models.h"
#include "testing/test_util.h"
#include "train.h"

namespace janus::tools {
namespace {

using ::testing::HasSubstr;

TEST(Train, MlpLearnsFashionMnistInOneShortEpoch) {
  TrainOptions o;
  o.model = "mlp";
  o.epochs = 1;
  o.limit = 6000;
  o.batch_size = 64;
  o.lr = 0.1;
  o.progress = false;
  o.log_json = (std::filesystem::temp_directory_path() / "janus_train_test_log.json").string();
  std::ostringstream out;
  const std::vector<EpochResult> r = train(o, out);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_GT(r[0].train_acc, 0.5) << out.str();
  EXPECT_GT(r[0].test_acc, 0.6) << out.str();
  EXPECT_THAT(out.str(), HasSubstr("epoch  1/1: loss"));
  std::ifstream log(o.log_json);
  std::stringstream text;
  text << log.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("\"test_acc\": "));
  std::filesystem::remove(o.log_json);
}

TEST(Train, LeNetTrainsOnATinySubset) {
  TrainOptions o;
  o.model = "lenet";
  o.epochs = 1;
  o.limit = 1200;
  o.batch_size = 32;
  o.lr = 0.05;
  o.momentum = 0.9;
  o.progress = false;
  std::ostringstream out;
  const std::vector<EpochResult> r = train(o, out);
  EXPECT_GT(r[0].test_acc, 0.3) << out.str();
}

TEST(Train, BadOptionsAndModelsNameTheProblem) {
  EXPECT_THAT(error_of<ValueError>([] { make_model("resnet"); }),
              HasSubstr("unknown model 'resnet', expected one of: mlp, lenet"));
  TrainOptions o;
  o.epochs = 0;
  std::ostringstream out;
  EXPECT_THAT(error_of<ValueError>([&] { train(o, out); }),
              HasSubstr("--epochs is 0, expected at least 1"));
  o.epochs = 1;
  o.data_root = "/nonexistent/fashion";
  EXPECT_THAT(error_of<IOError>([&] { train(o, out); }), HasSubstr("/nonexistent/fashion"));
}

}  // namespace
}  // namespace janus::tools

// The Predictor, linked against libjanus_deploy.so alone (no autograd, nn, optim or data).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "janus/base/error.h"
#include "janus/core/allocator.h"
#include "janus/deploy/predictor.h"
#include "janus/engine/array.h"
#include "janus/graph/npy.h"
#include "janus/graph/safetensors.h"
#include "janus/graph/symbol.h"
#include "janus/ops/nn.h"
#include "janus/ops/ops.h"
#include "janus/ops/unary.h"

#include "testing/mxnet_fixtures.h"
#include "testing/temp_dir.h"
#include "testing/test_util.h"

namespace janus::deploy {
namespace {

using graph::Symbol;
using ::testing::HasSubstr;

class PredictorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto x = Symbol::var("data");
    auto fc = Symbol::op("fully_connected",
                         {x, Symbol::var("w", Shape{3, 4}), Symbol::var("b", Shape{3})});
    net_ = Symbol::op("relu", {fc});
    write(symbol_file(), net_.tojson());
    seed(3);
    w_ = random_normal(0, 1, {3, 4});
    b_ = random_normal(0, 1, {3});
    graph::save_safetensors(params_file(), {{"w", w_}, {"b", b_}});
  }

  static void write(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }
  std::string symbol_file() const { return (dir_ / "m-symbol.json").string(); }
  std::string params_file() const { return (dir_ / "m-0000.safetensors").string(); }

  const testing::TempDir dir_{testing::test_scoped("janus_deploy_")};
  Symbol net_;
  NDArray w_, b_;
};

TEST_F(PredictorTest, RunsTheExportedGraphBitwiseLikeTheSymbol) {
  Predictor p(symbol_file(), params_file());
  seed(4);
  const NDArray x = random_normal(0, 1, {5, 4});
  const NDArray y = p.run(x);
  const NDArray ref = net_.eval({{"data", x}, {"w", w_}, {"b", b_}})[0];
  EXPECT_EQ(to_vector<float>(y), to_vector<float>(ref));
  EXPECT_EQ(to_vector<float>(y), to_vector<float>(relu(fully_connected(x, w_, b_))));
  // A second shape compiles once more; the first stays cached.
  p.run(zeros({2, 4}));
  p.run(x);
  EXPECT_EQ(p.compilations(), 2);
}

TEST_F(PredictorTest, MismatchedParametersAreNamed) {
  graph::save_safetensors(params_file(), {{"w", w_}});
  EXPECT_THAT(error_of<ValueError>([&] { Predictor(symbol_file(), params_file()); }),
              HasSubstr("needs parameter 'b', which is neither an input nor in"));
  graph::save_safetensors(params_file(), {{"w", w_}, {"b", b_}, {"extra", b_}});
  EXPECT_THAT(error_of<ValueError>([&] { Predictor(symbol_file(), params_file()); }),
              HasSubstr("holds 'extra', which the graph"));
  graph::save_safetensors(params_file(), {{"w", zeros({4, 3})}, {"b", b_}});
  EXPECT_THAT(error_of<ShapeError>([&] { Predictor(symbol_file(), params_file()); }),
              HasSubstr("parameter 'w' in '" + params_file() + "' has shape [4, 3]"));
  EXPECT_THAT(error_of<ValueError>([&] { Predictor(symbol_file(), params_file(), {"input"}); }),
              HasSubstr("the graph has no argument named 'input'"));
}

TEST_F(PredictorTest, BadFilesAreFormatOrIOErrorsNamingThem) {
  write(symbol_file(), "{\"format\": \"janus.graph\", \"version\": 1, \"nodes\": [");
  EXPECT_THAT(error_of<FormatError>([&] { Predictor(symbol_file(), params_file()); }),
              HasSubstr("graph file '" + symbol_file() + "': not valid JSON"));
  EXPECT_THAT(error_of<IOError>([&] { Predictor("/no/such-symbol.json", params_file()); }),
              HasSubstr("/no/such-symbol.json"));
  write(symbol_file(), net_.tojson());
  write(params_file(), "short");
  EXPECT_THAT(error_of<FormatError>([&] { Predictor(symbol_file(), params_file()); }),
              HasSubstr(params_file()));
}

// MXNet 1.9.1 exports of both flavours run through the deploy runtime alone and give MXNet's
// outputs; a batch of 64 copies of the input gives MXNet's output in every row.
TEST(PredictorMxnet, RunsMxnetExportsLikeMxnet) {
  for (const char* flavour : testing::kMxnetFlavours) {
    for (const char* model : testing::kMxnetModels) {
      SCOPED_TRACE(std::string(flavour) + "/" + model);
      const std::string prefix = testing::mxnet_fixture(flavour, model);
      Predictor p(prefix + "-symbol.json", prefix + "-0000.params");
      const NDArray x = graph::load_npy(prefix + "-input.npy");
      testing::expect_matches_mxnet(p.run(x), prefix + "-output0.npy");
      if (std::string(model) == "blocks") continue;  // its input has a batch of 2 already
      std::vector<float> batch;
      const std::vector<float> one = to_vector<float>(x);
      for (int i = 0; i < 64; ++i) batch.insert(batch.end(), one.begin(), one.end());
      std::vector<int64_t> dims = x.shape().dims();
      dims[0] = 64;
      const NDArray y = p.run(from_vector(batch, Shape(dims)));
      const std::vector<float> rows = to_vector<float>(y);
      const std::vector<float> first = to_vector<float>(p.run(x));
      ASSERT_EQ(rows.size(), 64 * first.size());
      for (size_t i = 0; i < rows.size(); ++i) {
        ASSERT_NEAR(rows[i], first[i % first.size()],
                    1e-5 * std::abs(first[i % first.size()]) + 1e-7)
            << "row " << i / first.size();
      }
    }
  }
}

// A compiled signature keeps its intermediate buffers: once the call before ran on the same
// input and its outputs were dropped, a call allocates no device memory (the intermediates of
// the seed MLP's three layers and its output are reused). Outputs that the caller holds are
// not overwritten by the calls after them.
TEST(PredictorMxnet, RepeatedCallsAllocateNothingAndHeldOutputsStay) {
  const std::string prefix = testing::mxnet_fixture("legacy", "mlp");
  Predictor p(prefix + "-symbol.json", prefix + "-0000.params");
  const NDArray x = graph::load_npy(prefix + "-input.npy");
  const std::vector<float> expected = to_vector<float>(p.run(x));
  for (int i = 0; i < 2; ++i) wait_to_read(p.run(x));
  const int64_t allocs = memory_stats(cpu()).num_allocs;
  for (int i = 0; i < 5; ++i) wait_to_read(p.run(x));
  EXPECT_EQ(memory_stats(cpu()).num_allocs, allocs);
  const NDArray held = p.run(x);
  const NDArray other = p.run(zeros(x.shape()));
  const NDArray again = p.run(x);
  EXPECT_EQ(to_vector<float>(held), expected);
  EXPECT_NE(to_vector<float>(other), expected);
  EXPECT_EQ(to_vector<float>(again), expected);
  testing::expect_matches_mxnet(held, prefix + "-output0.npy");
}

TEST(PredictorMxnet, UnsupportedOperatorIsAFormatErrorNamingTheFile) {
  const testing::TempDir dir("janus_deploy_mxnet_");
  const std::string file = (dir / "m-symbol.json").string();
  std::ofstream(file) << R"({"nodes": [{"op": "null", "name": "data", "inputs": []},
      {"op": "Correlation", "name": "corr", "inputs": [[0, 0, 0], [0, 0, 0]]}],
      "arg_nodes": [0], "heads": [[1, 0, 0]]})";
  EXPECT_THAT(error_of<FormatError>([&] { Predictor(file, file); }),
              HasSubstr("MXNet graph file '" + file +
                        "': node 'corr' uses the operator 'Correlation', which the MXNet "
                        "importer does not support"));
}

}  // namespace
}  // namespace janus::deploy

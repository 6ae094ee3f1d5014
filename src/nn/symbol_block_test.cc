// SymbolBlock::imports on Apache MXNet 1.9.1 exports: the block gives MXNet's outputs, imperatively
// and hybridized, and its parameters are the MXNet file's.
#include "janus/nn/symbol_block.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "janus/engine/array.h"
#include "janus/graph/npy.h"

#include "testing/mxnet_fixtures.h"
#include "testing/test_util.h"

namespace janus::nn {
namespace {

TEST(SymbolBlockMxnet, ImportsMxnetExportsOfBothFlavours) {
  for (const char* flavour : testing::kMxnetFlavours) {
    SCOPED_TRACE(flavour);
    const std::string prefix = testing::mxnet_fixture(flavour, "blocks");
    auto net = SymbolBlock::imports(prefix + "-symbol.json", {"data"}, prefix + "-0000.params");
    const NDArray x = graph::load_npy(prefix + "-input.npy");
    testing::expect_matches_mxnet((*net)(x), prefix + "-output0.npy");
    net->hybridize();
    testing::expect_matches_mxnet((*net)(x), prefix + "-output0.npy");
    const auto params = net->collect_params();
    EXPECT_EQ(params.at("blocks0_conv0_weight")->shape(), (Shape{8, 3, 3, 3}));
  }
}

}  // namespace
}  // namespace janus::nn

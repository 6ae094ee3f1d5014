// The parameter binder: a graph's arguments bound to a model's inputs by name and to
// parameters otherwise; a parameters file checked against the graph.
#include "janus/graph/bind.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"

#include "testing/test_util.h"

namespace janus::graph {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Kind = ArgumentSource::Kind;

TEST(Bind, InputsByNameEveryOtherArgumentAParameter) {
  EXPECT_THAT(default_input_names(1), ElementsAre("data"));
  EXPECT_THAT(default_input_names(2), ElementsAre("data0", "data1"));
  const ArgumentBinding b = bind_arguments({"w", "data1", "b", "data0"}, {"data0", "data1"}, "t");
  EXPECT_THAT(b.sources,
              ElementsAre(ArgumentSource{Kind::kParameter, 0}, ArgumentSource{Kind::kInput, 1},
                          ArgumentSource{Kind::kParameter, 1}, ArgumentSource{Kind::kInput, 0}));
  EXPECT_THAT(b.parameter_names, ElementsAre("w", "b"));
  const NDArray x0 = zeros({1}), x1 = ones({1}), w = zeros({2}), bias = ones({2});
  const std::vector<NDArray> args = b.gather(std::vector{x0, x1}, std::vector{w, bias});
  ASSERT_EQ(args.size(), 4u);
  EXPECT_EQ(args[0].storage(), w.storage());
  EXPECT_EQ(args[1].storage(), x1.storage());
  EXPECT_EQ(args[2].storage(), bias.storage());
  EXPECT_EQ(args[3].storage(), x0.storage());
  EXPECT_THAT(error_of<ValueError>([] { bind_arguments({"w"}, {"data"}, "loader"); }),
              HasSubstr("loader: the graph has no argument named 'data'"));
  // A traced block's input that forward does not read is simply no argument.
  EXPECT_THAT(bind_arguments({"w"}, {"data"}, "block", /*require_inputs=*/false).parameter_names,
              ElementsAre("w"));
}

TEST(Bind, ParametersFileIsCheckedAgainstTheGraph) {
  const Symbol y = Symbol::op("add", {Symbol::var("data"), Symbol::var("w", Shape{2})});
  const ArgumentBinding b = bind_arguments(y.list_arguments(), {"data"}, "t");
  const std::vector<NDArray> values = bind_parameters(y, b, {{"w", ones({2})}}, "t", "s", "p");
  ASSERT_EQ(values.size(), 1u);
  EXPECT_EQ(values[0].shape(), Shape{2});
  EXPECT_THAT(error_of<ValueError>([&] { bind_parameters(y, b, {}, "t", "s.json", "p.st"); }),
              HasSubstr("t: the graph 's.json' needs parameter 'w', which is neither an input "
                        "nor in 'p.st'"));
  EXPECT_THAT(error_of<ValueError>([&] {
                bind_parameters(y, b, {{"w", ones({2})}, {"v", ones({2})}}, "t", "s", "p");
              }),
              HasSubstr("t: 'p' holds 'v', which the graph 's' does not use"));
  EXPECT_THAT(error_of<ShapeError>([&] {
                bind_parameters(y, b, {{"w", ones({3})}}, "t", "s", "p");
              }),
              HasSubstr("t: parameter 'w' in 'p' has shape [3], the graph 's' expects [2]"));
}

}  // namespace
}  // namespace janus::graph

// Tests of the typed attributes: the activation name table and its parser, a family struct read
// from an operator's completed attributes, and the errors of a bad activation.
#include "typed_attrs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/ops/activation.h"
#include "janus/ops/ops.h"

#include "nn/nn_attrs.h"
#include "testing/test_util.h"

namespace janus::ops {
namespace {

using ::testing::HasSubstr;

TEST(Activation, EveryNameParsesBackToItsActivation) {
  ASSERT_EQ(std::size(kAllActivations), kActivationCount);
  for (Activation a : kAllActivations) {
    EXPECT_EQ(parse_activation(activation_name(a), "test", "activation"), a)
        << "'" << activation_name(a) << "'";
  }
  EXPECT_EQ(activation_name(Activation::kNone), "");
  EXPECT_EQ(activation_name(Activation::kRelu), "relu");
  EXPECT_EQ(activation_name(Activation::kSoftrelu), "softrelu");
}

TEST(Activation, AnUnknownNameIsAValueErrorNamingTheOpTheAttributeAndTheAllowedNames) {
  EXPECT_EQ(error_of<ValueError>([] { parse_activation("rleu", "Dense", "activation"); }),
            "Dense: attribute 'activation' is 'rleu', expected one of '' (none), 'relu', "
            "'sigmoid', 'tanh', 'softrelu', 'gelu', 'leaky'");
  // A name that exists but is not allowed here.
  EXPECT_EQ(error_of<ValueError>(
                [] { parse_activation("gelu", "conv2d", "activation", kPostOpActivations); }),
            "conv2d: attribute 'activation' is 'gelu', expected one of '' (none), 'relu', "
            "'sigmoid', 'tanh'");
  EXPECT_EQ(parse_activation("relu", "conv2d", "activation", kPostOpActivations),
            Activation::kRelu);
}

TEST(TypedAttrs, AStructReadsEachAttributeByItsRegisteredName) {
  const OpDef& op = get_op("conv2d");
  Attrs attrs{std::vector<int64_t>{2}, std::vector<int64_t>{1, 0}};  // the rest: defaults
  complete_attrs(op, attrs);
  EXPECT_EQ(attrs.op(), &op);
  const ConvolutionAttrs a = ConvolutionAttrs::from(attrs);
  EXPECT_EQ(a.stride, (std::vector<int64_t>{2}));
  EXPECT_EQ(a.padding, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(a.dilation, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(a.groups, 1);
  EXPECT_EQ(a.activation, Activation::kNone);
  // The same positions mean other attributes in the data gradient: its own struct reads them.
  const OpDef& data_op = get_op("conv2d_backward_data");
  Attrs data_attrs{std::vector<int64_t>{1}, std::vector<int64_t>{0}, std::vector<int64_t>{1},
                   int64_t{1}, std::vector<int64_t>{5, 6}};
  complete_attrs(data_op, data_attrs);
  EXPECT_EQ(ConvBackwardDataAttrs::from(data_attrs).input_size, (std::vector<int64_t>{5, 6}));
  const std::vector<AttrFieldDef> fields = attr_fields<ConvolutionAttrs>();
  ASSERT_EQ(fields.size(), op.attrs.size());
  for (size_t i = 0; i < fields.size(); ++i) EXPECT_EQ(fields[i].name, op.attrs[i].name);
}

TEST(TypedAttrs, AnIncompleteListIsAnInternalError) {
  const Attrs partial{std::vector<int64_t>{1}};
  EXPECT_THAT(error_of<InternalError>([&] { ConvolutionAttrs::from(partial); }),
              HasSubstr("1 attribute values for the 6 fields of its struct"));
}

TEST(TypedAttrs, AnotherOperatorsStructIsAnInternalErrorNamingBothNames) {
  // layer_norm's struct has one float field too, but it reads "eps", not "scalar".
  Attrs attrs{2.0};
  complete_attrs(get_op("add_scalar"), attrs);
  EXPECT_THAT(error_of<InternalError>([&] { LayerNormAttrs::from(attrs); }),
              HasSubstr("add_scalar: attribute 0 is 'scalar', but the struct that reads it "
                        "calls it 'eps'"));
}

TEST(TypedAttrs, ABadActivationIsAValueErrorNamingTheOperator) {
  const NDArray x = zeros({1, 2, 4, 4}), w = zeros({3, 2, 3, 3}), b = zeros({3});
  static const OpDef& conv = get_op("conv2d");
  EXPECT_EQ(error_of<ValueError>([&] {
              invoke(conv, {x, w, b},
                     {std::vector<int64_t>{1}, std::vector<int64_t>{0}, std::vector<int64_t>{1},
                      int64_t{1}, std::string("softrelu")});
            }),
            "conv2d: attribute 'activation' is 'softrelu', expected one of '' (none), 'relu', "
            "'sigmoid', 'tanh'");
  static const OpDef& fc = get_op("fully_connected");
  EXPECT_EQ(error_of<ValueError>([&] {
              invoke(fc, {zeros({2, 4}), zeros({3, 4}), zeros({3})}, {std::string("rleu")});
            }),
            "fully_connected: attribute 'activation' is 'rleu', expected one of '' (none), "
            "'relu', 'sigmoid', 'tanh'");
  // The valid names still run.
  const NDArray y =
      invoke(fc, {ones({2, 4}), ones({3, 4}), full({3}, -10.0)}, {std::string("relu")})[0];
  EXPECT_EQ(to_vector<float>(y), std::vector<float>(6, 0.0f));
}

}  // namespace
}  // namespace janus::ops

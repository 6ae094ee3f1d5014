// Tests of the operator registry: every registered operator is complete (doc, shape rule, CPU
// kernel, documented attributes with well-typed defaults), lookups, invoke's checks and the
// random-key counter.
#include "janus/ops/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"

#include "invoke_one.h"
#include "testing/test_util.h"
#include "typed_attrs.h"

namespace janus::ops {
namespace {

using ::testing::HasSubstr;

bool value_has_type(const AttrValue& v, AttrType type) {
  switch (type) {
    case AttrType::kInt:
      return std::holds_alternative<int64_t>(v);
    case AttrType::kFloat:
      return std::holds_alternative<double>(v);
    case AttrType::kBool:
      return std::holds_alternative<bool>(v);
    case AttrType::kString:
      return std::holds_alternative<std::string>(v);
    case AttrType::kInts:
      return std::holds_alternative<std::vector<int64_t>>(v);
    case AttrType::kShape:
      return std::holds_alternative<Shape>(v);
    case AttrType::kDType:
      return std::holds_alternative<DType>(v);
    case AttrType::kDevice:
      return std::holds_alternative<Device>(v);
  }
  return false;
}

TEST(Registry, TheFirstOperatorsAreRegistered) {
  for (const char* name : {"zeros", "ones", "full", "arange", "random_uniform", "random_normal",
                           "add", "mul", "add_scalar", "mul_scalar", "dot", "copyto"}) {
    const OpDef* op = find_op(name);
    ASSERT_NE(op, nullptr) << name;
    EXPECT_EQ(op->name, name);
    EXPECT_EQ(&get_op(name), op);
  }
}

TEST(Registry, AllOpsAreSortedByNameAndUnique) {
  const std::vector<const OpDef*> ops = all_ops();
  ASSERT_FALSE(ops.empty());
  for (size_t i = 1; i < ops.size(); ++i) {
    EXPECT_LT(ops[i - 1]->name, ops[i]->name);
  }
  for (const OpDef* op : ops) EXPECT_EQ(find_op(op->name), op);
}

TEST(Registry, EveryOperatorIsComplete) {
  for (const OpDef* op : all_ops()) {
    SCOPED_TRACE(fmt::format("operator '{}'", op->name));
    EXPECT_FALSE(op->name.empty());
    EXPECT_FALSE(op->doc.empty()) << "missing doc";
    EXPECT_TRUE(op->infer != nullptr) << "missing shape rule (infer)";
    EXPECT_NE(op->kernel_for(DeviceType::kCPU), nullptr) << "missing CPU kernel";
    EXPECT_TRUE(static_cast<bool>(op->grad) != op->not_differentiable)
        << "needs exactly one gradient decision: a .grad rule or .not_differentiable = true";
    for (const DeviceKernel& k : op->kernels) EXPECT_NE(k.fn, nullptr) << "null kernel";
    // An operator must produce something: outputs, or inputs it updates in place.
    EXPECT_FALSE(op->outputs.empty() && op->mutable_inputs.empty())
        << "no outputs and no inputs updated in place";
    std::set<std::string_view> names;
    for (std::string_view in : op->inputs) {
      EXPECT_FALSE(in.empty()) << "unnamed input";
      EXPECT_TRUE(names.insert(in).second) << "duplicate input/output name '" << in << "'";
    }
    for (std::string_view out : op->outputs) {
      EXPECT_FALSE(out.empty()) << "unnamed output";
      EXPECT_TRUE(names.insert(out).second) << "duplicate input/output name '" << out << "'";
    }
    std::set<std::string_view> attr_names;
    for (size_t i = 0; i < op->attrs.size(); ++i) {
      const AttrDef& a = op->attrs[i];
      EXPECT_FALSE(a.name.empty()) << "attribute " << i << " has no name";
      EXPECT_FALSE(a.doc.empty()) << "attribute '" << a.name << "' has no doc";
      EXPECT_TRUE(attr_names.insert(a.name).second) << "duplicate attribute '" << a.name << "'";
      EXPECT_EQ(op->attr_index(a.name), static_cast<int>(i));
      if (a.default_value.has_value()) {
        EXPECT_TRUE(value_has_type(*a.default_value, a.type))
            << "attribute '" << a.name << "' has a default that is not a "
            << attr_type_name(a.type);
      }
    }
    EXPECT_EQ(op->attr_index("no_such_attribute"), -1);
    EXPECT_GE(op->inplace_input, -1);
    EXPECT_LT(op->inplace_input, static_cast<int>(op->inputs.size()));
  }
}

// Each operator reads its attributes through one struct (ConvAttrs::from), field i from
// attribute i: every field must name and type the attribute of its position.
TEST(Registry, EveryAttributeIsReadByAStructFieldOfItsNameAndType) {
  for (const OpDef* op : all_ops()) {
    SCOPED_TRACE(fmt::format("operator '{}'", op->name));
    EXPECT_EQ(attr_fields_mismatch(*op), "")
        << "declare .attr_fields = attr_fields<TheFamilyAttrs>(), with one field per attribute";
  }
}

struct SwappedAttrs {
  double scale = 1.0;
  int64_t axis = 0;
  static constexpr auto fields() {
    return std::tuple{field("scale", &SwappedAttrs::scale), field("axis", &SwappedAttrs::axis)};
  }
};

TEST(Registry, AStructWhoseFieldsDriftFromTheAttributesIsAnInternalError) {
  OpDef def;
  def.name = "registry_test_drifted_fields";
  def.doc = "fields in another order than the attributes";
  def.outputs = {"y"};
  def.attrs = {{"axis", AttrType::kInt, int64_t{0}, "an axis"},
               {"scale", AttrType::kFloat, 1.0, "a factor"}};
  def.attr_fields = attr_fields<SwappedAttrs>();
  def.infer = [](const InferArgs& args) {
    return std::vector<TensorSpec>(args.inputs.begin(), args.inputs.end());
  };
  EXPECT_EQ(attr_fields_mismatch(def),
            "attribute 0 is 'axis' (int) but field 0 of its attribute struct reads 'scale' "
            "(float)");
  EXPECT_THAT(error_of<InternalError>([&] { register_op(def); }),
              HasSubstr("operator 'registry_test_drifted_fields': attribute 0 is 'axis'"));
  def.attr_fields.pop_back();
  EXPECT_EQ(attr_fields_mismatch(def), "2 attributes but 1 fields in its attribute struct");
  EXPECT_EQ(find_op("registry_test_drifted_fields"), nullptr);  // nothing was added
}

TEST(Registry, FlagsOfTheFirstOperators) {
  EXPECT_TRUE(get_op("random_uniform").random);
  EXPECT_TRUE(get_op("random_normal").random);
  EXPECT_FALSE(get_op("add").random);
  EXPECT_TRUE(get_op("copyto").copy_lane);
  EXPECT_TRUE(get_op("copyto").multi_device);
  EXPECT_FALSE(get_op("add").multi_device);
  EXPECT_EQ(get_op("add").fusion, FusionClass::kBroadcast);
  EXPECT_EQ(get_op("add_scalar").fusion, FusionClass::kElementwise);
}

TEST(Registry, UnknownNamesAreValueErrorsNamingTheName) {
  EXPECT_EQ(find_op("no_such_op"), nullptr);
  std::string msg = error_of<ValueError>([] { get_op("no_such_op"); });
  EXPECT_THAT(msg, HasSubstr("ops: no operator named 'no_such_op'"));
  msg = error_of<ValueError>([] { get_op(""); });
  EXPECT_THAT(msg, HasSubstr("no operator named ''"));
  msg = error_of<ValueError>([] { get_op("Add"); });  // names are case-sensitive
  EXPECT_THAT(msg, HasSubstr("'Add'"));
}

TEST(Registry, RegisteringTwiceOrIncompleteIsAnInternalError) {
  OpDef dup;
  dup.name = "add";
  dup.doc = "duplicate";
  dup.outputs = {"y"};
  dup.infer = [](const InferArgs& args) {
    return std::vector<TensorSpec>(args.inputs.begin(), args.inputs.end());
  };
  EXPECT_THAT(error_of<InternalError>([&] { register_op(dup); }),
              HasSubstr("operator 'add' is registered twice"));
  OpDef no_infer;
  no_infer.name = "registry_test_op_without_infer";
  no_infer.doc = "incomplete";
  EXPECT_THAT(error_of<InternalError>([&] { register_op(no_infer); }),
              HasSubstr("operator 'registry_test_op_without_infer' has no shape rule"));
  EXPECT_EQ(find_op("registry_test_op_without_infer"), nullptr);  // nothing was added
  OpDef unnamed;
  unnamed.infer = dup.infer;
  EXPECT_THAT(error_of<InternalError>([&] { register_op(unnamed); }),
              HasSubstr("registered without a name"));
}

// ---- invoke -----------------------------------------------------------------------------------

TEST(Registry, InvokeChecksTheNumberOfInputs) {
  NDArray a = zeros({2});
  std::string msg = error_of<ValueError>([&] { invoke(get_op("add"), {a}); });
  EXPECT_THAT(msg, HasSubstr("add: got 1 inputs, expected 2 (a, b)"));
  msg = error_of<ValueError>([&] { invoke(get_op("zeros"), {a}, {Shape{2}}); });
  EXPECT_THAT(msg, HasSubstr("zeros: got 1 inputs, expected 0"));
}

TEST(Registry, InvokeChecksAttributes) {
  NDArray a = zeros({2});
  std::string msg = error_of<ValueError>([&] { invoke(get_op("add"), {a, a}, {1.0}); });
  EXPECT_THAT(msg, HasSubstr("add: got 1 attributes, expected at most 0"));
  msg = error_of<TypeError>([&] { invoke(get_op("add_scalar"), {a}, {std::string("two")}); });
  EXPECT_THAT(msg, HasSubstr("add_scalar: attribute 'scalar' has the wrong type, expected float"));
  msg = error_of<ValueError>([&] { invoke(get_op("add_scalar"), {a}, {}); });
  EXPECT_THAT(msg, HasSubstr("add_scalar: attribute 'scalar' is required and was not given"));
  msg = error_of<ValueError>([] { invoke(get_op("arange"), {}, {0.0}); });
  EXPECT_THAT(msg, HasSubstr("arange: attribute 'stop' is required and was not given"));
  msg = error_of<TypeError>([] {
    invoke(get_op("zeros"), {}, {Shape{2}, std::string("float32")});
  });
  EXPECT_THAT(msg, HasSubstr("zeros: attribute 'dtype' has the wrong type, expected dtype"));
}

TEST(Registry, InvokeFillsDefaultsAndWidensValues) {
  // arange(start, stop) with step, dtype and device defaulted.
  NDArray r = invoke(get_op("arange"), {}, {0.0, 3.0})[0];
  EXPECT_EQ(r.dtype(), DType::kFloat32);
  EXPECT_EQ(r.device(), cpu(0));
  EXPECT_EQ(to_vector<float>(r), (std::vector<float>{0, 1, 2}));
  // An int where a float is expected, a list of ints where a shape is expected.
  NDArray x = invoke(get_op("add_scalar"), {r}, {int64_t{2}})[0];
  EXPECT_EQ(to_vector<float>(x), (std::vector<float>{2, 3, 4}));
  NDArray z = invoke(get_op("zeros"), {}, {std::vector<int64_t>{2, 3}, DType::kInt32})[0];
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
  EXPECT_EQ(z.dtype(), DType::kInt32);
}

TEST(Registry, ShapeRulesAgreeWithOutputs) {
  NDArray a = zeros({2, 3});
  NDArray b = zeros({3});
  const OpDef& add_op = get_op("add");
  const TensorSpec specs[] = {{a.shape(), a.dtype(), a.device()},
                              {b.shape(), b.dtype(), b.device()}};
  const Attrs none;
  const std::vector<TensorSpec> out = add_op.infer(InferArgs{add_op, specs, none});
  ASSERT_EQ(out.size(), 1u);
  NDArray y = add(a, b);
  EXPECT_EQ(out[0].shape, y.shape());
  EXPECT_EQ(out[0].dtype, y.dtype());
  EXPECT_EQ(out[0].device, y.device());
}

// Records the outputs that the observers of a call see.
class OutputsSeen : public InvokeObserver {
 public:
  void on_invoke(const OpDef&, std::span<const NDArray>, const Attrs&,
                 std::span<const NDArray> outputs) override {
    seen.assign(outputs.begin(), outputs.end());
  }
  std::vector<NDArray> seen;
};

TEST(Registry, InvokeOneReturnsTheOneOutputThatObserversSee) {
  const NDArray a = from_vector<float>({1, 2}, {2}), b = from_vector<float>({10, 20}, {2});
  OutputsSeen observer;
  const ScopedInvokeObserver scope(&observer);
  const NDArray y = invoke_one(get_op("add"), {a, b});
  EXPECT_EQ(to_vector<float>(y), (std::vector<float>{11, 22}));
  ASSERT_EQ(observer.seen.size(), 1u);
  EXPECT_TRUE(observer.seen[0].is_same(y));
  // An operator whose output is a view of its input (no kernel): the same storage.
  const NDArray v = invoke_one(get_op("reshape"), {y}, {Shape{2, 1}});
  EXPECT_EQ(v.shape(), (Shape{2, 1}));
  EXPECT_EQ(v.storage(), y.storage());
  ASSERT_EQ(observer.seen.size(), 1u);
  EXPECT_TRUE(observer.seen[0].is_same(v));
  // The caller's mistakes are the same errors as invoke's.
  EXPECT_THAT(error_of<ValueError>([&] { invoke_one(get_op("add"), {a}); }),
              HasSubstr("add: got 1 inputs, expected 2 (a, b)"));
}

TEST(Registry, InvokeToWritesIntoTheGivenArrays) {
  const NDArray a = from_vector<float>({1, 2, 3, 4}, {2, 2}), b = from_vector<float>({10, 20}, {2});
  NDArray into = zeros({2, 2});
  const void* memory = into.raw_data();
  NDArray outputs[] = {into};
  invoke_to(get_op("add"), std::vector<NDArray>{a, b}, {}, outputs);
  EXPECT_TRUE(outputs[0].is_same(into));
  EXPECT_EQ(into.raw_data(), memory);
  EXPECT_EQ(to_vector<float>(into), (std::vector<float>{11, 22, 13, 24}));
  // A second write waits for the reads pushed before it: `sum` reads the first result.
  const NDArray total = sum(into);
  invoke_to(get_op("add"), std::vector<NDArray>{a, a}, {}, std::span<NDArray>(outputs, 1));
  EXPECT_EQ(to_vector<float>(into), (std::vector<float>{2, 4, 6, 8}));
  EXPECT_EQ(to_vector<float>(total), (std::vector<float>{70}));
  // An undefined entry gets a new array: one output given, the other made.
  const NDArray y = from_vector<float>({1, -2, 0, 3}, {2, 2});
  NDArray db = zeros({2});
  NDArray both[] = {NDArray(), db};
  invoke_to(get_op("relu_backward_bias"), std::vector<NDArray>{y, a}, {}, both);
  EXPECT_TRUE(both[0].defined());
  EXPECT_TRUE(both[1].is_same(db));
  EXPECT_EQ(to_vector<float>(both[0]), (std::vector<float>{1, 0, 0, 4}));
  EXPECT_EQ(to_vector<float>(db), (std::vector<float>{1, 4}));
  // invoke_one_to: the given array, or a new one.
  NDArray one = zeros({2});
  EXPECT_TRUE(invoke_one_to(get_op("add"), {b, b}, {}, one).is_same(one));
  EXPECT_EQ(to_vector<float>(one), (std::vector<float>{20, 40}));
  EXPECT_EQ(to_vector<float>(invoke_one_to(get_op("add"), {b, b}, {}, NDArray())),
            (std::vector<float>{20, 40}));
}

TEST(Registry, InvokeToChecksTheGivenArrays) {
  const NDArray a = from_vector<float>({1, 2}, {2});
  const std::vector<NDArray> in = {a, a};
  NDArray wrong_shape[] = {zeros({3})};
  EXPECT_THAT(error_of<ShapeError>([&] { invoke_to(get_op("add"), in, {}, wrong_shape); }),
              HasSubstr("add: the array given for output 'y' is [3] float32 on cpu(0), expected "
                        "[2] float32 on cpu(0)"));
  NDArray wrong_dtype[] = {zeros({2}, DType::kFloat64)};
  EXPECT_THAT(error_of<ShapeError>([&] { invoke_to(get_op("add"), in, {}, wrong_dtype); }),
              HasSubstr("is [2] float64 on cpu(0), expected [2] float32"));
  NDArray aliased[] = {a};
  EXPECT_THAT(error_of<ValueError>([&] { invoke_to(get_op("add"), in, {}, aliased); }),
              HasSubstr("add: the array given for output 'y' shares memory with input 'a'"));
  NDArray none[] = {zeros({2}), zeros({2})};
  EXPECT_THAT(error_of<ValueError>([&] { invoke_to(get_op("add"), in, {}, none); }),
              HasSubstr("add: got 2 arrays for its outputs, expected 1 (y)"));
  NDArray view[] = {zeros({2, 1})};
  EXPECT_THAT(error_of<ValueError>([&] {
                invoke_to(get_op("reshape"), std::vector<NDArray>{a}, {Shape{2, 1}}, view);
              }),
              HasSubstr("reshape: its output is a view of its input"));
}

TEST(Registry, InvokeOneOfAnOperatorWithTwoOutputsIsAnInternalError) {
  const NDArray x = zeros({4});
  EXPECT_THAT(error_of<InternalError>([&] { invoke_one(get_op("dropout"), {x}); }),
              HasSubstr("invoke_one: operator 'dropout' has 2 outputs, expected 1"));
  EXPECT_EQ(invoke(get_op("dropout"), {x}).size(), 2u);  // invoke gives both
}

// A trace hook that returns `count` placeholders for any call.
class PlaceholderHook : public TraceHook {
 public:
  explicit PlaceholderHook(size_t count) : count_(count) {}
  std::vector<NDArray> on_trace(const OpDef&, std::span<const NDArray>, const Attrs&,
                                std::span<const TensorSpec> outputs) override {
    std::vector<NDArray> out;
    for (size_t i = 0; i < count_; ++i) out.push_back(placeholder(outputs[0].shape));
    return out;
  }

 private:
  size_t count_;
};

TEST(Registry, InvokeReturnsWhatTheTraceHookGives) {
  const NDArray a = zeros({3});
  {
    PlaceholderHook hook(1);
    const ScopedTraceHook scope(&hook);
    EXPECT_TRUE(invoke_one(get_op("add"), {a, a}).is_placeholder());
    const std::vector<NDArray> out = invoke(get_op("add"), {a, a});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(out[0].is_placeholder());
    EXPECT_EQ(out[0].shape(), (Shape{3}));
  }
  PlaceholderHook wrong(2);
  const ScopedTraceHook scope(&wrong);
  EXPECT_THAT(error_of<InternalError>([&] {
                invoke(get_op("add"), {a, a});
              }),
              HasSubstr("add: the trace gave 2 outputs, expected 1"));
}

// ---- random keys ------------------------------------------------------------------------------

TEST(Registry, SeedResetsTheRandomCallCounter) {
  seed(5);
  RngKey k0 = next_rng_key();
  RngKey k1 = next_rng_key();
  EXPECT_EQ(k0.seed, 5u);
  EXPECT_EQ(k0.counter, 0u);
  EXPECT_EQ(k1.seed, 5u);
  EXPECT_EQ(k1.counter, 1u);
  janus::seed(0xdeadbeefcafeull);  // the public API sets the same generator
  k0 = next_rng_key();
  EXPECT_EQ(k0.seed, 0xdeadbeefcafeull);
  EXPECT_EQ(k0.counter, 0u);
  // Only random operators take a key.
  zeros({2});
  EXPECT_EQ(next_rng_key().counter, 1u);
  random_uniform(0, 1, {2});
  EXPECT_EQ(next_rng_key().counter, 3u);
}

// ---- attribute helpers ------------------------------------------------------------------------

TEST(Registry, AttrNamesAndValuesPrint) {
  EXPECT_EQ(attr_type_name(AttrType::kInt), "int");
  EXPECT_EQ(attr_type_name(AttrType::kFloat), "float");
  EXPECT_EQ(attr_type_name(AttrType::kBool), "bool");
  EXPECT_EQ(attr_type_name(AttrType::kString), "string");
  EXPECT_EQ(attr_type_name(AttrType::kInts), "ints");
  EXPECT_EQ(attr_type_name(AttrType::kShape), "shape");
  EXPECT_EQ(attr_type_name(AttrType::kDType), "dtype");
  EXPECT_EQ(attr_type_name(AttrType::kDevice), "device");
  EXPECT_EQ(attr_value_to_string(int64_t{-3}), "-3");
  EXPECT_EQ(attr_value_to_string(2.5), "2.5");
  EXPECT_EQ(attr_value_to_string(true), "true");
  EXPECT_EQ(attr_value_to_string(false), "false");
  EXPECT_EQ(attr_value_to_string(std::string("hi")), "hi");
  EXPECT_EQ(attr_value_to_string(std::vector<int64_t>{1, 2}), "[1, 2]");
  EXPECT_EQ(attr_value_to_string(Shape{2, 3}), "[2, 3]");
  EXPECT_EQ(attr_value_to_string(DType::kFloat16), "float16");
  EXPECT_EQ(attr_value_to_string(cpu(1)), "cpu(1)");
}

}  // namespace
}  // namespace janus::ops

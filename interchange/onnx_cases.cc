// onnx_cases DIR [PREFIX-NNNN.safetensors...]: the models that check_onnx.py runs through ONNX
// Runtime. Writes into DIR the exported Janus models (NAME-symbol.json + NAME-0000.safetensors) of
// the demo models (mlp, lenet; random weights), of a convolutional net (conv, batch norm with
// running statistics, pooling, concat, reshape, transpose, layer norm, dropout, ...), of a graph
// with a fused_elementwise node and of one with convolutions that pool, of most other operators,
// and of a graph with two inputs and two outputs; then, for each of those and for each exported
// model given, fixed inputs NAME.inputK.npy, Janus's outputs NAME.expectedK.npy (through
// deploy::Predictor, from the files) and a line "NAME OUTPUTS INPUT,NAMES" in DIR/cases.txt.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "janus/graph/npy.h"
#include "janus/janus.h"
#include "janus/ops/fused.h"

#include "models.h"

namespace {

using namespace janus;
using Ints = std::vector<int64_t>;

// The layers between the convolutions and the classifier: shape operators and elementwise
// ones that the layers do not use.
class Mixer : public nn::Block {
 public:
  Mixer() : Block("mixer") {}
  NDArray forward(const NDArray& x) override {
    const int64_t n = x.shape()[0];
    NDArray y = reshape(x, Shape{n, 4, -1});  // [n, 4, C*H*W / 4]
    y = transpose(y, {0, 2, 1});
    y = reshape(y, Shape{n, -1});
    y = clip(leaky_relu(gelu(y), 0.1), -2.5, 2.5);
    return concat(y, slice_axis(y, 1, 0, 8) * 0.5, 1);
  }
};

std::shared_ptr<nn::Sequential> make_convnet() {
  auto net = std::make_shared<nn::Sequential>();
  auto branches = std::make_shared<nn::Concurrent>(1);
  auto right = std::make_shared<nn::Sequential>();
  right->add(std::make_shared<nn::Conv2D>(4, Ints{3}, Ints{1}, Ints{1}),
             std::make_shared<nn::Activation>("sigmoid"));
  branches->add(std::make_shared<nn::Conv2D>(4, Ints{1}, Ints{1}, Ints{0}, Ints{1}, 1, "relu"));
  branches->add(right);
  net->add(std::make_shared<nn::Conv2D>(8, Ints{3}, Ints{1}, Ints{1}),
           std::make_shared<nn::BatchNorm>(), std::make_shared<nn::Activation>("relu"),
           std::make_shared<nn::MaxPool2D>(Ints{3}, Ints{2}, Ints{1}), branches,
           std::make_shared<nn::AvgPool2D>(Ints{2}, Ints{}, Ints{1}, false),
           std::make_shared<Mixer>(), std::make_shared<nn::LayerNorm>(),
           std::make_shared<nn::Dropout>(0.5), std::make_shared<nn::Dense>(10, "tanh"),
           std::make_shared<nn::Dense>(5));
  return net;
}

// A block exported after one call on x, hybridized (inference mode: batch norm uses and keeps
// the running statistics, dropout is the identity).
void export_block(nn::Block& net, const NDArray& x, const std::string& prefix) {
  net.initialize(nn::Xavier());
  net.hybridize();
  wait_to_read(net(x));
  net.export_model(prefix, 0);
}

// exp(x) * w + 0.5, then tanh of it minus x: one fused node as the graph's fuse_elementwise
// pass builds it, with a parameter as its second input.
void export_fused(const std::string& prefix) {
  using graph::Symbol;
  const Symbol x = Symbol::var("data", Shape{3, 5});
  const Symbol w = Symbol::var("w", Shape{3, 5});
  const std::vector<ops::FusedStep> steps = {
      {&ops::get_op("exp"), {}, {0}},
      {&ops::get_op("mul"), {}, {-1, 1}},
      {&ops::get_op("add_scalar"), {0.5}, {-2}},
      {&ops::get_op("subtract"), {}, {-3, 0}},
      {&ops::get_op("tanh"), {}, {-4}},
  };
  const Symbol fused = Symbol::op("fused_elementwise", {x, w},
                                  {{"program", ops::encode_fused_program(steps)}}, "fused");
  const Symbol y = Symbol::op("softmax", {Symbol::op("sum", {fused}, {{"axes", Ints{0}}})});
  y.save(prefix + "-symbol.json");
  seed(7);
  graph::save_safetensors(prefix + "-0000.safetensors", {{"w", random_normal(0, 1, {3, 5})}});
}

// Convolutions as the graph's fuse_bias_activation and fuse_conv_avg_pool passes leave them: the
// activation and a 2x2 average pooling inside each call, on one input channel and on three, the
// second's result of odd extent (5x5: its last row and column are in no window).
void export_fused_conv(const std::string& prefix) {
  using graph::Symbol;
  const Symbol x = Symbol::var("data", Shape{2, 1, 12, 12});
  const Symbol first = Symbol::op(
      "conv2d", {x, Symbol::var("w1"), Symbol::var("b1")},
      {{"padding", Ints{2}}, {"activation", std::string("sigmoid")}, {"avg_pool_2x2", true}},
      "conv1");
  const Symbol y =
      Symbol::op("conv2d", {first, Symbol::var("w2"), Symbol::var("b2")},
                 {{"activation", std::string("tanh")}, {"avg_pool_2x2", true}}, "conv2");
  y.save(prefix + "-symbol.json");
  seed(10);
  graph::save_safetensors(prefix + "-0000.safetensors", {{"w1", random_normal(0, 1, {3, 1, 5, 5})},
                                                         {"b1", random_normal(0, 1, {3})},
                                                         {"w2", random_normal(0, 1, {4, 3, 2, 2})},
                                                         {"b2", random_normal(0, 1, {4})}});
}

// Most of the other operators that export maps, each output of the graph a few of them (the
// check compares every output): unary and binary elementwise ones, scalar ones, comparisons,
// reductions, shape operators, gathers, products, ordering and a creation operator.
void export_operators(const std::string& prefix) {
  using graph::Symbol;
  auto op = [](std::string_view name, const std::vector<Symbol>& in,
               const graph::NamedAttrs& attrs = {}) { return Symbol::op(name, in, attrs); };
  auto scalar = [&](std::string_view name, const Symbol& x, double v) {
    return op(name, {x}, {{"scalar", v}});
  };
  const Symbol x = Symbol::var("data", Shape{3, 4});
  const Symbol positive = scalar("add_scalar", op("abs", {x}), 0.5);
  const Symbol unary = op("sin", {x}) + op("cos", {x}) * op("erf", {x}) - op("softplus", {x}) +
                       op("sigmoid", {x}) * op("tanh", {x}) + op("relu", {x}) + op("gelu", {x}) +
                       op("exp", {op("negative", {x})}) + op("sign", {x}) + op("square", {x}) +
                       op("log1p", {op("abs", {x})}) + op("rsqrt", {positive}) +
                       op("sqrt", {positive}) + op("log", {positive}) +
                       op("leaky_relu", {x}, {{"alpha", 0.2}});
  const Symbol binary = op("maximum", {x, op("sin", {x})}) + op("minimum", {x, op("cos", {x})}) +
                        op("power", {positive, x}) / positive + op("divide", {x, positive}) +
                        op("fmod", {x, scalar("mul_scalar", positive, 0.5)}) +
                        op("mod", {x, scalar("mul_scalar", positive, -0.5)});
  const Symbol scalars = scalar("power_scalar", positive, 1.5) + scalar("rpower_scalar", x, 2.0) +
                         scalar("rsubtract_scalar", x, 3.0) +
                         scalar("rdivide_scalar", positive, 1.0) +
                         scalar("subtract_scalar", x, 0.25) + scalar("divide_scalar", x, 4.0) +
                         scalar("maximum_scalar", x, 0.1) + scalar("minimum_scalar", x, -0.1) +
                         scalar("mul_scalar", x, -2.0);
  auto as_float = [&](const Symbol& b) { return op("cast", {b}, {{"dtype", DType::kFloat32}}); };
  const Symbol zero = op("full", {}, {{"value", 0.0}, {"shape", Shape{3, 4}}});
  const Symbol comparisons =
      op("where", {op("greater", {x, zero}), x, scalar("mul_scalar", x, -3.0)}) +
      as_float(op("less", {x, op("sin", {x})})) + as_float(op("less_equal", {x, zero})) +
      as_float(op("greater_equal", {x, zero})) + as_float(op("equal", {x, x})) +
      as_float(op("not_equal", {x, zero}));
  auto reduce = [&](std::string_view name, Ints axes, bool keepdims) {
    return op(name, {x}, {{"axes", axes}, {"keepdims", keepdims}});
  };
  const Symbol reductions = reduce("sum", {1}, false) + reduce("mean", {1}, false) +
                            reduce("max", {1}, false) + reduce("min", {-1}, false) +
                            reduce("prod", {1}, false) + reduce("logsumexp", {1}, false) +
                            reduce("norm", {1}, false) +
                            op("squeeze", {reduce("mean", {0, 1}, true)}, {{"axes", Ints{0}}});
  const Symbol normalized =
      op("log_softmax", {x}, {{"axis", int64_t{0}}}) + op("softmax", {x}, {{"axis", int64_t{0}}});
  const Symbol index = op("argmax", {x}, {{"axis", int64_t{1}}});
  const Symbol indices = Symbol::var("indices", Shape{2, 2}, DType::kInt64);
  const Symbol table = Symbol::var("table", Shape{5, 3});
  const Symbol w = Symbol::var("w", Shape{2, 4});
  const Symbol shapes =
      op("pad", {op("transpose", {x})}, {{"widths", Ints{1, 0, 0, 2}}, {"value", 0.5}});
  const Symbol stacked =
      op("slice", {op("stack", {x, op("sin", {x})}, {{"axis", int64_t{1}}})},
         {{"begin", Ints{1, 0, 0}}, {"end", Ints{3, 2, 4}}, {"step", Ints{1, 1, 2}}});
  const Symbol broadcast =
      op("broadcast_to", {op("expand_dims", {reduce("sum", {0}, false)}, {{"axis", int64_t{0}}})},
         {{"shape", Shape{2, 4}}});
  const Symbol taken = op("take", {x, indices}, {{"axis", int64_t{1}}});
  const Symbol loss =
      op("softmax_cross_entropy", {x, Symbol::var("labels", Shape{3}, DType::kInt64)}) +
      reduce("max", {1}, false);
  const Symbol gathers = op("slice_axis", {op("embedding", {indices, table})},
                            {{"axis", int64_t{2}}, {"begin", int64_t{0}}, {"end", int64_t{2}}}) +
                         op("slice_axis", {op("one_hot", {indices}, {{"depth", int64_t{5}}})},
                            {{"axis", int64_t{2}}, {"begin", int64_t{1}}, {"end", int64_t{3}}});
  const Symbol products = op("dot", {x, w}, {{"transpose_b", true}});
  const Symbol batched = op("matmul", {x, x}, {{"transpose_a", true}});
  const Symbol reshaped = op("flatten", {op("reshape", {x}, {{"shape", Shape{-1, 2, 2}}})});
  const Symbol sorted = op("sort", {op("reshape", {x}, {{"shape", Shape{-1}}})});
  const Symbol searched = as_float(op("searchsorted", {sorted, x})) +
                          as_float(op("searchsorted", {sorted, x}, {{"right", true}}));
  const Symbol model = Symbol::group({unary, binary, scalars, comparisons, reductions, normalized,
                                      index, shapes, stacked, broadcast, taken, loss, gathers,
                                      products, batched, reshaped, searched});
  model.save(prefix + "-symbol.json");
  seed(8);
  const NDArray picks = cast(random_uniform(0, 3.99, {2, 2}), DType::kInt64);
  graph::save_safetensors(prefix + "-0000.safetensors",
                          {{"indices", picks},
                           {"table", random_normal(0, 1, {5, 3})},
                           {"w", random_normal(0, 1, {2, 4})},
                           {"labels", cast(random_uniform(0, 3.99, {3}), DType::kInt64)}});
}

// Two inputs and two outputs, one of them an input passed through (an Identity in ONNX).
void export_two_in_two_out(const std::string& prefix) {
  using graph::Symbol;
  const Symbol a = Symbol::var("data0", Shape{2, 3});
  const Symbol b = Symbol::var("data1", Shape{2, 3});
  const Symbol w = Symbol::var("w", Shape{3});
  const Symbol y =
      Symbol::op("concat", {a * w + b, Symbol::op("tanh", {b})}, {{"axis", int64_t{1}}});
  Symbol::group({y, a}).save(prefix + "-symbol.json");
  seed(9);
  graph::save_safetensors(prefix + "-0000.safetensors", {{"w", random_normal(0, 1, {3})}},
                          {{"format", "janus.params"}, {"inputs", "data0,data1"}});
}

// A recurrent layer (janus/nn/rnn.h: a loop over time steps of fully_connected, slices and
// elementwise gates) with its states as inputs and outputs.
void export_recurrent(nn::RNNMode mode, const std::string& prefix) {
  nn::RecurrentLayer layer(mode, 4,
                           {.num_layers = 2, .layout = nn::RNNLayout::kNTC, .bidirectional = true});
  layer.initialize(nn::Xavier());
  layer.hybridize();
  std::vector<NDArray> xs{random_normal(0, 1, {2, 3, 5})};
  for (const NDArray& s : layer.begin_state(2)) xs.push_back(s);
  wait_to_read(layer(xs)[0]);
  layer.export_model(prefix, 0);
}

// Janus's outputs for fixed inputs of the recorded shapes, from the files: inputs data or
// data0, data1, ... (as the parameters' metadata lists them). `params` is
// PREFIX-NNNN.safetensors. A `dynamic` case (one whose graph holds at any batch size, exported
// with a symbolic batch) also gets inputs with 3 more rows and Janus's outputs for them
// (NAME.batch_input<i>.npy, NAME.batch_expected<i>.npy); the others are exported with a fixed
// batch. cases.txt: NAME OUTPUTS INPUT,INPUT... dynamic|fixed.
void write_case(const std::filesystem::path& dir, const std::string& params, bool dynamic,
                std::ostream& list) {
  constexpr std::string_view kSuffix = "-NNNN.safetensors";
  if (params.size() <= kSuffix.size() || !params.ends_with(".safetensors")) {
    throw ValueError(fmt::format("'{}' is not PREFIX-NNNN.safetensors", params));
  }
  const std::string prefix = params.substr(0, params.size() - kSuffix.size());
  graph::Metadata metadata;
  graph::load_safetensors(params, &metadata);
  std::vector<std::string> inputs = {"data"};
  if (metadata.contains("inputs")) {
    inputs.clear();
    std::stringstream names(metadata["inputs"]);
    for (std::string name; std::getline(names, name, ',');) inputs.push_back(name);
  }
  deploy::Predictor predictor(prefix + "-symbol.json", params, inputs);
  const std::string name = std::filesystem::path(prefix).filename().string();
  // Inputs of the recorded shapes with `extra` more rows, and Janus's outputs for them.
  auto write = [&](const std::string& kind, int64_t extra) {
    std::vector<NDArray> xs;
    for (size_t i = 0; i < inputs.size(); ++i) {
      for (const graph::NodePtr& n : predictor.symbol().graph().arguments()) {
        if (n->name != inputs[i]) continue;
        std::vector<int64_t> dims = n->specs.at(0).shape.dims();
        dims.at(0) += extra;
        xs.push_back(random_normal(0, 1, Shape(dims)));
      }
      graph::save_npy((dir / fmt::format("{}.{}input{}.npy", name, kind, i)).string(), xs.at(i));
    }
    const std::vector<NDArray> ys = predictor.run(xs);
    for (size_t i = 0; i < ys.size(); ++i) {
      graph::save_npy((dir / fmt::format("{}.{}expected{}.npy", name, kind, i)).string(), ys[i]);
    }
    return ys.size();
  };
  seed(42);
  const size_t outputs = write("", 0);
  if (dynamic) write("batch_", 3);
  list << fmt::format("{} {} {} {}\n", name, outputs, fmt::join(inputs, ","),
                      dynamic ? "dynamic" : "fixed");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: onnx_cases DIR [PREFIX-NNNN.safetensors...]\n";
    return 2;
  }
  try {
    const std::filesystem::path dir(argv[1]);
    std::filesystem::create_directories(dir);
    // The models and whether their graphs hold at any batch size (the others fix it: Mixer
    // reshapes to the traced batch size, fused and operators have inputs the size of parameters).
    std::vector<std::pair<std::string, bool>> prefixes;
    for (const std::string name : {"mlp", "lenet"}) {
      seed(1);
      export_block(*training::make_model(name), random_normal(0, 1, {4, 1, 28, 28}),
                   (dir / name).string());
      prefixes.emplace_back((dir / name).string(), true);
    }
    seed(2);
    auto convnet = make_convnet();
    export_block(*convnet, random_normal(0, 1, {2, 3, 16, 16}), (dir / "convnet").string());
    // Running statistics that are not the initial zeros and ones, so that export must use them.
    for (const auto& [name, p] : convnet->collect_params()) {
      if (name.ends_with("running_mean")) p->set_data(random_normal(0, 0.5, p->data().shape()));
      if (name.ends_with("running_var")) p->set_data(random_uniform(0.5, 2, p->data().shape()));
    }
    convnet->export_model((dir / "convnet").string(), 0);
    prefixes.emplace_back((dir / "convnet").string(), false);
    export_fused((dir / "fused").string());
    prefixes.emplace_back((dir / "fused").string(), false);
    export_fused_conv((dir / "fused_conv").string());
    prefixes.emplace_back((dir / "fused_conv").string(), true);
    export_operators((dir / "operators").string());
    prefixes.emplace_back((dir / "operators").string(), false);
    export_two_in_two_out((dir / "two_in_two_out").string());
    prefixes.emplace_back((dir / "two_in_two_out").string(), true);
    // States are inputs whose axis 0 is layers x directions, not the batch: fixed batch.
    seed(3);
    export_recurrent(nn::RNNMode::kLSTM, (dir / "lstm").string());
    prefixes.emplace_back((dir / "lstm").string(), false);
    export_recurrent(nn::RNNMode::kGRU, (dir / "gru").string());
    prefixes.emplace_back((dir / "gru").string(), false);
    std::ofstream list(dir / "cases.txt");
    for (const auto& [prefix, dynamic] : prefixes) {
      write_case(dir, prefix + "-0000.safetensors", dynamic, list);
    }
    // The demo models trained by check_onnx.py.
    for (int i = 2; i < argc; ++i) write_case(dir, argv[i], true, list);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "onnx_cases: " << e.what() << "\n";
    return 1;
  }
}

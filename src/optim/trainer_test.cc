// Trainer: training converges, parameters without gradients are skipped, errors name the
// parameter, and a run saved and resumed continues bit for bit.
#include "janus/optim/trainer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>

#include "janus/autograd/autograd.h"
#include "janus/engine/array.h"
#include "janus/nn/block.h"
#include "janus/nn/layers.h"
#include "janus/nn/loss.h"
#include "janus/nn/serialization.h"
#include "janus/ops/ops.h"
#include "janus/optim/lr_scheduler.h"

#include "testing/test_util.h"

namespace janus::optim {
namespace {

using ::testing::HasSubstr;

std::string temp_path(const std::string& name) {
  return fmt::format("{}janus_trainer_test_{}_{}", ::testing::TempDir(), getpid(), name);
}

// One recorded forward and backward of loss_fn(net(x), y).
void forward_backward(nn::Block& net, const nn::Loss& loss_fn, const NDArray& x, const NDArray& y) {
  NDArray loss;
  {
    autograd::RecordScope record;
    loss = loss_fn(net(x), y);
  }
  autograd::backward(loss);
}

std::vector<std::vector<float>> values_of(const nn::ParameterDict& params) {
  std::vector<std::vector<float>> out;
  for (const auto& [name, p] : params) out.push_back(to_vector<float>(p->data()));
  return out;
}

class TrainerConverges : public ::testing::TestWithParam<const char*> {};

// y = 2 x0 - 3.4 x1 + 4.2 (the d2l example), fitted by nn::Dense(1) with L2Loss.
TEST_P(TrainerConverges, OnALinearRegression) {
  seed(42);
  const NDArray x = random_normal(0, 1, {100, 2});
  const NDArray y = dot(x, from_vector<float>({2.0f, -3.4f}, {2, 1})) + 4.2;
  nn::Sequential net;
  net.add(std::make_shared<nn::Dense>(1));
  net.initialize(nn::Normal(0.01));
  const bool sgd = std::string(GetParam()) == "sgd";
  Trainer trainer(net.collect_params(),
                  make_optimizer(GetParam(), sgd ? 0.1 : 0.05, {.momentum = 0.5}));
  nn::L2Loss loss_fn;
  for (int i = 0; i < 400; ++i) {
    forward_backward(net, loss_fn, x, y);
    trainer.step(100);
  }
  const std::vector<float> w = to_vector<float>(net.collect_params().at("0.weight")->data());
  const float b = to_vector<float>(net.collect_params().at("0.bias")->data())[0];
  EXPECT_NEAR(w[0], 2.0, 1e-2);
  EXPECT_NEAR(w[1], -3.4, 1e-2);
  EXPECT_NEAR(b, 4.2, 1e-2);
  EXPECT_EQ(trainer.optimizer().num_update(), 400);
}

INSTANTIATE_TEST_SUITE_P(Optimizers, TrainerConverges, ::testing::Values("sgd", "adam"));

// A two-layer perceptron (four parameters) with the same initial values on every call.
std::shared_ptr<nn::Sequential> small_mlp() {
  seed(7);
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::Dense>(16, "relu", true, true, /*in_units=*/8),
           std::make_shared<nn::Dense>(4, "", true, true, /*in_units=*/16));
  net->initialize(nn::Normal(0.1));
  return net;
}

std::vector<std::vector<float>> states_of(const Optimizer& opt, size_t params) {
  std::vector<std::vector<float>> out;
  for (size_t i = 0; i < params; ++i) {
    for (const NDArray& s : opt.state(static_cast<int>(i))) out.push_back(to_vector<float>(s));
  }
  return out;
}

class TrainerFusedUpdate : public ::testing::TestWithParam<const char*> {};

// Trainer::step runs every parameter's update in one engine operation: after several steps the
// weights and the optimizer's state are bitwise those of one Optimizer::update per parameter,
// with weight decay, lr_mult and wd_mult, clipping, rescale_grad and a schedule.
TEST_P(TrainerFusedUpdate, EqualsOneUpdatePerParameterBitForBit) {
  const std::string name = GetParam();
  auto options = [] {
    return OptimizerOptions{.momentum = 0.9,
                            .wd = 1e-2,
                            .clip_gradient = 0.05,
                            .lr_scheduler = std::make_shared<FactorScheduler>(2, 0.5)};
  };
  const auto fused_net = small_mlp(), alone_net = small_mlp();
  const nn::ParameterDict fused_params = fused_net->collect_params();
  const nn::ParameterDict alone_params = alone_net->collect_params();
  fused_params.at("0.weight")->set_lr_mult(0.5);
  alone_params.at("0.weight")->set_lr_mult(0.5);
  fused_params.at("1.bias")->set_wd_mult(0.0);
  alone_params.at("1.bias")->set_wd_mult(0.0);
  OptimizerPtr fused = make_optimizer(name, 0.1, options());
  fused->set_rescale_grad(2.0);  // the trainer's scale: it steps with 2 / batch_size
  Trainer trainer(fused_params, fused);
  const OptimizerPtr alone = make_optimizer(name, 0.1, options());
  seed(11);
  for (int step = 0; step < 5; ++step) {
    const NDArray x = random_normal(0, 1, {8, 8});
    const NDArray y = random_normal(0, 1, {8, 4});
    forward_backward(*fused_net, nn::L2Loss(), x, y);
    trainer.step(8);
    forward_backward(*alone_net, nn::L2Loss(), x, y);
    alone->set_rescale_grad(2.0 / 8);
    int index = 0;
    for (const auto& [pname, p] : alone_params) {
      alone->set_mults(index, p->lr_mult(), p->wd_mult());
      alone->update(index++, p->data(), p->grad());
    }
  }
  EXPECT_EQ(values_of(fused_params), values_of(alone_params));
  EXPECT_EQ(states_of(trainer.optimizer(), 4), states_of(*alone, 4));
  EXPECT_EQ(trainer.optimizer().num_update(), alone->num_update());
  EXPECT_EQ(trainer.optimizer().learning_rate(), alone->learning_rate());
}

INSTANTIATE_TEST_SUITE_P(Optimizers, TrainerFusedUpdate, ::testing::Values("sgd", "adam"));

// Counts the operations that ran, by name.
class OperationCounter : public OpListener {
 public:
  void on_operation(std::string_view name, const OpDetail&, Device, Lane, int64_t,
                    int64_t) override {
    const std::lock_guard lock(mu_);
    ++counts_[std::string(name)];
  }
  std::map<std::string, int> snapshot() {
    const std::lock_guard lock(mu_);
    return counts_;
  }

 private:
  std::mutex mu_;
  std::map<std::string, int> counts_;
};

// After the first step (which creates the momentum buffers, each an operation of its own),
// a step of the four parameters is one engine operation, not four.
TEST(Trainer, UpdatesEveryParameterOfADeviceInOneEngineOperation) {
  const auto net = small_mlp();
  Trainer trainer(net->collect_params(), make_optimizer("sgd", 0.1, {.momentum = 0.9}));
  const NDArray x = random_normal(0, 1, {8, 8});
  const NDArray y = random_normal(0, 1, {8, 4});
  forward_backward(*net, nn::L2Loss(), x, y);
  trainer.step(8);
  forward_backward(*net, nn::L2Loss(), x, y);
  wait_all();
  OperationCounter counter;
  set_op_listener(&counter);
  trainer.step(8);
  wait_all();
  set_op_listener(nullptr);
  const std::map<std::string, int> counts = counter.snapshot();
  EXPECT_EQ(counts, (std::map<std::string, int>{{"fused_update", 1}}));
  EXPECT_EQ(trainer.optimizer().update_count(3), 2);
}

TEST(Trainer, SkipsParametersWithoutGradients) {
  seed(1);
  nn::Sequential net;
  auto bn = std::make_shared<nn::BatchNorm>();
  net.add(std::make_shared<nn::Dense>(3, "", true, true, /*in_units=*/2), bn);
  net.initialize(nn::Uniform());
  Trainer trainer(net.collect_params(), make_optimizer("sgd", 0.1));
  const NDArray x = random_normal(0, 1, {8, 2});
  const NDArray y = random_normal(0, 1, {8, 3});
  forward_backward(net, nn::L2Loss(), x, y);  // updates the running statistics (in training)
  const nn::ParameterDict params = net.collect_params();
  const std::vector<float> mean = to_vector<float>(params.at("1.running_mean")->data());
  const std::vector<float> gamma = to_vector<float>(params.at("1.gamma")->data());
  trainer.step(8);
  EXPECT_EQ(to_vector<float>(params.at("1.running_mean")->data()), mean);
  EXPECT_NE(to_vector<float>(params.at("1.gamma")->data()), gamma);
  EXPECT_EQ(trainer.optimizer().update_count(2), 1);  // 1.gamma
  EXPECT_EQ(trainer.optimizer().update_count(4), 0);  // 1.running_mean
}

TEST(Trainer, RescalesByTheBatchSizeAndUpdatesASharedParameterOnce) {
  auto p = std::make_shared<nn::Parameter>("w", Shape{2}, nn::Zero());
  p->initialize(nullptr);
  nn::ParameterDict params;
  params.add("a.w", p);
  params.add("b.w", p);  // the same parameter under two names (a shared layer)
  Trainer trainer(params, make_optimizer("sgd", 1.0));
  EXPECT_EQ(trainer.params().size(), 1u);
  NDArray loss;
  {
    autograd::RecordScope record;
    loss = sum(p->data() * 4.0);
  }
  autograd::backward(loss);
  trainer.step(/*batch_size=*/2);
  // grad 4, rescaled by 1/2, one step of lr 1.
  EXPECT_EQ(to_vector<float>(p->data()), (std::vector<float>{-2.0f, -2.0f}));
  EXPECT_EQ(trainer.optimizer().rescale_grad(), 0.5);
  EXPECT_THAT(error_of<ValueError>([&] { trainer.step(0); }),
              HasSubstr("Trainer: step: batch_size is 0, expected a positive number"));
}

// Gluon's lr_mult and wd_mult: w -= lr * lr_mult * (g + wd * wd_mult * w).
TEST(Trainer, AppliesEachParametersLrMultAndWdMult) {
  auto a = std::make_shared<nn::Parameter>("a", Shape{1}, nn::Constant(1.0));
  auto b = std::make_shared<nn::Parameter>("b", Shape{1}, nn::Constant(1.0));
  auto c = std::make_shared<nn::Parameter>("c", Shape{1}, nn::Constant(1.0));
  nn::ParameterDict params;
  for (const auto& [name, p] : {std::pair{"a", a}, {"b", b}, {"c", c}}) {
    p->initialize(nullptr);
    params.add(name, p);
  }
  b->set_lr_mult(0.5);
  c->set_wd_mult(0.0);
  Trainer trainer(params, make_optimizer("sgd", 0.1, {.wd = 0.2}));
  NDArray loss;
  {
    autograd::RecordScope record;
    loss = sum(a->data() * 2.0) + sum(b->data() * 2.0) + sum(c->data() * 2.0);
  }
  autograd::backward(loss);
  trainer.step(1);
  EXPECT_FLOAT_EQ(to_vector<float>(a->data())[0], 1.0f - 0.1f * (2.0f + 0.2f));
  EXPECT_FLOAT_EQ(to_vector<float>(b->data())[0], 1.0f - 0.05f * (2.0f + 0.2f));
  EXPECT_FLOAT_EQ(to_vector<float>(c->data())[0], 1.0f - 0.1f * 2.0f);
  EXPECT_THAT(error_of<ValueError>([&] { a->set_lr_mult(-1); }),
              HasSubstr("parameter 'a': lr_mult is -1, expected a finite number >= 0"));
}

TEST(Trainer, ParametersWithoutGradientsAreNamedAndNothingIsUpdated) {
  nn::Sequential net;
  net.add(std::make_shared<nn::Dense>(2, "", true, true, /*in_units=*/3),
          std::make_shared<nn::Dense>(1));
  Trainer trainer(net.collect_params(), make_optimizer("sgd", 0.1));
  EXPECT_THAT(error_of<ValueError>([&] { trainer.step(1); }),
              HasSubstr("Trainer: step: parameter '0.weight' (" + net[0]->name() +
                        "_weight) has no gradient: it has not been initialised; call "
                        "initialize() on the block first"));
  net.initialize(nn::Constant(1.0));
  EXPECT_THAT(error_of<ValueError>([&] { trainer.step(1); }),
              HasSubstr("Trainer: step: parameter '1.weight' (" + net[1]->name() +
                        "_weight) has no gradient: its shape [1, 0] is not known yet"));
  // The check runs before any update: the first layer is untouched.
  EXPECT_EQ(to_vector<float>(net.collect_params().at("0.weight")->data()),
            std::vector<float>(6, 1.0f));
}

TEST(Trainer, LearningRateCanBeReadAndSet) {
  nn::Sequential net;
  net.add(std::make_shared<nn::Dense>(1, "", true, true, 1));
  Trainer trainer(net.collect_params(), make_optimizer("adam", 0.01));
  EXPECT_EQ(trainer.learning_rate(), 0.01);
  trainer.set_learning_rate(0.5);
  EXPECT_EQ(trainer.learning_rate(), 0.5);
  Trainer scheduled(
      net.collect_params(),
      make_optimizer("sgd", 0.1, {.lr_scheduler = std::make_shared<FactorScheduler>(10, 0.5)}));
  EXPECT_EQ(scheduled.learning_rate(), 0.1);
  EXPECT_THAT(error_of<ValueError>([&] { scheduled.set_learning_rate(1.0); }),
              HasSubstr("set_learning_rate: the schedule FactorScheduler"));
}

std::shared_ptr<nn::Sequential> small_net(bool known_shapes) {
  auto net = std::make_shared<nn::Sequential>();
  net->add(std::make_shared<nn::Dense>(4, "relu", true, true, known_shapes ? 3 : 0),
           std::make_shared<nn::Dense>(2));
  return net;
}

class TrainerResumes : public ::testing::TestWithParam<const char*> {};

// Train 3 steps, save, train 2 more; a fresh net and trainer loaded from the files and trained
// the same 2 steps end with the same bits.
TEST_P(TrainerResumes, BitForBitFromSavedParametersAndStates) {
  const std::string params_path = temp_path(std::string(GetParam()) + "_params.safetensors");
  const std::string states_path = temp_path(std::string(GetParam()) + "_states.safetensors");
  seed(5);
  const NDArray x = random_normal(0, 1, {6, 3});
  const NDArray y = random_normal(0, 1, {6, 2});
  const OptimizerOptions options{.momentum = 0.9, .wd = 1e-3};
  nn::L2Loss loss_fn;

  auto net1 = small_net(true);
  net1->initialize(nn::Xavier());
  Trainer trainer1(net1->collect_params(), make_optimizer(GetParam(), 0.05, options));
  for (int i = 0; i < 3; ++i) {
    forward_backward(*net1, loss_fn, x, y);
    trainer1.step(6);
  }
  nn::save_parameters(*net1, params_path);
  trainer1.save_states(states_path);
  for (int i = 0; i < 2; ++i) {
    forward_backward(*net1, loss_fn, x, y);
    trainer1.step(6);
  }

  auto net2 = small_net(false);  // deferred shapes: they come from the file
  nn::load_parameters(*net2, params_path);
  Trainer trainer2(net2->collect_params(), make_optimizer(GetParam(), 0.05, options));
  trainer2.load_states(states_path);
  EXPECT_EQ(trainer2.optimizer().num_update(), 3);
  EXPECT_EQ(trainer2.optimizer().update_count(0), 3);
  for (int i = 0; i < 2; ++i) {
    forward_backward(*net2, loss_fn, x, y);
    trainer2.step(6);
  }
  EXPECT_EQ(values_of(net2->collect_params()), values_of(net1->collect_params()));
  for (size_t i = 0; i < 4; ++i) {
    const auto& s1 = trainer1.optimizer().state(static_cast<int>(i));
    const auto& s2 = trainer2.optimizer().state(static_cast<int>(i));
    ASSERT_EQ(s1.size(), s2.size());
    for (size_t k = 0; k < s1.size(); ++k)
      EXPECT_EQ(to_vector<float>(s1[k]), to_vector<float>(s2[k]));
  }
  std::filesystem::remove(params_path);
  std::filesystem::remove(states_path);
}

INSTANTIATE_TEST_SUITE_P(Optimizers, TrainerResumes, ::testing::Values("sgd", "adam"));

TEST(Trainer, LoadStatesNamesWhatDoesNotFit) {
  const std::string path = temp_path("mismatch_states.safetensors");
  const std::string params_path = temp_path("mismatch_params.safetensors");
  auto net = small_net(true);
  net->initialize(nn::Xavier());
  Trainer sgd(net->collect_params(), make_optimizer("sgd", 0.1, {.momentum = 0.9}));
  forward_backward(*net, nn::L2Loss(), ones({1, 3}), ones({1, 2}));
  sgd.step(1);
  sgd.save_states(path);
  EXPECT_EQ(nn::load_safetensors(path).front().first, "0.weight.mom");

  Trainer adam(net->collect_params(), make_optimizer("adam", 0.1));
  EXPECT_THAT(error_of<ValueError>([&] { adam.load_states(path); }),
              HasSubstr("load_states: '" + path +
                        "' holds states of optimizer 'sgd', but this trainer uses 'adam'"));

  nn::Sequential other;  // the first layer only
  other.add(std::make_shared<nn::Dense>(4, "relu", true, true, 3));
  other.initialize(nn::Xavier());
  Trainer partial(other.collect_params(), make_optimizer("sgd", 0.1, {.momentum = 0.9}));
  EXPECT_THAT(error_of<ValueError>([&] { partial.load_states(path); }),
              HasSubstr("for parameter '1.bias', which this trainer does not have; its "
                        "parameters are 0.weight, 0.bias"));

  nn::Sequential wider;
  wider.add(std::make_shared<nn::Dense>(5, "relu", true, true, 3), std::make_shared<nn::Dense>(2));
  Trainer wide(wider.collect_params(), make_optimizer("sgd", 0.1, {.momentum = 0.9}));
  EXPECT_THAT(error_of<ShapeError>([&] { wide.load_states(path); }),
              HasSubstr("load_states: '" + path +
                        "': state '0.weight.mom' has shape [4, 3], but parameter '0.weight' has "
                        "shape [5, 3]"));

  nn::save_parameters(*net, params_path);
  EXPECT_THAT(error_of<FormatError>([&] { sgd.load_states(params_path); }),
              HasSubstr("load_states: '" + params_path + "' holds no optimizer states"));
  EXPECT_THAT(error_of<IOError>([&] { sgd.load_states(path + ".missing"); }),
              HasSubstr(path + ".missing"));
  std::filesystem::remove(path);
  std::filesystem::remove(params_path);
}

}  // namespace
}  // namespace janus::optim

// Integration: `janus train` learns Fashion-MNIST. One short epoch on a subset must reach an
// accuracy far above chance (10%); the full accuracy targets are checked by the benchmarks.
#include "train.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/nn/loss.h"
#include "janus/ops/ops.h"
#include "janus/optim/trainer.h"
#include "janus/profile/profiler.h"

#include "models.h"
#include "plot.h"
#include "testing/test_util.h"

namespace janus::training {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string file_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  return text.str();
}

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
  EXPECT_THAT(file_text(o.log_json), HasSubstr("\"test_acc\": "));
  std::filesystem::remove(o.log_json);
  const std::string svg_path = plot_path_for(o.log_json);
  const std::string svg = file_text(svg_path);
  EXPECT_THAT(svg, HasSubstr("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_THAT(svg, HasSubstr("<polyline class=\"test acc\""));
  std::filesystem::remove(svg_path);
}

// Two epochs with a checkpoint after each, then a new run with --resume for the third: the same
// figures, bit for bit, as three epochs in one run (parameters, momentum, update count and the
// third epoch's shuffle all come back). A run that does not resume refuses the directory.
TEST(Train, ResumedRunGivesTheFiguresOfAnUninterruptedOne) {
  const auto dir = std::filesystem::temp_directory_path() / "janus_train_resume_test";
  std::filesystem::remove_all(dir);
  TrainOptions o;
  o.epochs = 3;
  o.limit = 600;
  o.batch_size = 128;
  o.momentum = 0.9;
  o.optimizer = "sgd";
  o.progress = false;
  std::ostringstream out;
  const std::vector<EpochResult> whole = train(o, out);

  o.checkpoint_dir = dir.string();
  o.epochs = 2;
  train(o, out);
  EXPECT_TRUE(std::filesystem::exists(dir / "epoch-0001" / "params.safetensors"));
  EXPECT_TRUE(std::filesystem::exists(dir / "epoch-0002" / "trainer.safetensors"));
  o.epochs = 3;
  EXPECT_THROW(train(o, out), ValueError);  // holds checkpoints, and no --resume
  o.resume = true;
  std::ostringstream resumed_out;
  const std::vector<EpochResult> resumed = train(o, resumed_out);
  EXPECT_THAT(resumed_out.str(), HasSubstr("after epoch 2"));
  EXPECT_THAT(resumed_out.str(), Not(HasSubstr("epoch  2/3")));
  ASSERT_EQ(resumed.size(), 3u);
  for (size_t e = 0; e < 3; ++e) {
    EXPECT_EQ(resumed[e].loss, whole[e].loss) << "epoch " << e + 1;
    EXPECT_EQ(resumed[e].train_acc, whole[e].train_acc) << "epoch " << e + 1;
    EXPECT_EQ(resumed[e].test_acc, whole[e].test_acc) << "epoch " << e + 1;
  }
  std::filesystem::remove_all(dir);
}

// One short epoch of LeNet on the first `limit` samples, batches of 32, SGD with momentum.
TrainOptions short_lenet(int64_t limit) {
  TrainOptions o;
  o.model = "lenet";
  o.epochs = 1;
  o.limit = limit;
  o.batch_size = 32;
  o.lr = 0.05;
  o.momentum = 0.9;
  o.progress = false;
  return o;
}

TEST(Train, LeNetTrainsOnATinySubset) {
  TrainOptions o = short_lenet(1200);
  o.lr_schedule = "cosine";
  o.log_json = (std::filesystem::temp_directory_path() / "janus_train_test_lenet.json").string();
  std::ostringstream out;
  const std::vector<EpochResult> r = train(o, out);
  EXPECT_GT(r[0].test_acc, 0.3) << out.str();
  EXPECT_THAT(out.str(), HasSubstr("sgd lr 0.05 (cosine schedule)"));
  EXPECT_THAT(file_text(o.log_json), HasSubstr("\"lr_schedule\": \"cosine\""));
  std::filesystem::remove(o.log_json);
  std::filesystem::remove(plot_path_for(o.log_json));
}

// The imperative step (the tape's fused gradient steps, gradients written into their buffers)
// and the hybridized one (the compiled graphs, fused by the graph passes) train LeNet to the
// same bits: the saved parameters are the same bytes.
TEST(Train, LeNetImperativeAndHybridizedTrainToTheSameBits) {
  std::vector<std::string> saved;
  for (const bool hybridize : {false, true}) {
    TrainOptions o = short_lenet(256);
    o.hybridize = hybridize;
    o.save = (std::filesystem::temp_directory_path() /
              (hybridize ? "janus_train_test_hybridized.safetensors"
                         : "janus_train_test_imperative.safetensors"))
                 .string();
    std::ostringstream out;
    train(o, out);
    std::ifstream f(o.save, std::ios::binary);
    saved.emplace_back(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    std::filesystem::remove(o.save);
  }
  ASSERT_GT(saved[0].size(), 200000u);  // LeNet's 61,706 float32 parameters
  EXPECT_TRUE(saved[0] == saved[1]);
}

// One training step of `net` on (x, y): forward and loss recorded, backward, SGD update.
void train_step(nn::Block& net, optim::Trainer& trainer, const NDArray& x, const NDArray& y) {
  const nn::SoftmaxCrossEntropyLoss loss_fn;
  NDArray loss;
  {
    autograd::RecordScope record;
    loss = loss_fn(net(x), y);
  }
  autograd::backward(loss);
  trainer.step(x.shape()[0]);
  wait_all();
}

// What one profiled training step ran: every kernel ("name shapes", sorted; a compiled graph's
// steps counted as their kernels) and the number of engine operations (a compiled graph one).
struct StepKernels {
  std::vector<std::string> kernels;
  size_t operations = 0;
};

StepKernels profile_step(nn::Block& net, optim::Trainer& trainer, const NDArray& x,
                         const NDArray& y) {
  profiler::start();
  train_step(net, trainer, x, y);
  profiler::stop();
  const std::vector<profiler::Event> events = profiler::events();
  auto is_graph = [](const profiler::Event& e) { return e.name == "cached_op"; };
  StepKernels k;
  for (const profiler::Event& e : events) {
    if (is_graph(e)) {
      ++k.operations;  // its steps are events of their own, nested in it
      continue;
    }
    k.kernels.push_back(e.name + " " + e.shapes);
    const bool nested = std::any_of(events.begin(), events.end(), [&](const profiler::Event& g) {
      return is_graph(g) && g.thread == e.thread && g.start_ns <= e.start_ns &&
             e.end_ns <= g.end_ns;
    });
    if (!nested) ++k.operations;
  }
  std::sort(k.kernels.begin(), k.kernels.end());
  return k;
}

// The hybridized MLP step (its forward and backward compiled graphs) runs exactly the kernels of
// the imperative step (the tape's fused gradient steps): the same products, no copy of the batch
// or of a gradient, no unfused backward; in fewer engine operations; to the same bits.
TEST(Train, MlpHybridizedStepRunsTheImperativeKernelsInFewerOperations) {
  constexpr int64_t kBatch = 64;
  seed(3);
  const NDArray x = random_uniform(0, 1, {kBatch, 1, 28, 28});
  std::vector<int64_t> labels;  // integer classes, as the Fashion-MNIST loader gives (no cast)
  for (int64_t i = 0; i < kBatch; ++i) labels.push_back(i * 7 % 10);
  const NDArray y = from_vector(labels, Shape{kBatch});
  StepKernels steps[2];
  std::vector<std::vector<float>> params[2];
  for (const bool hybridize : {false, true}) {
    SCOPED_TRACE(hybridize ? "hybridized" : "imperative");
    seed(1);
    auto net = make_model("mlp");
    net->initialize(nn::Xavier());
    {
      autograd::PauseScope no_record;
      (*net)(x);  // deferred shapes
    }
    if (hybridize) net->hybridize();
    optim::Trainer trainer(net->collect_params(),
                           optim::make_optimizer("sgd", 0.1, {.momentum = 0.9}));
    train_step(*net, trainer, x, y);  // traces and compiles when hybridized
    steps[hybridize] = profile_step(*net, trainer, x, y);
    train_step(*net, trainer, x, y);
    for (const auto& [name, p] : net->collect_params()) {
      params[hybridize].push_back(to_vector<float>(p->data()));
    }
  }
  EXPECT_EQ(steps[true].kernels, steps[false].kernels);
  // Imperative: 2 products forward, the loss and its gradient (with the head gradient), 3
  // products, the output bias' sum and the fused relu/bias gradient backward, one update.
  EXPECT_EQ(steps[false].operations, 11u);
  // Hybridized: a graph each way instead of 2 and 5 operations.
  EXPECT_EQ(steps[true].operations, 6u);
  EXPECT_TRUE(params[false] == params[true]);
}

// Data parallelism: each batch split across cpu(0) and cpu(1), imperative and hybridized
// (one compiled graph per device); the figures combine both slices. 1000 samples in batches of
// 64 end with a partial batch of 40, split 20/20. The hybridized run exports the graph of the
// first device with its replicas. The figures are those of the same run on one device.
TEST(Train, TwoDevicesTrainDataParallelImperativeAndHybridized) {
  const ScopedCpuDevices devices(2);
  for (const bool hybridize : {false, true}) {
    SCOPED_TRACE(hybridize ? "hybridized" : "imperative");
    TrainOptions o;
    o.model = "mlp";
    o.epochs = 1;
    o.limit = 1000;
    o.batch_size = 64;
    o.lr = 0.1;
    o.progress = false;
    o.devices = {cpu(0), cpu(1)};
    o.hybridize = hybridize;
    const auto dir = std::filesystem::temp_directory_path() / "janus_train_dp_test";
    std::filesystem::create_directories(dir);
    if (hybridize) o.export_prefix = (dir / "mlp").string();
    std::ostringstream out;
    const std::vector<EpochResult> r = train(o, out);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_TRUE(std::isfinite(r[0].loss)) << out.str();
    EXPECT_LT(r[0].loss, 2.0) << out.str();  // ln(10) = 2.30 at chance
    EXPECT_GT(r[0].train_acc, 0.4) << out.str();
    EXPECT_GT(r[0].test_acc, 0.5) << out.str();
    EXPECT_THAT(out.str(), HasSubstr("data-parallel on cpu(0), cpu(1) (device store)"));
    if (hybridize) {
      EXPECT_TRUE(std::filesystem::exists(dir / "mlp-symbol.json")) << out.str();
      EXPECT_TRUE(std::filesystem::exists(dir / "mlp-0001.safetensors")) << out.str();
    }
    std::filesystem::remove_all(dir);
    // The same run on one device: the loader's parts (each gathered on its device) are the
    // batch's rows, so the figures are the one-device run's up to the rounding of summing
    // per-device partial gradients.
    TrainOptions one = o;
    one.devices.clear();
    one.export_prefix.clear();
    const std::vector<EpochResult> r1 = train(one, out);
    EXPECT_NEAR(r[0].loss, r1[0].loss, 1e-3) << out.str();
    EXPECT_NEAR(r[0].train_acc, r1[0].train_acc, 0.01) << out.str();
  }
  TrainOptions o;
  o.devices = {cpu(0), cpu(0)};
  std::ostringstream out;
  EXPECT_THAT(error_of<ValueError>([&] { train(o, out); }),
              HasSubstr("--devices: device cpu(0) appears twice in [cpu(0), cpu(0)]"));
  o.devices = {cpu(0), cpu(1)};
  o.device = cpu(1);
  EXPECT_THAT(error_of<ValueError>([&] { train(o, out); }),
              HasSubstr("--device cpu(1) and --devices cpu(0),cpu(1): give one of them"));
}

TEST(Plot, OnePointPerEpochOnEachSeriesScaledToItsAxis) {
  std::vector<EpochResult> rs;
  for (int i = 1; i <= 3; ++i) {
    rs.push_back(EpochResult{
        .epoch = i, .loss = 1.0 / i, .train_acc = 0.5 + 0.1 * i, .test_acc = 0.4 + 0.1 * i});
  }
  const std::string svg = training_plot_svg(rs, "a <title> & more");
  EXPECT_THAT(svg, HasSubstr("a &lt;title&gt; &amp; more"));
  EXPECT_THAT(svg, ::testing::EndsWith("</svg>\n"));
  // The plot area is x 64..576, y 40..324 (height 284); loss axis 0..1, accuracy 0..1.
  EXPECT_THAT(svg, HasSubstr("class=\"loss\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\" "
                             "points=\"64.0,40.0 320.0,182.0 576.0,229.3\""));
  EXPECT_THAT(svg,
              HasSubstr("class=\"test acc\" fill=\"none\" stroke=\"#2ca02c\" stroke-width=\"2\" "
                        "points=\"64.0,182.0 320.0,153.6 576.0,125.2\""));
  EXPECT_EQ(plot_path_for("out/run.json"), "out/run.svg");
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
  o.lr_schedule = "step";
  EXPECT_THAT(error_of<ValueError>([&] { train(o, out); }),
              HasSubstr("--lr-schedule is 'step', expected constant or cosine"));
  o.lr_schedule = "constant";
  o.data_root = "/nonexistent/fashion";
  EXPECT_THAT(error_of<IOError>([&] { train(o, out); }), HasSubstr("/nonexistent/fashion"));
}

}  // namespace
}  // namespace janus::training

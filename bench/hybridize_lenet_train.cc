// hybridize_lenet_train: one training step of LeNet on Fashion-MNIST batches (batch 256, SGD),
// imperative versus hybridized (forward and backward each one compiled graph), side by side in
// one run: time per step and the peak of Janus' allocator from before the first step. The
// parameters of both runs start equal and must end equal (the same arithmetic). Ends with one JSON
// line.
#include <cstdio>

#include "janus/janus.h"
#include "janus/optim/trainer.h"

#include "bench_util.h"
#include "models.h"
#include "suite.h"

namespace {

using bench::Timer;
using janus::NDArray;
namespace nn = janus::nn;

constexpr int kSteps = 20;
constexpr int64_t kBatch = 256;

struct Result {
  double step_ms = 0;
  double peak_mb = 0;
};

Result train(nn::Block& net, janus::optim::Trainer& trainer, const std::vector<NDArray>& xs,
             const std::vector<NDArray>& ys) {
  const nn::SoftmaxCrossEntropyLoss loss_fn;
  auto step = [&](size_t i) {
    NDArray loss;
    {
      janus::autograd::RecordScope record;
      loss = loss_fn(net(xs[i % xs.size()]), ys[i % ys.size()]);
    }
    janus::autograd::backward(loss);
    trainer.step(kBatch);
    return loss;
  };
  // Memory counts from before the first step, so what the warm-up step leaves allocated (the
  // optimizer's state; hybridized, the compiled graphs' buffers) is in it; the peak is that of
  // the timed steps (the warm-up's one-off tracing and compilation excluded).
  janus::wait_all();
  auto& alloc = janus::allocator_for(janus::cpu());
  const int64_t base = janus::memory_stats(janus::cpu()).bytes_in_use;
  janus::wait_to_read(step(0));  // warm-up: traces and compiles when hybridized
  janus::wait_all();
  alloc.reset_peak();
  std::vector<double> ms;
  for (int i = 1; i <= kSteps; ++i) {
    Timer t;
    janus::wait_to_read(step(static_cast<size_t>(i)));  // one step at a time: its own peak
    janus::wait_all();
    ms.push_back(t.ms());
  }
  const int64_t peak = janus::memory_stats(janus::cpu()).peak_bytes_in_use;
  return {bench::median(ms), static_cast<double>(peak - base) / 1e6};
}

}  // namespace

namespace {

int run(const bench::Options& options) {
  auto data = std::make_shared<janus::data::FashionMNIST>();
  std::vector<NDArray> xs, ys;
  for (int64_t b = 0; b < 4; ++b) {
    std::vector<int64_t> idx;
    for (int64_t i = 0; i < kBatch; ++i) idx.push_back(b * kBatch + i);
    auto batch = data->get_batch(idx);
    xs.push_back(batch[0]);
    ys.push_back(batch[1]);
  }
  // 0: imperative, 1: hybridized, 2: hybridized with static_alloc.
  Result r[3];
  std::shared_ptr<nn::Sequential> nets[3];
  for (int hybrid = 0; hybrid < 3; ++hybrid) {
    nets[hybrid] = janus::training::make_model("lenet");
    nets[hybrid]->initialize(nn::Xavier());
    janus::seed(1);
    {
      janus::autograd::PauseScope no_record;
      (*nets[hybrid])(xs[0]);  // deferred shapes, same draws in both runs
    }
    if (hybrid) nets[hybrid]->hybridize(true, {.static_alloc = hybrid == 2});
    janus::optim::Trainer trainer(nets[hybrid]->collect_params(),
                                  janus::optim::make_optimizer("sgd", 0.05, {.momentum = 0.9}));
    r[hybrid] = train(*nets[hybrid], trainer, xs, ys);
  }
  bool equal = true;
  const auto pa = nets[0]->collect_params();
  for (int h = 1; h < 3; ++h) {
    const auto pb = nets[h]->collect_params();
    for (const auto& [name, p] : pa) {
      equal = equal &&
              janus::to_vector<float>(p->data()) == janus::to_vector<float>(pb.at(name)->data());
    }
  }
  std::printf("LeNet training step, batch %lld, SGD momentum (median of %d steps):\n",
              static_cast<long long>(kBatch), kSteps);
  std::printf("  imperative: %8.2f ms   peak memory %7.1f MB\n", r[0].step_ms, r[0].peak_mb);
  std::printf("  hybridized: %8.2f ms   peak memory %7.1f MB\n", r[1].step_ms, r[1].peak_mb);
  std::printf("  static_alloc: %6.2f ms   peak memory %7.1f MB\n", r[2].step_ms, r[2].peak_mb);
  std::printf(
      "  hybridized / imperative: time %.3f, peak memory %.3f (static_alloc: %.3f, %.3f; "
      "target <= 0.7); parameters after training %s\n",
      r[1].step_ms / r[0].step_ms, r[1].peak_mb / r[0].peak_mb, r[2].step_ms / r[0].step_ms,
      r[2].peak_mb / r[0].peak_mb, equal ? "bitwise equal" : "DIFFER");
  bench::print_json_line("hybridize_lenet_train", {{"imperative_ms", r[0].step_ms},
                                                   {"hybridized_ms", r[1].step_ms},
                                                   {"time_ratio", r[1].step_ms / r[0].step_ms},
                                                   {"imperative_peak_mb", r[0].peak_mb},
                                                   {"hybridized_peak_mb", r[1].peak_mb},
                                                   {"memory_ratio", r[1].peak_mb / r[0].peak_mb},
                                                   {"static_alloc_ms", r[2].step_ms},
                                                   {"static_alloc_peak_mb", r[2].peak_mb},
                                                   {"params_equal", equal ? 1.0 : 0.0}});
  return equal ? 0 : 1;
}

const bench::Registration reg{"hybridize_lenet_train",
                              "LeNet training step, hybridized vs imperative: time and peak memory",
                              run};

}  // namespace

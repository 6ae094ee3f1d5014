// One rank of a multi-process test (src/dist/collectives_test.cc starts several): joins the
// process group from JANUS_RANK etc., runs the scenario named by argv[1], checks every result
// against what it computes locally, and exits 0 when all held, 1 otherwise (what failed goes
// to stderr, prefixed with the rank).
//   collectives  allreduce, broadcast, allgather for several sizes and dtypes, then barrier
//   die          the last rank exits (code 3) before an allreduce; the others must get a
//                DistError naming the allreduce, their rank and the gone rank within
//                JANUS_DIST_TIMEOUT + 2 s
//   stall        the last rank sleeps past the timeout instead; the others must time out
//   train        each rank trains a small MLP on its share of a batch through the
//                `dist_allreduce` store; the parameters must equal those of training on the
//                whole batch in one process (computed here too), to 1e-5 + 1e-4 relative
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/dist/collectives.h"
#include "janus/dist/process_group.h"
#include "janus/engine/array.h"
#include "janus/nn/block.h"
#include "janus/nn/layers.h"
#include "janus/nn/loss.h"
#include "janus/ops/ops.h"
#include "janus/optim/kvstore.h"
#include "janus/optim/trainer.h"

namespace {

using janus::DType;
using janus::NDArray;
using janus::dist::ProcessGroup;

int g_rank = -1;
int g_failures = 0;

template <typename... Args>
void fail(fmt::format_string<Args...> f, Args&&... args) {
  std::fprintf(stderr, "[rank %d] %s\n", g_rank,
               fmt::format(f, std::forward<Args>(args)...).c_str());
  ++g_failures;
}

template <typename T>
NDArray make(int64_t n, const std::function<double(int64_t)>& value) {
  std::vector<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<T>(value(i));
  return janus::from_vector(v, janus::Shape({n}));
}

template <typename T>
void expect(const std::string& what, const NDArray& a, int64_t n,
            const std::function<double(int64_t)>& value) {
  const std::vector<T> got = janus::to_vector<T>(a);
  if (static_cast<int64_t>(got.size()) != n) {
    fail("{}: {} values, expected {}", what, got.size(), n);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const auto want = static_cast<T>(value(i));
    if (got[static_cast<size_t>(i)] != want) {
      fail("{}: element {} is {}, expected {}", what, i, got[static_cast<size_t>(i)], want);
      return;
    }
  }
}

// Values are small multiples of 0.5: every partial sum is exact in every dtype, so the ring's
// summation order cannot change the result and equality is the right check.
template <typename T>
void check_dtype(ProcessGroup& pg, int64_t n) {
  const int r = pg.rank();
  const int size = pg.size();
  const double scale = std::is_floating_point_v<T> ? 0.5 : 1.0;
  const std::string name = fmt::format("{} x{}", janus::dtype_name(janus::dtype_of<T>), n);

  NDArray a = make<T>(n, [&](int64_t i) { return (r + 1) * (i % 17 + 1) * scale; });
  janus::dist::allreduce(pg, a);
  expect<T>("allreduce " + name, a, n,
            [&](int64_t i) { return size * (size + 1) / 2 * (i % 17 + 1) * scale; });

  const int root = size - 1;
  NDArray b = make<T>(n, [&](int64_t i) { return r * 100 + i % 13; });
  janus::dist::broadcast(pg, b, root);
  expect<T>("broadcast " + name, b, n, [&](int64_t i) { return root * 100 + i % 13; });

  NDArray c = make<T>(n, [&](int64_t i) { return r * 10 + i % 11; });
  NDArray g = janus::dist::allgather(pg, c);
  if (g.shape() != janus::Shape({size, n})) fail("allgather {}: shape {}", name, g.shape());
  expect<T>("allgather " + name, g.reshape(janus::Shape({size * n})), size * n,
            [&](int64_t k) { return (k / n) * 10 + (k % n) % 11; });
}

int collectives(ProcessGroup& pg) {
  for (int64_t n : {1, 7, 1000, 70001}) {
    check_dtype<float>(pg, n);
    check_dtype<double>(pg, n);
    check_dtype<int32_t>(pg, n);
    check_dtype<int64_t>(pg, n);
  }
  janus::dist::barrier(pg);
  pg.wait();
  return g_failures == 0 ? 0 : 1;
}

// The last rank leaves (dies, or stalls past the timeout) after the group formed; the others'
// next allreduce must fail in time, naming what failed.
int fault(ProcessGroup& pg, bool die) {
  const int last = pg.size() - 1;
  janus::dist::barrier(pg);
  pg.wait();
  if (pg.rank() == last) {
    if (die) _exit(3);
    std::this_thread::sleep_for(pg.timeout() + std::chrono::seconds(4));
    return 0;
  }
  NDArray a = janus::ones(janus::Shape({100000}));
  const auto start = std::chrono::steady_clock::now();
  janus::dist::allreduce(pg, a);
  try {
    janus::wait_to_read(a);
    fail("allreduce succeeded without rank {}", last);
    return 1;
  } catch (const janus::DistError& e) {
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string msg = e.what();
    std::fprintf(stderr, "[rank %d] after %.2f s: %s\n", pg.rank(), s, msg.c_str());
    const double limit = std::chrono::duration<double>(pg.timeout()).count() + 2.0;
    if (s > limit) fail("the error came after {:.2f} s, expected at most {:.2f} s", s, limit);
    for (const std::string& part :
         {std::string("allreduce"), fmt::format("on rank {} of {}", pg.rank(), pg.size())}) {
      if (msg.find(part) == std::string::npos) fail("the error does not say '{}'", part);
    }
    const std::string gone = fmt::format("rank {}", last);
    if (die && msg.find("gone from the job") == std::string::npos)
      fail("the error names no gone rank");
    if (die && msg.find(gone, msg.find("gone from the job")) == std::string::npos) {
      fail("the error does not name {}", gone);
    }
  }
  // The group stays failed: a later collective fails too, without waiting again.
  janus::dist::barrier(pg);
  try {
    pg.wait();
    fail("a barrier after the failure succeeded");
  } catch (const janus::DistError&) {
  }
  return g_failures == 0 ? 0 : 1;
}

std::shared_ptr<janus::nn::Sequential> mlp(uint64_t init_seed) {
  auto net = std::make_shared<janus::nn::Sequential>();
  // in_units given: the weights are drawn here, from this seed (deferred initialization would
  // draw at the first forward, at a program position that differs between the two runs).
  net->add(std::make_shared<janus::nn::Dense>(16, "relu", true, true, /*in_units=*/8));
  net->add(std::make_shared<janus::nn::Dense>(1, "", true, true, /*in_units=*/16));
  janus::seed(init_seed);
  net->initialize(janus::nn::Normal(0.1));
  return net;
}

void train_steps(janus::nn::Sequential& net, janus::optim::Trainer& trainer, const NDArray& x,
                 const NDArray& y, int64_t batch) {
  janus::nn::L2Loss loss_fn;
  for (int step = 0; step < 10; ++step) {
    NDArray loss;
    {
      janus::autograd::RecordScope record;
      loss = loss_fn(net(x), y);
    }
    janus::autograd::backward(loss);
    trainer.step(batch);
  }
}

// Data parallelism across processes equals one process on the whole batch: the summed
// gradients differ only by the order of float additions (per-rank partial sums, then Gloo's
// ring), so the parameters agree to rounding, not bit for bit.
int train(ProcessGroup& pg) {
  constexpr int64_t kBatch = 64;
  JANUS_CHECK(kBatch % pg.size() == 0, janus::ValueError, "train: {} ranks", pg.size());
  janus::seed(42);
  const NDArray x = janus::random_normal(0, 1, {kBatch, 8});
  const NDArray y = janus::sum(x, {1}, /*keepdims=*/true) * 0.5 + 1.0;

  auto reference = mlp(7);
  janus::optim::Trainer ref_trainer(reference->collect_params(),
                                    janus::optim::make_optimizer("sgd", 0.05, {.momentum = 0.5}));
  train_steps(*reference, ref_trainer, x, y, kBatch);

  // The store's init gives every rank rank 0's value.
  auto kv = janus::kvstore::create("dist_allreduce");
  {
    auto probe = janus::kvstore::create("dist_allreduce");
    probe->init(0, janus::full({3}, pg.rank() + 1.0));
    NDArray out = janus::zeros({3});
    probe->pull(0, out);
    expect<float>("init then pull", out, 3, [](int64_t) { return 1.0; });
  }
  // Each rank draws its own weights; the Trainer, whose values all exist, sets up the store at
  // once and every rank takes rank 0's (the reference's draw) before its first forward pass.
  auto net = mlp(7 + static_cast<uint64_t>(pg.rank()));
  if (kv->num_workers() != pg.size() || kv->rank() != pg.rank()) {
    fail("the store says rank {} of {}", kv->rank(), kv->num_workers());
  }
  janus::optim::Trainer trainer(net->collect_params(),
                                janus::optim::make_optimizer("sgd", 0.05, {.momentum = 0.5}), kv);
  const int64_t share = kBatch / pg.size();
  const int64_t begin = pg.rank() * share;
  train_steps(*net, trainer, x.slice(begin, begin + share), y.slice(begin, begin + share), kBatch);

  const auto& want = reference->collect_params();
  for (const auto& [name, p] : net->collect_params()) {
    const std::vector<float> got = janus::to_vector<float>(p->data());
    const std::vector<float> ref = janus::to_vector<float>(want.at(name)->data());
    for (size_t i = 0; i < got.size(); ++i) {
      if (std::abs(got[i] - ref[i]) > 1e-5 + 1e-4 * std::abs(ref[i])) {
        fail("parameter {} element {}: {} after data-parallel training, {} on the whole batch",
             name, i, got[i], ref[i]);
        break;
      }
    }
  }
  return g_failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string scenario = argc > 1 ? argv[1] : "";
  try {
    if (scenario == "train") {  // the store joins the process's default group itself
      g_rank = janus::dist::default_group().rank();
      return train(janus::dist::default_group());
    }
    auto pg = ProcessGroup::from_env();
    g_rank = pg->rank();
    if (scenario == "collectives") return collectives(*pg);
    if (scenario == "die") return fault(*pg, /*die=*/true);
    if (scenario == "stall") return fault(*pg, /*die=*/false);
    std::fprintf(stderr, "dist_worker: unknown scenario '%s'\n", scenario.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "[rank %d] %s\n", g_rank, e.what());
    return 1;
  }
}

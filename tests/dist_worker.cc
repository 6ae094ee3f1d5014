// One rank of a multi-process test (src/dist/collectives_test.cc starts several): joins the
// process group from JANUS_RANK etc., runs the scenario named by argv[1], checks every result
// against what it computes locally, and exits 0 when all held, 1 otherwise (what failed goes
// to stderr, prefixed with the rank).
//   collectives  allreduce, broadcast, allgather for several sizes and dtypes, then barrier
//   die          the last rank exits (code 3) before an allreduce; the others must get a
//                DistError naming the allreduce, their rank and the gone rank within
//                JANUS_DIST_TIMEOUT + 2 s (JANUS_TEST_ERROR_WITHIN s when set)
//   stall        the last rank sleeps past the timeout instead; the others must time out
//   partition    allreduce in a loop until it fails (rank 0 creates JANUS_TEST_READY_FILE
//                after 3 rounds, when the test may cut a host's link): every rank must get a
//                DistError naming the allreduce and itself, prints it and exits 0
//   train        each rank trains a small MLP on its share of a batch through the
//                `dist_allreduce` store; the parameters must equal those of training on the
//                whole batch in one process (computed here too), to 1e-5 + 1e-4 relative;
//                first, the store's init, push, pull and pushpull as in ps_values
// With parameter servers (JANUS_ROLE=server runs dist::run_server() instead of a scenario):
//   ps_values        dist_sync: init (rank 0's value wins), push (this worker's two arrays
//                    summed locally, then across workers), pull, pushpull, for several sizes
//                    (one split across the servers) and dtypes, integer and string keys
//   ps_async_values  dist_async: init, then each worker's push replaces the value; after a
//                    barrier of pulls every worker sees one of the pushed values
//   ps_train_sync    `train` through dist_sync with the optimizer on the servers
//   ps_train_sync_buckets  the same with the optimizer on the workers (the servers sum the
//                    Trainer's gradient buckets: pushpull without an optimizer)
//   ps_checkpoint_save, ps_checkpoint_resume  a checkpoint with the optimizer on the servers,
//                    and its resumption by a new job (JANUS_TEST_CHECKPOINT_DIR)
//   ps_train_sync_schedule  ps_train_sync with a cosine learning-rate schedule, whose rate of
//                    each update the workers send with their pushes
//   ps_train_async   dist_async training on each worker's half of the batch: the loss on the
//                    whole batch must fall below half its initial value
//   ps_server_dies   push and pull in a loop until an error (the test kills a server, rank
//                    JANUS_TEST_KILLED_RANK, once worker 0 created JANUS_TEST_READY_FILE): the
//                    error must be a DistError naming the operation, the key and that rank,
//                    within JANUS_TEST_ERROR_WITHIN s (else the timeout + 2 s) of the file's
//                    creation (which comes before the kill)
//   ps_worker_dies   dist_sync: worker 1 exits (code 3) after 3 rounds; worker 0's next round
//                    must fail with a DistError naming worker rank 1
//   ps_worker_stalls worker 1 sleeps past the timeout instead: worker 0's round fails after
//                    the timeout naming it; then worker 1 pushes and exits normally
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/dist/collectives.h"
#include "janus/dist/parameter_server.h"
#include "janus/dist/process_group.h"
#include "janus/engine/array.h"
#include "janus/nn/block.h"
#include "janus/nn/layers.h"
#include "janus/nn/loss.h"
#include "janus/nn/serialization.h"
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

// Whether `msg` lists `rank` among the gone ranks ("...gone from the job (...): rank 3" or
// "ranks 2, 3": others may have ended by the time of the question).
bool names_gone_rank(const std::string& msg, int rank) {
  const size_t at = msg.find("gone from the job");
  if (at == std::string::npos) return false;
  const size_t colon = msg.find("): rank", at);
  if (colon == std::string::npos) return false;
  size_t i = msg.find(' ', colon + 3);  // after "rank" or "ranks"
  while (i != std::string::npos && i < msg.size()) {
    while (i < msg.size() && (msg[i] == ' ' || msg[i] == ',')) ++i;
    if (i >= msg.size() || std::isdigit(static_cast<unsigned char>(msg[i])) == 0) break;
    size_t end = i;
    while (end < msg.size() && std::isdigit(static_cast<unsigned char>(msg[end])) != 0) ++end;
    if (std::stoi(msg.substr(i, end - i)) == rank) return true;
    i = end;
  }
  return false;
}

// The bound on how long an error may take: JANUS_TEST_ERROR_WITHIN seconds when the test sets
// it (a test whose error must come from a closed connection, not from the timeout), else
// `otherwise`.
double error_within(double otherwise) {
  const char* env = std::getenv("JANUS_TEST_ERROR_WITHIN");
  return env != nullptr ? std::atof(env) : otherwise;
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
    const double limit = error_within(std::chrono::duration<double>(pg.timeout()).count() + 2.0);
    if (s > limit) fail("the error came after {:.2f} s, expected at most {:.2f} s", s, limit);
    for (const std::string& part :
         {std::string("allreduce"), fmt::format("on rank {} of {}", pg.rank(), pg.size())}) {
      if (msg.find(part) == std::string::npos) fail("the error does not say '{}'", part);
    }
    if (die && !names_gone_rank(msg, last)) fail("the error does not name rank {} as gone", last);
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

int partition(ProcessGroup& pg) {
  const char* ready = std::getenv("JANUS_TEST_READY_FILE");
  if (ready == nullptr) {
    fail("JANUS_TEST_READY_FILE must be set");
    return 1;
  }
  const auto start = std::chrono::steady_clock::now();
  for (int round = 0;; ++round) {
    NDArray a = janus::ones(janus::Shape({100000}));
    try {
      janus::dist::allreduce(pg, a);
      janus::wait_to_read(a);
    } catch (const janus::DistError& e) {
      const std::string msg = e.what();
      std::fprintf(stderr, "[rank %d] DistError in round %d: %s\n", pg.rank(), round, msg.c_str());
      for (const std::string& part :
           {std::string("allreduce"), fmt::format("on rank {} of {}", pg.rank(), pg.size())}) {
        if (msg.find(part) == std::string::npos) fail("the error does not say '{}'", part);
      }
      return g_failures == 0 ? 0 : 1;
    }
    if (round == 2 && pg.rank() == 0) std::ofstream(ready).put('1');
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(60)) {
      fail("no error after 60 s of allreduces");
      return 1;
    }
  }
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
                 const NDArray& y, int64_t batch, int steps = 10) {
  janus::nn::L2Loss loss_fn;
  for (int step = 0; step < steps; ++step) {
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
template <typename T>
void check_ps_values(janus::kvstore::KVStore& kv, const janus::kvstore::Key& key, int64_t n);

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
    // push, pull and pushpull mean what they mean on the other stores (pushpull without an
    // optimizer leaves the stored value as the push left it).
    check_ps_values<float>(*probe, 1, 1000);
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

// ---- parameter servers ----

// The values of `n` elements for a tag: small multiples of 0.5 (exact sums in every dtype).
template <typename T>
NDArray values_of(int64_t n, double tag) {
  const double scale = std::is_floating_point_v<T> ? 0.5 : 1.0;
  return make<T>(n, [&](int64_t i) { return (tag + static_cast<double>(i % 7)) * scale; });
}
template <typename T>
void expect_values(const std::string& what, const NDArray& a, int64_t n, double tag) {
  const double scale = std::is_floating_point_v<T> ? 0.5 : 1.0;
  expect<T>(what, a, n, [&](int64_t i) { return (tag + static_cast<double>(i % 7)) * scale; });
}

template <typename T>
void check_ps_values(janus::kvstore::KVStore& kv, const janus::kvstore::Key& key, int64_t n) {
  const int r = kv.rank();
  const int w = kv.num_workers();
  const std::string name =
      fmt::format("key {} ({} x{})", key.to_string(), janus::dtype_name(janus::dtype_of<T>), n);
  // init: rank 0's value wins.
  kv.init(key, values_of<T>(n, 10 + r));
  NDArray out = values_of<T>(n, 0);
  kv.pull(key, out);
  expect_values<T>("init then pull " + name, out, n, 10);
  // push of two local arrays: sum over (1 + r) + (2 + r) over every worker; without an
  // optimizer the sum replaces the value.
  const NDArray a = values_of<T>(n, 1 + r), b = values_of<T>(n, 2 + r);
  const std::vector<NDArray> two{a, b};
  kv.push(key, two);
  kv.pull(key, out);
  double tags = 0;
  for (int k = 0; k < w; ++k) tags += 3 + 2 * k;
  // sum of (tag_k + i%7)*s over 2w arrays = (sum tags + 2w * (i%7)) * s
  const double scale = std::is_floating_point_v<T> ? 0.5 : 1.0;
  expect<T>("push then pull " + name, out, n,
            [&](int64_t i) { return (tags + 2.0 * w * static_cast<double>(i % 7)) * scale; });
  // pushpull without an optimizer: the sum comes back, the stored value stays.
  NDArray c = values_of<T>(n, r);
  kv.pushpull(key, std::span<const NDArray>(&c, 1), std::span<const NDArray>(&c, 1));
  double rtags = 0;
  for (int k = 0; k < w; ++k) rtags += k;
  expect<T>("pushpull " + name, c, n,
            [&](int64_t i) { return (rtags + w * static_cast<double>(i % 7)) * scale; });
  kv.pull(key, out);
  expect<T>("pull after pushpull " + name, out, n,
            [&](int64_t i) { return (tags + 2.0 * w * static_cast<double>(i % 7)) * scale; });
}

int ps_values() {
  auto kv = janus::kvstore::create("dist_sync");
  g_rank = kv->rank();
  int key = 0;
  // 300000 float32 = 1.2 MB: above the 1 MB bound, split across the servers when there are 2.
  for (int64_t n : {1, 7, 1000, 300000}) {
    check_ps_values<float>(*kv, key++, n);
    check_ps_values<double>(*kv, key++, n);
    check_ps_values<int32_t>(*kv, key++, n);
    check_ps_values<int64_t>(*kv, key++, n);
  }
  check_ps_values<uint8_t>(*kv, key++, 5);
  auto named = janus::kvstore::create("dist_sync");
  check_ps_values<float>(*named, "fc1.weight", 300001);
  check_ps_values<float>(*named, "fc1.bias", 3);
  janus::wait_all();
  return g_failures == 0 ? 0 : 1;
}

int ps_async_values() {
  auto kv = janus::kvstore::create("dist_async");
  g_rank = kv->rank();
  const int64_t n = 300000;
  kv->init(0, values_of<float>(n, 10 + kv->rank()));
  NDArray out = values_of<float>(n, 0);
  kv->pull(0, out);
  // Rank 0's init value, unless the other worker's push (below) came first: async.
  const std::vector<float> got = janus::to_vector<float>(out);
  for (int64_t i = 0; i < n; ++i) {
    const bool any = std::ranges::any_of(std::vector<double>{10, 20, 21}, [&](double tag) {
      return got[static_cast<size_t>(i)] == static_cast<float>((tag + i % 7) * 0.5);
    });
    if (!any) {
      fail("async init then pull: element {} is {}", i, got[static_cast<size_t>(i)]);
      break;
    }
  }
  // Each push replaces the value as it arrives; the last one to arrive stays. A pushpull
  // without an optimizer returns the value as this push left it: this worker's own.
  NDArray mine = values_of<float>(n, 20 + kv->rank());
  kv->pushpull(0, std::span<const NDArray>(&mine, 1), std::span<const NDArray>(&out, 1));
  expect_values<float>("async pushpull", out, n, 20 + kv->rank());
  janus::wait_all();
  return g_failures == 0 ? 0 : 1;
}

// dist_sync equals one process on the whole batch, with the optimizer on the servers or (not
// `on_servers`) on the workers, the servers then only summing the Trainer's gradient buckets.
// An SGD with momentum, and with `schedule` a cosine learning-rate schedule over 10 updates.
janus::optim::OptimizerPtr sgd(bool schedule) {
  auto opt = janus::optim::make_optimizer("sgd", 0.05, {.momentum = 0.5});
  if (schedule) opt->set_lr_scheduler(std::make_shared<janus::optim::CosineScheduler>(10, 0.05));
  return opt;
}

int ps_train_sync(bool on_servers, bool schedule = false) {
  constexpr int64_t kBatch = 64;
  auto kv = janus::kvstore::create("dist_sync");
  g_rank = kv->rank();
  const int workers = kv->num_workers();
  janus::seed(42);
  const NDArray x = janus::random_normal(0, 1, {kBatch, 8});
  const NDArray y = janus::sum(x, {1}, /*keepdims=*/true) * 0.5 + 1.0;
  auto reference = mlp(7);
  janus::optim::Trainer ref_trainer(reference->collect_params(), sgd(schedule));
  train_steps(*reference, ref_trainer, x, y, kBatch);

  auto net = mlp(7);
  janus::optim::Trainer trainer(net->collect_params(), sgd(schedule), kv,
                                /*update_on_kvstore=*/on_servers);
  const int64_t share = kBatch / workers;
  const int64_t begin = kv->rank() * share;
  train_steps(*net, trainer, x.slice(begin, begin + share), y.slice(begin, begin + share), kBatch);
  const auto& want = reference->collect_params();
  for (const auto& [name, p] : net->collect_params()) {
    const std::vector<float> got = janus::to_vector<float>(p->data());
    const std::vector<float> ref = janus::to_vector<float>(want.at(name)->data());
    for (size_t i = 0; i < got.size(); ++i) {
      if (std::abs(got[i] - ref[i]) > 1e-5 + 1e-4 * std::abs(ref[i])) {
        fail("parameter {} element {}: {} after dist_sync training, {} on the whole batch", name, i,
             got[i], ref[i]);
        break;
      }
    }
  }
  return g_failures == 0 ? 0 : 1;
}

// A checkpoint with the optimizer (SGD with momentum) on the servers, resumed by a new job with
// new servers. Phase "save": 10 dist_sync steps; after step 5 rank 0 writes the parameters and
// Trainer::save_states (the momentum gathered from the servers) to JANUS_TEST_CHECKPOINT_DIR,
// after step 10 the parameters of this uninterrupted run. Phase "resume": the parameters and
// trainer state of step 5 (the momentum goes to the new servers), then steps 6 to 10: every
// parameter equals the uninterrupted run's bit for bit.
int ps_checkpoint(const std::string& phase) {
  constexpr int64_t kBatch = 64;
  const char* dir_env = std::getenv("JANUS_TEST_CHECKPOINT_DIR");
  if (dir_env == nullptr || (phase != "save" && phase != "resume")) {
    fail("ps_checkpoint: phase '{}' (expected save or resume), JANUS_TEST_CHECKPOINT_DIR {}", phase,
         dir_env == nullptr ? "unset" : dir_env);
    return 1;
  }
  const std::string dir = dir_env;
  auto kv = janus::kvstore::create("dist_sync");
  g_rank = kv->rank();
  janus::seed(42);
  const NDArray x = janus::random_normal(0, 1, {kBatch, 8});
  const NDArray y = janus::sum(x, {1}, /*keepdims=*/true) * 0.5 + 1.0;
  const int64_t share = kBatch / kv->num_workers();
  const NDArray xs = x.slice(kv->rank() * share, (kv->rank() + 1) * share);
  const NDArray ys = y.slice(kv->rank() * share, (kv->rank() + 1) * share);

  auto net = mlp(7);
  if (phase == "resume") janus::nn::load_parameters(*net, dir + "/params-5.safetensors");
  janus::optim::Trainer trainer(net->collect_params(), sgd(false), kv,
                                /*update_on_kvstore=*/true);
  if (phase == "resume") {
    try {  // a state of another shape: refused on the worker, naming the key
      kv->push_optimizer_state(0, {{janus::zeros({3})}, 5});
      fail("push_optimizer_state of a state of shape [3] did not refuse");
    } catch (const janus::ShapeError& e) {
      if (std::string(e.what()).find("push_optimizer_state") == std::string::npos) {
        fail("push_optimizer_state refused with '{}'", e.what());
      }
    }
    trainer.load_states(dir + "/trainer-5.safetensors");
  } else {
    train_steps(*net, trainer, xs, ys, kBatch, 5);
    if (kv->rank() == 0) {
      janus::nn::save_parameters(*net, dir + "/params-5.safetensors");
      trainer.save_states(dir + "/trainer-5.safetensors");
    }
  }
  train_steps(*net, trainer, xs, ys, kBatch, 5);
  if (phase == "save") {
    if (kv->rank() == 0) janus::nn::save_parameters(*net, dir + "/params-10.safetensors");
  } else {
    auto whole = mlp(8);
    janus::nn::load_parameters(*whole, dir + "/params-10.safetensors");
    const auto& want = whole->collect_params();
    for (const auto& [name, p] : net->collect_params()) {
      const std::vector<float> got = janus::to_vector<float>(p->data());
      const std::vector<float> ref = janus::to_vector<float>(want.at(name)->data());
      for (size_t i = 0; i < got.size(); ++i) {
        if (got[i] != ref[i]) {
          fail("parameter {} element {}: {} after resuming, {} uninterrupted", name, i, got[i],
               ref[i]);
          break;
        }
      }
    }
    if (kv->rank() == 0) {  // two arrays for SGD's one: refused by the servers, saying why
      const NDArray w = net->collect_params().begin()->second->data();
      try {
        kv->push_optimizer_state(0, {{w, w}, 5});
        fail("push_optimizer_state of two arrays did not refuse");
      } catch (const janus::DistError& e) {
        if (std::string(e.what()).find("set_state of key 0 part 0: ") == std::string::npos ||
            std::string(e.what()).find("expected 1 arrays") == std::string::npos) {
          fail("push_optimizer_state refused with '{}'", e.what());
        }
      }
      return g_failures == 0 ? 0 : 1;
    }
  }
  janus::wait_all();
  return g_failures == 0 ? 0 : 1;
}

float full_loss(janus::nn::Sequential& net, const NDArray& x, const NDArray& y) {
  janus::nn::L2Loss loss_fn;
  return janus::to_vector<float>(janus::mean(loss_fn(net(x), y)))[0];
}

int ps_train_async() {
  constexpr int64_t kBatch = 64;
  auto kv = janus::kvstore::create("dist_async");
  g_rank = kv->rank();
  janus::seed(42);
  const NDArray x = janus::random_normal(0, 1, {kBatch, 8});
  const NDArray y = janus::sum(x, {1}, /*keepdims=*/true) * 0.5 + 1.0;
  auto net = mlp(7);
  const float before = full_loss(*net, x, y);
  janus::optim::Trainer trainer(net->collect_params(),
                                janus::optim::make_optimizer("sgd", 0.05, {.momentum = 0.5}), kv,
                                /*update_on_kvstore=*/true);
  const int64_t share = kBatch / kv->num_workers();
  const int64_t begin = kv->rank() * share;
  train_steps(*net, trainer, x.slice(begin, begin + share), y.slice(begin, begin + share), share,
              /*steps=*/40);
  const float after = full_loss(*net, x, y);
  std::fprintf(stderr, "[rank %d] dist_async: loss on the whole batch %.4f -> %.4f\n", g_rank,
               before, after);
  if (!(after < 0.5F * before)) fail("dist_async did not converge: loss {} -> {}", before, after);
  return g_failures == 0 ? 0 : 1;
}

// Checks that `e` names what the fault tests expect.
void expect_names(const std::string& msg, const std::vector<std::string>& parts) {
  for (const std::string& part : parts) {
    if (msg.find(part) == std::string::npos) fail("the error does not say '{}'", part);
  }
}

int ps_server_dies() {
  auto kv = janus::kvstore::create("dist_sync");
  g_rank = kv->rank();
  const char* killed_env = std::getenv("JANUS_TEST_KILLED_RANK");
  const char* ready = std::getenv("JANUS_TEST_READY_FILE");
  if (killed_env == nullptr || ready == nullptr) {
    fail("JANUS_TEST_KILLED_RANK and JANUS_TEST_READY_FILE must be set");
    return 1;
  }
  const int killed = std::atoi(killed_env);
  const int64_t n = 1 << 19;  // 2 MB of float32: one part on each server when there are 2
  kv->init(7, janus::zeros({n}));
  NDArray g = janus::ones({n});
  const auto start = std::chrono::steady_clock::now();
  for (int round = 0;; ++round) {
    try {
      kv->push(7, g);
      kv->pull(7, g);
      janus::wait_to_read(g);
    } catch (const janus::DistError& e) {
      const std::string msg = e.what();
      std::fprintf(stderr, "[rank %d] round %d: %s\n", g_rank, round, msg.c_str());
      if (msg.find("push") == std::string::npos && msg.find("pull") == std::string::npos) {
        fail("the error names neither push nor pull");
      }
      expect_names(msg, {"of key 7", fmt::format("server rank {}", killed)});
      const double s = std::chrono::duration<double>(std::filesystem::file_time_type::clock::now() -
                                                     std::filesystem::last_write_time(ready))
                           .count();
      const double timeout_s =
          std::chrono::duration<double>(janus::dist::default_group().timeout()).count();
      const double limit = error_within(timeout_s + 2.0);
      std::fprintf(stderr, "[rank %d] the error came %.2f s after the ready file\n", g_rank, s);
      if (s > limit)
        fail("the error came {:.2f} s after the kill, expected at most {:.2f} s", s, limit);
      return g_failures == 0 ? 0 : 1;
    }
    if (round == 2 && kv->rank() == 0) std::ofstream(ready).put('1');
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(60)) {
      fail("no error after 60 s of pushes and pulls");
      return 1;
    }
  }
}

int ps_worker_leaves(bool die) {
  auto kv = janus::kvstore::create("dist_sync");
  g_rank = kv->rank();
  kv->init(3, janus::zeros({1000}));
  NDArray g = janus::ones({1000});
  for (int round = 0; round < 3; ++round) {
    kv->push(3, g);
    kv->pull(3, g);
  }
  janus::wait_to_read(g);
  const auto timeout = janus::dist::default_group().timeout();
  if (kv->rank() == 1 && die) _exit(3);
  if (kv->rank() == 1) {  // stalls past the timeout, then takes part again
    std::this_thread::sleep_for(timeout + std::chrono::seconds(1));
    kv->push(3, g);
    janus::wait_to_read(g);
    return 0;
  }
  const auto start = std::chrono::steady_clock::now();
  try {
    kv->push(3, g);
    kv->pull(3, g);
    janus::wait_to_read(g);
    fail("a round completed without worker rank 1");
  } catch (const janus::DistError& e) {
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string msg = e.what();
    std::fprintf(stderr, "[rank %d] after %.2f s: %s\n", g_rank, s, msg.c_str());
    expect_names(msg, {"pull of key 3", "no push from worker rank 1"});
    if (!die) expect_names(msg, {"not within the timeout"});
    const double limit = std::chrono::duration<double>(timeout).count() + 2.0;
    if (s > limit) fail("the error came after {:.2f} s, expected at most {:.2f} s", s, limit);
  }
  return g_failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string scenario = argc > 1 ? argv[1] : "";
  if (const char* rank = std::getenv("JANUS_RANK")) g_rank = std::atoi(rank);
  try {
    if (janus::dist::maybe_run_server()) return 0;
    if (scenario == "ps_values") return ps_values();
    if (scenario == "ps_async_values") return ps_async_values();
    if (scenario == "ps_train_sync") return ps_train_sync(/*on_servers=*/true);
    if (scenario == "ps_train_sync_buckets") return ps_train_sync(/*on_servers=*/false);
    if (scenario == "ps_train_sync_schedule") {
      return ps_train_sync(/*on_servers=*/true, /*schedule=*/true);
    }
    if (scenario == "ps_train_async") return ps_train_async();
    if (scenario == "ps_checkpoint_save") return ps_checkpoint("save");
    if (scenario == "ps_checkpoint_resume") return ps_checkpoint("resume");
    if (scenario == "ps_server_dies") return ps_server_dies();
    if (scenario == "ps_worker_dies") return ps_worker_leaves(/*die=*/true);
    if (scenario == "ps_worker_stalls") return ps_worker_leaves(/*die=*/false);
    if (scenario == "train") {  // the store joins the process's default group itself
      g_rank = janus::dist::default_group().rank();
      return train(janus::dist::default_group());
    }
    auto pg = ProcessGroup::from_env();
    g_rank = pg->rank();
    if (scenario == "collectives") return collectives(*pg);
    if (scenario == "die") return fault(*pg, /*die=*/true);
    if (scenario == "stall") return fault(*pg, /*die=*/false);
    if (scenario == "partition") return partition(*pg);
    std::fprintf(stderr, "dist_worker: unknown scenario '%s'\n", scenario.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "[rank %d] %s\n", g_rank, e.what());
    return 1;
  }
}

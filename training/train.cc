// `janus train`: Fashion-MNIST with a named model.
#include "train.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <streambuf>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/data/data_loader.h"
#include "janus/data/fashion_mnist.h"
#include "janus/dist/parameter_server.h"
#include "janus/engine/array.h"
#include "janus/nn/loss.h"
#include "janus/nn/metric.h"
#include "janus/nn/serialization.h"
#include "janus/ops/ops.h"
#include "janus/optim/kvstore.h"
#include "janus/optim/lr_scheduler.h"
#include "janus/optim/trainer.h"
#include "janus/parallel/split.h"
#include "janus/profile/profiler.h"

#include "checkpoint.h"
#include "models.h"
#include "plot.h"

namespace janus::training {
namespace {

using Clock = std::chrono::steady_clock;

// An output file's directory must exist and be writable before the run, not fail after it.
void check_output_path(std::string_view option, const std::string& path) {
  if (path.empty()) return;
  const std::filesystem::path p(path);
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : ".";
  std::error_code ec;
  JANUS_CHECK(std::filesystem::is_directory(dir, ec), IOError,
              "{}: cannot write '{}': the directory '{}' does not exist", option, path,
              dir.string());
  JANUS_CHECK(::access(dir.c_str(), W_OK) == 0, IOError,
              "{}: cannot write '{}': the directory '{}' is not writable", option, path,
              dir.string());
  JANUS_CHECK(!std::filesystem::is_directory(p, ec), IOError,
              "{}: cannot write '{}': it is a directory, expected a file name", option, path);
}

bool is_distributed(const TrainOptions& o) {
  return o.kvstore == "dist_allreduce" || o.kvstore == "dist_sync" || o.kvstore == "dist_async";
}

void check_options(const TrainOptions& o) {
  JANUS_CHECK(o.epochs >= 1, ValueError, "--epochs is {}, expected at least 1", o.epochs);
  JANUS_CHECK(o.batch_size >= 1, ValueError, "--batch-size is {}, expected at least 1",
              o.batch_size);
  JANUS_CHECK(o.lr > 0, ValueError, "--lr is {}, expected a positive number", o.lr);
  JANUS_CHECK(o.lr_schedule == "constant" || o.lr_schedule == "cosine", ValueError,
              "--lr-schedule is '{}', expected constant or cosine", o.lr_schedule);
  JANUS_CHECK(o.momentum >= 0 && o.momentum < 1, ValueError,
              "--momentum is {}, expected a number in [0, 1)", o.momentum);
  JANUS_CHECK(o.wd >= 0, ValueError, "--wd is {}, expected a non-negative number", o.wd);
  JANUS_CHECK(o.limit >= 0, ValueError, "--limit is {}, expected >= 0 (0: every sample)", o.limit);
  JANUS_CHECK(o.num_workers >= 0, ValueError, "--num-workers is {}, expected >= 0", o.num_workers);
  JANUS_CHECK(o.export_prefix.empty() || o.hybridize, ValueError,
              "--export {} needs --hybridize (the exported graph is the hybridized one)",
              o.export_prefix);
  JANUS_CHECK(o.devices.empty() || o.device == cpu(0), ValueError,
              "--device {} and --devices {}: give one of them", o.device,
              fmt::join(o.devices, ","));
  if (o.devices.empty()) {
    check_device(o.device, "--device");
  } else {
    check_devices(o.devices, "--devices");
  }
  JANUS_CHECK(o.kvstore == "local" || o.kvstore == "device" || is_distributed(o), ValueError,
              "--kvstore is '{}', expected local, device, dist_allreduce, dist_sync or dist_async",
              o.kvstore);
  JANUS_CHECK(o.checkpoint_every >= 1, ValueError, "--checkpoint-every is {}, expected at least 1",
              o.checkpoint_every);
  JANUS_CHECK(!o.resume || !o.checkpoint_dir.empty(), ValueError,
              "--resume needs --checkpoint-dir (where the checkpoints are)");
  check_output_path("--log-json", o.log_json);
  check_output_path("--save", o.save);
  check_output_path("--profile", o.profile);
  check_output_path("--export", o.export_prefix);
}

// The devices that train: the data-parallel list, or the one device.
std::vector<Device> devices_of(const TrainOptions& o) {
  return o.devices.empty() ? std::vector<Device>{o.device} : o.devices;
}

// The first `n` samples of `set` (all when n is 0 or more than there are).
std::shared_ptr<const data::ArrayDataset> head(const data::FashionMNIST& set, int64_t n) {
  if (n == 0 || n >= set.size()) {
    return std::make_shared<data::ArrayDataset>(set.arrays());
  }
  return std::make_shared<data::ArrayDataset>(
      std::vector<NDArray>{set.images().slice(0, n), set.labels().slice(0, n)});
}

void print_progress(std::ostream& out, int epoch, int epochs, int64_t done, int64_t total,
                    double seconds) {
  constexpr int kWidth = 30;
  const int filled = total == 0 ? kWidth : static_cast<int>(kWidth * done / total);
  out << fmt::format("\repoch {}/{} [{}{}] {}/{} {:.0f} samples/s   ", epoch, epochs,
                     std::string(static_cast<size_t>(filled), '#'),
                     std::string(static_cast<size_t>(kWidth - filled), '.'), done, total,
                     seconds > 0 ? static_cast<double>(done) / seconds : 0.0)
      << std::flush;
}

NDArray to_device(const NDArray& a, Device device) {
  return a.device() == device ? a : copyto(a, device);
}

// This process's place in the job: worker `rank` of `workers`, and the store that sums the
// gradients (null: one device of one process).
struct Worker {
  int rank = 0;
  int workers = 1;
  kvstore::KVStorePtr store;
  bool sums_key_ready = false;  // the store's key for the epoch's figures is initialised
};

// The rows [begin, end) of a batch of n that worker `rank` of `workers` trains on.
std::pair<int64_t, int64_t> shard_of(int64_t n, const Worker& w) {
  return {n * w.rank / w.workers, n * (w.rank + 1) / w.workers};
}

// The devices that the training loader gathers each batch's parts on: the data-parallel
// devices of a process that trains on every row of its batches (one of a job splits the rows
// among the workers first), else none (whole batches).
std::vector<Device> train_devices(const TrainOptions& o, const Worker& w) {
  return w.workers == 1 && o.devices.size() > 1 ? o.devices : std::vector<Device>{};
}

// Counts summed over the workers: a sum and a number of samples for each figure.
struct Sums {
  double loss = 0, loss_count = 0, correct = 0, count = 0, test_correct = 0, test_count = 0;
};

// The test accuracy's counts over this worker's rows of every test batch.
void evaluate(nn::Block& net, data::DataLoader& loader, Device device, const Worker& w,
              Sums& sums) {
  nn::Accuracy acc;
  while (auto batch = loader.next()) {
    const auto [begin, end] = shard_of(batch->batch_size(), w);
    if (begin == end) continue;
    acc.update(to_device((*batch)[1].slice(begin, end), device),
               net(to_device((*batch)[0].slice(begin, end), device)));
  }
  if (acc.count() == 0) return;
  sums.test_correct = std::round(acc.get() * static_cast<double>(acc.count()));
  sums.test_count = static_cast<double>(acc.count());
}

// A key of the store far above the parameters' (0..) and the gradient buckets' (after them).
constexpr int kSumsKey = 1 << 30;

// Sums `s` over the workers through the store (every worker calls it, in the same order).
void sum_over_workers(Worker& w, Sums& s) {
  if (w.workers == 1) return;
  const std::vector<double> values{s.loss,  s.loss_count,   s.correct,
                                   s.count, s.test_correct, s.test_count};
  const Shape shape{static_cast<int64_t>(values.size())};
  NDArray a = from_vector(values, shape);
  if (!w.sums_key_ready) w.store->init(kSumsKey, zeros(shape, DType::kFloat64));
  w.sums_key_ready = true;
  w.store->pushpull(kSumsKey, std::vector<NDArray>{a}, std::vector<NDArray>{a});
  const std::vector<double> v = to_vector<double>(a);
  s = {v[0], v[1], v[2], v[3], v[4], v[5]};
}

void write_log(const std::string& path, const TrainOptions& o, const std::vector<EpochResult>& rs) {
  std::ofstream f(path);
  JANUS_CHECK(f.good(), IOError, "--log-json: cannot write '{}'", path);
  f << fmt::format(
      "{{\"model\": \"{}\", \"optimizer\": \"{}\", \"lr\": {}, \"lr_schedule\": \"{}\", "
      "\"batch_size\": {}, \"seed\": {}, \"epochs\": [",
      o.model, o.optimizer, o.lr, o.lr_schedule, o.batch_size, o.seed);
  for (size_t i = 0; i < rs.size(); ++i) {
    const EpochResult& r = rs[i];
    f << fmt::format(
        "{}\n  {{\"epoch\": {}, \"loss\": {}, \"train_acc\": {}, \"test_acc\": {}, "
        "\"seconds\": {}, \"samples_per_s\": {}}}",
        i == 0 ? "" : ",", r.epoch, r.loss, r.train_acc, r.test_acc, r.seconds, r.samples_per_s);
  }
  f << "\n]}\n";
}

void write_plot(const std::string& path, const TrainOptions& o,
                const std::vector<EpochResult>& rs) {
  std::ofstream f(path);
  JANUS_CHECK(f.good(), IOError, "--log-json: cannot write the plot '{}'", path);
  f << training_plot_svg(rs, fmt::format("janus train --model {}: {} epochs, batch {}, {} lr {}",
                                         o.model, o.epochs, o.batch_size, o.optimizer, o.lr));
  JANUS_CHECK(f.good(), IOError, "--log-json: writing the plot '{}' failed", path);
}

// The training and test subsets that the options ask for.
struct DataSets {
  std::shared_ptr<const data::ArrayDataset> train, test;
};

DataSets load_data(const TrainOptions& o) {
  const std::string root = o.data_root.empty() ? std::string(data::kFashionMNISTRoot) : o.data_root;
  const data::FashionMNIST train_full(root, true), test_full(root, false);
  return {head(train_full, o.limit),
          head(test_full, o.limit == 0 ? 0 : std::max<int64_t>(o.limit / 6, 1))};
}

// The named model with a replica on each device (drawn once, on the first), its deferred
// shapes fixed by one sample, hybridized if asked.
std::shared_ptr<nn::Sequential> make_net(const TrainOptions& o, const data::ArrayDataset& set) {
  auto net = make_model(o.model);
  const std::vector<Device> devices = devices_of(o);
  net->initialize(nn::Xavier(), devices);
  // The first batch fixes the deferred shapes before the trainer sees the parameters.
  {
    autograd::PauseScope no_record;
    (*net)(to_device(set.get_batch(std::vector<int64_t>{0})[0], devices[0]));
  }
  if (o.hybridize) net->hybridize();
  return net;
}

optim::Trainer make_trainer(const TrainOptions& o, nn::Block& net, int64_t batches_per_epoch,
                            const Worker& w) {
  optim::OptimizerPtr optimizer =
      optim::make_optimizer(o.optimizer, o.lr, {.momentum = o.momentum, .wd = o.wd});
  if (o.lr_schedule == "cosine") {
    optimizer->set_lr_scheduler(
        std::make_shared<optim::CosineScheduler>(o.epochs * batches_per_epoch, o.lr));
  }
  // Several devices or processes: their gradients are summed through the store before each
  // update.
  return optim::Trainer(net.collect_params(), std::move(optimizer), w.store);
}

// The running loss and accuracy of an epoch, one of each per device (a metric sums on the
// engine, on the device of its updates: one operation per device and batch), combined when
// read.
class EpochMetrics {
 public:
  explicit EpochMetrics(size_t devices) : metrics_(devices) {}

  void update(size_t device, const NDArray& label, const NDArray& output, const NDArray& loss) {
    metrics_[device].update(label, output, loss);
  }
  // The sums over every sample of every device (waits for the epoch's last batch).
  void add_to(Sums& s) const {
    for (const nn::LossAndAccuracy& m : metrics_) {
      if (m.count() == 0) continue;
      const double count = static_cast<double>(m.count());
      s.loss += m.mean_loss() * count;
      s.loss_count += count;
      s.correct += std::round(m.accuracy() * count);
      s.count += count;
    }
  }

 private:
  std::vector<nn::LossAndAccuracy> metrics_;
};

// What one epoch needs besides its number.
struct EpochContext {
  const TrainOptions& options;
  Worker& worker;
  nn::Block& net;
  optim::Trainer& trainer;
  data::DataLoader& train_loader;
  data::DataLoader& test_loader;
  int64_t train_size;
  std::ostream& out;
};

// Zero gradients for a worker without rows in a batch: it still takes part in the sum.
void zero_grads(const optim::Trainer& trainer) {
  for (const auto& [name, p] : trainer.params()) p->zero_grad();
}

// One pass over the training set, then the test accuracy (on the first device).
EpochResult train_epoch(const EpochContext& c, int epoch) {
  const TrainOptions& o = c.options;
  const std::vector<Device> devices = devices_of(o);
  const nn::SoftmaxCrossEntropyLoss loss_fn;
  EpochMetrics metrics(devices.size());
  const int64_t batches = c.train_loader.num_batches();
  const int64_t every = std::max<int64_t>(1, batches / 50);
  const auto start = Clock::now();
  int64_t seen = 0, index = 0;
  std::vector<NDArray> previous_losses;  // the batch before this one, a loss per slice
  while (auto batch = c.train_loader.next()) {
    // This worker's rows (all of them in a job of one), then a slice per device (one device:
    // the rows themselves, copied there if need be). A batch that does not divide evenly gives
    // slices that differ by a row.
    const auto [begin, end] = shard_of(batch->batch_size(), c.worker);
    seen += batch->batch_size();
    ++index;
    if (begin == end) {  // fewer rows than workers: nothing to compute, but a share to sum
      zero_grads(c.trainer);
      c.trainer.step(batch->batch_size());
      continue;
    }
    std::vector<NDArray> xs, ys;
    if (!batch->parts.empty()) {  // gathered on the devices by the loader
      for (const data::Sample& part : batch->parts) {
        xs.push_back(part[0]);
        ys.push_back(part[1]);
      }
    } else {
      const NDArray x = (*batch)[0].slice(begin, end), y = (*batch)[1].slice(begin, end);
      xs = parallel::split_and_load(x, devices, /*even_split=*/false);
      ys = parallel::split_and_load(y, devices, /*even_split=*/false);
    }
    std::vector<NDArray> outputs, losses;
    {
      autograd::RecordScope record(true);
      for (size_t k = 0; k < xs.size(); ++k) {
        outputs.push_back(c.net(xs[k]));
        losses.push_back(loss_fn(outputs[k], ys[k]));
      }
    }
    autograd::backward(losses);
    c.trainer.step(batch->batch_size());  // the gradients are sums over the whole batch,
                                          // summed over the workers by the store
    for (size_t k = 0; k < xs.size(); ++k) metrics.update(k, ys[k], outputs[k], losses[k]);
    // One batch of lookahead: this batch is issued while the one before it computes, and then
    // the loop waits for that one. Without a bound the loop issues the whole epoch ahead (the
    // engine admits 4096 operations in flight), holding every batch's activations: a LeNet
    // epoch grew by 9 MB per batch, and the kernels wrote into freshly faulted pages.
    for (const NDArray& loss : previous_losses) wait_to_read(loss);
    previous_losses = losses;
    if (o.progress && (index % every == 0 || index == batches)) {
      for (const NDArray& loss : losses) wait_to_read(loss);  // the bar shows finished work
      print_progress(c.out, epoch, o.epochs, seen, c.train_size,
                     std::chrono::duration<double>(Clock::now() - start).count());
    }
  }
  Sums sums;
  metrics.add_to(sums);  // waits for the epoch's last batch
  EpochResult r;
  r.epoch = epoch;
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.samples_per_s = static_cast<double>(seen) / r.seconds;
  evaluate(c.net, c.test_loader, devices[0], c.worker, sums);
  sum_over_workers(c.worker, sums);
  r.loss = sums.loss / sums.loss_count;
  r.train_acc = sums.correct / sums.count;
  r.test_acc = sums.test_correct / sums.test_count;
  return r;
}

void print_epoch(std::ostream& out, const TrainOptions& o, const EpochResult& r) {
  if (o.progress) out << "\r" << std::string(80, ' ') << "\r";
  out << fmt::format(
             "epoch {:>2}/{}: loss {:.4f}, train acc {:.4f}, test acc {:.4f}, {:.1f} s "
             "({:.0f} samples/s)\n",
             r.epoch, o.epochs, r.loss, r.train_acc, r.test_acc, r.seconds, r.samples_per_s)
      << std::flush;
}

// The files asked for after the run: profile, exported model, parameters.
void write_outputs(const TrainOptions& o, const nn::Block& net, std::ostream& out) {
  if (!o.profile.empty()) {
    profiler::stop();
    profiler::dump(o.profile);
    out << profiler::dumps() << fmt::format("wrote the profile (Chrome trace) to {}\n", o.profile);
  }
  if (!o.export_prefix.empty()) {
    net.export_model(o.export_prefix, o.epochs);
    out << fmt::format("exported the model to {}-symbol.json and {}-{:04d}.safetensors\n",
                       o.export_prefix, o.export_prefix, o.epochs);
  }
  if (!o.save.empty()) {
    nn::save_parameters(net, o.save);
    out << fmt::format("saved the parameters to {}\n", o.save);
  }
}

// Joins the job (a dist_* store) or makes the store of several devices; the worker's place.
Worker join(const TrainOptions& o) {
  Worker w;
  if (is_distributed(o)) {
    try {
      w.store = kvstore::create(o.kvstore);
    } catch (Error& e) {
      const bool bare = std::getenv("JANUS_WORLD_SIZE") == nullptr;
      e.add_context(fmt::format("--kvstore {}{}", o.kvstore,
                                bare ? " (start the workers with janus launch -n N -- janus "
                                       "train ...)"
                                     : ""));
      throw;
    }
    w.rank = w.store->rank();
    w.workers = w.store->num_workers();
  } else if (o.devices.size() > 1) {
    w.store = kvstore::create(o.kvstore);
  }
  return w;
}

// Discards what is written to it: the output of every worker but the first.
class NullBuffer : public std::streambuf {
 protected:
  int_type overflow(int_type c) override { return traits_type::not_eof(c); }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

// Where the run starts: the last checkpoint with --resume, else epoch 0. Refuses to write
// checkpoints over those of another run.
std::optional<CheckpointInfo> find_start(const TrainOptions& o) {
  if (o.checkpoint_dir.empty()) return std::nullopt;
  std::optional<CheckpointInfo> last = latest_checkpoint(o.checkpoint_dir);
  JANUS_CHECK(o.resume || !last, ValueError,
              "--checkpoint-dir {} holds checkpoints already (the last: {}); pass --resume to "
              "continue from it, or choose an empty directory",
              o.checkpoint_dir, last ? last->path.string() : "");
  return last;
}

bool is_checkpoint_epoch(const TrainOptions& o, int epoch) {
  return !o.checkpoint_dir.empty() && (epoch % o.checkpoint_every == 0 || epoch == o.epochs);
}

}  // namespace

std::vector<EpochResult> train(const TrainOptions& options, std::ostream& rank0_out) {
  check_options(options);
  // A server process of a parameter-server job (JANUS_ROLE=server, started by janus launch -s)
  // serves the workers' pushes and pulls until they leave, and trains nothing.
  if ((options.kvstore == "dist_sync" || options.kvstore == "dist_async") &&
      dist::maybe_run_server()) {
    return {};
  }
  // Before the data: the store of a job meets the other processes.
  Worker worker = join(options);
  NullBuffer null_buffer;
  std::ostream null_out(&null_buffer);
  std::ostream& out = worker.rank == 0 ? rank0_out : null_out;
  TrainOptions o = options;
  if (worker.rank != 0) o.progress = false;
  const bool writes = worker.rank == 0;  // logs, profile, model files, checkpoints

  seed(o.seed);  // the same on every worker: the same initial weights and the same batches
  const DataSets sets = load_data(o);
  const std::optional<CheckpointInfo> start = find_start(o);
  const int first_epoch = start ? start->epoch : 0;
  data::DataLoader train_loader(sets.train, {.batch_size = o.batch_size,
                                             .shuffle = true,
                                             .seed = o.seed,
                                             .num_workers = o.num_workers,
                                             .first_epoch = first_epoch,
                                             .devices = train_devices(o, worker)});
  data::DataLoader test_loader(sets.test, {.batch_size = 1024, .num_workers = o.num_workers});
  const auto net = make_net(o, *sets.train);
  optim::Trainer trainer = make_trainer(o, *net, train_loader.num_batches(), worker);
  std::vector<EpochResult> results;
  if (start) {
    load_checkpoint(*start, o, *net, trainer);
    results = start->results;
  }

  out << fmt::format(
      "training {} on Fashion-MNIST ({} train / {} test samples), batch {}, {} "
      "lr {}{}, {} epochs, seed {}{}{}\n",
      o.model, sets.train->size(), sets.test->size(), o.batch_size, o.optimizer, o.lr,
      o.lr_schedule == "constant" ? "" : " (" + o.lr_schedule + " schedule)", o.epochs, o.seed,
      o.devices.size() > 1
          ? fmt::format(", data-parallel on {} ({} store)", fmt::join(o.devices, ", "), o.kvstore)
          : "",
      worker.workers > 1 ? fmt::format(", {} workers ({} store)", worker.workers, o.kvstore) : "");
  if (start) {
    out << fmt::format("resumed from {} after epoch {}\n", start->path.string(), start->epoch);
  } else if (o.resume) {
    out << fmt::format("no checkpoint in {} yet: starting from epoch 1\n", o.checkpoint_dir);
  }
  const EpochContext context{
      o, worker, *net, trainer, train_loader, test_loader, sets.train->size(), out};
  if (!o.profile.empty() && writes) profiler::start();
  for (int epoch = first_epoch + 1; epoch <= o.epochs; ++epoch) {
    results.push_back(train_epoch(context, epoch));
    print_epoch(out, o, results.back());
    if (!writes) continue;
    if (!o.log_json.empty()) {
      write_log(o.log_json, o, results);
      write_plot(plot_path_for(o.log_json), o, results);
    }
    if (is_checkpoint_epoch(o, epoch)) {
      write_checkpoint(o.checkpoint_dir, epoch, o, results, *net, trainer);
    }
  }
  if (writes) write_outputs(o, *net, out);
  return results;
}

}  // namespace janus::training

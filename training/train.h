// The training loop behind `janus train`: a named model on Fashion-MNIST, with progress,
// per-epoch figures and optional parameter saving. Part of training/ (below tools/ and bench/).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "janus/core/device.h"

namespace janus::training {

struct TrainOptions {
  std::string model = "mlp";
  int epochs = 10;
  int64_t batch_size = 256;
  double lr = 0.1;
  /// "constant", or "cosine": half a cosine from lr down to 0 over the run's updates.
  std::string lr_schedule = "constant";
  std::string optimizer = "sgd";  // "sgd" or "adam"
  double momentum = 0.0;          // sgd only
  double wd = 0.0;
  uint64_t seed = 0;
  Device device = cpu(0);
  /// Data parallelism: each batch is split across these devices (the last of an epoch may split
  /// unevenly), every device runs forward and backward on its slice with its own replicas, and
  /// the gradients are summed through a `kvstore` store before one update. Empty: `device`
  /// alone. Giving both (a `devices` list and a `device` other than cpu(0)) is a ValueError.
  /// The devices must exist (set_num_cpu_devices first).
  std::vector<Device> devices;
  /// "local" or "device": where the gradients of several devices are summed. "dist_allreduce",
  /// "dist_sync" or "dist_async": the run is one worker of a job of several processes (started
  /// by `janus launch`; the store joins the job from the environment). Every worker reads the
  /// same batches (the same shuffle) and trains on its rows of each: with W workers, worker r
  /// takes rows [r*n/W, (r+1)*n/W) of a batch of n, so --batch-size stays the global batch and
  /// one step of the job is one step of a single process on the whole batch. The gradients
  /// are summed through the store; the epoch's figures too. Worker 0 alone prints, writes the
  /// log, the profile, the saved and exported model and the checkpoints.
  std::string kvstore = "device";
  /// Train on the first `limit` training samples and test on the first limit / 6 test samples
  /// (0: all). For quick runs and the integration test.
  int64_t limit = 0;
  /// Data loader threads. 0: the training loop's thread asks for each batch, which for the
  /// Fashion-MNIST arrays (an ArrayDataset) is one engine push per array: a loader thread
  /// would only make those pushes, and wake once per batch while the kernels run.
  int num_workers = 0;
  std::string data_root;      // empty: the Debian package's directory
  std::string log_json;       // per-epoch figures, rewritten after each epoch, and their chart
                              // (the same path with .svg, see plot.h)
  std::string save;           // parameters, safetensors, after training
  std::string profile;        // Chrome trace of the whole run (and a table on `out`)
  bool hybridize = false;     // train and evaluate the compiled graph of the model
  std::string export_prefix;  // with hybridize: PREFIX-symbol.json + PREFIX-NNNN.safetensors
  bool progress = true;       // a progress bar on `out`
  /// Write a checkpoint here (checkpoint.h) after every `checkpoint_every` epochs and after the
  /// last. Without `resume`, a directory that holds checkpoints already is a ValueError.
  std::string checkpoint_dir;
  int checkpoint_every = 1;
  /// Continue from the last complete checkpoint of `checkpoint_dir` (from the start if it has
  /// none): parameters, optimizer state, update count and learning rate, the epoch and the
  /// shuffle order of the next epoch, so that the figures equal an uninterrupted run's.
  bool resume = false;
};

struct EpochResult {
  int epoch = 0;
  double loss = 0, train_acc = 0, test_acc = 0;
  double seconds = 0, samples_per_s = 0;
};

/// Checks the options (ValueError naming the option and the value) and trains; prints a
/// progress bar during each epoch and one summary line after it on `out`.
std::vector<EpochResult> train(const TrainOptions& options, std::ostream& out);

}  // namespace janus::training

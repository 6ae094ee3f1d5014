// fashion_accuracy: the issue "Blocks, training and Fashion-MNIST" and its targets. The two demo
// models of `janus train` (training/models.h) are trained on the real Fashion-MNIST files through
// the same training loop (training/train.h):
//   - mlp (784 -> 256 -> 10, ReLU) must reach at least 85% test accuracy after 10 epochs;
//   - lenet (LeNet-5, ReLU, max pooling) must reach at least 89%.
// Prints each epoch's loss, accuracies and time, then a summary per model and one JSON line with
// the final test accuracy, the epoch time (median over the epochs), the hyperparameters and
// whether each target was met. Exits 1 when a checked target is missed.
//
//   fashion_accuracy               both models, 10 epochs each, targets checked
//   fashion_accuracy --epochs 1    one epoch each (as bench/fashion_epoch_vs_torch.sh runs it)
//   fashion_accuracy --quick       one epoch on 12000 samples, targets reported only
//   fashion_accuracy --models lenet --lenet-epochs 12
//   fashion_accuracy --hybridize   the same, training the compiled graph of each model
// Targets are checked only when a model trains for at least its issue epochs on the full set.
#include <atomic>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "janus/janus.h"

#include "bench_util.h"
#include "cli_checks.h"
#include "machine.h"
#include "models.h"
#include "report_errors.h"
#include "train.h"

namespace {

namespace cli = janus::cli;
namespace training = janus::training;

struct ModelRun {
  std::string name;
  training::TrainOptions options;
  double target = 0;      // test accuracy the issue asks for
  int target_epochs = 0;  // after this many epochs
  std::vector<training::EpochResult> epochs;

  bool checked() const { return options.limit == 0 && options.epochs >= target_epochs; }
  double final_acc() const { return epochs.empty() ? 0.0 : epochs.back().test_acc; }
  double best_acc() const {
    double best = 0;
    for (const auto& e : epochs) best = std::max(best, e.test_acc);
    return best;
  }
  std::vector<double> seconds() const {
    std::vector<double> s;
    for (const auto& e : epochs) s.push_back(e.seconds);
    return s;
  }
  bool met() const { return final_acc() >= target; }
};

// Trains `models` (mlp, lenet) in order with the settings of the command line, prints their
// summaries and the JSON line; 1 when a checked target is missed.
int train_and_report(ModelRun& mlp, ModelRun& lenet, const std::vector<std::string>& models,
                     int epochs, bool quick, uint64_t seed, int64_t limit, bool hybridize) {
  if (quick) {
    epochs = 1;
    if (limit == 0) limit = 12000;
  }
  const int threads = bench::janus_kernel_threads();
  std::printf("Fashion-MNIST accuracy: %d kernel threads on cpu(0), %d cores\n", threads,
              janus::hardware_cores());

  std::vector<ModelRun*> runs;
  for (const auto& name : models) runs.push_back(name == "mlp" ? &mlp : &lenet);
  for (ModelRun* m : runs) {
    auto& o = m->options;
    if (epochs > 0) o.epochs = epochs;
    o.seed = seed;
    o.limit = limit;
    o.progress = false;
    o.hybridize = hybridize;
    std::printf("\n== %s%s: SGD lr %g (%s) momentum %g, batch %lld, %d epochs\n", m->name.c_str(),
                hybridize ? " (hybridized)" : "", o.lr, o.lr_schedule.c_str(), o.momentum,
                static_cast<long long>(o.batch_size), o.epochs);
    std::fflush(stdout);
    m->epochs = training::train(o, std::cout);
    std::cout << std::flush;
  }

  std::printf("\n");
  bool ok = true;
  for (ModelRun* m : runs) {
    const auto s = m->seconds();
    std::printf(
        "%-5s test accuracy %.4f after %d epochs (best %.4f); epoch %.2f s median, "
        "%.2f s first; target %.0f%% after %d epochs: %s\n",
        m->name.c_str(), m->final_acc(), m->options.epochs, m->best_acc(), bench::median(s),
        s.empty() ? 0.0 : s.front(), 100 * m->target, m->target_epochs,
        !m->checked() ? "not checked (fewer epochs or samples)"
        : m->met()    ? "met"
                      : "MISSED");
    if (m->checked() && !m->met()) ok = false;
  }

  // The JSON line: fields only for the models that ran.
  std::printf(
      "{\"bench\": \"fashion_accuracy\", \"threads\": %d, \"quick\": %d, \"limit\": %lld, "
      "\"hybridize\": %d",
      threads, quick ? 1 : 0, static_cast<long long>(limit), hybridize ? 1 : 0);
  for (ModelRun* m : runs) {
    const auto& o = m->options;
    const auto s = m->seconds();
    const char* n = m->name.c_str();
    std::printf(
        ", \"%s_epochs\": %d, \"%s_test_acc\": %.4f, \"%s_epoch_s\": %.3f, "
        "\"%s_last_epoch_s\": %.3f, \"%s_samples_per_s\": %.1f, \"%s_batch_size\": %lld, "
        "\"%s_lr\": %g, \"%s_momentum\": %g, \"%s_target\": %g, \"%s_target_met\": %d, "
        "\"%s_target_checked\": %d",
        n, o.epochs, n, m->final_acc(), n, bench::median(s), n, s.empty() ? 0.0 : s.back(), n,
        m->epochs.empty() ? 0.0 : m->epochs.back().samples_per_s, n,
        static_cast<long long>(o.batch_size), n, o.lr, n, o.momentum, n, m->target, n,
        m->met() ? 1 : 0, n, m->checked() ? 1 : 0);
  }
  std::printf("}\n");
  std::fflush(stdout);
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Train the demo models on Fashion-MNIST and check the issue's accuracy targets"};
  ModelRun mlp{.name = "mlp", .target = 0.85, .target_epochs = 10};
  mlp.options.model = "mlp";
  mlp.options.epochs = 10;
  mlp.options.batch_size = 256;
  mlp.options.lr = 0.1;
  mlp.options.momentum = 0.9;
  ModelRun lenet{.name = "lenet", .target = 0.89, .target_epochs = 10};
  lenet.options.model = "lenet";
  lenet.options.epochs = 10;
  lenet.options.batch_size = 128;
  lenet.options.lr = 0.05;
  lenet.options.momentum = 0.9;
  // The rate decays along half a cosine to zero over the run (both models): the last epochs
  // settle instead of bouncing between minima (LeNet at a constant 0.05 ended its 10 epochs
  // between 88.4% and 89.2% test accuracy depending on rounding order).
  mlp.options.lr_schedule = "cosine";
  lenet.options.lr_schedule = "cosine";

  std::vector<std::string> models = {"mlp", "lenet"};
  int epochs = 0;
  bool quick = false;
  uint64_t seed = 0;
  int64_t limit = 0;
  bool hybridize = false;
  app.add_option("--models", models, "models to train, in order")
      ->check(cli::one_of(training::model_names()))
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--epochs", epochs, "epochs for every model (0: each model's own setting)")
      ->check(cli::integer_at_least(0));
  app.add_flag("--quick", quick, "one epoch on the first 12000 samples; targets not checked");
  app.add_option("--seed", seed, "random seed")
      ->check(cli::integer_at_least<uint64_t>(0))
      ->capture_default_str();
  app.add_flag("--hybridize", hybridize, "train the compiled graph of each model (hybridize)");
  app.add_option("--limit", limit, "train on the first N samples only (0: all)")
      ->check(cli::integer_at_least<int64_t>(0));
  for (ModelRun* m : {&mlp, &lenet}) {
    auto& o = m->options;
    const std::string p = "--" + m->name + "-";
    app.add_option(p + "epochs", o.epochs, m->name + " epochs")
        ->check(cli::integer_at_least(1))
        ->capture_default_str();
    app.add_option(p + "batch-size", o.batch_size, m->name + " batch size")
        ->check(cli::integer_at_least<int64_t>(1))
        ->capture_default_str();
    app.add_option(p + "lr", o.lr, m->name + " learning rate")
        ->check(cli::positive_number())
        ->capture_default_str();
    app.add_option(p + "momentum", o.momentum, m->name + " SGD momentum")
        ->check(cli::fraction())
        ->capture_default_str();
    app.add_option(p + "lr-schedule", o.lr_schedule, m->name + " learning-rate schedule")
        ->check(cli::one_of({"constant", "cosine"}))
        ->capture_default_str();
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "fashion_accuracy: " << cli::parse_error_text(e) << "\n";
    return 1;
  }
  // Any error (no dataset files, a failed kernel) is one line and exit status 1.
  return cli::run_reporting_errors(
      "fashion_accuracy",
      [&] { return train_and_report(mlp, lenet, models, epochs, quick, seed, limit, hybridize); },
      std::cerr);
}

// The janus command-line program: `janus ops [NAME]`, `janus info`, `janus hw`, `janus train`,
// `janus run`, `janus bench`.
#include <CLI/CLI.hpp>

#include <iostream>

#include <unistd.h>

#include "janus/janus.h"
#include "janus/profile/hardware.h"
#include "models.h"
#include "run_model.h"
#include "train.h"
#ifdef JANUS_HAVE_BENCH
#include "bench_util.h"
#include "suite.h"
#endif

namespace {

using janus::ops::OpDef;

std::string_view first_line(std::string_view doc) { return doc.substr(0, doc.find('\n')); }

void print_op_summary(const OpDef& op) {
  std::cout << fmt::format("{:<16} {}\n", op.name, first_line(op.doc));
}

void print_op_full(const OpDef& op) {
  std::cout << op.name << "\n  " << op.doc << "\n";
  std::cout << "  inputs:  " << (op.inputs.empty() ? "(none)" : fmt::format("{}", fmt::join(op.inputs, ", "))) << "\n";
  std::cout << "  outputs: " << fmt::format("{}", fmt::join(op.outputs, ", ")) << "\n";
  if (!op.attrs.empty()) std::cout << "  attributes:\n";
  for (const auto& a : op.attrs) {
    const std::string def = a.default_value ? "= " + janus::ops::attr_value_to_string(*a.default_value)
                                            : "(required)";
    std::cout << fmt::format("    {:<12} {:<7} {:<14} {}\n", a.name, janus::ops::attr_type_name(a.type),
                             def, a.doc);
  }
  if (!op.mutable_inputs.empty()) {
    std::vector<std::string_view> names;
    for (int i : op.mutable_inputs) names.push_back(op.inputs[static_cast<size_t>(i)]);
    std::cout << "  updates in place: " << fmt::format("{}", fmt::join(names, ", ")) << "\n";
  }
  std::cout << "  lane: " << (op.copy_lane ? "copy" : "compute") << (op.random ? ", random" : "")
            << "\n";
}

int run_ops(const std::string& name) {
  if (name.empty()) {
    for (const OpDef* op : janus::ops::all_ops()) print_op_summary(*op);
    return 0;
  }
  print_op_full(janus::ops::get_op(name));
  return 0;
}

int run_info() {
  std::cout << "cores: " << janus::hardware_cores() << "\n";
  std::cout << "cpu devices: " << janus::num_cpu_devices() << "\n";
  for (int i = 0; i < janus::num_cpu_devices(); ++i) {
    std::cout << fmt::format("  cpu({}): cores {}\n", i, fmt::join(janus::device_cores(janus::cpu(i)), ","));
  }
  std::cout << "engine: " << janus::engine_kind_name(janus::engine().kind()) << "\n";
  const auto o = janus::engine_options_from_env();
  std::cout << fmt::format("  compute workers per cpu device: {}\n  max operations in flight: {}\n",
                           o.cpu_compute_workers, o.max_in_flight);
  return 0;
}

struct BenchArgs {
  std::vector<std::string> names;
  bool list = false, all = false, json = false, quick = false;
};

#ifdef JANUS_HAVE_BENCH
// `janus bench`: lists the suite, or runs the named benchmarks one after another in this process.
int run_bench(const BenchArgs& args) {
  const std::vector<bench::Entry> suite = bench::suite();
  if (args.list) {
    for (const bench::Entry& e : suite) std::cout << fmt::format("{:<24} {}\n", e.name, e.summary);
    return 0;
  }
  std::vector<const bench::Entry*> chosen;
  if (args.all) {
    for (const bench::Entry& e : suite) chosen.push_back(bench::find(e.name));
  }
  for (const std::string& name : args.names) {
    const bench::Entry* e = bench::find(name);
    if (e == nullptr) {
      std::vector<std::string_view> known;
      for (const bench::Entry& k : suite) known.push_back(k.name);
      std::cerr << fmt::format("janus bench: no benchmark named '{}'; known: {}\n", name,
                               fmt::join(known, ", "));
      return 2;
    }
    chosen.push_back(e);
  }
  if (chosen.empty()) {
    std::cerr << "janus bench: name the benchmarks to run (janus bench --list names them), or "
                 "pass --all\n";
    return 2;
  }
  bench::json_output = args.json;
  int status = 0;
  for (const bench::Entry* e : chosen) {
    if (!args.json || chosen.size() > 1) std::cout << "== " << e->name << std::endl;
    if (bench::run(*e, bench::Options{.quick = args.quick}) != 0) status = 1;
  }
  return status;
}
#else
int run_bench(const BenchArgs&) {
  std::cerr << "janus bench: this janus was built without the benchmarks (JANUS_BUILD_BENCH=OFF)\n";
  return 2;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Janus: a deep learning framework with an asynchronous dependency engine"};
  app.require_subcommand(1);
  std::string op_name;
  auto* ops = app.add_subcommand("ops", "List the registered operators, or show one in full");
  ops->add_option("name", op_name, "operator to show");
  auto* info = app.add_subcommand("info", "Show devices, cores and engine settings");
  auto* hw = app.add_subcommand("hw", "Measure this machine: sgemm peak, memory bandwidth, caches");
  janus::tools::TrainOptions topt;
  std::string device_text = "cpu:0";
  auto* train = app.add_subcommand("train", "Train a model on Fashion-MNIST");
  train->add_option("--model", topt.model, "model")
      ->check(CLI::IsMember(janus::tools::model_names()))
      ->capture_default_str();
  train->add_option("--epochs", topt.epochs, "passes over the training set")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  train->add_option("--batch-size", topt.batch_size, "samples per step")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  train->add_option("--lr", topt.lr, "learning rate")->check(CLI::PositiveNumber)->capture_default_str();
  train->add_option("--lr-schedule", topt.lr_schedule, "learning rate over the run")
      ->check(CLI::IsMember({"constant", "cosine"}))
      ->capture_default_str();
  train->add_option("--optimizer", topt.optimizer, "optimizer")
      ->check(CLI::IsMember({"sgd", "adam"}))
      ->capture_default_str();
  train->add_option("--momentum", topt.momentum, "SGD momentum")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  train->add_option("--wd", topt.wd, "weight decay")->check(CLI::NonNegativeNumber)->capture_default_str();
  train->add_option("--seed", topt.seed, "random seed (initialisation, shuffling, dropout)")->capture_default_str();
  train->add_option("--device", device_text, "device to train on, cpu:N")->capture_default_str();
  train->add_option("--limit", topt.limit, "use only the first N training samples (0: all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  train->add_option("--num-workers", topt.num_workers, "data loading threads")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  train->add_option("--data", topt.data_root, "directory of the Fashion-MNIST .gz files");
  train->add_option("--log-json", topt.log_json, "write the per-epoch figures to this file, and a chart of them beside it (.svg)");
  train->add_option("--save", topt.save, "save the trained parameters (safetensors) to this file");
  topt.progress = isatty(STDOUT_FILENO) != 0;  // a bar only on a terminal
  train->add_flag("!--no-progress", topt.progress, "no progress bar");
  train->add_flag("--hybridize", topt.hybridize, "train and evaluate the compiled graph");
  train->add_option("--profile", topt.profile, "write a Chrome trace of the run to this file");
  train->add_option("--export", topt.export_prefix,
                    "with --hybridize: write PREFIX-symbol.json and PREFIX-NNNN.safetensors");
  janus::tools::RunOptions ropt;
  auto* run = app.add_subcommand("run", "Run an exported model (PREFIX-symbol.json + params)");
  run->add_option("prefix", ropt.prefix, "the model's files without -symbol.json")->required();
  run->add_option("--epoch", ropt.epoch, "which PREFIX-NNNN.safetensors (default: the latest)");
  run->add_option("--input", ropt.input, "input array, a .npy file")->check(CLI::ExistingFile);
  run->add_flag("--random", ropt.random, "random normal input of --shape");
  run->add_option("--shape", ropt.shape, "input shape for --random, e.g. --shape 1 1 28 28");
  run->add_option("--repeat", ropt.repeat, "timed calls after the first")->capture_default_str();
  BenchArgs bargs;
  auto* bench = app.add_subcommand("bench", "Run benchmarks by name; --list names them");
  bench->add_option("names", bargs.names, "benchmarks to run, in order");
  bench->add_flag("--list", bargs.list, "name every benchmark, with what it measures");
  bench->add_flag("--all", bargs.all, "run every benchmark");
  bench->add_flag("--json", bargs.json, "end each benchmark with one JSON line of its figures");
  bench->add_flag("--quick", bargs.quick, "small workloads (a smoke test; figures not comparable)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line naming the problem, then the usage of the command that was being parsed.
    std::cerr << "janus: " << e.what() << "\n\n";
    CLI::App* sub = *train ? train
                    : *run ? run
                    : *bench ? bench
                    : *ops   ? ops
                    : *info  ? info
                    : *hw    ? hw
                             : &app;
    std::cerr << sub->help();
    return 2;
  }
  try {
    if (*ops) return run_ops(op_name);
    if (*bench) return run_bench(bargs);
    if (*info) return run_info();
    if (*hw) {
      std::cout << janus::profile::to_string(janus::profile::measure_hardware());
      return 0;
    }
    if (*run) {
      janus::tools::run_model(ropt, std::cout);
      return 0;
    }
    if (*train) {
      try {
        topt.device = janus::parse_device(device_text);
      } catch (const janus::Error& e) {
        std::cerr << "janus train: --device: " << e.what() << "\n\n" << train->help();
        return 2;
      }
      janus::tools::train(topt, std::cout);
      return 0;
    }
  } catch (const janus::Error& e) {
    std::cerr << "janus: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

// The janus command-line program: `janus ops [NAME]`, `janus info`, `janus hw`, `janus train`,
// `janus run`, `janus convert`, `janus bench`, `janus launch`.
#include <unistd.h>

#include <iostream>

#include <CLI/CLI.hpp>

#include "janus/janus.h"
#include "janus/profile/hardware.h"

#include "cli_checks.h"
#include "convert.h"
#include "launch.h"
#include "models.h"
#include "report_errors.h"
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
  std::cout << "  inputs:  "
            << (op.inputs.empty() ? "(none)" : fmt::format("{}", fmt::join(op.inputs, ", ")))
            << "\n";
  std::cout << "  outputs: " << fmt::format("{}", fmt::join(op.outputs, ", ")) << "\n";
  if (!op.attrs.empty()) std::cout << "  attributes:\n";
  for (const auto& a : op.attrs) {
    const std::string def =
        a.default_value ? "= " + janus::ops::attr_value_to_string(*a.default_value) : "(required)";
    std::cout << fmt::format("    {:<12} {:<7} {:<14} {}\n", a.name,
                             janus::ops::attr_type_name(a.type), def, a.doc);
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
    std::cout << fmt::format("  cpu({}): cores {}\n", i,
                             fmt::join(janus::device_cores(janus::cpu(i)), ","));
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
      return 1;
    }
    chosen.push_back(e);
  }
  if (chosen.empty()) {
    std::cerr << "janus bench: name the benchmarks to run (janus bench --list names them), or "
                 "pass --all\n";
    return 1;
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
  return 1;
}
#endif

// The options of every subcommand, filled by the parser.
struct Args {
  std::string op_name;
  janus::training::TrainOptions train;
  std::string device = "cpu:0";
  std::string devices;  // janus train --devices, "cpu:0,cpu:1"
  janus::tools::RunOptions run;
  int epoch = 0;
  janus::tools::ConvertOptions convert;
  std::string convert_inputs = "data";  // janus convert --inputs, split at commas
  BenchArgs bench;
  janus::tools::LaunchOptions launch;
  double grace_seconds = 5;
};

struct Commands {
  CLI::App *ops, *info, *hw, *train, *run, *convert, *bench, *launch;
  CLI::Option* epoch;          // janus run --epoch, absent: the latest
  CLI::Option* convert_epoch;  // janus convert --epoch, absent: the latest
};

void add_train_command(CLI::App& app, Args& a, Commands& c) {
  using janus::cli::integer_at_least;
  janus::training::TrainOptions& t = a.train;
  c.train = app.add_subcommand("train", "Train a model on Fashion-MNIST");
  CLI::App& train = *c.train;
  train.add_option("--model", t.model, "model")
      ->check(janus::cli::one_of(janus::training::model_names()))
      ->capture_default_str();
  train.add_option("--epochs", t.epochs, "passes over the training set")
      ->check(integer_at_least(1))
      ->capture_default_str();
  train.add_option("--batch-size", t.batch_size, "samples per step")
      ->check(integer_at_least<int64_t>(1))
      ->capture_default_str();
  train.add_option("--lr", t.lr, "learning rate")
      ->check(janus::cli::positive_number())
      ->capture_default_str();
  train.add_option("--lr-schedule", t.lr_schedule, "learning rate over the run")
      ->check(janus::cli::one_of({"constant", "cosine"}))
      ->capture_default_str();
  train.add_option("--optimizer", t.optimizer, "optimizer")
      ->check(janus::cli::one_of({"sgd", "adam"}))
      ->capture_default_str();
  train.add_option("--momentum", t.momentum, "SGD momentum, in [0, 1)")
      ->check(janus::cli::fraction())
      ->capture_default_str();
  train.add_option("--wd", t.wd, "weight decay")
      ->check(janus::cli::non_negative_number())
      ->capture_default_str();
  train.add_option("--seed", t.seed, "random seed (initialisation, shuffling, dropout)")
      ->check(integer_at_least<uint64_t>(0))
      ->capture_default_str();
  CLI::Option* device = train.add_option("--device", a.device, "device to train on, cpu:N")
                            ->check(janus::cli::existing_device())
                            ->capture_default_str();
  train
      .add_option("--devices", a.devices,
                  "train data-parallel on these devices, cpu:0,cpu:1 (sets up as many cpu "
                  "devices as the list names, splitting the cores among them)")
      ->check(janus::cli::device_list())
      ->excludes(device);
  train
      .add_option("--kvstore", t.kvstore,
                  "where gradients are summed: local or device (with --devices), or "
                  "dist_allreduce, dist_sync, dist_async (a worker of a job of several "
                  "processes, started by janus launch)")
      ->check(janus::cli::one_of({"local", "device", "dist_allreduce", "dist_sync", "dist_async"}))
      ->capture_default_str();
  train.add_option("--limit", t.limit, "use only the first N training samples (0: all)")
      ->check(integer_at_least<int64_t>(0))
      ->capture_default_str();
  train.add_option("--num-workers", t.num_workers, "data loading threads")
      ->check(integer_at_least(0))
      ->capture_default_str();
  train.add_option("--data", t.data_root, "directory of the Fashion-MNIST .gz files");
  train.add_option(
      "--log-json", t.log_json,
      "write the per-epoch figures to this file, and a chart of them beside it (.svg)");
  train.add_option("--save", t.save, "save the trained parameters (safetensors) to this file");
  t.progress = isatty(STDOUT_FILENO) != 0;  // a bar only on a terminal
  train.add_flag("!--no-progress", t.progress, "no progress bar");
  train.add_flag("--hybridize", t.hybridize, "train and evaluate the compiled graph");
  train.add_option("--profile", t.profile, "write a Chrome trace of the run to this file");
  train.add_option("--export", t.export_prefix,
                   "with --hybridize: write PREFIX-symbol.json and PREFIX-NNNN.safetensors");
  train.add_option("--checkpoint-dir", t.checkpoint_dir,
                   "write checkpoints (parameters, trainer state, epoch) into this directory");
  train
      .add_option("--checkpoint-every", t.checkpoint_every,
                  "with --checkpoint-dir: a checkpoint every N epochs (and after the last)")
      ->check(integer_at_least(1))
      ->capture_default_str();
  train.add_flag("--resume", t.resume,
                 "continue from the last complete checkpoint of --checkpoint-dir");
}

void add_run_command(CLI::App& app, Args& a, Commands& c) {
  using janus::cli::integer_at_least;
  janus::tools::RunOptions& r = a.run;
  c.run = app.add_subcommand(
      "run", "Run an exported model (PREFIX-symbol.json + params; Janus's or MXNet 1.x's)");
  CLI::App& run = *c.run;
  run.add_option("prefix", r.prefix, "the model's files without -symbol.json")->required();
  c.epoch = run.add_option("--epoch", a.epoch,
                           "which PREFIX-NNNN.safetensors (MXNet: .params) (default: the latest)")
                ->check(integer_at_least(0));
  run.add_option("--input", r.input, "input array, a .npy file")
      ->check(janus::cli::existing_file());
  run.add_flag("--random", r.random,
               "random normal input, of --shape or else of the shape that the graph records");
  run.add_option("--shape", r.shape, "input shape for --random, e.g. --shape 1 1 28 28")
      ->check(integer_at_least<int64_t>(0));
  run.add_option("--output", r.output,
                 "write the outputs to this .npy file (several: FILE-0.npy, FILE-1.npy, ...)");
  run.add_option("--repeat", r.repeat, "timed calls after the first")
      ->check(integer_at_least(0))
      ->capture_default_str();
}

void add_convert_command(CLI::App& app, Args& a, Commands& c) {
  using janus::cli::integer_at_least;
  janus::tools::ConvertOptions& v = a.convert;
  c.convert = app.add_subcommand(
      "convert",
      "Write an exported model as ONNX (--to onnx FILE.onnx) or in Janus's format (--to janus "
      "OUT_PREFIX)");
  CLI::App& convert = *c.convert;
  convert.add_option("prefix", v.prefix, "the model's files without -symbol.json")->required();
  convert.add_option("--to", v.to, "the format to write")
      ->check(janus::cli::one_of({"onnx", "janus"}))
      ->required();
  convert.add_option("output", v.output, "FILE.onnx (--to onnx) or OUT_PREFIX (--to janus)")
      ->required();
  c.convert_epoch =
      convert.add_option("--epoch", a.epoch, "which PREFIX-NNNN parameters (default: the latest)")
          ->check(integer_at_least(0));
  convert
      .add_option("--inputs", a.convert_inputs,
                  "the graph's arguments that are inputs, comma-separated: data0,data1")
      ->capture_default_str();
  convert
      .add_option("--shape", v.shape,
                  "--to onnx: the input's shape, e.g. --shape 1 1 28 28 (default: recorded)")
      ->check(integer_at_least<int64_t>(0));
  convert.add_flag("--fixed-batch", v.fixed_batch,
                   "--to onnx: fix every extent, the batch size included (default: axis 0 of the "
                   "inputs and outputs is a symbolic 'batch')");
}

void add_bench_command(CLI::App& app, Args& a, Commands& c) {
  c.bench = app.add_subcommand("bench", "Run benchmarks by name; --list names them");
  CLI::App& bench = *c.bench;
  bench.add_option("names", a.bench.names, "benchmarks to run, in order");
  bench.add_flag("--list", a.bench.list, "name every benchmark, with what it measures");
  bench.add_flag("--all", a.bench.all, "run every benchmark");
  bench.add_flag("--json", a.bench.json, "end each benchmark with one JSON line of its figures");
  bench.add_flag("--quick", a.bench.quick,
                 "small workloads (a smoke test; figures not comparable)");
}

void add_launch_command(CLI::App& app, Args& a, Commands& c) {
  using janus::cli::integer_at_least;
  janus::tools::LaunchOptions& l = a.launch;
  c.launch = app.add_subcommand(
      "launch", "Run COMMAND as the processes of a distributed job: janus launch -n 2 -- COMMAND");
  CLI::App& launch = *c.launch;
  launch.add_option("-n,--workers", l.workers, "worker processes")
      ->check(integer_at_least(1))
      ->capture_default_str();
  launch
      .add_option("-s,--servers", l.servers, "parameter-server processes (ranks after the workers)")
      ->check(integer_at_least(0))
      ->capture_default_str();
  launch.add_option("--hosts", l.hosts,
                    "run on the machines of FILE: a line per host, NAME [slots=N] [addr=ADDRESS]");
  launch.add_option("--launcher-agent", l.agent,
                    "with --hosts: the remote shell, {host} its host (default: "
                    "$JANUS_LAUNCH_AGENT, else 'ssh -o BatchMode=yes')");
  launch
      .add_option("--port", l.port,
                  "rendezvous port (JANUS_MASTER_PORT; default: a free one, 29500 with --hosts)")
      ->check(integer_at_least(1));
  launch
      .add_option("--grace", a.grace_seconds,
                  "seconds between SIGTERM and SIGKILL when stopping the job after a death")
      ->check(janus::cli::non_negative_number())
      ->capture_default_str();
  launch.add_option("command", l.command, "the program to run and its arguments, after --")
      ->required();
}

Commands add_commands(CLI::App& app, Args& a) {
  Commands c{};
  c.ops = app.add_subcommand("ops", "List the registered operators, or show one in full");
  c.ops->add_option("name", a.op_name, "operator to show");
  c.info = app.add_subcommand("info", "Show devices, cores and engine settings");
  c.hw = app.add_subcommand("hw", "Measure this machine: sgemm peak, memory bandwidth, caches");
  add_train_command(app, a, c);
  add_run_command(app, a, c);
  add_convert_command(app, a, c);
  add_bench_command(app, a, c);
  add_launch_command(app, a, c);
  return c;
}

// "janus train" while that subcommand is parsed, else "janus": the first word of each error.
std::string command_name(const CLI::App& app) {
  const std::vector<CLI::App*> chosen = app.get_subcommands();
  return chosen.empty() ? "janus" : "janus " + chosen.front()->get_name();
}

int run_command(const Commands& c, Args& a) {
  if (*c.ops) return run_ops(a.op_name);
  if (*c.bench) return run_bench(a.bench);
  if (*c.info) return run_info();
  if (*c.launch) {
    a.launch.grace = std::chrono::milliseconds(static_cast<int64_t>(a.grace_seconds * 1000));
    return janus::tools::launch(a.launch);
  }
  if (*c.hw) {
    std::cout << janus::profile::to_string(janus::profile::measure_hardware());
    return 0;
  }
  if (*c.run) {
    if (c.epoch->count() > 0) a.run.epoch = a.epoch;
    janus::tools::run_model(a.run, std::cout);
    return 0;
  }
  if (*c.convert) {
    if (c.convert_epoch->count() > 0) a.convert.epoch = a.epoch;
    a.convert.inputs.clear();
    std::string_view rest = a.convert_inputs;
    while (true) {
      const size_t comma = rest.find(',');
      a.convert.inputs.emplace_back(rest.substr(0, comma));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    janus::tools::convert_model(a.convert, std::cout);
    return 0;
  }
  if (*c.train) {
    a.train.device = janus::parse_device(a.device);  // checked by the parser
    if (!a.devices.empty()) {
      a.train.devices = janus::cli::parse_device_list(a.devices);
      // Before any array exists: the engine gives each device its share of the cores when it
      // starts the device's workers. A larger JANUS_CPU_DEVICES stays as it is.
      int needed = 0;
      for (const janus::Device& d : a.train.devices) needed = std::max(needed, d.id + 1);
      if (needed > janus::num_cpu_devices()) janus::set_num_cpu_devices(needed);
    }
    janus::training::train(a.train, std::cout);
    return 0;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Janus: a deep learning framework with an asynchronous dependency engine"};
  app.require_subcommand(0, 1);
  Args args;
  const Commands commands = add_commands(app, args);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << command_name(app) << ": " << janus::cli::parse_error_text(e) << "\n";
    return 1;
  }
  if (app.get_subcommands().empty()) {  // `janus` alone: what it can do, and a failure status
    std::cout << app.help();
    return 1;
  }
  return janus::cli::run_reporting_errors(
      command_name(app), [&] { return run_command(commands, args); }, std::cerr);
}

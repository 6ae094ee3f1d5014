// The janus program as a new user meets it: bad input gives one line on stderr, naming the
// option, the value and what was expected, and exit status 1. Runs build/janus (JANUS_CLI).
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "janus/engine/array.h"
#include "janus/graph/safetensors.h"
#include "janus/graph/symbol.h"

#include "tools_test_util.h"

namespace janus::tools {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Result {
  int status = -1;  // the exit status; 128 + N for a process killed by signal N
  std::string out, err;
};

// `janus ARGS` (ARGS as a shell would split them), its output and status.
Result janus(const std::string& args) {
  const testing::TempDir dir("janus_cli_");
  const auto out = dir / "out", err = dir / "err";
  const std::string command =
      fmt::format("'{}' {} >'{}' 2>'{}' </dev/null", JANUS_CLI, args, out.string(), err.string());
  const int raw = std::system(command.c_str());
  Result r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  r.out = testing::read_file(out);
  r.err = testing::read_file(err);
  return r;
}

// Fails unless `janus ARGS` exits with 1 and prints exactly `message` and a newline on stderr.
void expect_refused(const std::string& args, const std::string& message) {
  const Result r = janus(args);
  EXPECT_EQ(r.status, 1) << "janus " << args << "\n" << r.err;
  EXPECT_EQ(r.err, message + "\n") << "janus " << args;
}

TEST(Cli, TrainRefusesBadNumbersAtParseTime) {
  expect_refused("train --epochs 0", "janus train: --epochs: expected a positive integer, got 0");
  expect_refused("train --epochs 99999999999",
                 "janus train: --epochs: expected an integer of at most 2147483647, got "
                 "99999999999");
  expect_refused("train --epochs two", "janus train: --epochs: 'two' is not an integer");
  expect_refused("train --batch-size 0",
                 "janus train: --batch-size: expected a positive integer, got 0");
  expect_refused("train --lr -0.1", "janus train: --lr: expected a positive number, got -0.1");
  expect_refused("train --lr abc", "janus train: --lr: 'abc' is not a number");
  expect_refused("train --lr nan", "janus train: --lr: 'nan' is not a number");
  expect_refused("train --num-workers -1",
                 "janus train: --num-workers: expected a non-negative integer, got -1");
  expect_refused("train --momentum 1",
                 "janus train: --momentum: expected a number in [0, 1), got 1");
  expect_refused("train --wd -1", "janus train: --wd: expected a non-negative number, got -1");
  expect_refused("train --seed -1", "janus train: --seed: expected a non-negative integer, got -1");
  expect_refused("train --limit -5",
                 "janus train: --limit: expected a non-negative integer, got -5");
  expect_refused("train --model resnet", "janus train: --model: 'resnet' is not one of mlp, lenet");
  expect_refused("train --optimizer rmsprop",
                 "janus train: --optimizer: 'rmsprop' is not one of sgd, adam");
}

TEST(Cli, TrainRefusesAMissingDeviceNamingTheOnesThereAre) {
  const Result r = janus("train --device cpu:5");
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, StartsWith("janus train: --device: device cpu:5 does not exist, expected one "
                                "of: cpu:0"));
  expect_refused("train --device tpu",
                 "janus train: --device: cannot read 'tpu' as a device, "
                 "expected cpu:N");
}

TEST(Cli, TrainRefusesABadDeviceList) {
  expect_refused("train --devices cpu:0,cpu:1,cpu:0",
                 "janus train: --devices: device cpu:0 appears twice in 'cpu:0,cpu:1,cpu:0'; give "
                 "each device once");
  expect_refused("train --devices ''",
                 "janus train: --devices: the list is empty, expected devices separated by "
                 "commas, e.g. cpu:0,cpu:1");
  expect_refused("train --devices cpu:0,,cpu:1",
                 "janus train: --devices: 'cpu:0,,cpu:1' has an empty item, expected devices "
                 "separated by commas, e.g. cpu:0,cpu:1");
  expect_refused("train --devices cpu:0,tpu",
                 "janus train: --devices: cannot read 'tpu' as a device, expected cpu:N");
  expect_refused("train --devices cpu:0,gpu:0",
                 "janus train: --devices: device gpu:0 is not available: Janus has no GPU kernels "
                 "yet, expected cpu:N");
  expect_refused("train --device cpu:0 --devices cpu:0,cpu:1",
                 "janus train: --device excludes --devices");
  expect_refused("train --devices cpu:0,cpu:1 --kvstore nccl",
                 "janus train: --kvstore: 'nccl' is not one of local, device, dist_allreduce, "
                 "dist_sync, dist_async");
}

TEST(Cli, TrainChecksEveryOutputPathBeforeTraining) {
  const std::string missing = "/nonexistent-janus-dir/out";
  for (const char* option : {"--save", "--log-json", "--profile"}) {
    expect_refused(fmt::format("train {} {}", option, missing),
                   fmt::format("janus train: {}: cannot write '{}': the directory "
                               "'/nonexistent-janus-dir' does not exist",
                               option, missing));
  }
  expect_refused("train --hybridize --export " + missing,
                 "janus train: --export: cannot write '/nonexistent-janus-dir/out': the "
                 "directory '/nonexistent-janus-dir' does not exist");
  const testing::TempDir dir("janus_cli_out_");
  expect_refused("train --save " + dir.string(),
                 fmt::format("janus train: --save: cannot write '{}': it is a directory, "
                             "expected a file name",
                             dir.string()));
}

TEST(Cli, BareJanusPrintsTheHelpAndFails) {
  const Result r = janus("");
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr("Subcommands:"));
  EXPECT_THAT(r.out, HasSubstr("train"));
  EXPECT_EQ(r.err, "");
  const Result help = janus("--help");
  EXPECT_EQ(help.status, 0);
  EXPECT_THAT(help.out, HasSubstr("Subcommands:"));
}

TEST(Cli, ParseErrorsAreOneLowercaseLineAndExitOne) {
  expect_refused("trian", "janus: the following argument was not expected: trian");
  expect_refused("train --epoch",
                 "janus train: the following argument was not expected: "
                 "--epoch");
  expect_refused("run", "janus run: prefix is required");
  expect_refused("run m --epoch -1", "janus run: --epoch: expected a non-negative integer, got -1");
  expect_refused("run m --repeat -1",
                 "janus run: --repeat: expected a non-negative integer, got -1");
  expect_refused("run m --input /nonexistent.npy",
                 "janus run: --input: '/nonexistent.npy' does not exist");
  const Result r = janus("bench nope");
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, StartsWith("janus bench: no benchmark named 'nope'; known: "));
}

// A graph with two outputs (relu(data), data * w) and its parameters, exported as PREFIX.
std::string export_two_output_model(const std::filesystem::path& dir) {
  const auto data = graph::Symbol::var("data", Shape{2, 3});
  const auto w = graph::Symbol::var("w", Shape{2, 3});
  const auto both = graph::Symbol::group({graph::Symbol::op("relu", {data}, {}, "first"),
                                          graph::Symbol::op("mul", {data, w}, {}, "second")});
  const std::string prefix = (dir / "two").string();
  both.save(prefix + "-symbol.json");
  graph::save_safetensors(prefix + "-0003.safetensors",
                          {{"w", from_vector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3})}});
  return prefix;
}

TEST(Cli, RunPrintsEveryOutputAndRandomUsesTheRecordedShape) {
  const testing::TempDir dir("janus_cli_run_");
  const std::string prefix = export_two_output_model(dir);
  const Result r = janus(fmt::format("run {} --random --repeat 1", prefix));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("two-0003.safetensors"));
  EXPECT_THAT(r.out, HasSubstr("input: [2, 3] float32"));  // the shape that the graph records
  EXPECT_THAT(r.out, HasSubstr("output first_"));
  EXPECT_THAT(r.out, HasSubstr("output second_"));
  expect_refused(fmt::format("run {} --random --shape 4611686018427387904 4", prefix),
                 "janus run: shape [4611686018427387904, 4]: the element count overflows int64, "
                 "expected at most 9223372036854775807 elements");
}

TEST(Cli, RunRandomNeedsAShapeOnlyWhenTheGraphRecordsNone) {
  const testing::TempDir dir("janus_cli_noshape_");
  const std::string prefix = (dir / "noshape").string();
  graph::Symbol::op("relu", {graph::Symbol::var("data")}).save(prefix + "-symbol.json");
  graph::save_safetensors(prefix + "-0000.safetensors", {});
  expect_refused(fmt::format("run {} --random", prefix),
                 "janus run: --random: the graph does not record the shape of its input 'data', "
                 "give it with --shape");
  const Result r = janus(fmt::format("run {} --random --shape 2 2 --repeat 0", prefix));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("input: [2, 2] float32"));
  const std::string npy_file = (dir / "x.npy").string();
  testing::write_file(npy_file, testing::npy("{'descr': '<f4', 'fortran_order': False, "
                                             "'shape': (1,), }",
                                             std::string(4, '\0')));
  expect_refused(fmt::format("run {} --input {} --shape 2 2", prefix, npy_file),
                 fmt::format("janus run: --shape [2, 2] is for --random; --input {} has a shape "
                             "of its own",
                             npy_file));
}

TEST(Cli, RunRefusesBadNpyFilesNamingThem) {
  const testing::TempDir dir("janus_cli_npy_");
  const std::string prefix = export_two_output_model(dir);
  auto refused = [&](const std::string& shape, const std::string& data, const std::string& what) {
    const auto file = dir / "x.npy";
    testing::write_file(file, testing::npy(fmt::format("{{'descr': '<f4', 'fortran_order': "
                                                       "False, 'shape': {}, }}",
                                                       shape),
                                           data));
    expect_refused(fmt::format("run {} --input {}", prefix, file.string()),
                   fmt::format("janus run: npy file '{}': {}", file.string(), what));
  };
  refused("(99999999999999999999, 4)", "",
          "the shape (99999999999999999999, 4) has the extent 99999999999999999999, expected an "
          "integer from 0 to 9223372036854775807");
  refused("(4611686018427387904, 4)", "",
          "shape [4611686018427387904, 4]: the element count overflows int64, expected at most "
          "9223372036854775807 elements");
  refused("(-2, 4)", std::string(32, '\0'),
          "the shape (-2, 4) has the extent -2, expected an integer from 0 to "
          "9223372036854775807");
  refused("(2, 3)", "abc", "shape [2, 3] of float32 needs 24 data bytes, the file holds 3");
}

}  // namespace
}  // namespace janus::tools

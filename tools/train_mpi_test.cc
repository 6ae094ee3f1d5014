// `janus train --kvstore dist_allreduce` started by `mpirun -np 2` on the MPI backend
// (JANUS_DIST_BACKEND=mpi): the job that tools/launch_test.cc runs through `janus launch`, here
// with MPI's own launcher and transport. Rank 0 prints, and its figures are those of one process
// on the whole batches.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "tools_test_util.h"

namespace janus::tools {
namespace {

using ::testing::HasSubstr;

struct Result {
  int status = -1;
  std::string out, err;
};

std::filesystem::path scratch() {
  static const testing::TempDir dir("janus_train_mpi_test_");
  return dir;
}

Result run(const std::string& command) {
  const auto out = scratch() / "out", err = scratch() / "err";
  const int raw = std::system(
      fmt::format("{} >'{}' 2>'{}' </dev/null", command, out.string(), err.string()).c_str());
  Result r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  r.out = testing::read_file(out);
  r.err = testing::read_file(err);
  return r;
}

std::vector<double> losses_in(const std::filesystem::path& log) {
  const std::string text = testing::read_file(log);
  const std::regex loss("\"loss\": ([-0-9.e+]+)");
  std::vector<double> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), loss); it != std::sregex_iterator();
       ++it) {
    out.push_back(std::stod((*it)[1]));
  }
  return out;
}

TEST(TrainMpi, AllreduceUnderMpirunEqualsOneProcess) {
  const std::string train = "train --limit 600 --epochs 2 --batch-size 128 --momentum 0.9";
  const auto log2 = scratch() / "two.json", log1 = scratch() / "one.json";
  const Result two = run(fmt::format(
      "timeout -k 5 100 '{}' --allow-run-as-root --oversubscribe -np 2 -x JANUS_DIST_BACKEND=mpi "
      "-x JANUS_DIST_TIMEOUT=20 -x OMP_NUM_THREADS=1 '{}' {} --kvstore dist_allreduce "
      "--log-json '{}'",
      JANUS_MPIEXEC, JANUS_CLI, train, log2.string()));
  ASSERT_EQ(two.status, 0) << two.out << two.err;
  EXPECT_THAT(two.out, HasSubstr("2 workers (dist_allreduce store)"));
  EXPECT_EQ(two.err, "");
  const Result one = run(fmt::format("'{}' {} --log-json '{}'", JANUS_CLI, train, log1.string()));
  ASSERT_EQ(one.status, 0) << one.err;
  const std::vector<double> l2 = losses_in(log2), l1 = losses_in(log1);
  ASSERT_EQ(l2.size(), 2u);
  ASSERT_EQ(l1.size(), 2u);
  for (size_t e = 0; e < 2; ++e) EXPECT_NEAR(l2[e], l1[e], 1e-5 * l1[e]) << "epoch " << e + 1;
}

}  // namespace
}  // namespace janus::tools

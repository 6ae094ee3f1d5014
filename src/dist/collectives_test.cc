// Collectives across real processes: each test starts N copies of the dist_worker program
// (tests/dist_worker.cc, through tests/dist_job.h) and reads their exit codes. A separate
// small program rather than this test binary re-executed with a filter: a worker must be able
// to die in the middle (the fault tests), and its output stays free of GoogleTest's. Each rank
// checks its own results against a local computation.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "dist_job.h"
#include "testing/temp_dir.h"

namespace {

using dist_job::Job;

// Each rank's exit code (128 + signal if killed), or -1 for a rank still running at `deadline`.
std::vector<int> run(const Job& job, std::chrono::seconds deadline, double* seconds = nullptr) {
  const dist_job::Result r = dist_job::run_job(job, deadline);
  if (seconds != nullptr) *seconds = r.seconds;
  return r.codes;
}

TEST(DistCollectives, EqualLocalComputationOnTwoProcesses) {
  const std::vector<int> codes =
      run({.scenario = "collectives", .world_size = 2}, std::chrono::seconds(60));
  EXPECT_EQ(codes, std::vector<int>(2, 0)) << "exit codes per rank (-1: still running, killed)";
}

TEST(DistCollectives, EqualLocalComputationOnFourProcesses) {
  const std::vector<int> codes =
      run({.scenario = "collectives", .world_size = 4}, std::chrono::seconds(60));
  EXPECT_EQ(codes, std::vector<int>(4, 0)) << "exit codes per rank (-1: still running, killed)";
}

TEST(DistCollectives, FileStoreRendezvous) {
  const janus::testing::TempDir dir("janus_dist_store_");
  const std::vector<int> codes =
      run({.scenario = "collectives", .world_size = 2, .store = "file:" + dir.string()},
          std::chrono::seconds(60));
  EXPECT_EQ(codes, std::vector<int>(2, 0));
}

// dist_allreduce: 2 ranks on half a batch each give the parameters of one process on the whole
// batch (each worker compares with its own one-process run; tolerance in tests/dist_worker.cc).
TEST(DistKVStore, AllreduceTrainingEqualsOneProcessOnTheWholeBatch) {
  const std::vector<int> codes =
      run({.scenario = "train", .world_size = 2}, std::chrono::seconds(60));
  EXPECT_EQ(codes, std::vector<int>(2, 0));
}

// A rank dies (exit code 3) after the group formed: the others' allreduce raises a DistError
// naming the allreduce, the rank and the gone rank (checked by the workers themselves); nothing
// hangs. 4 ranks, so that rank 1 is no neighbour of the dead rank 3 in Gloo's ring: it waits on
// ranks 0 and 2, which learn of the death from their closed connections and close theirs in
// turn (gloo_backend.cc), so rank 1 learns of it as promptly. The mechanism gives the error
// within a few wake-ups of blocked threads, independent of the timeout: the timeout here is 20 s
// and every survivor must have its error within 5 s, which no timeout-driven error can meet, and
// which leaves seconds of slack for a loaded 2-core machine's scheduling delays.
TEST(DistFault, DeadRankGivesDistErrorOnEverySurvivor) {
  double seconds = 0;
  const std::vector<int> codes = run({.scenario = "die",
                                      .world_size = 4,
                                      .timeout_s = 20,
                                      .env = {{"JANUS_TEST_ERROR_WITHIN", "5"}}},
                                     std::chrono::seconds(60), &seconds);
  EXPECT_EQ(codes, (std::vector<int>{0, 0, 0, 3})) << "survivors 0, the dead rank 3";
}

// A rank stalls past the timeout (alive, its connections open): the others time out.
TEST(DistFault, StalledRankTimesOutOnEverySurvivor) {
  const std::vector<int> codes =
      run({.scenario = "stall", .world_size = 3, .timeout_s = 2}, std::chrono::seconds(30));
  EXPECT_EQ(codes, (std::vector<int>{0, 0, 0}));
}

}  // namespace

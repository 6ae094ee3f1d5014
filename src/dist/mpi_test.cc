// The MPI backend across real processes: the scenarios of tests/dist_worker.cc that run on Gloo
// (collectives_test.cc, parameter_server_test.cc), here with JANUS_DIST_BACKEND=mpi under
// `mpirun -np N` (its MPMD form, `-np W ... : -np S ...`, gives workers and servers their
// roles). Every mpirun runs under `timeout`: a hang fails the test, never the run.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "testing/temp_dir.h"

namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

struct Result {
  int status = -1;     // mpirun's exit status (124: killed by `timeout`)
  std::string output;  // stdout and stderr of mpirun and every rank
  double seconds = 0;
};

// One app context of mpirun: `np` processes of dist_worker SCENARIO with `env` set.
struct Apps {
  int np = 2;
  std::string env;  // "-x NAME=VALUE ..." for these processes
};

// Runs `mpirun [mpirun_args] -np N ... dist_worker SCENARIO [: -np M ...]` with the MPI backend,
// JANUS_DIST_TIMEOUT=timeout_s and one kernel thread per process, killed after `deadline_s`.
Result mpirun(const std::string& scenario, const std::vector<Apps>& apps, double timeout_s,
              const std::string& mpirun_args = "", int deadline_s = 60,
              const char* program = JANUS_DIST_WORKER) {
  const auto log =
      std::filesystem::temp_directory_path() / fmt::format("janus_mpi_test_{}.log", ::getpid());
  // Open MPI applies the -x of one app context to that context only: each gets them all.
  std::string env = fmt::format(
      "-x JANUS_DIST_BACKEND=mpi -x JANUS_DIST_TIMEOUT={} -x OMP_NUM_THREADS=1", timeout_s);
#if defined(__SANITIZE_ADDRESS__)
  env += " -x ASAN_OPTIONS";
#endif
  std::string command = fmt::format("timeout -k 5 {} '{}' --allow-run-as-root --oversubscribe {}",
                                    deadline_s, JANUS_MPIEXEC, mpirun_args);
  for (size_t i = 0; i < apps.size(); ++i) {
    command += fmt::format("{} -np {} {} {} '{}' {}", i == 0 ? "" : " :", apps[i].np, env,
                           apps[i].env, program, scenario);
  }
  command += fmt::format(" >'{}' 2>&1 </dev/null", log.string());
#if defined(__SANITIZE_ADDRESS__)
  // Open MPI leaves MPI_Init's allocations behind at MPI_Finalize, in components it has
  // unloaded by then: LeakSanitizer cannot tell them from ours without unwinding every malloc
  // slowly (20 s a test), so the ranks check memory errors but not leaks. (A run with whole
  // stacks and Open MPI's libraries suppressed was clean.) The same scenarios on Gloo are
  // leak-checked.
  const char* asan = std::getenv("ASAN_OPTIONS");
  ::setenv("ASAN_OPTIONS", fmt::format("{}:detect_leaks=0", asan != nullptr ? asan : "").c_str(),
           1);
#endif
  const auto start = Clock::now();
  const int raw = std::system(command.c_str());
  Result r;
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  r.output = text.str();
  std::filesystem::remove(log);
  return r;
}

// W workers and S servers: the roles' variables for each app context.
std::vector<Apps> ps_apps(int workers, int servers) {
  const std::string common =
      fmt::format("-x JANUS_WORLD_SIZE={} -x JANUS_NUM_WORKERS={} -x JANUS_NUM_SERVERS={}",
                  workers + servers, workers, servers);
  return {Apps{workers, common + " -x JANUS_ROLE=worker"},
          Apps{servers, common + " -x JANUS_ROLE=server"}};
}

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(DistMpi, CollectivesEqualLocalComputationOnTwoProcesses) {
  const Result r = mpirun("collectives", {Apps{2}}, 20);
  EXPECT_EQ(r.status, 0) << r.output;
}

TEST(DistMpi, CollectivesEqualLocalComputationOnFourProcesses) {
  const Result r = mpirun("collectives", {Apps{4}}, 20);
  EXPECT_EQ(r.status, 0) << r.output;
}

TEST(DistMpi, AllreduceTrainingEqualsOneProcessOnTheWholeBatch) {
  const Result r = mpirun("train", {Apps{2}}, 20);
  EXPECT_EQ(r.status, 0) << r.output;
}

// Rank 2 of 3 sleeps past the 2 s timeout: ranks 0 and 1 raise a DistError naming the
// allreduce, their rank and rank 2 as the one that did not take part, within the timeout + 2 s
// (checked by the workers); then everyone exits normally. (mpirun would otherwise end the job
// at the first non-zero exit status.)
TEST(DistMpi, StalledRankIsNamedOnEverySurvivor) {
  const Result r =
      mpirun("stall", {Apps{3}}, 2, "--mca orte_abort_on_non_zero_status 0", /*deadline_s=*/40);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(count(r.output, "rank 2 did not take part"), 2u) << r.output;
  EXPECT_THAT(r.output, HasSubstr("MPI: collective #1"));
}

// A rank dies (exit code 3, without MPI_Finalize): mpirun ends the whole job at once and says
// which rank and how; no survivor is left waiting.
TEST(DistMpi, DeadRankEndsTheJobThroughMpirun) {
  const Result r = mpirun("die", {Apps{3}}, 20);
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_THAT(r.output, HasSubstr(",2]"));  // Open MPI's process name [[job,1],rank]
  EXPECT_THAT(r.output, HasSubstr("Exit code:    3"));
  EXPECT_LT(r.seconds, 15);
}

// Rank 1 starts MPI but never creates its group: rank 0's group fails to join within the
// timeout + 2 s (checked by tests/mpi_join_worker.cc), not a hang.
TEST(DistMpi, ARankThatNeverCreatesTheGroupIsADistErrorAfterTheTimeout) {
  const Result r = mpirun("", {Apps{2}}, 2, "", /*deadline_s=*/40, JANUS_MPI_JOIN_WORKER);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("could not join the MPI process group within 2000 ms"));
}

TEST(DistMpiParameterServer, SyncPushPullSemanticsWithTwoServers) {
  const Result r = mpirun("ps_values", ps_apps(2, 2), 20);
  EXPECT_EQ(r.status, 0) << r.output;
}

TEST(DistMpiParameterServer, AsyncPushPullSemantics) {
  const Result r = mpirun("ps_async_values", ps_apps(2, 1), 20);
  EXPECT_EQ(r.status, 0) << r.output;
}

TEST(DistMpiParameterServer, SyncTrainingEqualsOneProcessOnTheWholeBatch) {
  const Result r = mpirun("ps_train_sync", ps_apps(2, 1), 20);
  EXPECT_EQ(r.status, 0) << r.output;
}

TEST(DistMpiParameterServer, SyncGradientBucketsEqualOneProcessWithTwoServers) {
  const Result r = mpirun("ps_train_sync_buckets", ps_apps(2, 2), 20);
  EXPECT_EQ(r.status, 0) << r.output;
}

// A checkpoint with SGD with momentum on 2 servers (keys split across both), resumed by a new
// mpirun job: the parameters equal the uninterrupted job's bit for bit (checked by the workers).
TEST(DistMpiParameterServer, CheckpointWithTheOptimizerOnTheServersResumesInANewJob) {
  const janus::testing::TempDir dir("janus_mpi_ps_checkpoint_");
  for (const char* phase : {"ps_checkpoint_save", "ps_checkpoint_resume"}) {
    std::vector<Apps> apps = ps_apps(2, 2);
    for (Apps& a : apps) {
      a.env += fmt::format(" -x JANUS_TEST_CHECKPOINT_DIR={} -x JANUS_PS_BIGARRAY_BOUND=64",
                           dir.string());
    }
    const Result r = mpirun(phase, apps, 20);
    EXPECT_EQ(r.status, 0) << phase << "\n" << r.output;
  }
}

TEST(DistMpiParameterServer, AsyncTrainingConverges) {
  const Result r = mpirun("ps_train_async", ps_apps(2, 1), 20);
  EXPECT_EQ(r.status, 0) << r.output;
}

// Worker 1 stalls past the timeout: worker 0's round fails naming it; then worker 1 takes part
// again and every process exits normally.
TEST(DistMpiParameterServer, StalledWorkerTimesOutTheSyncRound) {
  const Result r = mpirun("ps_worker_stalls", ps_apps(2, 1), 2, "", /*deadline_s=*/40);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("no push from worker rank 1"));
}

}  // namespace

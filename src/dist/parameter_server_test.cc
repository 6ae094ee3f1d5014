// Parameter servers across real processes: workers and servers are processes of dist_worker
// (tests/dist_worker.cc), started through tests/dist_job.h; each worker checks its own results
// and the test reads the exit codes. 2 workers with 1 server, and with 2 servers (keys of at
// least 1 MB are then split across both).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "dist_job.h"
#include "testing/temp_dir.h"

namespace {

using dist_job::Job;

Job ps_job(std::string scenario, int servers, double timeout_s = 20) {
  return Job{.scenario = std::move(scenario),
             .world_size = 2 + servers,
             .timeout_s = timeout_s,
             .num_servers = servers};
}

class ParameterServer : public ::testing::TestWithParam<int> {};  // the number of servers

TEST_P(ParameterServer, SyncPushPullSemantics) {
  const auto r = dist_job::run_job(ps_job("ps_values", GetParam()), std::chrono::seconds(60));
  EXPECT_EQ(r.codes, std::vector<int>(2 + GetParam(), 0))
      << "exit codes per rank, servers last (-1: still running, killed)";
}

TEST_P(ParameterServer, AsyncPushPullSemantics) {
  const auto r = dist_job::run_job(ps_job("ps_async_values", GetParam()), std::chrono::seconds(60));
  EXPECT_EQ(r.codes, std::vector<int>(2 + GetParam(), 0));
}

// 2 workers on half a batch each, SGD with momentum on the servers: the parameters of one
// process on the whole batch, to 1e-5 + 1e-4 relative after 10 steps (checked by the workers).
TEST_P(ParameterServer, SyncTrainingEqualsOneProcessOnTheWholeBatch) {
  const auto r = dist_job::run_job(ps_job("ps_train_sync", GetParam()), std::chrono::seconds(60));
  EXPECT_EQ(r.codes, std::vector<int>(2 + GetParam(), 0));
}

// The optimizer on the servers with a cosine learning-rate schedule (down to 0 at the last of
// the 10 updates): each push carries the schedule's rate for its update, counted on the worker.
TEST_P(ParameterServer, SyncTrainingWithAScheduleEqualsOneProcessOnTheWholeBatch) {
  const auto r =
      dist_job::run_job(ps_job("ps_train_sync_schedule", GetParam()), std::chrono::seconds(60));
  EXPECT_EQ(r.codes, std::vector<int>(2 + GetParam(), 0));
}

// The same with the optimizer on the workers: the servers only sum the gradient buckets.
TEST_P(ParameterServer, SyncGradientBucketsEqualOneProcessOnTheWholeBatch) {
  const auto r =
      dist_job::run_job(ps_job("ps_train_sync_buckets", GetParam()), std::chrono::seconds(60));
  EXPECT_EQ(r.codes, std::vector<int>(2 + GetParam(), 0));
}

// A checkpoint of a job with SGD with momentum on the servers (Trainer::save_states gathers the
// momentum from them), resumed by a new job with new servers (load_states hands it to them):
// the parameters after 10 steps equal the uninterrupted job's bit for bit (checked by the
// workers). Keys of at least 64 bytes are split across the servers when there are 2, so the
// parts of a state are gathered and scattered too.
TEST_P(ParameterServer, CheckpointWithTheOptimizerOnTheServersResumesInANewJobBitForBit) {
  const janus::testing::TempDir dir("janus_ps_checkpoint_");
  for (const char* phase : {"ps_checkpoint_save", "ps_checkpoint_resume"}) {
    Job job = ps_job(phase, GetParam());
    job.env = {{"JANUS_TEST_CHECKPOINT_DIR", dir.string()}, {"JANUS_PS_BIGARRAY_BOUND", "64"}};
    const auto r = dist_job::run_job(job, std::chrono::seconds(60));
    EXPECT_EQ(r.codes, std::vector<int>(2 + GetParam(), 0)) << phase;
  }
  EXPECT_TRUE(std::filesystem::exists(dir / "trainer-5.safetensors"));
}

TEST_P(ParameterServer, AsyncTrainingConverges) {
  const auto r = dist_job::run_job(ps_job("ps_train_async", GetParam()), std::chrono::seconds(60));
  EXPECT_EQ(r.codes, std::vector<int>(2 + GetParam(), 0));
}

// kill -9 of the last server while the workers push and pull: every worker raises a DistError
// naming the operation, the key and the server's rank. What the mechanism guarantees: a
// transfer pending with the server when it dies fails at once (its connection breaks); one
// posted after the break is never failed by Gloo and waits out the timeout (Gloo's installed
// headers give no way to ask a pair whether it broke); the header and data waits of one
// exchange share one deadline (ps_kvstore.cc), which for a dist_sync pull is 5 s past the
// timeout (it waits for its round, which the server bounds by the timeout). So the error comes
// within the timeout + 5 s of the kill, plus scheduling: the workers check it themselves, from
// the ready file's time, which precedes the kill, against the timeout + 8 s (a loaded 2-core
// machine delays a process by seconds). The workers' exits are not bounded here: a worker's goodbye
// to a live server may wait up to another timeout after its error, which is what failed the former
// bound on exits (timeout + 2 s) on a loaded machine. The job's limit catches a hang.
TEST_P(ParameterServer, KilledServerGivesDistErrorOnEveryWorker) {
  constexpr double kTimeout = 3;
  Job job = ps_job("ps_server_dies", GetParam(), kTimeout);
  job.kill_rank = job.world_size - 1;
  job.ready_file =
      (std::filesystem::temp_directory_path() / ("janus_ps_ready_" + std::to_string(::getpid())))
          .string();
  std::filesystem::remove(job.ready_file);
  job.env = {{"JANUS_TEST_KILLED_RANK", std::to_string(job.kill_rank)},
             {"JANUS_TEST_READY_FILE", job.ready_file},
             {"JANUS_TEST_ERROR_WITHIN", std::to_string(kTimeout + 8)}};
  const auto r = dist_job::run_job(job, std::chrono::seconds(40));
  std::filesystem::remove(job.ready_file);
  EXPECT_EQ(r.codes[0], 0);
  EXPECT_EQ(r.codes[1], 0);
  EXPECT_EQ(r.codes[static_cast<size_t>(job.kill_rank)], 128 + SIGKILL);
  for (int w = 0; w < 2; ++w) EXPECT_GE(r.after_kill[w], 0) << "worker " << w;
}

// A worker dies in dist_sync: the servers fail its round, naming it, and the other worker's
// pull raises a DistError naming it; the servers exit with an error (1), nothing hangs.
TEST_P(ParameterServer, DeadWorkerFailsTheSyncRound) {
  const auto r =
      dist_job::run_job(ps_job("ps_worker_dies", GetParam(), 5), std::chrono::seconds(40));
  std::vector<int> want{0, 3};
  want.resize(2 + GetParam(), 1);
  EXPECT_EQ(r.codes, want) << "worker 0 saw the error, worker 1 died (3), servers failed (1)";
  EXPECT_LT(r.seconds, 20);
}

// A worker stalls past the timeout in dist_sync: the other worker's round fails after the
// timeout, naming it; nobody dies and every process exits normally.
TEST_P(ParameterServer, StalledWorkerTimesOutTheSyncRound) {
  const auto r =
      dist_job::run_job(ps_job("ps_worker_stalls", GetParam(), 2), std::chrono::seconds(40));
  EXPECT_EQ(r.codes, std::vector<int>(2 + GetParam(), 0));
}

INSTANTIATE_TEST_SUITE_P(Servers, ParameterServer, ::testing::Values(1, 2),
                         [](const auto& info) { return std::to_string(info.param) + "Servers"; });

}  // namespace

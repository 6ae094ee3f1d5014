// Collectives across real processes: each test starts N copies of the dist_worker program
// (tests/dist_worker.cc) with JANUS_RANK etc. on a free loopback port, and reads their exit
// codes. A separate small program rather than this test binary re-executed with a filter: a
// worker must be able to die in the middle (the fault tests), and its output stays free of
// GoogleTest's. Each rank checks its own results against a local computation.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// A port that was free a moment ago (the kernel's pick for port 0). Another process could take
// it before rank 0 listens; on a test machine that is rare enough.
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

struct Job {
  std::string scenario;
  int world_size = 2;
  double timeout_s = 20;  // JANUS_DIST_TIMEOUT
  std::string store;      // JANUS_DIST_STORE, empty: tcp
};

// Runs the job; returns each rank's exit code (128 + signal if killed), or -1 for a rank still
// running at `deadline` (then killed: a hang is a failure, never a stuck test).
std::vector<int> run(const Job& job, std::chrono::seconds deadline, double* seconds = nullptr) {
  const int port = free_port();
  std::vector<pid_t> pids;
  const auto start = Clock::now();
  for (int r = 0; r < job.world_size; ++r) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setenv("JANUS_RANK", std::to_string(r).c_str(), 1);
      ::setenv("JANUS_WORLD_SIZE", std::to_string(job.world_size).c_str(), 1);
      ::setenv("JANUS_MASTER_ADDR", "127.0.0.1", 1);
      ::setenv("JANUS_MASTER_PORT", std::to_string(port).c_str(), 1);
      ::setenv("JANUS_DIST_TIMEOUT", std::to_string(job.timeout_s).c_str(), 1);
      if (!job.store.empty()) ::setenv("JANUS_DIST_STORE", job.store.c_str(), 1);
      // Several processes share this machine's cores: one thread each for kernels.
      ::setenv("OMP_NUM_THREADS", "1", 1);
      ::execl(JANUS_DIST_WORKER, JANUS_DIST_WORKER, job.scenario.c_str(), nullptr);
      std::_Exit(127);
    }
    pids.push_back(pid);
  }
  std::vector<int> codes(pids.size(), -1);
  size_t running = pids.size();
  while (running > 0 && Clock::now() - start < deadline) {
    for (size_t i = 0; i < pids.size(); ++i) {
      if (codes[i] != -1) continue;
      int status = 0;
      if (::waitpid(pids[i], &status, WNOHANG) != pids[i]) continue;
      codes[i] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      --running;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (seconds != nullptr) *seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (size_t i = 0; i < pids.size(); ++i) {
    if (codes[i] != -1) continue;
    ::kill(pids[i], SIGKILL);
    ::waitpid(pids[i], nullptr, 0);
  }
  return codes;
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
  const auto dir =
      std::filesystem::temp_directory_path() / ("janus_dist_store_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::vector<int> codes =
      run({.scenario = "collectives", .world_size = 2, .store = "file:" + dir.string()},
          std::chrono::seconds(60));
  std::filesystem::remove_all(dir);
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
// naming the allreduce, the rank and the gone rank, within JANUS_DIST_TIMEOUT + 2 s (checked by
// the workers themselves); nothing hangs.
TEST(DistFault, DeadRankGivesDistErrorOnEverySurvivor) {
  double seconds = 0;
  const std::vector<int> codes =
      run({.scenario = "die", .world_size = 3, .timeout_s = 3}, std::chrono::seconds(30), &seconds);
  EXPECT_EQ(codes, (std::vector<int>{0, 0, 3})) << "survivors 0, the dead rank 3";
  EXPECT_LT(seconds, 15);
}

// A rank stalls past the timeout (alive, its connections open): the others time out.
TEST(DistFault, StalledRankTimesOutOnEverySurvivor) {
  const std::vector<int> codes =
      run({.scenario = "stall", .world_size = 3, .timeout_s = 2}, std::chrono::seconds(30));
  EXPECT_EQ(codes, (std::vector<int>{0, 0, 0}));
}

}  // namespace

// Starting a multi-process job for the dist tests: N processes of the dist_worker program
// (tests/dist_worker.cc) with JANUS_RANK etc. on a free loopback port, their exit codes read
// back, and a deadline after which every process still running is killed (a hang is a failure,
// never a stuck test). With servers, ranks 0..W-1 are workers and W..W+S-1 servers
// (JANUS_ROLE, JANUS_NUM_WORKERS, JANUS_NUM_SERVERS).
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "janus/dist/free_port.h"

namespace dist_job {

using Clock = std::chrono::steady_clock;

struct Job {
  std::string scenario;
  int world_size = 2;
  double timeout_s = 20;  // JANUS_DIST_TIMEOUT
  std::string store;      // JANUS_DIST_STORE, empty: tcp
  int num_servers = 0;    // > 0: the last num_servers ranks are parameter servers
  std::vector<std::pair<std::string, std::string>> env;  // more variables, for every rank
  // Fault injection: once `ready_file` exists (a worker creates it), SIGKILL rank `kill_rank`.
  int kill_rank = -1;
  std::string ready_file;
};

struct Result {
  // Each rank's exit code (128 + signal if killed), or -1 for a rank still running at the
  // deadline (then killed).
  std::vector<int> codes;
  double seconds = 0;  // from the start until every rank ended (or the deadline)
  // With kill_rank: seconds from the kill until each rank ended (-1: not killed or not ended).
  std::vector<double> after_kill;
};

inline Result run_job(const Job& job, std::chrono::seconds deadline) {
  const int port = janus::dist::free_loopback_port();
  const int workers = job.world_size - job.num_servers;
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
      if (job.num_servers > 0) {
        ::setenv("JANUS_ROLE", r < workers ? "worker" : "server", 1);
        ::setenv("JANUS_NUM_WORKERS", std::to_string(workers).c_str(), 1);
        ::setenv("JANUS_NUM_SERVERS", std::to_string(job.num_servers).c_str(), 1);
      }
      if (!job.store.empty()) ::setenv("JANUS_DIST_STORE", job.store.c_str(), 1);
      for (const auto& [name, value] : job.env) ::setenv(name.c_str(), value.c_str(), 1);
      // Several processes share this machine's cores: one thread each for kernels.
      ::setenv("OMP_NUM_THREADS", "1", 1);
      ::execl(JANUS_DIST_WORKER, JANUS_DIST_WORKER, job.scenario.c_str(), nullptr);
      std::_Exit(127);
    }
    pids.push_back(pid);
  }
  Result result;
  result.codes.assign(pids.size(), -1);
  result.after_kill.assign(pids.size(), -1);
  std::optional<Clock::time_point> killed_at;
  size_t running = pids.size();
  while (running > 0 && Clock::now() - start < deadline) {
    if (job.kill_rank >= 0 && !killed_at && std::filesystem::exists(job.ready_file)) {
      ::kill(pids[static_cast<size_t>(job.kill_rank)], SIGKILL);
      killed_at = Clock::now();
    }
    for (size_t i = 0; i < pids.size(); ++i) {
      if (result.codes[i] != -1) continue;
      int status = 0;
      if (::waitpid(pids[i], &status, WNOHANG) != pids[i]) continue;
      result.codes[i] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      if (killed_at) {
        result.after_kill[i] = std::chrono::duration<double>(Clock::now() - *killed_at).count();
      }
      --running;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (size_t i = 0; i < pids.size(); ++i) {
    if (result.codes[i] != -1) continue;
    ::kill(pids[i], SIGKILL);
    ::waitpid(pids[i], nullptr, 0);
  }
  return result;
}

}  // namespace dist_job

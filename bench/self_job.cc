// bench/self_job.h: fork, set the variables, exec /proc/self/exe; waitpid against a deadline.
#include "self_job.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace bench {
namespace {

std::vector<std::string> own_arguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string arg;
  while (std::getline(in, arg, '\0')) args.push_back(arg);
  return args;
}

}  // namespace

std::vector<std::string> alone_command(const std::string& name) {
  const std::vector<std::string> args = own_arguments();
  std::vector<std::string> out{std::filesystem::read_symlink("/proc/self/exe").string()};
  if (args.size() < 2 || args[1] != "bench") {
    out.insert(out.end(), args.begin() + (args.empty() ? 0 : 1), args.end());
    return out;
  }
  out.insert(out.end(), {"bench", name});
  for (size_t i = 2; i < args.size(); ++i) {
    // `janus bench` has only flags besides the names: --json and --quick carry over.
    if (args[i] == "--json" || args[i] == "--quick") out.push_back(args[i]);
  }
  return out;
}

Variables rank_variables(int rank, int workers, int servers, int port) {
  return {{"JANUS_RANK", std::to_string(rank)},
          {"JANUS_WORLD_SIZE", std::to_string(workers + servers)},
          {"JANUS_MASTER_ADDR", "127.0.0.1"},
          {"JANUS_MASTER_PORT", std::to_string(port)},
          {"JANUS_DIST_TIMEOUT", "120"},
          {"JANUS_ROLE", rank < workers ? "worker" : "server"},
          {"JANUS_NUM_WORKERS", std::to_string(workers)},
          {"JANUS_NUM_SERVERS", std::to_string(servers)}};
}

bool run_self_job(const std::vector<Variables>& processes, int timeout_s, const char* name) {
  const std::vector<std::string> args = alone_command(name);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<pid_t> pids;
  for (const Variables& vars : processes) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setenv("OMP_NUM_THREADS", "1", 1);
      for (const auto& [k, v] : vars) ::setenv(k.c_str(), v.c_str(), 1);
      const int devnull = ::open("/dev/null", O_WRONLY);
      ::dup2(devnull, STDOUT_FILENO);  // the children's own bench headers
      ::execv(argv[0], argv.data());
      std::_Exit(127);
    }
    pids.push_back(pid);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  bool ok = true;
  for (size_t i = 0; i < pids.size(); ++i) {
    int status = 0;
    while (::waitpid(pids[i], &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        for (pid_t p : pids) ::kill(p, SIGKILL);
        ::waitpid(pids[i], &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "%s: process %zu of %zu failed (status %d)\n", name, i, pids.size(),
                   status);
      ok = false;
    }
  }
  return ok;
}

}  // namespace bench

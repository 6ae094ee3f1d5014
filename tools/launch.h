// `janus launch`: starts the processes of a distributed job on this machine, with the environment
// of dist::ProcessGroup, prefixes their output with their rank, forwards signals and stops the
// job when one of them dies. Part of tools/ (the janus program).
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace janus::tools {

struct LaunchOptions {
  int workers = 1;
  /// Parameter-server processes: ranks workers .. workers + servers - 1.
  int servers = 0;
  /// A file naming several machines: not implemented (a NotImplementedError).
  std::string hosts;
  /// The rendezvous port (JANUS_MASTER_PORT); 0: a free one, chosen here.
  int port = 0;
  /// How long the other processes get between SIGTERM and SIGKILL once one has died.
  std::chrono::milliseconds grace{std::chrono::seconds(5)};
  /// The program and its arguments, run once per rank (found through PATH).
  std::vector<std::string> command;
};

/// Runs the job and returns the launcher's exit status: 0 when every process exited with 0;
/// 1 when one died (exit status other than 0, or a signal), after a line on stderr naming it
/// ("janus launch: worker 1 (pid 4242) was killed by signal 9 (SIGKILL)") and after stopping
/// the others (SIGTERM, then SIGKILL after `grace`); 128 + N when the launcher got signal N
/// (SIGINT, SIGTERM, SIGHUP), which it forwards to every process.
///
/// Each process gets JANUS_RANK, JANUS_WORLD_SIZE (workers + servers), JANUS_LOCAL_RANK,
/// JANUS_MASTER_ADDR=127.0.0.1, JANUS_MASTER_PORT, JANUS_ROLE (worker or server),
/// JANUS_NUM_WORKERS and JANUS_NUM_SERVERS. It runs in a process group of its own (a signal
/// reaches its children too; what is left in the group when every rank has ended is killed)
/// and dies with the launcher (PR_SET_PDEATHSIG). Each line it writes
/// to stdout (stderr) comes out on the launcher's stdout (stderr) as "[worker 0] line".
///
/// ValueError for bad options, NotImplementedError for `hosts`. Not thread-safe: it blocks
/// SIGINT, SIGTERM, SIGHUP and SIGCHLD in the calling thread while it runs.
int launch(const LaunchOptions& options);

/// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then closed).
int free_port();

}  // namespace janus::tools

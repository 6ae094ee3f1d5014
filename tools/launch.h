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
  /// A file naming the machines to run on (see read_hosts); empty: every process on this
  /// machine, forked directly.
  std::string hosts;
  /// With `hosts`: the remote-shell command that runs a shell command line on a host, as
  /// words split at spaces; `{host}` in it is replaced by the host's name, else the name is
  /// appended. The command line is always its last argument. Empty: $JANUS_LAUNCH_AGENT, else
  /// `ssh -o BatchMode=yes`. For network namespaces: `ip netns exec {host} sh -c`.
  std::string agent;
  /// The rendezvous port (JANUS_MASTER_PORT); 0: a free one on this machine, chosen here (with
  /// `hosts`: 29500, as torchrun's default, since this machine cannot tell what is free there).
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
/// With `hosts`, the ranks are placed on the hosts in order, filling each host's slots (ranks
/// 0..slots-1 on the first, and so on), and each runs as `AGENT HOST 'COMMAND LINE'`: the
/// command line changes to the launcher's working directory, sets the variables above (with
/// JANUS_MASTER_ADDR the first host's address and JANUS_LOCAL_RANK the rank on its host) and
/// passes on every other JANUS_* variable and OMP_NUM_THREADS of the launcher's environment.
/// A remote shell does not forward signals, so the agent's stdin carries them: the command
/// line starts a relay that reads signal names from stdin and sends them to the command, and
/// that kills it when stdin ends (the launcher, or the connection to it, has gone).
///
/// ValueError for bad options; FormatError for a bad hosts file (read_hosts). Not thread-safe:
/// it blocks SIGINT, SIGTERM, SIGHUP and SIGCHLD in the calling thread while it runs.
int launch(const LaunchOptions& options);

/// One machine of a hosts file.
struct Host {
  std::string name;     // what the agent is given: a host name, user@host, a namespace
  std::string address;  // how the other ranks reach it (JANUS_MASTER_ADDR); default: name
  int slots = 1;        // how many ranks it runs
};

/// Reads a hosts file: one host a line, `NAME [slots=N] [addr=ADDRESS]`; blank lines and
/// text after `#` are ignored. FormatError naming the file, the line and what was expected
/// for a malformed line, a name listed twice or a file that names no host; IOError when it
/// cannot be read.
std::vector<Host> read_hosts(const std::string& path);

}  // namespace janus::tools

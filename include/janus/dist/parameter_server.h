// Parameter servers (MXNet's dist_sync / dist_async, with ps-lite's semantics): the processes
// of a job are workers or servers; servers hold shards of the keys and apply the optimizer,
// workers push gradients and pull weights through kvstore::create("dist_sync") or
// ("dist_async"). Layer: dist. Design: docs/design/dist.md, "Parameter servers".
//
//   int main() {
//     if (janus::dist::maybe_run_server()) return 0;  // a server serves, then returns here
//     auto kv = janus::kvstore::create("dist_sync");  // a worker connects to the servers
//     ...
//   }
//
// Roles come from the environment (the contract with `janus launch`): JANUS_ROLE=worker|server,
// JANUS_NUM_WORKERS=W, JANUS_NUM_SERVERS=S, JANUS_WORLD_SIZE=W+S; ranks 0..W-1 are the workers,
// W..W+S-1 the servers. Every process, worker or server, joins the one process group of the job
// (process_group.h); the servers' messages travel on Gloo's point-to-point (unbound buffers)
// over that group's pairs.
#pragma once

namespace janus::dist {

enum class Role { kWorker, kServer };

struct Roles {
  Role role = Role::kWorker;
  int num_workers = 1;
  int num_servers = 0;

  /// Reads JANUS_ROLE (default worker), JANUS_NUM_SERVERS (default 0) and JANUS_NUM_WORKERS
  /// (default JANUS_WORLD_SIZE - servers) and checks them against JANUS_WORLD_SIZE and
  /// JANUS_RANK (a server's rank is >= W, a worker's < W). A ValueError names the variable.
  static Roles from_env();
};

/// Serves this server's shards until every worker has said goodbye (a worker says it when it
/// exits, or when it has died). Blocks. Joins the default group first. Throws a DistError when
/// a worker died (after serving the others as far as possible), or when this process is not a
/// server (ValueError).
void run_server();

/// For main(): when JANUS_ROLE=server, runs run_server() and returns true (main should then
/// return; errors propagate); returns false at once for a worker (or without JANUS_ROLE).
bool maybe_run_server();

}  // namespace janus::dist

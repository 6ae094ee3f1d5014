// A multi-process job for the dist benchmarks: this program re-executed once per process
// (/proc/self/exe with the same arguments, so `janus bench NAME` and build/bench/NAME both
// work), each with the variables of its rank, and waited for with a deadline.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace bench {

using Variables = std::vector<std::pair<std::string, std::string>>;

/// The command that runs benchmark `name` alone, as this run does: `janus bench NAME` with
/// this run's flags when this program is the janus command (not its list of names or --all,
/// or each process would run every benchmark), or this run's own command line when it is the
/// standalone build/bench/NAME.
std::vector<std::string> alone_command(const std::string& name);

/// Starts one copy of `alone_command(name)` per entry of `processes`, with those variables added to
/// its environment (and OMP_NUM_THREADS=1 unless they set it) and its stdout on /dev/null
/// (its errors go to stderr); kills them all after `timeout_s`. True when every one exited 0;
/// otherwise says on stderr, after `name`, which failed.
bool run_self_job(const std::vector<Variables>& processes, int timeout_s, const char* name);

/// The variables of rank `rank` of a job of `workers` + `servers` processes on this machine,
/// rendezvous on `port`.
Variables rank_variables(int rank, int workers, int servers, int port);

}  // namespace bench

// A process group: the processes of one job (on one machine or several) that run collectives
// together, on Gloo's TCP transport or, with JANUS_DIST_BACKEND=mpi, on MPI. Layer: dist.
//
//   // JANUS_RANK=1 JANUS_WORLD_SIZE=2 JANUS_MASTER_ADDR=127.0.0.1 JANUS_MASTER_PORT=29500
//   auto pg = dist::ProcessGroup::from_env();  // blocks until every rank has joined
//   dist::allreduce(*pg, grads);                // dist/collectives.h; returns at once
//
// Rendezvous (how the ranks find each other's addresses) goes through a key-value store: by
// default a TCP store that rank 0 serves at JANUS_MASTER_ADDR:JANUS_MASTER_PORT (as torchrun's
// c10d store), or a directory shared by every rank (JANUS_DIST_STORE=file:/path). Then Gloo
// connects every pair of ranks (a full mesh of TCP connections) and the store is used no more,
// except to tell, after a failure, which ranks have gone. On MPI (the job started by `mpirun`)
// MPI's own start-up is the rendezvous and the group is MPI_COMM_WORLD.
#pragma once

#include <chrono>
#include <memory>
#include <string>

namespace janus::dist {

/// The communication library under a group.
enum class DistBackend {
  kGloo,  // the default: Gloo's TCP transport, rendezvous through a store
  kMpi,   // MPI (Open MPI): a job started by mpirun
};

/// "gloo" or "mpi".
const char* backend_name(DistBackend backend);

struct ProcessGroupOptions {
  DistBackend backend = DistBackend::kGloo;
  int rank = 0;
  int world_size = 1;
  /// Where rank 0 serves the TCP store (a host name or address of rank 0's machine).
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  /// Empty: the TCP store at master_addr:master_port. Else a directory that every rank sees,
  /// holding a Gloo FileStore (it must be empty, or hold no keys of an earlier job).
  std::string file_store;
  /// The network interface whose address Gloo's TCP device binds (e.g. "lo", "eth0"). Empty:
  /// the interface through which this machine reaches master_addr (loopback for 127.0.0.1).
  std::string iface;
  /// Rendezvous, every collective and every transfer fail with a DistError after this long
  /// without completing.
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};

  /// Reads JANUS_DIST_BACKEND (unset or "gloo", or "mpi"), JANUS_RANK and JANUS_WORLD_SIZE
  /// (required; under mpirun, OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE stand in for them
  /// when they are not set), JANUS_MASTER_ADDR and JANUS_MASTER_PORT (required with Gloo's TCP
  /// store), JANUS_DIST_STORE (unset, "tcp" or "file:/path"), JANUS_DIST_IFACE and
  /// JANUS_DIST_TIMEOUT (seconds, default 60). A missing or malformed variable is a ValueError
  /// naming it and what was expected.
  static ProcessGroupOptions from_env();
};

class ProcessGroup {
 public:
  /// Joins the group: blocks until every rank has joined and all pairs are connected. A rank
  /// that does not turn up within the timeout, or an unreachable store, is a DistError naming
  /// this rank and the store.
  explicit ProcessGroup(const ProcessGroupOptions& options);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  /// ProcessGroup(ProcessGroupOptions::from_env()).
  static std::shared_ptr<ProcessGroup> from_env();

  int rank() const;
  int size() const;
  DistBackend backend() const;
  std::chrono::milliseconds timeout() const;

  /// Blocks until every collective pushed on this group so far has run; rethrows the
  /// DistError of a failed one. (Collectives are ordered among themselves: see collectives.h.)
  void wait();

  struct Impl;  // the backend, the sequence var (src/dist/process_group_impl.h)
  const std::shared_ptr<Impl>& impl() const { return impl_; }

 private:
  std::shared_ptr<Impl> impl_;
};

/// The process's group from the environment, created (rendezvous included) on first use and
/// kept until exit; what the dist_* KVStores use. Thread-safe.
ProcessGroup& default_group();

}  // namespace janus::dist

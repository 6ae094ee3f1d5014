// What a process group's communication library does for it: the collectives and the
// point-to-point transfers of the parameter servers, each blocking its caller's thread (an
// engine worker of the comm lane) and bounded by the group's timeout. One implementation per
// library: gloo_backend.cc (the default) and mpi_backend.cc (JANUS_DIST_BACKEND=mpi). Layer:
// dist (private).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "janus/core/dtype.h"
#include "janus/dist/process_group.h"

namespace janus::dist {

/// Sends and receives posted together (a key's parts go to every server at once), then
/// completed by wait(). Messages between two ranks on one slot arrive in the order they were
/// sent; a receive must be posted with the exact size of the message.
class PointToPoint {
 public:
  virtual ~PointToPoint() = default;
  /// Posts a transfer, the next in posting order (from 0); a failure to post is kept and thrown
  /// by wait().
  virtual void send(int peer, uint64_t slot, const void* data, size_t bytes) = 0;
  virtual void recv(int peer, uint64_t slot, void* data, size_t bytes) = 0;
  /// Completes every posted transfer within `timeout`; on failure sets *failed_peer (when not
  /// null) to the peer of the one that failed and throws an exception saying why. Once it has
  /// returned or thrown, no transfer posted before it can still write its memory, and with
  /// Gloo none can still read it either (MPI cannot cancel a send: it may still read it).
  virtual void wait(std::chrono::milliseconds timeout, int* failed_peer) = 0;
  /// After wait(): whether the transfer-th posted transfer completed (all did when wait()
  /// returned; when it threw, those that completed all the same).
  virtual bool completed(size_t transfer) const = 0;
};

/// A group of at least 2 ranks on one library. The collectives run one at a time per group (the
/// caller orders them), each with `tag`, its position in the group's order; they throw an
/// exception whose what() says why the operation failed (the caller adds which operation, this
/// rank and how long it waited).
class Backend {
 public:
  virtual ~Backend() = default;

  /// data[0..n) = the sum over ranks, in place. float32, float64, int32, int64, uint8.
  virtual void allreduce_sum(void* data, size_t n, DType dtype, uint32_t tag) = 0;
  /// data = root's bytes, on every rank.
  virtual void broadcast(void* data, size_t bytes, int root, uint32_t tag) = 0;
  /// out[r * bytes .. (r + 1) * bytes) = rank r's `in`.
  virtual void allgather(const void* in, void* out, size_t bytes, uint32_t tag) = 0;
  virtual void barrier(uint32_t tag) = 0;

  virtual std::unique_ptr<PointToPoint> point_to_point() = 0;

  /// After a failure: what the library knows of the ranks that left the job, as a suffix of the
  /// message ("; gone from the job (...): rank 2"), or "".
  virtual std::string describe_gone_ranks() = 0;
};

/// Joins the group on Gloo's TCP transport, through the TCP or file store of `options`.
std::unique_ptr<Backend> make_gloo_backend(const ProcessGroupOptions& options);

/// Joins the group on MPI: the processes that `mpirun` started, MPI_COMM_WORLD. Initialises MPI
/// (MPI_THREAD_MULTIPLE) on first use and finalizes it at exit.
std::unique_ptr<Backend> make_mpi_backend(const ProcessGroupOptions& options);

}  // namespace janus::dist

// Collectives across the processes of a group, as engine operations: each call checks its
// arguments, pushes one operation on the comm lane of the array's device and returns at once.
// Layer: dist.
//
//   dist::allreduce(pg, g);      // g becomes the sum of every rank's g
//   g.wait_to_read();            // or any later operation on g: ordered by g's var
//
// Ordering: every collective of a group also writes the group's sequence var, so the
// collectives of one process run one at a time, in the order they were called, whatever the
// order in which their inputs became ready. Every rank must call the same collectives in the
// same order (as with MPI, NCCL and torch.distributed); on Gloo each carries a tag from that
// order, so a mismatch fails rather than mixing data.
//
// Errors: a peer that died (its connections closed) or that does not take part within the
// group's timeout makes the collective fail with a DistError naming the operation, this rank
// and, where known, the ranks that have gone or did not take part. It surfaces at the next wait
// on the array (or pg.wait(), or wait_all()). A group whose collective failed stays failed:
// later collectives on it fail with the same error, since the library's connections (Gloo) or
// pending operations (MPI) are then in an unknown state. (On MPI, a rank that dies ends the
// whole job through mpirun.)
#pragma once

#include "janus/core/ndarray.h"
#include "janus/dist/process_group.h"

namespace janus::dist {

/// array = the sum over ranks of array, in place (the library's ring allreduce). float32, float64,
/// int32, int64 and uint8; same shape and dtype on every rank.
void allreduce(ProcessGroup& pg, const NDArray& array);

/// array = root's array, on every rank.
void broadcast(ProcessGroup& pg, const NDArray& array, int root);

/// The arrays of every rank stacked along a new axis 0: shape [size, ...in.shape], row r from
/// rank r. Any dtype; same shape and dtype on every rank.
NDArray allgather(ProcessGroup& pg, const NDArray& in);

/// Returns at once; the barrier's operation finishes when every rank has reached it. Wait for
/// it with pg.wait().
void barrier(ProcessGroup& pg);

}  // namespace janus::dist

// Reductions across the devices of one process, made of engine operations (copy_into on copy
// lanes, add_into on compute lanes) ordered by the arrays' vars: each call pushes and returns.
// The KVStore's `device` and `local` stores, and the dist layer's hierarchical allreduce, are
// built on these. Layer: parallel.
#pragma once

#include <span>

#include "janus/core/ndarray.h"

namespace janus::parallel {

/// True when `a` and `b` view the same elements (one storage, offset, shape and dtype): an
/// output that is its input needs no copy.
inline bool same_view(const NDArray& a, const NDArray& b) {
  return a.storage() == b.storage() && a.offset_bytes() == b.offset_bytes() &&
         a.shape() == b.shape() && a.dtype() == b.dtype();
}

/// Sums `arrays` (one per device, devices distinct and peers of each other, one shape and
/// dtype) in place: every array ends holding the sum. The seed's "ring synchronization": the
/// flattened arrays are cut into one chunk per device; in N-1 reduce-scatter steps around the
/// ring, device i+1 adds its chunk to the partial sum that device i passes on (peer_add, which
/// reads it in place: no staging copy), so that each device ends with one chunk fully summed;
/// then every device copies the N summed chunks into its array (all-gather). Each device adds
/// (N-1)/N of the array and writes all of it once, and all devices work in every step. Chunk c
/// is summed in the fixed order c, c+1, ..., so the result is deterministic and every array
/// bitwise equal (the order differs per chunk: sums agree with a one-device sum to rounding).
/// Arrays smaller than kRingMinElements per device are reduced on the first device and copied
/// back instead (fewer, larger operations).
void ring_allreduce(std::span<const NDArray> arrays);

/// dst = the sum of `values` (one per device, devices distinct and peers of each other, one
/// shape and dtype; dst of that shape and dtype on any device, sharing no memory with them):
/// the reduce-scatter of ring_allreduce, then each summed chunk copied into its place in dst,
/// so every device adds and nothing is copied to one device first. What a push to the `device`
/// store does: it reads each value once, where reduce_into would copy N-1 of them to dst's
/// device and sum them there on one core. Below kRingMinElements per device, reduce_into.
void ring_reduce_into(const NDArray& dst, std::span<const NDArray> values);

/// Below this many elements per device, ring_allreduce reduces on one device instead.
inline constexpr int64_t kRingMinElements = 4096;

/// dst = values[0] + values[1] + ... in that order, on dst's device: values on other devices
/// are first copied there on its copy lane. `dst` may be values[0] itself (summed in place);
/// any other aliasing of dst is a ValueError.
void reduce_into(const NDArray& dst, std::span<const NDArray> values);

/// Copies `src` into every array of `outs` (on their devices' copy lanes); an out that is src
/// itself is skipped.
void broadcast_into(const NDArray& src, std::span<const NDArray> outs);

}  // namespace janus::parallel

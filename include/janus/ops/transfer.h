// Transfers and reductions into existing arrays: the steps of which collectives (the KVStore's
// reductions, later the dist layer's) are made. Each is one engine operation that writes its
// destination in place, so that a ring of them over several devices is ordered by the arrays'
// vars alone. Layer: ops.
#pragma once

#include <span>

#include "janus/core/ndarray.h"

namespace janus {

/// dst = src, elementwise, on the copy lane of dst's device; src may live on another device.
/// Same shape and dtype required (ShapeError / TypeError naming both).
void copy_into(const NDArray& dst, const NDArray& src);

/// Every element of dst set to `value` (converted to dst's dtype), in place, on dst's device.
void fill_into(const NDArray& dst, double value);

/// dst += src, elementwise, on dst's device (compute lane); both on one device, same shape and
/// dtype.
void add_into(const NDArray& dst, const NDArray& src);

/// dst's elements (read flat) = the elements of parts[0], then parts[1], ..., on the compute
/// lane of dst's device, the parts on dst's device or its peers (DeviceError otherwise). One
/// dtype; the parts' sizes must add up to dst's (ShapeError); a part sharing dst's memory is a
/// ValueError. A ring's all-gather into one array as one operation.
void concat_into(const NDArray& dst, std::span<const NDArray> parts);

/// a + b, a new array on a's device (compute lane), reading b where it lives: b's device must
/// be a peer of a's (peer_access; DeviceError otherwise). Same shape and dtype.
NDArray peer_add(const NDArray& a, const NDArray& b);

}  // namespace janus

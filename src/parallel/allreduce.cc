// Ring allreduce, reduce and broadcast across the devices of one process.
#include "janus/parallel/allreduce.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <utility>
#include <vector>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/ops/ops.h"
#include "janus/ops/transfer.h"

namespace janus::parallel {
namespace {

// Every array like the first: same shape and dtype; `distinct`: on distinct devices.
void check_alike(std::string_view what, std::span<const NDArray> arrays, bool distinct) {
  JANUS_CHECK(!arrays.empty(), ValueError, "{}: no arrays given", what);
  for (size_t i = 0; i < arrays.size(); ++i) {
    JANUS_CHECK(arrays[i].defined(), ValueError, "{}: array {} is undefined", what, i);
    JANUS_CHECK(arrays[i].shape() == arrays[0].shape(), ShapeError,
                "{}: array {} has shape {}, but array 0 has shape {}", what, i, arrays[i].shape(),
                arrays[0].shape());
    JANUS_CHECK(arrays[i].dtype() == arrays[0].dtype(), TypeError,
                "{}: array {} is {}, but array 0 is {}", what, i, arrays[i].dtype(),
                arrays[0].dtype());
    for (size_t j = 0; distinct && j < i; ++j) {
      JANUS_CHECK(arrays[j].device() != arrays[i].device(), ValueError,
                  "{}: arrays {} and {} are both on {}, expected one array per device", what, j, i,
                  arrays[i].device());
    }
  }
}

// The elements [begin, end) of `a` flattened: a view.
NDArray chunk(const NDArray& a, int64_t begin, int64_t end) {
  return a.reshape(Shape{a.size()}).slice(begin, end);
}

void check_peers(std::string_view what, std::span<const NDArray> arrays) {
  for (const NDArray& a : arrays) {
    for (const NDArray& b : arrays) {
      JANUS_CHECK(peer_access(a.device(), b.device()), NotImplementedError,
                  "{}: {} cannot read the memory of {}; devices without peer access need staged "
                  "copies, which Janus does not have yet",
                  what, a.device(), b.device());
    }
  }
}

// Chunk c of n of `size` elements: [begin, end).
std::pair<int64_t, int64_t> chunk_bounds(int64_t size, int64_t n, int64_t c) {
  return {size * c / n, size * (c + 1) / n};
}

// The reduce-scatter around the ring: returns, for each chunk c, its sum over `arrays`, a new
// array on device c - 1 (mod n). At step s, device i + 1 adds chunk c = (i - s) mod n of its
// own array to the partial sum of that chunk that device i holds, reading it in place (peer
// access), into a new partial of its own. Nothing writes the arrays, so no step waits for
// another device's step but through the partials it reads.
std::vector<NDArray> reduce_scatter(std::span<const NDArray> arrays) {
  const int64_t n = static_cast<int64_t>(arrays.size());
  const int64_t size = arrays[0].size();
  auto at = [&](int64_t i) -> const NDArray& { return arrays[static_cast<size_t>(i % n)]; };
  std::vector<NDArray> partial(static_cast<size_t>(n));
  for (int64_t s = 0; s < n - 1; ++s) {
    std::vector<NDArray> next(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const int64_t c = (i - s + n) % n;
      const auto [b, e] = chunk_bounds(size, n, c);
      const NDArray from = s == 0 ? chunk(at(i), b, e) : partial[static_cast<size_t>(c)];
      next[static_cast<size_t>(c)] = peer_add(chunk(at(i + 1), b, e), from);
    }
    partial = std::move(next);
  }
  return partial;
}

}  // namespace

void reduce_into(const NDArray& dst, std::span<const NDArray> values) {
  check_alike("reduce", values, false);
  JANUS_CHECK(dst.shape() == values[0].shape() && dst.dtype() == values[0].dtype(), ShapeError,
              "reduce: the destination is {} {}, the values {} {}", dst.shape(), dst.dtype(),
              values[0].shape(), values[0].dtype());
  for (size_t i = 1; i < values.size(); ++i) {
    JANUS_CHECK(values[i].storage() != dst.storage(), ValueError,
                "reduce: value {} shares the destination's memory; only value 0 may", i);
  }
  autograd::PauseScope pause;
  if (!same_view(dst, values[0])) copy_into(dst, values[0]);
  for (size_t i = 1; i < values.size(); ++i) {
    const NDArray& v = values[i];
    add_into(dst, v.device() == dst.device() ? v : copyto(v, dst.device()));
  }
}

void broadcast_into(const NDArray& src, std::span<const NDArray> outs) {
  autograd::PauseScope pause;
  for (const NDArray& out : outs) {
    if (!same_view(out, src)) copy_into(out, src);
  }
}

void ring_allreduce(std::span<const NDArray> arrays) {
  check_alike("ring_allreduce", arrays, true);
  const int64_t n = static_cast<int64_t>(arrays.size());
  if (n == 1) return;
  check_peers("ring_allreduce", arrays);
  if (arrays[0].size() < kRingMinElements * n) {
    reduce_into(arrays[0], arrays);
    broadcast_into(arrays[0], arrays.subspan(1));
    return;
  }
  autograd::PauseScope pause;
  const std::vector<NDArray> partial = reduce_scatter(arrays);
  // All-gather: chunk c's sum now lives on device c - 1; every device writes the N sums, in
  // chunk order, into its own array: one operation on its compute lane, reading its peers'
  // partials in place.
  for (const NDArray& a : arrays) concat_into(a, partial);
}

void ring_reduce_into(const NDArray& dst, std::span<const NDArray> values) {
  check_alike("ring_reduce", values, true);
  check_peers("ring_reduce", values);
  JANUS_CHECK(dst.shape() == values[0].shape() && dst.dtype() == values[0].dtype(), ShapeError,
              "ring_reduce: the destination is {} {}, the values {} {}", dst.shape(), dst.dtype(),
              values[0].shape(), values[0].dtype());
  for (size_t i = 0; i < values.size(); ++i) {
    JANUS_CHECK(values[i].storage() != dst.storage(), ValueError,
                "ring_reduce: value {} shares the destination's memory", i);
  }
  const int64_t n = static_cast<int64_t>(values.size());
  if (n == 1 || values[0].size() < kRingMinElements * n) {
    reduce_into(dst, values);
    return;
  }
  autograd::PauseScope pause;
  const std::vector<NDArray> partial = reduce_scatter(values);
  bool peers = true;
  for (const NDArray& p : partial) peers = peers && peer_access(dst.device(), p.device());
  if (peers) {
    concat_into(dst, partial);  // one operation on dst's device
    return;
  }
  const int64_t size = values[0].size();
  for (int64_t c = 0; c < n; ++c) {
    const auto [b, e] = chunk_bounds(size, n, c);
    copy_into(chunk(dst, b, e), partial[static_cast<size_t>(c)]);
  }
}

}  // namespace janus::parallel

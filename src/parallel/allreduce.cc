// Ring allreduce, reduce and broadcast across the devices of one process.
#include "janus/parallel/allreduce.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

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
  const int64_t size = arrays[0].size();
  if (size < kRingMinElements * n) {
    reduce_into(arrays[0], arrays);
    broadcast_into(arrays[0], arrays.subspan(1));
    return;
  }
  autograd::PauseScope pause;
  auto bounds = [&](int64_t c) {
    return std::pair<int64_t, int64_t>{size * c / n, size * (c + 1) / n};
  };
  auto at = [&](int64_t i) -> const NDArray& { return arrays[static_cast<size_t>(i % n)]; };
  // Reduce-scatter: at step s, device i sends chunk (i - s) mod n to device i + 1, which adds
  // it. After n - 1 steps device i holds the full sum of chunk (i + 1) mod n.
  // As below, all sends of a step are pushed before its additions.
  for (int64_t s = 0; s < n - 1; ++s) {
    std::vector<NDArray> received;
    for (int64_t i = 0; i < n; ++i) {
      const auto [b, e] = bounds((i - s + n) % n);
      received.push_back(copyto(chunk(at(i), b, e), at(i + 1).device()));
    }
    for (int64_t i = 0; i < n; ++i) {
      const auto [b, e] = bounds((i - s + n) % n);
      add_into(chunk(at(i + 1), b, e), received[static_cast<size_t>(i)]);
    }
  }
  // All-gather: at step s, device i passes the summed chunk (i + 1 - s) mod n to device i + 1.
  // A var guards a whole array, so a copy straight from one device's array into the next's
  // would wait for the copy into the first (a chain around the ring): every step first copies
  // out of all arrays, then into them.
  for (int64_t s = 0; s < n - 1; ++s) {
    std::vector<NDArray> received;
    for (int64_t i = 0; i < n; ++i) {
      const auto [b, e] = bounds((i + 1 - s + n) % n);
      received.push_back(copyto(chunk(at(i), b, e), at(i + 1).device()));
    }
    for (int64_t i = 0; i < n; ++i) {
      const auto [b, e] = bounds((i + 1 - s + n) % n);
      copy_into(chunk(at(i + 1), b, e), received[static_cast<size_t>(i)]);
    }
  }
}

}  // namespace janus::parallel

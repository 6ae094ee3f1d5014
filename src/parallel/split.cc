// split_and_load: one slice of a batch per device.
#include "janus/parallel/split.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/base/split_ranges.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"
#include "janus/ops/transfer.h"

namespace janus::parallel {

std::vector<NDArray> split_and_load(const NDArray& batch, const std::vector<Device>& devices,
                                    bool even_split) {
  check_devices(devices, "split_and_load");
  JANUS_CHECK(batch.defined(), ValueError, "split_and_load: the batch is undefined");
  JANUS_CHECK(batch.ndim() >= 1, ValueError,
              "split_and_load: the batch is a scalar (shape []), expected an axis 0 to split");
  std::vector<std::pair<int64_t, int64_t>> ranges;
  try {
    ranges = split_ranges(batch.shape()[0], static_cast<int64_t>(devices.size()), even_split);
  } catch (Error& e) {
    e.add_context(fmt::format("split_and_load: batch of shape {} across [{}]", batch.shape(),
                              fmt::join(devices, ", ")));
    throw;
  }
  // Slices are data, not part of a model: no autograd history.
  autograd::PauseScope pause;
  std::vector<NDArray> out;
  for (size_t i = 0; i < ranges.size(); ++i) {
    const NDArray rows = batch.slice(ranges[i].first, ranges[i].second);
    if (rows.device() == devices[i]) {
      out.push_back(rows);
    } else if (peer_access(devices[i], rows.device())) {
      // Memory the device reads in place (logical CPU devices share the host's): one copy on
      // the device's compute lane, in line with its work. The copy lane's worker would be a
      // third thread for cores that the devices' compute workers own, a hand-off there and
      // back per slice, and its spin for more work after each copy takes a core from them.
      NDArray slice = empty(rows.shape(), rows.dtype(), devices[i]);
      concat_into(slice, std::span<const NDArray>(&rows, 1));
      out.push_back(std::move(slice));
    } else {
      out.push_back(copyto(rows, devices[i]));
    }
  }
  return out;
}

}  // namespace janus::parallel

// The collectives as engine operations on the comm lane: each kernel calls its backend's
// blocking collective (Gloo's or MPI's, bounded by the group's timeout) and turns a failure into
// a DistError.
#include "janus/dist/collectives.h"

#include <chrono>
#include <cstring>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/engine/engine.h"

#include "process_group_impl.h"

namespace janus::dist {
namespace {

using Clock = std::chrono::steady_clock;
using ImplPtr = std::shared_ptr<ProcessGroup::Impl>;

void check_array(const NDArray& a, std::string_view what) {
  JANUS_CHECK(a.defined(), ValueError, "dist: {}: the array is undefined", what);
  JANUS_CHECK(!a.is_placeholder(), TraceError,
              "dist: {}: called on a symbolic array while a hybridized block is traced; "
              "collectives run outside hybridized blocks",
              what);
}

// Runs `collective` (a backend call) for the operation `what`, naming it, this rank and the
// ranks that have gone when it fails. `keep` (the arrays it reads or writes) stays allocated for
// the group's life after a failure: the library may still write into it.
template <typename F>
void run_collective(ProcessGroup::Impl& im, const std::string& what,
                    std::initializer_list<NDArray> keep, F&& collective) {
  const auto start = Clock::now();
  try {
    collective(*im.backend);
  } catch (const std::exception& e) {
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    {
      const std::lock_guard lock(im.abandoned_mu);
      im.abandoned.insert(im.abandoned.end(), keep.begin(), keep.end());
    }
    JANUS_THROW(DistError, "dist: {} failed on rank {} of {} after {:.1f} s (timeout {} ms): {}{}",
                what, im.rank, im.size, seconds, im.timeout.count(), e.what(),
                im.describe_gone_ranks());
  }
}

bool summable(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kUInt8:
      return true;
    default:
      return false;
  }
}

void push_comm(Kernel kernel, std::span<Var* const> reads, std::span<Var* const> writes,
               Device device, const char* name, const NDArray* a) {
  OpDetail detail;
  if (a != nullptr && op_listener_installed()) {
    detail.shapes = fmt::format("{}", a->shape());
    detail.bytes = static_cast<int64_t>(a->nbytes());
  }
  engine().push(std::move(kernel), reads, writes, device, Lane::kComm, 0, name, std::move(detail));
}

}  // namespace

void allreduce(ProcessGroup& pg, const NDArray& array) {
  check_array(array, "allreduce");
  JANUS_CHECK(summable(array.dtype()), TypeError,
              "dist: allreduce: {} is not supported; expected float32, float64, int32, int64 or "
              "uint8",
              dtype_name(array.dtype()));
  ImplPtr im = pg.impl();
  const uint32_t tag = im->next_tag++;
  auto what = fmt::format("allreduce #{} of {} {}", tag, array.shape(), dtype_name(array.dtype()));
  Var* writes[] = {array.var(), im->sequence};
  push_comm(
      [im, what = std::move(what), tag, array](const RunContext&) {
        const auto n = static_cast<size_t>(array.size());
        if (im->size == 1 || n == 0) return;
        run_collective(*im, what, {array}, [&](Backend& b) {
          b.allreduce_sum(array.raw_data(), n, array.dtype(), tag);
        });
      },
      {}, writes, array.device(), "dist.allreduce", &array);
}

void broadcast(ProcessGroup& pg, const NDArray& array, int root) {
  check_array(array, "broadcast");
  ImplPtr im = pg.impl();
  JANUS_CHECK(root >= 0 && root < im->size, ValueError,
              "dist: broadcast: root {} is not a rank of this group of {} processes", root,
              im->size);
  const uint32_t tag = im->next_tag++;
  auto what = fmt::format("broadcast #{} of {} {} from rank {}", tag, array.shape(),
                          dtype_name(array.dtype()), root);
  Var* writes[] = {array.var(), im->sequence};
  push_comm(
      [im, what = std::move(what), tag, root, array](const RunContext&) {
        if (im->size == 1 || array.nbytes() == 0) return;
        run_collective(*im, what, {array}, [&](Backend& b) {
          b.broadcast(array.raw_data(), array.nbytes(), root, tag);
        });
      },
      {}, writes, array.device(), "dist.broadcast", &array);
}

NDArray allgather(ProcessGroup& pg, const NDArray& in) {
  check_array(in, "allgather");
  ImplPtr im = pg.impl();
  std::vector<int64_t> dims{im->size};
  for (int i = 0; i < in.ndim(); ++i) dims.push_back(in.shape()[i]);
  NDArray out = empty(Shape(dims), in.dtype(), in.device());
  const uint32_t tag = im->next_tag++;
  auto what = fmt::format("allgather #{} of {} {}", tag, in.shape(), dtype_name(in.dtype()));
  Var* reads[] = {in.var()};
  Var* writes[] = {out.var(), im->sequence};
  push_comm(
      [im, what = std::move(what), tag, in, out](const RunContext&) {
        const size_t bytes = in.nbytes();
        if (bytes == 0) return;
        if (im->size == 1) {
          std::memcpy(out.raw_data(), in.raw_data(), bytes);
          return;
        }
        run_collective(*im, what, {in, out},
                       [&](Backend& b) { b.allgather(in.raw_data(), out.raw_data(), bytes, tag); });
      },
      reads, writes, in.device(), "dist.allgather", &in);
  return out;
}

void barrier(ProcessGroup& pg) {
  ImplPtr im = pg.impl();
  const uint32_t tag = im->next_tag++;
  Var* writes[] = {im->sequence};
  push_comm(
      [im, what = fmt::format("barrier #{}", tag), tag](const RunContext&) {
        if (im->size == 1) return;
        run_collective(*im, what, {}, [&](Backend& b) { b.barrier(tag); });
      },
      {}, writes, cpu(0), "dist.barrier", nullptr);
}

}  // namespace janus::dist

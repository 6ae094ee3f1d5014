// The collectives as engine operations on the comm lane: each kernel calls Gloo's blocking
// collective with the group's timeout and turns Gloo's exceptions into a DistError.
#include "janus/dist/collectives.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>

#include <chrono>

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

// Runs `collective` (a Gloo call) for the operation `what`, naming it, this rank and the ranks
// that have gone when it fails.
template <typename F>
void run_collective(ProcessGroup::Impl& im, const std::string& what, F&& collective) {
  const auto start = Clock::now();
  try {
    collective();
  } catch (const std::exception& e) {
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    JANUS_THROW(DistError, "dist: {} failed on rank {} of {} after {:.1f} s (timeout {} ms): {}{}",
                what, im.rank, im.size, seconds, im.timeout.count(), e.what(),
                im.describe_gone_ranks());
  }
}

template <typename Options>
void set_common(Options& opts, ProcessGroup::Impl& im, uint32_t tag) {
  opts.setTag(tag);
  opts.setTimeout(im.timeout);
}

template <typename T>
void allreduce_sum(ProcessGroup::Impl& im, void* data, size_t n, uint32_t tag) {
  gloo::AllreduceOptions opts(im.context);
  opts.setOutput(static_cast<T*>(data), n);  // in place: Gloo reads the outputs when no input
  opts.setReduceFunction(
      static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<T>));
  opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
  set_common(opts, im, tag);
  gloo::allreduce(opts);
}

using AllreduceFn = void (*)(ProcessGroup::Impl&, void*, size_t, uint32_t);

AllreduceFn allreduce_function(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return &allreduce_sum<float>;
    case DType::kFloat64:
      return &allreduce_sum<double>;
    case DType::kInt32:
      return &allreduce_sum<int32_t>;
    case DType::kInt64:
      return &allreduce_sum<int64_t>;
    case DType::kUInt8:
      return &allreduce_sum<uint8_t>;
    default:
      return nullptr;
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
  const AllreduceFn fn = allreduce_function(array.dtype());
  JANUS_CHECK(fn != nullptr, TypeError,
              "dist: allreduce: {} is not supported; expected float32, float64, int32, int64 or "
              "uint8",
              dtype_name(array.dtype()));
  ImplPtr im = pg.impl();
  const uint32_t tag = im->next_tag++;
  auto what = fmt::format("allreduce #{} of {} {}", tag, array.shape(), dtype_name(array.dtype()));
  Var* writes[] = {array.var(), im->sequence};
  push_comm(
      [im, what = std::move(what), tag, fn, data = array.raw_data(),
       n = static_cast<size_t>(array.size())](const RunContext&) {
        if (im->size == 1 || n == 0) return;
        run_collective(*im, what, [&] { fn(*im, data, n, tag); });
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
      [im, what = std::move(what), tag, root, data = array.raw_data(),
       bytes = array.nbytes()](const RunContext&) {
        if (im->size == 1 || bytes == 0) return;
        run_collective(*im, what, [&] {
          gloo::BroadcastOptions opts(im->context);
          opts.setOutput(static_cast<char*>(data), bytes);
          opts.setRoot(root);
          set_common(opts, *im, tag);
          gloo::broadcast(opts);
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
      [im, what = std::move(what), tag, src = in.raw_data(), dst = out.raw_data(),
       bytes = in.nbytes()](const RunContext&) {
        if (bytes == 0) return;
        if (im->size == 1) {
          std::memcpy(dst, src, bytes);
          return;
        }
        run_collective(*im, what, [&] {
          gloo::AllgatherOptions opts(im->context);
          opts.setInput(static_cast<char*>(src), bytes);
          opts.setOutput(static_cast<char*>(dst), bytes * static_cast<size_t>(im->size));
          set_common(opts, *im, tag);
          gloo::allgather(opts);
        });
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
        run_collective(*im, what, [&] {
          gloo::BarrierOptions opts(im->context);
          set_common(opts, *im, tag);
          gloo::barrier(opts);
        });
      },
      {}, writes, cpu(0), "dist.barrier", nullptr);
}

}  // namespace janus::dist

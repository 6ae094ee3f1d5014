// NaiveEngine: runs every operation on the pushing thread before push returns. For debugging
// (JANUS_ENGINE=naive): a failing kernel throws on the caller's stack, so a debugger's
// `catch throw` stops at the operator call that caused it. Errors still flow through vars
// exactly as in the threaded engine, so programs behave the same under both.
#include <map>
#include <mutex>
#include <tuple>

#include "janus/base/error.h"
#include "janus/base/omp_threads.h"

#include "engine_impl.h"
#include "opr_block.h"

namespace janus {
namespace {

class NaiveEngine final : public Engine {
 public:
  explicit NaiveEngine(const EngineOptions& options) : options_(options) {}

  EngineKind kind() const override { return EngineKind::kNaive; }

  Var* new_var() override { return new Var(); }

  void push(Kernel kernel, std::span<Var* const> reads, std::span<Var* const> writes, Device device,
            Lane lane, int priority, std::string_view name, OpDetail detail) override {
    check_device(device, "engine: push");
    // Recursive: a kernel may push further operations; they run at once, nested.
    std::lock_guard lock(mu_);
    OprBlock op;
    op.fn = std::move(kernel);
    op.name = name;
    op.detail = std::move(detail);
    op.device = device;
    op.lane = lane;
    set_dependencies(&op, reads, writes);
    ++pushed_;
    const RunContext ctx{device, lane, kernel_threads(device, lane)};
    {
      // The OpenMP count that a worker of the lane holds (CpuStream): oneDNN builds a primitive
      // for it, and the primitive cache keys the primitive by it.
      const ScopedOmpThreads threads(ctx.num_threads);
      run_operation(&op, ctx, errors_, /*hint=*/"");  // already synchronous
    }
    OprList unused;
    for (Var* v : op.reads) {
      v->append_read(&op);
      v->complete_read(unused);
    }
    for (Var* v : op.writes) {
      v->append_write(&op);
      v->complete_write(op.error, unused);
    }
  }

  void delete_var(Var* var, ReleaseFn on_release) override {
    if (on_release) on_release();
    delete var;
  }

  void wait_for_var(Var* var) override { rethrow_if_error(var->error()); }

  void wait_all() override { rethrow_if_error(errors_.take_unreported()); }

  // Every push ran to completion before it returned: nothing is pending, no slice to poll after.
  void wait_for_var(Var* var, std::chrono::milliseconds, const WaitPoll&) override {
    wait_for_var(var);
  }
  void wait_all(std::chrono::milliseconds, const WaitPoll&) override { wait_all(); }

  EngineStats stats() const override {
    return EngineStats{pushed_.load(), 0, options_.max_in_flight};
  }

  int kernel_threads(Device device) override {
    check_device(device, "engine: kernel_threads");
    return kernel_threads(device, Lane::kCompute);
  }

 private:
  // What the threaded engine's workers of the lane would get (for a CPU: the device's share
  // of cores, capped by OMP_NUM_THREADS when the user set it). Kernels run on the pushing
  // thread, with no stream. Decided once per device and lane, at first use, as a threaded
  // worker's count is decided when it starts: the cap reads the calling thread's OpenMP count,
  // which a pushing thread inside a ScopedOmpThreads has changed.
  int kernel_threads(Device device, Lane lane) const {
    const std::lock_guard lock(threads_mu_);
    const auto key = std::tuple{static_cast<int>(device.type), device.id, static_cast<int>(lane)};
    const auto it = threads_.find(key);
    if (it != threads_.end()) return it->second;
    const int threads = device_backend(device.type)
                            ->lane_workers(device, lane, requested_workers(options_, lane))
                            .kernel_threads;
    threads_.emplace(key, threads);
    return threads;
  }

  EngineOptions options_;
  mutable std::mutex threads_mu_;
  mutable std::map<std::tuple<int, int, int>, int> threads_;  // by (device type, id, lane)
  std::recursive_mutex mu_;
  std::atomic<int64_t> pushed_{0};
  ErrorLog errors_;
};

}  // namespace

std::unique_ptr<Engine> make_naive_engine(const EngineOptions& options) {
  return std::make_unique<NaiveEngine>(options);
}

}  // namespace janus

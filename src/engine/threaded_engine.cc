// ThreadedEngine: worker threads per device and lane, dispatching operations as their vars
// grant them. The default engine.
#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <queue>
#include <string>
#include <thread>
#include <vector>

#include "janus/base/error.h"
#include "janus/core/device_backend.h"
#include "janus/engine/gate.h"
#include "janus/engine/wait_poll.h"

#include "engine_impl.h"
#include "opr_block.h"

namespace janus {
namespace {

thread_local bool tls_is_worker = false;

struct DeferredRelease {
  Var* var;
  ReleaseFn on_release;
};
// While a worker drops the captures of the kernel it ran (ThreadedEngine::execute): that
// operation, and the vars released meanwhile that no other operation uses, freed once it
// completes. One thread_local, so that a worker looks it up once per operation.
struct Dropping {
  const OprBlock* op = nullptr;
  std::vector<DeferredRelease> released;
};
thread_local Dropping tls_dropping;

// Ready operations of one (device, lane), served highest priority first, then in push order.
// Its workers are set up by the device type's backend, each with its own stream.
//
// A dispatch pushes the op on `incoming_`, a lock-free stack (one compare-and-swap); a worker
// takes the whole stack at once (one exchange) into the priority queue, which only workers
// touch, under `mu_`. So a pusher writes one cache line that a worker also writes, not the
// mutex, the queue and its size, and a worker that fell behind takes a batch of operations per
// exchange. The order is unchanged: the priority queue orders by (priority, push order), and a
// worker moves every incoming op into it before it picks one.
class WorkerPool {
 public:
  using Runner = std::function<void(OprBlock*, const RunContext&)>;

  WorkerPool(Device device, Lane lane, DeviceBackend& backend, const LaneWorkers& plan,
             Runner runner)
      : runner_(std::move(runner)), backend_(backend), plan_(plan) {
    ctx_ = RunContext{device, lane, plan.kernel_threads};
    for (int i = 0; i < plan.workers; ++i) {
      threads_.emplace_back([this] { loop(); });
    }
  }

  ~WorkerPool() { stop(); }

  const RunContext& context() const { return ctx_; }

  void enqueue(OprBlock* op) {
    // seq_cst, with the load of sleeping_ after it: pairs with a worker's increment of
    // sleeping_ before it tests incoming_ (sleep()), so either the worker sees the op or this
    // thread sees the sleeper and wakes it.
    OprBlock* head = incoming_.load(std::memory_order_relaxed);
    do {
      op->next_ready = head;
    } while (!incoming_.compare_exchange_weak(head, op, std::memory_order_seq_cst,
                                              std::memory_order_relaxed));
    if (sleeping_.load() > 0) wake_one();
  }

  // Workers finish the queue before they exit: every pushed operation completes.
  void stop() {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) {
      if (t.get_id() == std::this_thread::get_id()) {
        t.detach();  // stop() called from one of our own kernels (e.g. exit()): cannot join
      } else {
        t.join();
      }
    }
  }

 private:
  struct Later {
    bool operator()(const OprBlock* a, const OprBlock* b) const {
      if (a->priority != b->priority) return a->priority < b->priority;
      return a->seq > b->seq;
    }
  };

  // Taking the lock orders the notification after a sleeper's test of incoming_ (made under
  // the lock), so the sleeper cannot miss it.
  void wake_one() {
    { std::lock_guard lock(mu_); }
    cv_.notify_one();
  }

  // Moves every incoming op into the priority queue. Caller holds mu_.
  void take_incoming() {
    // seq_cst load: a sleeper's test (see enqueue). The exchange acquires the pushers' writes
    // to the ops and what they published before.
    if (incoming_.load() == nullptr) return;
    OprBlock* op = incoming_.exchange(nullptr);
    for (; op != nullptr; op = op->next_ready) queue_.push(op);
    queued_.store(static_cast<int>(queue_.size()), std::memory_order_relaxed);
  }

  void loop() {
    mark_engine_worker_thread();
    // The backend prepares this thread (a CPU pins it to its device's cores and sizes its
    // OpenMP team) and gives it the stream its kernels run on, until the worker exits.
    const std::unique_ptr<Stream> stream = backend_.start_worker(ctx_.device, ctx_.lane, plan_);
    RunContext ctx = ctx_;
    ctx.stream = stream.get();
    for (;;) {
      spin_for_work();
      OprBlock* op = nullptr;
      bool more;
      {
        std::unique_lock lock(mu_);
        take_incoming();
        if (queue_.empty() && !stopping_) {
          sleeping_.fetch_add(1);  // seq_cst: see enqueue
          cv_.wait(lock, [&] {
            take_incoming();
            return stopping_ || !queue_.empty();
          });
          sleeping_.fetch_sub(1);
        }
        if (queue_.empty()) return;  // stopping, and nothing left to run
        op = queue_.top();
        queue_.pop();
        queued_.store(static_cast<int>(queue_.size()), std::memory_order_relaxed);
        more = !queue_.empty();
      }
      // A batch taken from incoming_ may hold work for a sleeping worker of this pool.
      if (more && sleeping_.load(std::memory_order_relaxed) > 0) wake_one();
      runner_(op, ctx);
    }
  }

  bool has_work() const {
    return incoming_.load(std::memory_order_relaxed) != nullptr ||
           queued_.load(std::memory_order_relaxed) > 0;
  }

  // Before sleeping, look for work a little while: in a chain of small operations the next
  // one is usually pushed within microseconds, and a futex sleep and wake-up costs more than
  // the operation. Bounded, so an idle worker does not hold a core.
  void spin_for_work() const {
    constexpr auto kSpin = std::chrono::microseconds(50);
    if (has_work()) return;
    const auto until = std::chrono::steady_clock::now() + kSpin;
    do {
      for (int i = 0; i < 64; ++i) {
        if (has_work()) return;
        __builtin_ia32_pause();
      }
    } while (std::chrono::steady_clock::now() < until);
  }

  Runner runner_;
  DeviceBackend& backend_;
  const LaneWorkers plan_;
  RunContext ctx_;
  // Written by every dispatch: on a line of its own.
  alignas(64) std::atomic<OprBlock*> incoming_{nullptr};
  // Read by every dispatch, written only when a worker goes to sleep or wakes up.
  alignas(64) std::atomic<int> sleeping_{0};  // workers waiting on cv_
  // The rest is the workers'.
  alignas(64) std::mutex mu_;
  std::condition_variable cv_;
  std::priority_queue<OprBlock*, std::vector<OprBlock*>, Later> queue_;  // guarded by mu_
  bool stopping_ = false;                                                // guarded by mu_
  std::atomic<int> queued_{0};  // queue_.size(), readable without the lock (a hint)
  std::vector<std::thread> threads_;
};

// One gated operation (Engine::push_gated), shared by its handle, its kernel and the engine's
// list of unopened gates.
struct GateState {
  std::atomic<bool> settled{false};  // opened or scheduled to open: no longer the owner's
  std::atomic<bool> opened{false};
  OprBlock* op = nullptr;  // valid until opened: the operation cannot run before
  // Set by the first open, before it releases the operation; read by the kernel, which runs
  // after that release (the acq_rel decrement of op->wait orders the two).
  std::exception_ptr error;
  std::thread::id owner;  // the pushing thread, the one expected to open it
  std::string name;
  std::string abandon_message;
};

class ThreadedEngine final : public Engine {
 public:
  explicit ThreadedEngine(const EngineOptions& options) : options_(options) {
    JANUS_CHECK(options.cpu_compute_workers >= 1 && options.copy_workers >= 1, ValueError,
                "engine: worker counts must be >= 1, got {} compute and {} copy workers",
                options.cpu_compute_workers, options.copy_workers);
    JANUS_CHECK(options.max_in_flight >= 1, ValueError,
                "engine: max_in_flight must be >= 1, got {}", options.max_in_flight);
    for (auto& p : pools_) p.store(nullptr, std::memory_order_relaxed);
  }

  ~ThreadedEngine() override {
    abandon_gates(/*only_this_thread=*/false, "the engine's shutdown");
    wait_until_in_flight_below(1);
    std::lock_guard lock(pools_mu_);
    for (auto& p : pools_) {
      delete p.load(std::memory_order_acquire);
      p.store(nullptr, std::memory_order_relaxed);
    }
  }

  EngineKind kind() const override { return EngineKind::kThreaded; }

  Var* new_var() override { return new Var(); }

  void push(Kernel kernel, std::span<Var* const> reads, std::span<Var* const> writes, Device device,
            Lane lane, int priority, std::string_view name, OpDetail detail) override {
    check_device(device, "engine: push");
    auto* op = new OprBlock();
    op->fn = std::move(kernel);
    op->name = name;
    op->detail = std::move(detail);
    op->device = device;
    op->lane = lane;
    op->priority = priority;
    try {
      set_dependencies(op, reads, writes);
      throttle();  // a thread's wait poll may end it (ScopedWaitPoll): then nothing is pushed
    } catch (...) {
      delete op;
      throw;
    }
    submit(op);
  }

  std::shared_ptr<Gate> push_gated(Kernel kernel, std::span<Var* const> reads,
                                   std::span<Var* const> writes, Device device, Lane lane,
                                   std::string_view name, std::string abandon_message);

  // The first open of `s` lets its operation run (or fail with `error`).
  void open_gate(GateState& s, std::exception_ptr error) {
    settle_gate(s);
    if (s.opened.exchange(true, std::memory_order_acq_rel)) return;
    s.error = std::move(error);
    OprBlock* op = s.op;
    if (op->wait.fetch_sub(1, std::memory_order_acq_rel) == 1) dispatch(op);
  }

  // Marks `s` as no longer its owner's to open; false when it was already.
  bool settle_gate(GateState& s) {
    if (s.settled.exchange(true, std::memory_order_acq_rel)) return false;
    unopened_gates_.fetch_sub(1);
    return true;
  }

  void open_gate_after(const std::shared_ptr<GateState>& s, std::span<Var* const> vars) {
    if (!settle_gate(*s)) return;
    auto* op = new OprBlock();
    op->kind = OpKind::kOpenGate;
    op->name = "open_gate";
    // The op's error is set in dispatch() from its vars, before this runs.
    op->fn = [this, s, op](const RunContext&) {
      open_gate(*s, op->error ? op->error->error : nullptr);
    };
    set_dependencies(op, vars, {});
    submit(op);
  }

  void delete_var(Var* var, ReleaseFn on_release) override {
    // Common case: nothing pending on the var, release it now without an operation.
    if (var->is_idle()) {
      if (on_release) on_release();
      delete var;
      return;
    }
    // An array that dies with the captures of the kernel now completing on this thread (its
    // last reference was one of them): nothing but that operation uses the var, and nothing
    // can be pushed on it any more, so it is released when that operation completes, without
    // queueing an operation behind it.
    Dropping& dropping = tls_dropping;
    if (dropping.op != nullptr && var->used_only_by(*dropping.op)) {
      dropping.released.push_back(DeferredRelease{var, std::move(on_release)});
      return;
    }
    auto* op = new OprBlock();
    op->kind = OpKind::kDelete;
    op->fn = [f = std::move(on_release)](const RunContext&) mutable {
      if (f) f();
    };
    op->name = "delete_var";
    op->writes.push_back(var);
    submit(op);
  }

  void wait_for_var(Var* var) override {
    if (const ScopedWaitPoll* p = ScopedWaitPoll::current()) {
      wait_for_var(var, p->slice(), p->poll());
      return;
    }
    wait_for_var(var, std::chrono::milliseconds::max(), {});
  }

  void wait_for_var(Var* var, std::chrono::milliseconds slice, const WaitPoll& poll) override {
    if (!var->is_readable()) {
      JANUS_CHECK(!tls_is_worker, EngineError,
                  "engine: a kernel waited on an array; kernels run on engine workers and must "
                  "not block (push the dependent work instead)");
      abandon_gates(/*only_this_thread=*/true, "wait on an array");
      struct WaitState {
        std::mutex mu;
        std::condition_variable cv;
        bool done = false;
      };
      auto state = std::make_shared<WaitState>();
      auto* op = new OprBlock();
      op->kind = OpKind::kWait;
      // Notified after the unlock: a waiter woken under the lock would find it held and sleep
      // again on it (with the worker and the waiter on one core, two more context switches per
      // wait). The op's reference keeps the state alive until it returns.
      op->fn = [state](const RunContext&) {
        {
          std::lock_guard lock(state->mu);
          state->done = true;
        }
        state->cv.notify_all();
      };
      op->name = "wait_for_var";
      op->reads.push_back(var);
      submit(op);
      // The op owns a reference to the state, so a wait that `poll` ends early leaves it alive.
      std::unique_lock lock(state->mu);
      while (!wait_slice(state->cv, lock, slice, [&] { return state->done; })) {
        lock.unlock();
        poll();
        lock.lock();
      }
    }
    rethrow_if_error(var->error());
  }

  void wait_all() override {
    if (const ScopedWaitPoll* p = ScopedWaitPoll::current()) {
      wait_all(p->slice(), p->poll());
      return;
    }
    wait_all(std::chrono::milliseconds::max(), {});
  }

  void wait_all(std::chrono::milliseconds slice, const WaitPoll& poll) override {
    JANUS_CHECK(!tls_is_worker, EngineError,
                "engine: wait_all called from a kernel; kernels run on engine workers and must not "
                "block");
    abandon_gates(/*only_this_thread=*/true, "wait_all");
    wait_until_in_flight_below(1, slice, poll);
    rethrow_if_error(errors_.take_unreported());
  }

  EngineStats stats() const override {
    return EngineStats{pushed_.load(std::memory_order_relaxed), in_flight(),
                       options_.max_in_flight};
  }

  int kernel_threads(Device device) override {
    return pool(device, Lane::kCompute).context().num_threads;
  }

 private:
  // One slice of a sliced wait: true once `done` holds. An unbounded slice waits for it.
  template <typename Done>
  static bool wait_slice(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                         std::chrono::milliseconds slice, Done done) {
    if (slice == std::chrono::milliseconds::max()) {
      cv.wait(lock, done);
      return true;
    }
    return cv.wait_for(lock, slice, done);
  }

  // Back-pressure: once the window is full, the frontend waits until half of it has drained,
  // then pushes a run of operations without waiting; a wake-up per completion (a futex call on
  // the worker, the critical path) would cost more than a small operation. Workers never wait
  // here, or a kernel that pushes could deadlock the engine.
  // The test reads `completed_seen_`, a count of completions that lags the true one, so that a
  // push reads no line that workers write: the count in flight it gives is never below the
  // true one, and only when that reaches the bound is the true count read.
  void throttle() {
    const int64_t pushed = pushed_.load(std::memory_order_relaxed);
    if (pushed - completed_seen_.load(std::memory_order_relaxed) < options_.max_in_flight)
        [[likely]]
      return;
    completed_seen_.store(completed_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    if (pushed - completed_seen_.load(std::memory_order_relaxed) < options_.max_in_flight) return;
    if (tls_is_worker || holds_gates()) return;
    if (const ScopedWaitPoll* p = ScopedWaitPoll::current()) {
      wait_until_in_flight_below(resume_below(), p->slice(), p->poll());
      return;
    }
    wait_until_in_flight_below(resume_below());
  }

  // Whether this thread pushed a gated operation that is still unopened. Back-pressure skips
  // such a thread: the operations behind its gate stay in flight until it opens the gate, and
  // they could be more than half the window.
  bool holds_gates() {
    if (unopened_gates_.load() == 0) return false;
    std::lock_guard lock(gates_mu_);
    const std::thread::id me = std::this_thread::get_id();
    return std::ranges::any_of(gates_, [&](const std::shared_ptr<GateState>& g) {
      return g->owner == me && !g->settled.load(std::memory_order_acquire);
    });
  }

  // Opens the unopened gates (of this thread, or all of them) with an EngineError: a wait on
  // the thread that was to open them would otherwise wait for itself.
  void abandon_gates(bool only_this_thread, std::string_view what) {
    if (unopened_gates_.load() == 0) return;
    std::vector<std::shared_ptr<GateState>> abandoned;
    {
      std::lock_guard lock(gates_mu_);
      const std::thread::id me = std::this_thread::get_id();
      std::erase_if(gates_, [&](const std::shared_ptr<GateState>& g) {
        if (g->settled.load(std::memory_order_acquire)) return true;
        if (only_this_thread && g->owner != me) return false;
        abandoned.push_back(g);
        return true;
      });
    }
    for (const std::shared_ptr<GateState>& g : abandoned) {
      open_gate(*g, std::make_exception_ptr(EngineError(fmt::format(
                        "{} (engine: '{}' was abandoned by a {} before its gate opened)",
                        g->abandon_message, g->name, what))));
    }
  }

  int64_t resume_below() const { return std::max<int64_t>(1, options_.max_in_flight / 2); }

  // Operations in flight: pushed_ - completed_, two counts that pushers and workers each write
  // on lines of their own (one count that both changed cost a pusher a cache-line hand-off per
  // push). completed_ is read first: the result is never below the true count.
  int64_t in_flight() const {
    const int64_t completed = completed_.load();
    return pushed_.load() - completed;
  }

  // Waiters wait for the count to drop below 1 (drain) or below resume_below() (throttle), and
  // announce themselves in drain_waiters_ or throttle_waiters_ before they test the count; a
  // completion tests them after it counts itself (both seq_cst), so a waiter that saw the count
  // at or above its bound is seen by every completion after that test. Such a completion
  // notifies when the count it computes is 0 (drain: the last one of a drain computes 0, unless
  // more were pushed meanwhile, whose last completion then does), or below resume_below() with
  // a throttled pusher waiting. So a completion that no waiter waits for costs no system call,
  // and a drain of a thousand operations wakes its waiter once, not a thousand times.
  void wait_until_in_flight_below(
      int64_t bound, std::chrono::milliseconds slice = std::chrono::milliseconds::max(),
      const WaitPoll& poll = {}) {
    if (in_flight() < bound) return;
    std::atomic<int>& waiters = bound <= 1 ? drain_waiters_ : throttle_waiters_;
    waiters.fetch_add(1);
    struct Leave {
      std::atomic<int>& waiters;
      ~Leave() { waiters.fetch_sub(1); }
    } leave{waiters};
    std::unique_lock lock(wait_mu_);
    while (!wait_slice(wait_cv_, lock, slice, [&] { return in_flight() < bound; })) {
      lock.unlock();
      poll();
      lock.lock();
    }
  }

  // `held`: 1 for a gated operation, whose gate holds one more count of its wait.
  void submit(OprBlock* op, int held = 0) {
    const int deps = op->reads.size() + op->writes.size();
    op->wait.store(deps + 1 + held, std::memory_order_relaxed);
    int granted = 0;
    {
      // One push registers at a time, so dependencies of concurrent pushes cannot interleave
      // into a cycle (A before B on one var, B before A on another). The counters only change
      // here, so they need no read-modify-write.
      std::lock_guard lock(push_mu_);
      op->seq = seq_;
      ++seq_;
      // release: a completion that reads pushed_ after this op's dispatch sees it counted.
      pushed_.store(pushed_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
      for (Var* v : op->reads) granted += v->append_read(op);
      for (Var* v : op->writes) granted += v->append_write(op);
    }
    // Every var granted it at once: no var queued it, so no completion can touch its count.
    if (granted == deps && held == 0) {
      dispatch(op);
      return;
    }
    // acq_rel: the last decrement, by us or by a completing op, sees every registration.
    if (op->wait.fetch_sub(granted + 1, std::memory_order_acq_rel) == granted + 1) dispatch(op);
  }

  void dispatch(OprBlock* op) {
    switch (op->kind) {
      case OpKind::kNormal:
        pool(op->device, op->lane).enqueue(op);
        return;
      case OpKind::kWait: {
        // Release the read first, then wake the waiter (whose state outlives the op).
        Kernel signal = std::move(op->fn);
        complete(op);
        signal(RunContext{});
        return;
      }
      case OpKind::kOpenGate: {
        for (Var* v : op->reads) {
          if (std::shared_ptr<ErrorRecord> e = v->error()) {
            op->error = std::move(e);
            break;
          }
        }
        op->fn(RunContext{});
        op->error = nullptr;  // the gated operation carries it; this one poisons nothing
        complete(op);
        return;
      }
      case OpKind::kDelete: {
        Var* var = op->writes.begin()[0];
        op->fn(RunContext{});
        delete var;
        delete op;
        finish_one();
        return;
      }
    }
  }

  void execute(OprBlock* op, const RunContext& ctx) {
    run_operation(op, ctx, errors_, kRunNaiveHint);
    // Drop the kernel's captures before its dependents run.
    Dropping& dropping = tls_dropping;
    dropping.op = op;
    op->fn = nullptr;
    dropping.op = nullptr;
    complete(op, &dropping.released);
  }

  // Releases `op`'s vars and dispatches what that grants; then releases the vars that
  // delete_var left to this completion (`released`, emptied), before the op counts as
  // finished.
  void complete(OprBlock* op, std::vector<DeferredRelease>* released = nullptr) {
    OprList granted;
    for (Var* v : op->reads) v->complete_read(granted);
    for (Var* v : op->writes) v->complete_write(op->error, granted);
    delete op;
    for (OprBlock* g : granted) {
      if (g->wait.fetch_sub(1, std::memory_order_acq_rel) == 1) dispatch(g);
    }
    if (released != nullptr && !released->empty()) {
      // Idle now. delete_var appends nothing to the list here (no captures are being dropped)
      // and completes no operation, so the list stays as it is while it is walked.
      for (DeferredRelease& d : *released) delete_var(d.var, std::move(d.on_release));
      released->clear();
    }
    finish_one();
  }

  void finish_one() {
    // seq_cst: pairs with wait_until_in_flight_below (see there); a thread that sees the count
    // drop also sees the finished op's writes.
    const int64_t completed = completed_.fetch_add(1) + 1;
    const bool drain = drain_waiters_.load() > 0;
    const bool throttled = throttle_waiters_.load() > 0;
    if (!drain && !throttled) [[likely]]
      return;
    // Every op counted in completed_ was counted in pushed_ before it was dispatched.
    const int64_t left = pushed_.load() - completed;
    if ((drain && left == 0) || (throttled && left < resume_below())) {
      std::lock_guard lock(wait_mu_);
      wait_cv_.notify_all();
    }
  }

  // A pool per (device type, device id, lane), started on first use.
  static size_t pool_index(Device device, Lane lane) {
    JANUS_DEBUG_ASSERT(device.id >= 0 && device.id < kMaxDevicesPerType,
                       "engine: device {} beyond the pool table", device);
    const size_t slot =
        static_cast<size_t>(device.type) * kMaxDevicesPerType + static_cast<size_t>(device.id);
    return slot * kNumLanes + static_cast<size_t>(lane);
  }

  WorkerPool& pool(Device device, Lane lane) {
    const size_t index = pool_index(device, lane);
    WorkerPool* p = pools_[index].load(std::memory_order_acquire);
    if (p != nullptr) return *p;
    std::lock_guard lock(pools_mu_);
    p = pools_[index].load(std::memory_order_relaxed);
    if (p == nullptr) {
      p = make_pool(device, lane);
      pools_[index].store(p, std::memory_order_release);
    }
    return *p;
  }

  WorkerPool* make_pool(Device device, Lane lane) {
    DeviceBackend* backend = device_backend(device.type);
    JANUS_ASSERT(backend != nullptr, "engine: {} passed check_device but its type has no backend",
                 device);
    const LaneWorkers plan = backend->lane_workers(device, lane, requested_workers(options_, lane));
    JANUS_ASSERT(plan.workers >= 1 && (lane != Lane::kComm || plan.workers == 1),
                 "engine: the backend of {} planned {} workers for its {} lane", device,
                 plan.workers, lane_name(lane));
    return new WorkerPool(device, lane, *backend, plan,
                          [this](OprBlock* op, const RunContext& ctx) { execute(op, ctx); });
  }

  EngineOptions options_;
  std::mutex pools_mu_;
  // The pushers' line.
  alignas(64) std::mutex push_mu_;
  std::atomic<int64_t> pushed_{0};          // written under push_mu_, read without it
  std::atomic<int64_t> completed_seen_{0};  // a past value of completed_ (throttle)
  uint64_t seq_ = 0;                        // guarded by push_mu_
  // The workers' line.
  alignas(64) std::atomic<int64_t> completed_{0};
  // Written by waiters only, read by every completion.
  alignas(64) std::atomic<int> drain_waiters_{0};
  std::atomic<int> throttle_waiters_{0};
  std::mutex wait_mu_;
  std::condition_variable wait_cv_;
  std::array<std::atomic<WorkerPool*>, kNumDeviceTypes * kMaxDevicesPerType * kNumLanes> pools_;
  ErrorLog errors_;
  std::atomic<int> unopened_gates_{0};
  std::mutex gates_mu_;
  std::vector<std::shared_ptr<GateState>> gates_;  // pushed gates, pruned once opened
};

class ThreadedGate final : public Gate {
 public:
  ThreadedGate(ThreadedEngine& engine, std::shared_ptr<GateState> state)
      : engine_(engine), state_(std::move(state)) {}
  ~ThreadedGate() override {
    if (is_settled()) return;
    open(std::make_exception_ptr(
        EngineError(fmt::format("{} (engine: the gate of '{}' was dropped unopened)",
                                state_->abandon_message, state_->name))));
  }
  void open(std::exception_ptr error) override { engine_.open_gate(*state_, std::move(error)); }
  void open_after(std::span<Var* const> vars) override { engine_.open_gate_after(state_, vars); }
  bool is_settled() const override { return state_->settled.load(std::memory_order_acquire); }

 private:
  ThreadedEngine& engine_;
  std::shared_ptr<GateState> state_;
};

std::shared_ptr<Gate> ThreadedEngine::push_gated(Kernel kernel, std::span<Var* const> reads,
                                                 std::span<Var* const> writes, Device device,
                                                 Lane lane, std::string_view name,
                                                 std::string abandon_message) {
  check_device(device, "engine: push_gated");
  auto state = std::make_shared<GateState>();
  state->owner = std::this_thread::get_id();
  state->name = name;
  state->abandon_message = std::move(abandon_message);
  auto* op = new OprBlock();
  op->fn = [state, fn = std::move(kernel)](const RunContext& ctx) mutable {
    if (state->error) std::rethrow_exception(state->error);
    fn(ctx);
  };
  op->name = name;
  op->device = device;
  op->lane = lane;
  try {
    set_dependencies(op, reads, writes);
    throttle();
  } catch (...) {
    delete op;
    throw;
  }
  state->op = op;
  {
    std::lock_guard lock(gates_mu_);
    gates_.push_back(state);
  }
  unopened_gates_.fetch_add(1);
  submit(op, /*held=*/1);
  return std::make_shared<ThreadedGate>(*this, std::move(state));
}

}  // namespace

std::shared_ptr<Gate> push_gated(Engine& engine, Kernel kernel, std::span<Var* const> reads,
                                 std::span<Var* const> writes, Device device, Lane lane,
                                 std::string_view name, std::string abandon_message) {
  auto* threaded = dynamic_cast<ThreadedEngine*>(&engine);
  JANUS_CHECK(threaded != nullptr, NotImplementedError,
              "engine: '{}' is a gated operation (it waits for operations not pushed yet), but "
              "the {} engine runs every operation when it is pushed; use the threaded engine "
              "(unset JANUS_ENGINE=naive)",
              name, engine_kind_name(engine.kind()));
  return threaded->push_gated(std::move(kernel), reads, writes, device, lane, name,
                              std::move(abandon_message));
}

bool is_engine_worker_thread() { return tls_is_worker; }
void mark_engine_worker_thread() { tls_is_worker = true; }

std::unique_ptr<Engine> make_threaded_engine(const EngineOptions& options) {
  return std::make_unique<ThreadedEngine>(options);
}

}  // namespace janus

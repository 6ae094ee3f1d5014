// The engine on a device type of the test's own, installed in the gpu slot as the CUDA backend
// will be: its operations run on that type's workers and streams, the engine waits for their
// streams before releasing vars, and vars order operations across types. Nothing in the
// engine's core knows the type.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "janus/base/error.h"
#include "janus/core/device_backend.h"
#include "janus/engine/engine.h"

namespace janus {
namespace {

using testing::HasSubstr;

// Like a GPU stream, it defers the work that kernels issue on it: the work runs only when the
// stream is synchronized. Used by its worker thread only.
class FakeStream final : public Stream {
 public:
  FakeStream(Device device, Lane lane, std::atomic<int>& syncs)
      : device(device), lane(lane), thread(std::this_thread::get_id()), syncs_(syncs) {}

  void issue(std::function<void()> work) { pending_.push_back(std::move(work)); }

  void synchronize() override {
    syncs_.fetch_add(1, std::memory_order_relaxed);
    std::vector<std::function<void()>> pending;
    pending.swap(pending_);
    for (auto& work : pending) work();  // may throw, as a failed asynchronous launch does
  }

  const Device device;
  const Lane lane;
  const std::thread::id thread;  // the worker that opened it

 private:
  std::vector<std::function<void()>> pending_;
  std::atomic<int>& syncs_;
};

// Two devices; two compute workers and one worker on the other lanes; kernels get 3 threads.
class FakeBackend final : public DeviceBackend {
 public:
  static constexpr int kKernelThreads = 3;

  int count() const override { return 2; }

  LaneWorkers lane_workers(Device, Lane lane, int) const override {
    return LaneWorkers{lane == Lane::kCompute ? 2 : 1, kKernelThreads};
  }

  std::unique_ptr<Stream> start_worker(Device device, Lane lane, const LaneWorkers&) override {
    auto stream = std::make_unique<FakeStream>(device, lane, syncs);
    std::lock_guard lock(mu_);
    started_.push_back({device, lane});
    return stream;
  }

  // The workers started on `device`'s `lane` so far.
  int started(Device device, Lane lane) {
    std::lock_guard lock(mu_);
    return static_cast<int>(std::count_if(started_.begin(), started_.end(), [&](const auto& s) {
      return s.first == device && s.second == lane;
    }));
  }

  std::atomic<int> syncs{0};

 private:
  std::mutex mu_;
  std::vector<std::pair<Device, Lane>> started_;
};

// Installs the fake type for the gpu slot for one test (engines made inside are destroyed
// first), then puts the previous backend back.
class FakeDeviceType : public testing::Test {
 protected:
  FakeDeviceType() : saved_(set_device_backend(DeviceType::kGPU, &fake_)) {}
  ~FakeDeviceType() override { set_device_backend(DeviceType::kGPU, saved_); }

  FakeBackend fake_;

 private:
  DeviceBackend* saved_;
};

// Runs `work` on the fake stream the kernel was given.
void issue_on(const RunContext& ctx, std::function<void()> work) {
  auto* stream = dynamic_cast<FakeStream*>(ctx.stream);
  if (stream == nullptr)
    throw ValueError("test: a kernel on " + to_string(ctx.device) + " got no fake stream");
  stream->issue(std::move(work));
}

TEST_F(FakeDeviceType, OperationsRunOnTheTypesWorkersAndStreams) {
  struct Seen {
    Device device;
    Lane lane;
    int threads = 0;
    FakeStream* stream = nullptr;
    std::thread::id thread;
  };
  const Lane lanes[] = {Lane::kCompute, Lane::kCopy, Lane::kComm};
  std::vector<Seen> seen(2 * std::size(lanes) * 4);
  auto e = make_engine(EngineKind::kThreaded);
  size_t next = 0;
  for (int id : {0, 1}) {
    for (Lane lane : lanes) {
      for (int k = 0; k < 4; ++k) {
        e->push(
            [&slot = seen[next]](const RunContext& ctx) {
              slot = Seen{ctx.device, ctx.lane, ctx.num_threads,
                          dynamic_cast<FakeStream*>(ctx.stream), std::this_thread::get_id()};
            },
            {}, {}, gpu(id), lane);
        ++next;
      }
    }
  }
  e->wait_all();
  EXPECT_EQ(e->kernel_threads(gpu(1)), FakeBackend::kKernelThreads);
  for (const Seen& s : seen) {
    ASSERT_NE(s.stream, nullptr) << "a kernel on " << to_string(s.device) << " got no fake stream";
    EXPECT_EQ(s.stream->device, s.device);
    EXPECT_EQ(s.stream->lane, s.lane);
    EXPECT_EQ(s.stream->thread, s.thread) << "the kernel ran on another thread than its stream's";
    EXPECT_EQ(s.threads, FakeBackend::kKernelThreads);
  }
  e.reset();  // joins the workers: all of them have started by now
  for (int id : {0, 1}) {
    EXPECT_EQ(fake_.started(gpu(id), Lane::kCompute), 2);
    EXPECT_EQ(fake_.started(gpu(id), Lane::kCopy), 1);
    EXPECT_EQ(fake_.started(gpu(id), Lane::kComm), 1);
  }
  EXPECT_EQ(fake_.syncs.load(), static_cast<int>(seen.size()));  // once after every kernel
}

// One value updated by a chain of writers on cpu(0), gpu(0)'s compute lane and gpu(1)'s copy
// lane; the fake devices' updates run only when their streams are synchronized. Every step
// sees the one before it only if the engine waits for a stream before it releases the
// operation's vars (else the fake's work would run late, or never).
TEST_F(FakeDeviceType, VarsOrderOperationsAcrossTypes) {
  for (int compute_workers : {1, 2}) {
    auto e =
        make_engine(EngineKind::kThreaded, EngineOptions{.cpu_compute_workers = compute_workers});
    Var* x = e->new_var();
    constexpr int kSteps = 300;
    int64_t value = 1;
    std::vector<int64_t> seen(kSteps, -1);
    for (int i = 0; i < kSteps; ++i) {
      auto step = [&value, &seen, i] {
        value = (value * 31 + i) % 1000003;
        seen[i] = value;
      };
      switch (i % 3) {
        case 0:
          e->push([step](const RunContext&) { step(); }, {}, {x}, cpu(0));
          break;
        case 1:
          e->push([step](const RunContext& ctx) { issue_on(ctx, step); }, {}, {x}, gpu(0));
          break;
        default:
          e->push([step](const RunContext& ctx) { issue_on(ctx, step); }, {}, {x}, gpu(1),
                  Lane::kCopy);
      }
    }
    e->wait_for_var(x);
    int64_t expected = 1;
    for (int i = 0; i < kSteps; ++i) {
      expected = (expected * 31 + i) % 1000003;
      ASSERT_EQ(seen[i], expected) << "step " << i << " of " << compute_workers << " workers";
    }
    e->delete_var(x, nullptr);
    e->wait_all();
  }
}

// An error that surfaces when the stream is synchronized (a GPU's failed launch) fails the
// operation that issued the work: a blocker names it, dependents on other types are skipped,
// and the engine keeps working.
TEST_F(FakeDeviceType, AStreamsFailureIsTheOperationsError) {
  auto e = make_engine(EngineKind::kThreaded);
  Var* x = e->new_var();
  Var* y = e->new_var();
  bool dependent_ran = false;
  e->push(
      [](const RunContext& ctx) {
        issue_on(ctx, [] { throw DeviceError("fake: the launch failed"); });
      },
      {}, {x}, gpu(0), Lane::kCompute, 0, "fake_kernel");
  e->push([&](const RunContext&) { dependent_ran = true; }, {x}, {y}, cpu(0));
  try {
    e->wait_for_var(y);
    ADD_FAILURE() << "the stream's failure was not reported";
  } catch (const DeviceError& err) {
    EXPECT_THAT(err.what(), HasSubstr("operator 'fake_kernel' failed"));
    EXPECT_THAT(err.what(), HasSubstr("fake: the launch failed"));
  }
  EXPECT_FALSE(dependent_ran);
  int after = 0;
  Var* z = e->new_var();
  e->push([&](const RunContext& ctx) { issue_on(ctx, [&] { after = 7; }); }, {}, {z}, gpu(0));
  e->wait_for_var(z);
  EXPECT_EQ(after, 7);
  for (Var* v : {x, y, z}) e->delete_var(v, nullptr);
  EXPECT_NO_THROW(e->wait_all());  // the blocker on y already threw the one error
}

TEST_F(FakeDeviceType, PushChecksTheTypesDevices) {
  for (EngineKind kind : {EngineKind::kThreaded, EngineKind::kNaive}) {
    auto e = make_engine(kind);
    try {
      e->push([](const RunContext&) {}, {}, {}, gpu(2));
      ADD_FAILURE() << "push accepted gpu(2) of a type with 2 devices";
    } catch (const DeviceError& err) {
      EXPECT_THAT(err.what(),
                  HasSubstr("engine: push: device gpu(2) does not exist: there are 2 gpu devices"));
    }
  }
}

// The naive engine runs every kernel on the pushing thread, with no stream, and the thread
// count that the type plans for the lane.
TEST_F(FakeDeviceType, NaiveEngineRunsTheTypesKernelsOnThePushingThread) {
  auto e = make_engine(EngineKind::kNaive);
  std::thread::id ran_on;
  bool got_stream = true;
  int threads = 0;
  e->push(
      [&](const RunContext& ctx) {
        ran_on = std::this_thread::get_id();
        got_stream = ctx.stream != nullptr;
        threads = ctx.num_threads;
      },
      {}, {}, gpu(1), Lane::kCopy);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_FALSE(got_stream);
  EXPECT_EQ(threads, FakeBackend::kKernelThreads);
  EXPECT_EQ(e->kernel_threads(gpu(0)), FakeBackend::kKernelThreads);
  EXPECT_EQ(fake_.syncs.load(), 0);
}

}  // namespace
}  // namespace janus

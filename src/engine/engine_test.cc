// Engine semantics under both engines: ordering per var, error propagation, back-pressure,
// deferred release, priorities, lanes, and several frontend threads.
#include "janus/engine/engine.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <iterator>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "janus/base/error.h"
#include "janus/base/omp_threads.h"
#include "janus/engine/wait_poll.h"

#include "testing/test_util.h"

namespace janus {
namespace {

using std::chrono::milliseconds;
using testing::HasSubstr;

void sleep_ms(int ms) { std::this_thread::sleep_for(milliseconds(ms)); }

// Waits for a latch without risking a hung test: fails after 10 s instead.
bool wait_for(std::latch& l) {
  for (int i = 0; i < 10000; ++i) {
    if (l.try_wait()) return true;
    sleep_ms(1);
  }
  return false;
}

// The cores the calling thread may run on (its affinity), in increasing order.
std::vector<int> allowed_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return {};
  std::vector<int> cores;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cores.push_back(c);
  }
  return cores;
}

class EngineTest : public testing::TestWithParam<EngineKind> {
 protected:
  std::unique_ptr<Engine> make(EngineOptions options = {}) {
    return make_engine(GetParam(), options);
  }
};

TEST_P(EngineTest, ReadAfterWriteSeesTheWrite) {
  auto e = make();
  Var* x = e->new_var();
  int value = 0;
  int seen = -1;
  e->push(
      [&](const RunContext&) {
        sleep_ms(20);
        value = 1;
      },
      {}, {x}, cpu());
  e->push([&](const RunContext&) { seen = value; }, {x}, {}, cpu());
  e->wait_all();
  EXPECT_EQ(seen, 1);
  e->delete_var(x, nullptr);
}

TEST_P(EngineTest, WriteAfterReadWaitsForTheRead) {
  auto e = make();
  Var* x = e->new_var();
  int value = 1;
  int seen = -1;
  e->push(
      [&](const RunContext&) {
        sleep_ms(20);
        seen = value;
      },
      {x}, {}, cpu());
  e->push([&](const RunContext&) { value = 2; }, {}, {x}, cpu(), Lane::kCopy);
  e->wait_all();
  EXPECT_EQ(seen, 1);
  EXPECT_EQ(value, 2);
  e->delete_var(x, nullptr);
}

TEST_P(EngineTest, WriteAfterWriteKeepsPushOrder) {
  auto e = make();
  Var* x = e->new_var();
  int value = 0;
  e->push(
      [&](const RunContext&) {
        sleep_ms(20);
        value = 1;
      },
      {}, {x}, cpu());
  e->push([&](const RunContext&) { value = 2; }, {}, {x}, cpu(), Lane::kCopy);
  e->wait_for_var(x);
  EXPECT_EQ(value, 2);
  e->delete_var(x, nullptr);
}

TEST_P(EngineTest, WaitForVarWaitsOnlyForWrites) {
  auto e = make();
  Var* x = e->new_var();
  std::atomic<int> value{0};
  e->push(
      [&](const RunContext&) {
        sleep_ms(10);
        value = 7;
      },
      {}, {x}, cpu());
  e->wait_for_var(x);
  EXPECT_EQ(value.load(), 7);
  e->wait_all();
  e->delete_var(x, nullptr);
}

TEST_P(EngineTest, KernelErrorIsRethrownAtTheBlockerWithTheOperatorName) {
  auto e = make();
  Var* a = e->new_var();
  Var* b = e->new_var();
  bool downstream_ran = false;
  e->push([](const RunContext&) { throw ShapeError("bad shapes [2] and [3]"); }, {}, {a}, cpu(),
          Lane::kCompute, 0, "failing_op");
  e->push([&](const RunContext&) { downstream_ran = true; }, {a}, {b}, cpu(), Lane::kCompute, 0,
          "downstream_op");
  try {
    e->wait_for_var(b);
    FAIL() << "wait_for_var should have thrown";
  } catch (const ShapeError& err) {  // the kernel's own error type survives
    EXPECT_THAT(err.what(), HasSubstr("operator 'failing_op' failed"));
    EXPECT_THAT(err.what(), HasSubstr("bad shapes [2] and [3]"));
  }
  EXPECT_FALSE(downstream_ran);
  // Already reported by the blocker: wait_all does not report it again.
  EXPECT_NO_THROW(e->wait_all());
  // The affected array holds no value: blocking on it keeps failing rather than lying.
  EXPECT_THROW(e->wait_for_var(a), ShapeError);
  // The engine stays usable.
  Var* c = e->new_var();
  int value = 0;
  e->push([&](const RunContext&) { value = 5; }, {}, {c}, cpu());
  EXPECT_NO_THROW(e->wait_for_var(c));
  EXPECT_EQ(value, 5);
  for (Var* v : {a, b, c}) e->delete_var(v, nullptr);
}

TEST_P(EngineTest, WaitAllRethrowsOnceAndUnaffectedVarsAreFine) {
  auto e = make();
  Var* bad = e->new_var();
  Var* good = e->new_var();
  e->push([](const RunContext&) { throw std::runtime_error("disk on fire"); }, {}, {bad}, cpu(),
          Lane::kCompute, 0, "loader");
  int value = 0;
  e->push([&](const RunContext&) { value = 3; }, {}, {good}, cpu());
  try {
    e->wait_all();
    FAIL() << "wait_all should have thrown";
  } catch (const OperatorError& err) {  // a non-Janus exception is wrapped, message kept
    EXPECT_THAT(err.what(), HasSubstr("operator 'loader' failed: disk on fire"));
  }
  EXPECT_NO_THROW(e->wait_all());
  EXPECT_NO_THROW(e->wait_for_var(good));
  EXPECT_EQ(value, 3);
  e->delete_var(bad, nullptr);
  e->delete_var(good, nullptr);
}

// STYLE.md §5: a fatal message says what to do next. Under the threaded engine the error
// surfaces at a wait, far from its cause; the naive engine already throws on the caller's stack.
TEST_P(EngineTest, KernelErrorSuggestsTheNaiveEngineWhereItIsNotInUse) {
  auto e = make();
  Var* a = e->new_var();
  Var* b = e->new_var();
  e->push([](const RunContext&) { throw ValueError("bad value"); }, {}, {a}, cpu(), Lane::kCompute,
          0, "janus_op");
  e->push([](const RunContext&) { throw std::runtime_error("not ours"); }, {}, {b}, cpu(),
          Lane::kCompute, 0, "foreign_op");
  const std::string janus = error_of<ValueError>([&] { e->wait_for_var(a); });
  const std::string foreign = error_of<OperatorError>([&] { e->wait_for_var(b); });
  if (GetParam() == EngineKind::kThreaded) {
    EXPECT_EQ(janus,
              "operator 'janus_op' failed: bad value (set JANUS_ENGINE=naive to run "
              "synchronously and get a clean backtrace)");
    EXPECT_EQ(foreign,
              "operator 'foreign_op' failed: not ours (set JANUS_ENGINE=naive to run "
              "synchronously and get a clean backtrace)");
  } else {
    EXPECT_EQ(janus, "operator 'janus_op' failed: bad value");
    EXPECT_EQ(foreign, "operator 'foreign_op' failed: not ours");
  }
  EXPECT_NO_THROW(e->wait_all());
  e->delete_var(a, nullptr);
  e->delete_var(b, nullptr);
}

TEST_P(EngineTest, ErrorsFlowThroughChainsAndWritesToPoisonedVars) {
  auto e = make();
  Var* a = e->new_var();
  Var* b = e->new_var();
  Var* c = e->new_var();
  std::atomic<int> ran{0};
  e->push([](const RunContext&) { throw ValueError("first"); }, {}, {a}, cpu(), Lane::kCompute, 0,
          "first");
  e->push([&](const RunContext&) { ++ran; }, {a}, {b}, cpu());
  e->push([&](const RunContext&) { ++ran; }, {b}, {c}, cpu());
  e->push([&](const RunContext&) { ++ran; }, {}, {a}, cpu());  // writes a poisoned var: skipped
  EXPECT_THROW(e->wait_for_var(c), ValueError);
  e->wait_all();
  EXPECT_EQ(ran.load(), 0);
  for (Var* v : {a, b, c}) e->delete_var(v, nullptr);
}

TEST_P(EngineTest, DeleteVarRunsAfterThePendingOperations) {
  auto e = make();
  Var* x = e->new_var();
  std::atomic<bool> kernel_done{false};
  std::atomic<bool> released_after_kernel{false};
  e->push(
      [&](const RunContext&) {
        sleep_ms(20);
        kernel_done = true;
      },
      {}, {x}, cpu());
  e->delete_var(x, [&] { released_after_kernel = kernel_done.load(); });
  e->wait_all();
  EXPECT_TRUE(released_after_kernel.load());
}

// Releases `var` when destroyed, as an array's storage does when its last reference goes.
struct ReleasesVar {
  Engine* engine;
  Var* var;
  std::function<void()> on_release;
  ~ReleasesVar() {
    engine->delete_var(var, [f = on_release] { f(); });
  }
};

TEST_P(EngineTest, AVarWhoseLastReferenceDiesWithAKernelIsReleasedWhenItsOperationCompletes) {
  auto e = make();
  Var* x = e->new_var();
  Var* y = e->new_var();
  std::atomic<bool> go{false}, kernel_done{false}, released_after_kernel{false};
  std::atomic<int> releases{0};
  auto holder = std::make_shared<ReleasesVar>(e.get(), x, [&] {
    released_after_kernel = kernel_done.load();
    ++releases;
  });
  const bool naive = GetParam() == EngineKind::kNaive;
  e->push(
      [&, holder](const RunContext&) {
        while (!naive && !go) sleep_ms(1);
        kernel_done = true;
      },
      {y}, {x}, cpu());
  holder.reset();  // the kernel's captures hold the last reference now
  go = true;
  std::atomic<bool> y_written{false};
  e->push([&](const RunContext&) { y_written = true; }, {}, {y}, cpu());
  e->wait_all();
  EXPECT_TRUE(released_after_kernel.load());
  EXPECT_EQ(releases.load(), 1);
  EXPECT_TRUE(y_written.load());
  e->delete_var(y, nullptr);
}

TEST_P(EngineTest, NullVarIsRejected) {
  auto e = make();
  try {
    e->push([](const RunContext&) {}, {nullptr}, {}, cpu(), Lane::kCompute, 0, "op_x");
    FAIL();
  } catch (const ValueError& err) {
    EXPECT_THAT(err.what(), HasSubstr("'op_x' lists a null var"));
  }
}

TEST_P(EngineTest, UnknownDeviceIsRejected) {
  auto e = make();
  try {
    e->push([](const RunContext&) {}, {}, {}, cpu(7));
    FAIL();
  } catch (const DeviceError& err) {
    EXPECT_THAT(err.what(), HasSubstr("cpu(7) does not exist"));
  }
}

TEST_P(EngineTest, KernelsMayPushMoreWork) {
  auto e = make();
  Var* x = e->new_var();
  std::atomic<int> value{0};
  Engine* raw = e.get();
  e->push(
      [&, raw, x](const RunContext&) {
        raw->push([&](const RunContext&) { value = 9; }, {}, {x}, cpu());
      },
      {}, {}, cpu());
  // The inner push happens when the outer kernel runs; wait for both.
  for (int i = 0; i < 2; ++i) e->wait_all();
  e->wait_for_var(x);
  EXPECT_EQ(value.load(), 9);
  e->delete_var(x, nullptr);
}

// kernel_threads(device) is what a kernel on the device's compute lane is given (operators
// build oneDNN primitives for that many threads).
TEST_P(EngineTest, SlicedWaitsOnFinishedWorkDoNotPollAndRethrowOnce) {
  auto e = make();
  Var* a = e->new_var();
  Var* b = e->new_var();
  e->push([](const RunContext&) { throw ShapeError("bad shapes"); }, {}, {a}, cpu(), Lane::kCompute,
          0, "failing_op");
  e->push([](const RunContext&) {}, {}, {b}, cpu());
  e->wait_for_var(b);
  int polls = 0;
  const WaitPoll poll = [&] { ++polls; };
  EXPECT_NO_THROW(e->wait_for_var(b, milliseconds(1), poll));
  EXPECT_THROW(e->wait_all(milliseconds(1), poll), ShapeError);
  EXPECT_NO_THROW(e->wait_all(milliseconds(1), poll));  // reported once
  EXPECT_THROW(e->wait_for_var(a, milliseconds(1), poll), ShapeError);
  EXPECT_EQ(polls, 0);
  for (Var* v : {a, b}) e->delete_var(v, nullptr);
}

TEST_P(EngineTest, KernelThreadsIsTheComputeLanesRunContext) {
  auto e = make();
  std::atomic<int> seen{0};
  e->push([&](const RunContext& ctx) { seen = ctx.num_threads; }, {}, {}, cpu());
  e->wait_all();
  EXPECT_GE(seen.load(), 1);
  EXPECT_EQ(e->kernel_threads(cpu()), seen.load());
}

// A kernel's OpenMP thread count (what oneDNN builds a primitive for, and what the primitive
// cache keys it by) is its device's kernel threads on either engine, whatever the pushing
// thread's own count; the pusher's count is left as it was.
TEST_P(EngineTest, KernelsRunWithTheKernelThreadsAsTheirOpenMpCount) {
  auto e = make();
  const int kernel_threads = e->kernel_threads(cpu());
  const ScopedOmpThreads pusher(kernel_threads + 1);
  std::atomic<int> seen{0};
  e->push([&](const RunContext&) { seen = omp_get_max_threads(); }, {}, {}, cpu());
  e->wait_all();
  EXPECT_EQ(seen.load(), kernel_threads);
  EXPECT_EQ(omp_get_max_threads(), kernel_threads + 1);
}

INSTANTIATE_TEST_SUITE_P(Engines, EngineTest,
                         testing::Values(EngineKind::kNaive, EngineKind::kThreaded),
                         [](const auto& info) {
                           return std::string(engine_kind_name(info.param));
                         });

// --- Threaded-engine-only behaviour -------------------------------------------------------

TEST(ThreadedEngine, PushReturnsBeforeTheKernelRuns) {
  auto e = make_engine(EngineKind::kThreaded);
  Var* x = e->new_var();
  std::atomic<bool> release{false};
  std::atomic<bool> ran{false};
  e->push(
      [&](const RunContext&) {
        while (!release) sleep_ms(1);
        ran = true;
      },
      {}, {x}, cpu());
  EXPECT_FALSE(ran.load());  // push returned while the kernel is still blocked
  release = true;
  e->wait_for_var(x);
  EXPECT_TRUE(ran.load());
  e->delete_var(x, nullptr);
}

TEST(ThreadedEngine, AVarReleasedByAKernelsCapturesWaitsForTheOperationsQueuedBehindIt) {
  auto e = make_engine(EngineKind::kThreaded);
  Var* x = e->new_var();
  std::atomic<bool> go{false}, read_done{false}, released_after_read{false};
  auto holder =
      std::make_shared<ReleasesVar>(e.get(), x, [&] { released_after_read = read_done.load(); });
  e->push(
      [&, holder](const RunContext&) {
        while (!go) sleep_ms(1);
      },
      {}, {x}, cpu());
  e->push(
      [&](const RunContext&) {
        sleep_ms(10);
        read_done = true;
      },
      {x}, {}, cpu());  // queued behind the write, still to run when the write's captures go
  holder.reset();
  go = true;
  e->wait_all();
  EXPECT_TRUE(released_after_read.load());
}

struct Interrupted {};

TEST(ThreadedEngine, SlicedWaitPollsWhileWorkIsPendingAndAThrowingPollEndsIt) {
  auto e = make_engine(EngineKind::kThreaded);
  Var* x = e->new_var();
  std::atomic<bool> release{false};
  std::atomic<bool> ran{false};
  e->push(
      [&](const RunContext&) {
        while (!release) sleep_ms(1);
        ran = true;
      },
      {}, {x}, cpu());
  int polls = 0;
  const WaitPoll interrupt = [&] {
    ++polls;
    throw Interrupted{};
  };
  // The kernel cannot finish before `release`, so each wait ends through the poll.
  EXPECT_THROW(e->wait_for_var(x, milliseconds(1), interrupt), Interrupted);
  EXPECT_THROW(e->wait_all(milliseconds(1), interrupt), Interrupted);
  EXPECT_EQ(polls, 2);
  EXPECT_FALSE(ran.load());
  // The work kept running: a poll that lets it finish sees the wait return normally.
  const WaitPoll let_finish = [&] { release = true; };
  e->wait_for_var(x, milliseconds(1), let_finish);
  EXPECT_TRUE(ran.load());
  e->wait_all(milliseconds(1), let_finish);
  e->delete_var(x, nullptr);
}

TEST(ThreadedEngine, AThreadsWaitPollEndsItsPlainWaitsAndBackPressureAndNests) {
  auto e = make_engine(EngineKind::kThreaded, {.max_in_flight = 2});
  Var* x = e->new_var();
  std::atomic<bool> release{false};
  const auto block = [&](const RunContext&) {
    while (!release) sleep_ms(1);
  };
  e->push(block, {}, {x}, cpu());
  e->push(block, {}, {x}, cpu());  // the window is full: the next push waits
  int polls = 0;
  const WaitPoll interrupt = [&] {
    ++polls;
    throw Interrupted{};
  };
  const WaitPoll count = [&] { ++polls; };
  {
    const ScopedWaitPoll outer(milliseconds(1), interrupt);
    EXPECT_THROW(e->wait_for_var(x), Interrupted);
    EXPECT_THROW(e->wait_all(), Interrupted);
    const int64_t pushed = e->stats().pushed;
    EXPECT_THROW(e->push([](const RunContext&) {}, {x}, {}, cpu()), Interrupted);
    EXPECT_EQ(e->stats().pushed, pushed);  // the interrupted push pushed nothing
    {
      const ScopedWaitPoll inner(milliseconds(1), count);
      EXPECT_EQ(ScopedWaitPoll::current(), &inner);
    }
    EXPECT_EQ(ScopedWaitPoll::current(), &outer);
  }
  EXPECT_EQ(ScopedWaitPoll::current(), nullptr);
  EXPECT_EQ(polls, 3);
  release = true;
  e->wait_all();  // no scope: an unsliced wait, until the work is done
  EXPECT_EQ(e->stats().in_flight, 0);
  e->delete_var(x, nullptr);
}

TEST(ThreadedEngine, AnErrorOfWorkPendingAtAnInterruptedWaitSurfacesAtTheNextWait) {
  auto e = make_engine(EngineKind::kThreaded);
  Var* x = e->new_var();
  std::atomic<bool> release{false};
  e->push(
      [&](const RunContext&) {
        while (!release) sleep_ms(1);
        throw ValueError("late failure");
      },
      {}, {x}, cpu(), Lane::kCompute, 0, "slow_op");
  EXPECT_THROW(e->wait_all(milliseconds(1), [] { throw Interrupted{}; }), Interrupted);
  release = true;
  try {
    e->wait_all(milliseconds(1), [] {});
    FAIL() << "wait_all should have thrown";
  } catch (const ValueError& err) {
    EXPECT_THAT(err.what(), HasSubstr("operator 'slow_op' failed"));
  }
  EXPECT_NO_THROW(e->wait_all());  // once
  EXPECT_THROW(e->wait_for_var(x, milliseconds(1), [] {}), ValueError);
  e->delete_var(x, nullptr);
}

TEST(ThreadedEngine, ReadsOfOneVarRunTogether) {
  EngineOptions options;
  options.cpu_compute_workers = 2;
  auto e = make_engine(EngineKind::kThreaded, options);
  Var* x = e->new_var();
  std::latch both(2);
  std::atomic<int> met{0};
  for (int i = 0; i < 2; ++i) {
    e->push(
        [&](const RunContext&) {
          both.count_down();
          if (wait_for(both)) ++met;  // only possible if the other read runs at the same time
        },
        {x}, {}, cpu());
  }
  e->wait_all();
  EXPECT_EQ(met.load(), 2);
  e->delete_var(x, nullptr);
}

// A read completes without the var's lock unless a write waits for it (var.h): the write
// queued behind reads that finish on several workers, some while it is being queued, must run
// after the last of them, every time.
TEST(ThreadedEngine, AWriteQueuedBehindReadsRunsAfterTheLastOfThem) {
  EngineOptions options;
  options.cpu_compute_workers = 2;
  auto e = make_engine(EngineKind::kThreaded, options);
  Var* x = e->new_var();
  constexpr int kRounds = 300;
  constexpr int kReads = 4;
  std::atomic<int> reads_done{0};
  std::vector<int> seen(kRounds, -1);
  for (int r = 0; r < kRounds; ++r) {
    for (int i = 0; i < kReads; ++i) {
      e->push(
          [&reads_done, spin = (r * 7 + i * 13) % 50](const RunContext&) {
            for (volatile int k = 0; k < spin * 20; k = k + 1) {
            }
            reads_done.fetch_add(1);
          },
          {x}, {}, cpu(), i % 2 == 0 ? Lane::kCompute : Lane::kCopy);
    }
    e->push([&, r](const RunContext&) { seen[static_cast<size_t>(r)] = reads_done.load(); }, {},
            {x}, cpu(), r % 2 == 0 ? Lane::kCompute : Lane::kCopy);
  }
  e->wait_all();
  for (int r = 0; r < kRounds; ++r) {
    ASSERT_EQ(seen[static_cast<size_t>(r)], (r + 1) * kReads) << "round " << r;
  }
  e->delete_var(x, nullptr);
}

// Each round releases a var while reads of it complete on two lanes: the release is a write
// queued behind them (odd rounds), or behind reads, a write and reads queued behind that write
// (even rounds). The release must see every operation before it, and under the sanitizers a
// completing read that touched the var after the release freed it fails the test (the race
// that a split read count must avoid: a read that looks at the var after its count made it
// visibly done).
TEST(ThreadedEngine, AVarReleasedWhileItsReadsCompleteIsFreedAfterTheLastOfThem) {
  EngineOptions options;
  options.cpu_compute_workers = 2;
  auto e = make_engine(EngineKind::kThreaded, options);
  constexpr int kRounds = 400;
  constexpr int kReads = 3;
  std::vector<std::atomic<int>> done(kRounds);
  std::vector<int> write_saw(kRounds, -1);
  std::vector<int> release_saw(kRounds, -1);
  auto push_reads = [&](Var* x, int r) {
    for (int i = 0; i < kReads; ++i) {
      e->push(
          [&done, r, spin = (r * 5 + i * 11) % 17](const RunContext&) {
            for (volatile int k = 0; k < spin * 10; k = k + 1) {
            }
            done[static_cast<size_t>(r)].fetch_add(1);
          },
          {x}, {}, cpu(), i % 2 == 0 ? Lane::kCompute : Lane::kCopy);
    }
  };
  for (int r = 0; r < kRounds; ++r) {
    const auto ri = static_cast<size_t>(r);
    Var* x = e->new_var();
    push_reads(x, r);
    if (r % 2 == 0) {
      e->push(
          [&, ri](const RunContext&) {
            write_saw[ri] = done[ri].load();
            done[ri].fetch_add(1);
          },
          {}, {x}, cpu(), Lane::kCopy);
      push_reads(x, r);
    }
    e->delete_var(x, [&, ri] { release_saw[ri] = done[ri].load(); });
  }
  e->wait_all();
  for (int r = 0; r < kRounds; ++r) {
    const auto ri = static_cast<size_t>(r);
    if (r % 2 == 0) {
      ASSERT_EQ(write_saw[ri], kReads) << "round " << r;
      ASSERT_EQ(release_saw[ri], 2 * kReads + 1) << "round " << r;
    } else {
      ASSERT_EQ(release_saw[ri], kReads) << "round " << r;
    }
  }
}

TEST(ThreadedEngine, CopyLaneRunsWhileComputeIsBusy) {
  auto e = make_engine(EngineKind::kThreaded);
  Var* a = e->new_var();
  Var* b = e->new_var();
  std::latch copy_done(1);
  std::atomic<bool> overlapped{false};
  e->push([&](const RunContext&) { overlapped = wait_for(copy_done); }, {}, {a}, cpu(),
          Lane::kCompute);
  e->push([&](const RunContext&) { copy_done.count_down(); }, {}, {b}, cpu(), Lane::kCopy);
  e->wait_all();
  EXPECT_TRUE(overlapped.load());
  e->delete_var(a, nullptr);
  e->delete_var(b, nullptr);
}

// A network collective blocks its worker until every peer took part: it runs on the comm lane,
// so the device's copies and compute go on meanwhile.
TEST(ThreadedEngine, CommLaneBlockedDoesNotHoldCopyOrCompute) {
  auto e = make_engine(EngineKind::kThreaded);
  Var* a = e->new_var();
  Var* b = e->new_var();
  Var* c = e->new_var();
  std::latch others_done(2);
  std::atomic<bool> overlapped{false};
  e->push([&](const RunContext&) { overlapped = wait_for(others_done); }, {}, {a}, cpu(),
          Lane::kComm);
  e->push([&](const RunContext&) { others_done.count_down(); }, {}, {b}, cpu(), Lane::kCopy);
  e->push([&](const RunContext&) { others_done.count_down(); }, {}, {c}, cpu(), Lane::kCompute);
  e->wait_all();
  EXPECT_TRUE(overlapped.load());
  for (Var* v : {a, b, c}) e->delete_var(v, nullptr);
}

TEST(Engine, LaneNames) {
  EXPECT_EQ(lane_name(Lane::kCompute), "compute");
  EXPECT_EQ(lane_name(Lane::kCopy), "copy");
  EXPECT_EQ(lane_name(Lane::kComm), "comm");
}

TEST(ThreadedEngine, HigherPriorityRunsFirstAmongReadyOperations) {
  auto e = make_engine(EngineKind::kThreaded);  // one compute worker
  std::atomic<bool> gate{false};
  std::atomic<bool> holding{false};
  std::mutex mu;
  std::vector<int> order;
  e->push(
      [&](const RunContext&) {
        holding = true;
        while (!gate) sleep_ms(1);
      },
      {}, {}, cpu());
  // The worker must hold the gate before the others are pushed: were the gate still queued,
  // an operation pushed early would outrank it and run before the later, higher ones.
  while (!holding) sleep_ms(1);
  for (int p : {0, 5, 1, 9, 3}) {
    e->push(
        [&, p](const RunContext&) {
          std::lock_guard lock(mu);
          order.push_back(p);
        },
        {}, {}, cpu(), Lane::kCompute, p);
  }
  gate = true;
  e->wait_all();
  EXPECT_EQ(order, (std::vector<int>{9, 5, 3, 1, 0}));
}

// Operations dispatched while the worker is busy arrive together (the pool's incoming stack,
// last in first out) and still run in push order.
TEST(ThreadedEngine, ReadyOperationsOfEqualPriorityRunInPushOrder) {
  auto e = make_engine(EngineKind::kThreaded);  // one compute worker
  std::atomic<bool> gate{false};
  std::atomic<bool> holding{false};
  std::vector<int> order;  // written by the one worker only
  e->push(
      [&](const RunContext&) {
        holding = true;
        while (!gate) sleep_ms(1);
      },
      {}, {}, cpu());
  while (!holding) sleep_ms(1);
  for (int i = 0; i < 8; ++i) {
    e->push([&, i](const RunContext&) { order.push_back(i); }, {}, {}, cpu());
  }
  gate = true;
  e->wait_all();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(ThreadedEngine, BackPressureBoundsOperationsInFlight) {
  EngineOptions options;
  options.max_in_flight = 4;
  auto e = make_engine(EngineKind::kThreaded, options);
  Var* x = e->new_var();
  int64_t max_seen = 0;
  for (int i = 0; i < 50; ++i) {
    e->push([](const RunContext&) { sleep_ms(1); }, {}, {x}, cpu());
    max_seen = std::max(max_seen, e->stats().in_flight);
  }
  e->wait_all();
  EXPECT_LE(max_seen, 4);
  EXPECT_EQ(e->stats().in_flight, 0);
  e->delete_var(x, nullptr);
}

// The scheduler state of thread `tid` of this process ('R' running, 'S' sleeping, ...), from
// /proc/self/task/TID/stat; '?' when it cannot be read.
char thread_state(pid_t tid) {
  std::ifstream f("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t paren = stat.rfind(')');  // the command name may hold spaces
  return paren == std::string::npos || paren + 2 >= stat.size() ? '?' : stat[paren + 2];
}

// A full window resumes only when half of it has drained (max_in_flight / 2), not at the first
// completion: a pusher asleep on a window of 4 gated operations is still blocked after two of
// them finish, and returns once a third has, so right after its push at most 2 are in flight.
// (Resuming at the first completion, it would return with 3 or 4.) The gates open only once the
// pusher sleeps: the only place a push sleeps is the window's wait.
TEST(ThreadedEngine, AFullWindowResumesWhenHalfOfItHasDrained) {
  EngineOptions options;
  options.max_in_flight = 4;
  auto e = make_engine(EngineKind::kThreaded, options);
  std::array<std::atomic<bool>, 4> open{};
  std::atomic<int> done{0};
  for (size_t i = 0; i < open.size(); ++i) {
    e->push(
        [&open, &done, i](const RunContext&) {
          while (!open[i].load()) std::this_thread::yield();
          done.fetch_add(1);
        },
        {}, {}, cpu());
  }
  std::atomic<pid_t> pusher_tid{0};
  std::atomic<int64_t> in_flight_after_push{-1};
  std::thread pusher([&] {
    pusher_tid = gettid();
    e->push([](const RunContext&) {}, {}, {}, cpu());
    in_flight_after_push = e->stats().in_flight;
  });
  while (pusher_tid.load() == 0 || thread_state(pusher_tid.load()) != 'S') {
    ASSERT_EQ(in_flight_after_push.load(), -1) << "the push did not wait for a full window";
    std::this_thread::yield();
  }
  for (size_t i = 0; i < open.size(); ++i) {
    open[i] = true;
    while (done.load() <= static_cast<int>(i)) std::this_thread::yield();
    if (i == 1) {
      EXPECT_EQ(in_flight_after_push.load(), -1) << "resumed with 2 of 4 in flight";
    }
  }
  pusher.join();
  e->wait_all();
  EXPECT_GE(in_flight_after_push.load(), 0);
  EXPECT_LE(in_flight_after_push.load(), 2);
  EXPECT_EQ(e->stats().in_flight, 0);
}

TEST(ThreadedEngine, WaitingInsideAKernelIsAnError) {
  auto e = make_engine(EngineKind::kThreaded);
  Var* slow = e->new_var();
  Var* out = e->new_var();
  Engine* raw = e.get();
  // `slow` stays unwritten until the impatient kernel has failed, so its wait always finds it
  // unreadable; the minute's bound only keeps a regression (a kernel that does block) from
  // hanging the suite.
  std::atomic<bool> release{false};
  e->push(
      [&](const RunContext&) {
        for (int i = 0; i < 60000 && !release; ++i) sleep_ms(1);
      },
      {}, {slow}, cpu(), Lane::kCopy);
  e->push([raw, slow](const RunContext&) { raw->wait_for_var(slow); }, {}, {out}, cpu(),
          Lane::kCompute, 0, "impatient");
  try {
    e->wait_for_var(out);
    ADD_FAILURE() << "the kernel's wait did not fail";
  } catch (const EngineError& err) {
    EXPECT_THAT(err.what(), HasSubstr("operator 'impatient' failed"));
    EXPECT_THAT(err.what(), HasSubstr("must not block"));
  }
  release = true;
  e->wait_all();
  e->delete_var(slow, nullptr);
  e->delete_var(out, nullptr);
}

TEST(ThreadedEngine, SeveralFrontendThreadsPushAtOnce) {
  EngineOptions options;
  options.cpu_compute_workers = 2;
  options.max_in_flight = 64;  // also exercises back-pressure across threads
  auto e = make_engine(EngineKind::kThreaded, options);
  constexpr int kThreads = 4;
  constexpr int kPushes = 2000;
  Var* shared = e->new_var();
  int64_t shared_count = 0;  // written only by kernels that write `shared`: ordered, no race
  std::vector<Var*> own(kThreads);
  std::vector<int64_t> own_count(kThreads, 0);
  for (auto& v : own) v = e->new_var();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPushes; ++i) {
        e->push([&, t](const RunContext&) { ++own_count[static_cast<size_t>(t)]; }, {},
                {own[static_cast<size_t>(t)]}, cpu());
        // Crossed dependencies between threads: reads one var and writes another.
        Var* r = own[static_cast<size_t>((t + 1) % kThreads)];
        e->push([&](const RunContext&) { ++shared_count; }, {r}, {shared}, cpu(),
                i % 2 ? Lane::kCopy : Lane::kCompute);
      }
    });
  }
  for (auto& th : threads) th.join();
  e->wait_all();
  EXPECT_EQ(shared_count, kThreads * kPushes);
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(own_count[static_cast<size_t>(t)], kPushes);
  e->delete_var(shared, nullptr);
  for (Var* v : own) e->delete_var(v, nullptr);
}

// Workers run on their own device's cores, whichever thread started their pool. A thread inherits
// its creator's affinity, and here cpu(0)'s copy pool starts on cpu(1)'s pinned compute worker:
// it completes the write that the copy waits for, and so dispatches the copy. An inherited pin
// had kept seed_copy_overlap's copies on the busy cpu(1) core.
// Compute workers are pinned to their device's share of the cores; copy workers may run on any
// of the process's cores (so that a copy runs where a core is free).
TEST(ThreadedEngine, WorkersRunOnTheirDevicesCoresWhicheverThreadStartedThem) {
  const std::vector<int> process_cores = allowed_cores();
  const int saved = num_cpu_devices();
  set_num_cpu_devices(2);
  {
    auto e = make_engine(EngineKind::kThreaded);
    Var* x = e->new_var();
    Var* y = e->new_var();
    std::atomic<bool> copy_pushed{false};
    std::vector<int> compute_cores, copy_cores;
    e->push(
        [&](const RunContext&) {
          while (!copy_pushed) sleep_ms(1);
          compute_cores = allowed_cores();
        },
        {}, {x}, cpu(1));
    e->push([&](const RunContext&) { copy_cores = allowed_cores(); }, {x}, {y}, cpu(0),
            Lane::kCopy);
    copy_pushed = true;
    e->wait_all();
    EXPECT_EQ(compute_cores, device_cores(cpu(1)));
    EXPECT_EQ(copy_cores, process_cores);
    e->delete_var(x, nullptr);
    e->delete_var(y, nullptr);
  }
  set_num_cpu_devices(saved);
}

}  // namespace
}  // namespace janus

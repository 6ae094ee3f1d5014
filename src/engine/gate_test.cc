// Gated operations (Engine::push_gated): they wait for their gate as for a var, later pushes on
// their vars wait behind them, and a wait that would wait for its own thread's gate fails at
// once instead of hanging.
#include "janus/engine/gate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "janus/base/error.h"

#include "testing/test_util.h"

namespace janus {
namespace {

using testing::HasSubstr;

// Kernel captures: plain ints written by one operation and read by the next (ordered by vars).
struct Cells {
  int a = 0, b = 0, seen = -1;
};

std::span<Var* const> one(Var* const& v) { return {&v, 1}; }

TEST(Gate, LaterPushesWaitBehindTheGatedOperationUntilItOpens) {
  auto e = make_engine(EngineKind::kThreaded);
  Var* x = e->new_var();
  Var* y = e->new_var();
  Cells c;
  // The gated write of x reads c.a, which an operation pushed after it writes.
  std::shared_ptr<Gate> gate = push_gated(
      *e, [&](const RunContext&) { c.b = c.a * 10; }, {}, one(x), cpu(), Lane::kCompute, "gated",
      "test: abandoned");
  e->push([&](const RunContext&) { c.seen = c.b; }, one(x), one(y), cpu());
  std::atomic<bool> done{false};
  e->push([&](const RunContext&) { c.a = 7; }, {}, {}, cpu());
  e->push([&](const RunContext&) { done.store(true); }, {}, {}, cpu());
  for (int i = 0; i < 10000 && !done.load(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(done.load());
  EXPECT_FALSE(gate->is_settled());
  EXPECT_EQ(c.seen, -1);  // the read of x is still held
  gate->open();
  e->wait_for_var(y);
  EXPECT_EQ(c.seen, 70);
  e->wait_all();
  e->delete_var(x, nullptr);
  e->delete_var(y, nullptr);
}

TEST(Gate, AWaitOnThePushingThreadAbandonsItsGateInsteadOfHanging) {
  auto e = make_engine(EngineKind::kThreaded);
  Var* x = e->new_var();
  Var* y = e->new_var();
  bool ran = false;
  std::shared_ptr<Gate> gate = push_gated(
      *e, [&](const RunContext&) { ran = true; }, {}, one(x), cpu(), Lane::kCompute, "held",
      "test: step open");
  e->push([](const RunContext&) {}, one(x), one(y), cpu());
  const std::string message = error_of<EngineError>([&] { e->wait_for_var(y); });
  EXPECT_THAT(message, HasSubstr("test: step open"));
  EXPECT_THAT(message, HasSubstr("'held' was abandoned by a wait on an array"));
  EXPECT_TRUE(gate->is_settled());
  EXPECT_FALSE(ran);
  gate->open();  // a later open does nothing
  EXPECT_THROW(e->wait_for_var(x), EngineError);
  e->wait_all();  // the blockers reported the error already
  e->delete_var(x, nullptr);
  e->delete_var(y, nullptr);
}

TEST(Gate, WaitAllAbandonsAndADroppedHandleFails) {
  auto e = make_engine(EngineKind::kThreaded);
  Var* x = e->new_var();
  push_gated(
      *e, [](const RunContext&) {}, {}, one(x), cpu(), Lane::kCompute, "dropped",
      "test: dropped");  // the handle dies here
  EXPECT_THAT(error_of<EngineError>([&] { e->wait_for_var(x); }),
              HasSubstr("the gate of 'dropped' was dropped unopened"));
  Var* z = e->new_var();
  std::shared_ptr<Gate> gate = push_gated(
      *e, [](const RunContext&) {}, {}, one(z), cpu(), Lane::kCompute, "z", "test: wait_all");
  EXPECT_THAT(error_of<EngineError>([&] { e->wait_all(); }), HasSubstr("abandoned by a wait_all"));
  e->delete_var(x, nullptr);
  e->delete_var(z, nullptr);
}

// Another thread's wait is not the opener's: it waits until the pushing thread opens the gate.
TEST(Gate, AnotherThreadWaitsForTheOpen) {
  auto e = make_engine(EngineKind::kThreaded);
  Var* x = e->new_var();
  int value = 0;
  std::shared_ptr<Gate> gate = push_gated(
      *e, [&](const RunContext&) { value = 5; }, {}, one(x), cpu(), Lane::kCompute, "g",
      "test: other thread");
  std::thread waiter([&] { e->wait_for_var(x); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  gate->open();
  waiter.join();
  EXPECT_EQ(value, 5);
  e->wait_all();
  e->delete_var(x, nullptr);
}

// Back-pressure skips a thread that holds a gate: the operations behind it fill the window.
TEST(Gate, BackPressureSkipsTheThreadThatHoldsAGate) {
  auto e = make_engine(EngineKind::kThreaded, EngineOptions{.max_in_flight = 4});
  Var* x = e->new_var();
  std::shared_ptr<Gate> gate = push_gated(
      *e, [](const RunContext&) {}, {}, one(x), cpu(), Lane::kCompute, "g", "test: window");
  std::atomic<int> count{0};
  for (int i = 0; i < 20; ++i) {
    e->push([&](const RunContext&) { count.fetch_add(1); }, one(x), {}, cpu());
  }
  EXPECT_EQ(count.load(), 0);
  gate->open();
  e->wait_all();
  EXPECT_EQ(count.load(), 20);
  e->delete_var(x, nullptr);
}

// open_after: the gate opens when the writes pushed on the vars finish, with their error; from
// then on a wait on the pushing thread waits instead of abandoning it.
TEST(Gate, OpenAfterOpensOnceTheWritesFinishAndPassesTheirError) {
  auto e = make_engine(EngineKind::kThreaded);
  Var* x = e->new_var();
  Var* p = e->new_var();
  Cells c;
  std::shared_ptr<Gate> gate = push_gated(
      *e, [&](const RunContext&) { c.b = c.a + 1; }, {}, one(x), cpu(), Lane::kCompute, "g",
      "test");
  e->push(
      [&](const RunContext&) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        c.a = 41;
      },
      {}, one(p), cpu());
  gate->open_after(one(p));
  EXPECT_TRUE(gate->is_settled());
  e->wait_for_var(x);  // waits: the gate is no longer this thread's to open
  EXPECT_EQ(c.b, 42);

  Var* q = e->new_var();
  Var* y = e->new_var();
  std::shared_ptr<Gate> failing = push_gated(
      *e, [&](const RunContext&) { c.b = 0; }, {}, one(y), cpu(), Lane::kCompute, "norm", "test");
  e->push([](const RunContext&) { JANUS_THROW(ValueError, "partial failed"); }, {}, one(q), cpu());
  failing->open_after(one(q));
  EXPECT_THAT(error_of<ValueError>([&] { e->wait_for_var(y); }), HasSubstr("partial failed"));
  EXPECT_EQ(c.b, 42);
  EXPECT_THROW(e->wait_all(), ValueError);
  for (Var* v : {x, p, q, y}) e->delete_var(v, nullptr);
}

TEST(Gate, TheNaiveEngineRefuses) {
  auto e = make_engine(EngineKind::kNaive);
  Var* x = e->new_var();
  EXPECT_THAT(error_of<NotImplementedError>([&] {
                push_gated(
                    *e, [](const RunContext&) {}, {}, one(x), cpu(), Lane::kCompute, "g", "test");
              }),
              HasSubstr("the naive engine runs every operation when it is pushed"));
  e->delete_var(x, nullptr);
}

}  // namespace
}  // namespace janus

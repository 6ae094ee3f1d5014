// Exit with work in flight: the process finishes the pending work and ends, never hangs.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "janus/engine/array.h"
#include "janus/engine/engine.h"

namespace janus {
namespace {

TEST(Shutdown, ExitWithWorkInFlightFinishesTheWorkAndEnds) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        std::vector<NDArray> keep;
        for (int i = 0; i < 50; ++i) {
          NDArray a = empty({1024});
          keep.push_back(a);
          engine().push(
              [](const RunContext&) { std::this_thread::sleep_for(std::chrono::milliseconds(2)); },
              {}, {a.var()}, cpu());
        }
        engine().push([](const RunContext&) { std::fprintf(stderr, "last kernel ran\n"); }, {},
                      {keep.back().var()}, cpu());
        std::exit(0);  // 100 ms of work still queued
      },
      testing::ExitedWithCode(0), "last kernel ran");
}

TEST(Shutdown, ArraysReleasedAfterExitStillFreeTheirMemory) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        static NDArray survivor;  // destroyed after the engine has shut down
        survivor = empty({16});
        engine().push([](const RunContext&) {}, {}, {survivor.var()}, cpu());
        std::exit(0);
      },
      testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace janus

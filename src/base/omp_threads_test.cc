// ScopedOmpThreads sets the calling thread's OpenMP thread count while it lives and restores
// the count it found, nested guards included.
#include "janus/base/omp_threads.h"

#include <gtest/gtest.h>

#include <thread>

namespace janus {
namespace {

TEST(ScopedOmpThreads, SetsAndRestoresNested) {
  const int before = omp_get_max_threads();
  {
    const ScopedOmpThreads outer(before + 2);
    EXPECT_EQ(omp_get_max_threads(), before + 2);
    {
      const ScopedOmpThreads inner(1);
      EXPECT_EQ(omp_get_max_threads(), 1);
    }
    EXPECT_EQ(omp_get_max_threads(), before + 2);
  }
  EXPECT_EQ(omp_get_max_threads(), before);
}

TEST(ScopedOmpThreads, OneThreadIfChangesNothingWhenInactive) {
  const ScopedOmpThreads start(3);
  {
    const auto guard = ScopedOmpThreads::one_thread_if(false);
    EXPECT_EQ(omp_get_max_threads(), 3);
  }
  {
    const auto guard = ScopedOmpThreads::one_thread_if(true);
    EXPECT_EQ(omp_get_max_threads(), 1);
  }
  EXPECT_EQ(omp_get_max_threads(), 3);
}

TEST(ScopedOmpThreads, ActsOnTheThreadThatMadeIt) {
  const ScopedOmpThreads here(2);
  int other = 0;
  std::thread([&other] {
    const ScopedOmpThreads there(5);
    other = omp_get_max_threads();
  }).join();
  EXPECT_EQ(other, 5);
  EXPECT_EQ(omp_get_max_threads(), 2);
}

}  // namespace
}  // namespace janus

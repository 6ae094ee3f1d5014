// use_naive_engine_after_fork: a child forked from a process whose threaded engine has run work
// pushes and waits on its own, synchronous engine (the inherited one has no worker threads
// there, so a push to it would never run and a wait would hang).
#include "janus/engine/fork.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include "janus/engine/engine.h"

namespace janus {
namespace {

TEST(Fork, ChildRunsItsWorkOnANaiveEngine) {
  const EngineKind before = engine().kind();
  set_engine(EngineKind::kThreaded);
  Var* x = engine().new_var();
  int value = 0;
  engine().push([&](const RunContext&) { value = 1; }, {}, {x}, cpu());
  engine().wait_all();  // idle before the fork: no engine lock is copied held
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(60);  // a hang ends the child by SIGALRM, which the parent reports
    use_naive_engine_after_fork();
    int threads = 0;
    engine().push(
        [&](const RunContext& ctx) {
          value += 10;
          threads = ctx.num_threads;
        },
        {}, {x}, cpu());
    engine().wait_for_var(x);
    const bool ok = engine().kind() == EngineKind::kNaive && value == 11 && threads == 1;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status)) << "the child was ended by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's engine, value or kernel threads differ";
  EXPECT_EQ(value, 1);  // the parent's copy is its own
  engine().delete_var(x, nullptr);
  set_engine(before);
}

}  // namespace
}  // namespace janus

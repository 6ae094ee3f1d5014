// `janus launch` and the distributed and checkpointed `janus train`, run as a user runs them:
// build/janus (JANUS_CLI) started as a process, its output and exit status read back.
#include <fcntl.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tools_test_util.h"

extern char** environ;

namespace janus::tools {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;
using Clock = std::chrono::steady_clock;

struct Result {
  int status = -1;  // the exit status; 128 + N for a process killed by signal N
  std::string out, err;
  double seconds = 0;
};

std::filesystem::path scratch() {
  static const testing::TempDir dir("janus_launch_test_");
  return dir;
}

// `janus ARGS` (ARGS as sh splits them, with ENV before it), its output and status.
Result janus(const std::string& args, const std::string& env = "") {
  const auto out = scratch() / "out", err = scratch() / "err";
  const std::string command = fmt::format("{} '{}' {} >'{}' 2>'{}' </dev/null", env, JANUS_CLI,
                                          args, out.string(), err.string());
  const auto start = Clock::now();
  const int raw = std::system(command.c_str());
  Result r;
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  r.out = testing::read_file(out);
  r.err = testing::read_file(err);
  return r;
}

bool process_exists(pid_t pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

// The pid that a rank wrote into `file`, waiting for it a little.
pid_t read_pid(const std::filesystem::path& file) {
  for (int i = 0; i < 100 && !std::filesystem::exists(file); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return static_cast<pid_t>(std::atoi(testing::read_file(file).c_str()));
}

// The "loss" of each epoch in a --log-json file.
std::vector<double> losses_in(const std::filesystem::path& log) {
  const std::string text = testing::read_file(log);
  const std::regex loss("\"loss\": ([-0-9.e+]+)");
  std::vector<double> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), loss); it != std::sregex_iterator();
       ++it) {
    out.push_back(std::stod((*it)[1]));
  }
  return out;
}

TEST(Launch, PrefixesEveryLineWithItsRankAndSetsTheEnvironment) {
  const Result r = janus(
      "launch -n 2 -s 1 -- sh -c 'echo $JANUS_RANK $JANUS_ROLE $JANUS_WORLD_SIZE "
      "$JANUS_LOCAL_RANK $JANUS_NUM_WORKERS $JANUS_NUM_SERVERS $JANUS_MASTER_ADDR; "
      "echo to stderr >&2; printf \"no newline\"'");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("[worker 0] 0 worker 3 0 2 1 127.0.0.1\n"));
  EXPECT_THAT(r.out, HasSubstr("[worker 1] 1 worker 3 1 2 1 127.0.0.1\n"));
  EXPECT_THAT(r.out, HasSubstr("[server 0] 2 server 3 2 2 1 127.0.0.1\n"));
  EXPECT_THAT(r.out, HasSubstr("[server 0] no newline\n"));
  EXPECT_THAT(r.err, HasSubstr("[worker 1] to stderr\n"));
  EXPECT_EQ(r.err.find("janus launch:"), std::string::npos) << r.err;
}

TEST(Launch, PassesThePortItIsGiven) {
  const Result r = janus("launch -n 1 --port 29517 -- sh -c 'echo $JANUS_MASTER_PORT'");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "[worker 0] 29517\n");
}

// Rank 1 exits with 3 (or kills itself with SIGKILL) once rank 0, which would sleep for a
// minute, is running: the launcher names rank 1 and how it ended, stops rank 0 and exits 1.
void expect_death_is_reported(const std::string& how, const std::string& message) {
  const auto pid_file = scratch() / "rank0.pid";
  std::filesystem::remove(pid_file);
  const Result r = janus(fmt::format(
      "launch -n 2 --grace 2 -- sh -c 'if [ $JANUS_RANK = 0 ]; then echo $$ >{}; exec sleep 60; "
      "fi; while [ ! -s {} ]; do sleep 0.05; done; {}'",
      pid_file.string(), pid_file.string(), how));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_THAT(r.err, MatchesRegex(fmt::format(
                         "(.|\n)*janus launch: worker 1 \\(pid [0-9]+\\) {}\n(.|\n)*", message)));
  EXPECT_THAT(r.err, HasSubstr("janus launch: stopping the 1 other process"));
  EXPECT_LT(r.seconds, 10);  // SIGTERM stops rank 0 at once; no wait for its minute
  const pid_t rank0 = read_pid(pid_file);
  ASSERT_GT(rank0, 0);
  EXPECT_FALSE(process_exists(rank0)) << "rank 0 (pid " << rank0 << ") outlived the launcher";
}

TEST(Launch, AProcessThatExitsWithAStatusStopsTheJobAndIsNamed) {
  expect_death_is_reported("exit 3", "exited with status 3");
}

TEST(Launch, AProcessKilledBySignalStopsTheJobAndIsNamed) {
  expect_death_is_reported("kill -9 $$", "was killed by signal 9 \\(SIGKILL\\)");
}

// Rank 0 exits with 4 as soon as rank 1 has exited with 3 (as a server exits when its worker's
// connection closes): ending right after the first failure, it is reported with it, not
// stopped as its victim, whichever of the two the launcher reaps first.
TEST(Launch, AProcessThatEndsRightAfterTheFirstFailureIsReportedWithIt) {
  const auto flag = scratch() / "rank1.ending";
  std::filesystem::remove(flag);
  const Result r = janus(fmt::format(
      "launch -n 2 -- sh -c 'if [ $JANUS_RANK = 0 ]; then while [ ! -s {} ]; do sleep 0.01; "
      "done; exit 4; fi; echo x >{}; exit 3'",
      flag.string(), flag.string()));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("janus launch: worker 1 (pid "));
  EXPECT_THAT(r.err, HasSubstr("exited with status 3"));
  EXPECT_THAT(r.err, HasSubstr("janus launch: worker 0 (pid "));
  EXPECT_THAT(r.err, HasSubstr("exited with status 4"));
}

TEST(Launch, ACommandThatCannotRunIsNamed) {
  const Result r = janus("launch -n 2 -- /nonexistent/program");
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("cannot run '/nonexistent/program': No such file or directory"));
  EXPECT_THAT(r.err, HasSubstr("exited with status 127"));
}

// Runs `janus ARGS` (two workers that trap SIGTERM, say "got TERM" and exit 0), sends it SIGTERM
// once both said "ready" and returns its output, stdout and stderr together; the launcher must
// exit with 128 + SIGTERM.
std::string interrupted_job(std::vector<std::string> args) {
  const auto out = scratch() / "sigterm.out";
  std::filesystem::remove(out);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  args.insert(args.begin(), JANUS_CLI);
  for (const char* a : {"--", "sh", "-c",
                        "trap 'echo got TERM; exit 0' TERM; echo ready; while :; do sleep 0.05; "
                        "done"}) {
    args.emplace_back(a);
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  EXPECT_EQ(posix_spawn(&pid, JANUS_CLI, &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  if (pid < 0) return "";
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < deadline) {
    const std::string text = testing::read_file(out);
    if (text.find("[worker 0] ready") != std::string::npos &&
        text.find("[worker 1] ready") != std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGTERM);
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, 0), pid);
  const std::string text = testing::read_file(out);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM) << status << text;
  return text;
}

TEST(Launch, ForwardsSigtermToEveryProcess) {
  const std::string text = interrupted_job({"launch", "-n", "2"});
  EXPECT_THAT(text, HasSubstr("janus launch: got SIGTERM; forwarding it to the 2 processes left"));
  EXPECT_THAT(text, HasSubstr("[worker 0] got TERM\n"));
  EXPECT_THAT(text, HasSubstr("[worker 1] got TERM\n"));
}

// A stand-in for a remote shell: says which host it was given on stderr and runs the command
// line (its last argument) with sh here, as ssh would there.
std::filesystem::path fake_agent() {
  const auto agent = scratch() / "agent.sh";
  testing::write_file(agent, "#!/bin/sh\necho \"agent for $1\" >&2\nexec sh -c \"$2\"\n");
  std::filesystem::permissions(agent, std::filesystem::perms::owner_all);
  return agent;
}

std::string hosts_file(const std::string& name, const std::string& text) {
  const auto path = scratch() / name;
  testing::write_file(path, text);
  return path.string();
}

TEST(LaunchHosts, PlacesTheRanksOnTheHostsThroughTheAgent) {
  const std::string hosts =
      hosts_file("hosts", "alpha slots=2  # two ranks\n\nbeta addr=10.9.0.2\n");
  const Result r = janus(
      fmt::format("launch -n 2 -s 1 --hosts '{}' --launcher-agent '{}' -- sh -c 'echo $JANUS_RANK "
                  "$JANUS_LOCAL_RANK $JANUS_ROLE $JANUS_MASTER_ADDR $JANUS_MASTER_PORT "
                  "$JANUS_DIST_TIMEOUT $OMP_NUM_THREADS $(pwd) \"it'\\''s\"'",
                  hosts, fake_agent().string()),
      fmt::format("cd '{}' && JANUS_DIST_TIMEOUT=7 OMP_NUM_THREADS=1", scratch().string()));
  EXPECT_EQ(r.status, 0) << r.err;
  const std::string rest = fmt::format(" 29500 7 1 {} it's\n", scratch().string());
  EXPECT_THAT(r.out, HasSubstr("[worker 0] 0 0 worker alpha" + rest));
  EXPECT_THAT(r.out, HasSubstr("[worker 1] 1 1 worker alpha" + rest));
  EXPECT_THAT(r.out, HasSubstr("[server 0] 2 0 server alpha" + rest));
  EXPECT_THAT(r.err, HasSubstr("[worker 1] agent for alpha\n"));
  EXPECT_THAT(r.err, HasSubstr("[server 0] agent for beta\n"));
}

TEST(LaunchHosts, TheAgentMayNameTheHostInsideItsCommand) {
  const std::string hosts = hosts_file("hosts1", "gamma\n");
  const Result r =
      janus(fmt::format("launch -n 1 --port 4000 --hosts '{}' --launcher-agent 'env "
                        "AGENT_HOST={{host}} sh -c' -- sh -c 'echo $AGENT_HOST $JANUS_MASTER_PORT'",
                        hosts));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "[worker 0] gamma 4000\n");
}

TEST(LaunchHosts, ForwardsSigtermThroughTheAgent) {
  const std::string text =
      interrupted_job({"launch", "-n", "2", "--hosts", hosts_file("hosts2", "alpha slots=2\n"),
                       "--launcher-agent", fake_agent().string()});
  // Each rank's trap ran: the signal went by name through the agent's stdin to the relay.
  EXPECT_THAT(text, HasSubstr("[worker 0] got TERM\n"));
  EXPECT_THAT(text, HasSubstr("[worker 1] got TERM\n"));
}

TEST(LaunchHosts, ARemoteDeathBySignalIsNamed) {
  const std::string hosts = hosts_file("hosts3", "alpha\nbeta\n");
  const Result r = janus(fmt::format(
      "launch -n 2 --grace 2 --hosts '{}' --launcher-agent '{}' -- sh -c 'if [ $JANUS_RANK = 1 "
      "]; then sleep 0.2; kill -9 $$; fi; exec sleep 30'",
      hosts, fake_agent().string()));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_THAT(r.err, MatchesRegex("(.|\n)*janus launch: worker 1 on host 'beta' \\(agent pid "
                                  "[0-9]+\\) was killed by signal 9 \\(SIGKILL\\)\n(.|\n)*"));
  EXPECT_LT(r.seconds, 10);
}

TEST(LaunchHosts, AnUnreachableHostIsNamed) {
  if (!std::filesystem::exists("/usr/bin/ssh")) GTEST_SKIP() << "no /usr/bin/ssh";
  // Port 1 of this machine's loopback: refused at once, and no traffic leaves the machine.
  const std::string hosts = hosts_file("hosts4", "127.0.0.1\n");
  const Result r = janus(fmt::format(
      "launch -n 1 --hosts '{}' --launcher-agent 'ssh -o BatchMode=yes -p 1' -- true", hosts));
  EXPECT_EQ(r.status, 1) << r.err;
  // ssh's message first, then the launcher's line that points to it.
  const size_t refused = r.err.find(
      "[worker 0] ssh: connect to host 127.0.0.1 port 1: Connection "
      "refused");
  EXPECT_NE(refused, std::string::npos) << r.err;
  EXPECT_LT(refused, r.err.find("janus launch: worker 0")) << r.err;
  EXPECT_THAT(r.err, HasSubstr("janus launch: worker 0 on host '127.0.0.1' (agent pid "));
  EXPECT_THAT(r.err, HasSubstr("exited with status 255 (the agent 'ssh -o BatchMode=yes -p 1' "
                               "could not run the command on host '127.0.0.1'"));
}

TEST(LaunchHosts, ABadHostsFileNamesTheLineAndWhatWasExpected) {
  const std::pair<std::string, std::string> cases[] = {
      {"alpha slots=x\n", ":1: 'slots=x' is not valid; expected slots=N with N a whole number"},
      {"alpha slots=0\n", ":1: 'slots=0' is not valid"},
      {"\nalpha\nbeta fast\n",
       ":3: unexpected 'fast' after host 'beta'; expected NAME [slots=N] [addr=ADDRESS]"},
      {"slots=2\n", ":1: 'slots=2' is not a host name"},
      {"a\n# b\na\n", ":3: host 'a' is listed again (first on line 1)"},
      {"# nothing\n\n", ": names no host; expected NAME [slots=N] [addr=ADDRESS] on each line"},
  };
  for (const auto& [text, message] : cases) {
    const std::string hosts = hosts_file("bad-hosts", text);
    const Result r = janus(fmt::format("launch -n 1 --hosts '{}' -- true", hosts));
    EXPECT_EQ(r.status, 1) << text;
    EXPECT_THAT(r.err, HasSubstr("janus launch: " + hosts + message)) << text;
  }
  const Result missing = janus("launch -n 1 --hosts /nonexistent/hosts -- true");
  EXPECT_THAT(missing.err, HasSubstr("--hosts /nonexistent/hosts: cannot read it: No such file"));
  const Result few = janus(fmt::format("launch -n 2 -s 1 --hosts '{}' -- true",
                                       hosts_file("two-hosts", "alpha\nbeta\n")));
  EXPECT_EQ(few.status, 1);
  EXPECT_THAT(few.err, HasSubstr("its 2 hosts give 2 slots, but the job has 3 processes (2 "
                                 "workers, 1 servers); add hosts or slots=N"));
}

// Two workers of dist_allreduce, each on half of every batch: only worker 0 prints its epoch
// lines, and its figures are those of one process on the whole batches (the sums differ in the
// order of float additions only).
// Two workers on a ring (dist_allreduce), or with a parameter server (dist_sync: the server
// process runs the same `janus train` command and serves), train as one process does.
class DistributedTraining : public ::testing::TestWithParam<const char*> {};

TEST_P(DistributedTraining, PrintsOnWorkerZeroAndEqualsOneProcess) {
  const std::string kvstore = GetParam();
  const auto log2 = scratch() / fmt::format("two-{}.json", kvstore);
  const auto log1 = scratch() / fmt::format("one-{}.json", kvstore);
  const std::string train = "train --limit 600 --epochs 2 --batch-size 128 --momentum 0.9";
  const std::string servers = kvstore == "dist_sync" ? "-s 1 " : "";
  const Result two = janus(fmt::format("launch -n 2 {}-- '{}' {} --kvstore {} --log-json '{}'",
                                       servers, JANUS_CLI, train, kvstore, log2.string()),
                           "JANUS_DIST_TIMEOUT=20");
  ASSERT_EQ(two.status, 0) << two.out << two.err;
  EXPECT_THAT(two.out, HasSubstr(fmt::format("2 workers ({} store)", kvstore)));
  EXPECT_THAT(two.out, MatchesRegex("(.|\n)*\\[worker 0\\] epoch  1/2: loss(.|\n)*"));
  EXPECT_THAT(two.out, MatchesRegex("(.|\n)*\\[worker 0\\] epoch  2/2: loss(.|\n)*"));
  EXPECT_THAT(two.out, Not(HasSubstr("[worker 1]")));
  EXPECT_EQ(two.err, "");
  const Result one = janus(fmt::format("{} --log-json '{}'", train, log1.string()));
  ASSERT_EQ(one.status, 0) << one.err;
  const std::vector<double> l2 = losses_in(log2), l1 = losses_in(log1);
  ASSERT_EQ(l2.size(), 2u);
  ASSERT_EQ(l1.size(), 2u);
  for (size_t e = 0; e < 2; ++e) EXPECT_NEAR(l2[e], l1[e], 1e-5 * l1[e]) << "epoch " << e + 1;
}

INSTANTIATE_TEST_SUITE_P(Stores, DistributedTraining,
                         ::testing::Values("dist_allreduce", "dist_sync"));

// A checkpoint write cut short (the writer exits between its files and the rename) leaves the
// previous checkpoint, and a run resumed from it gives the figures of an uninterrupted run with
// the same cosine schedule, bit for bit (the log prints them with 17 digits).
TEST(TrainCheckpoint, AWriteCutShortLeavesThePreviousOneAndResumeContinuesTheCurve) {
  const auto dir = scratch() / "checkpoints";
  std::filesystem::remove_all(dir);
  const std::string train =
      "train --limit 600 --epochs 3 --batch-size 128 --momentum 0.9 --lr-schedule cosine";
  const auto whole_log = scratch() / "whole.json", resumed_log = scratch() / "resumed.json";
  ASSERT_EQ(janus(fmt::format("{} --log-json '{}'", train, whole_log.string())).status, 0);

  const std::string checkpointed = fmt::format("{} --checkpoint-dir '{}'", train, dir.string());
  const Result cut = janus(checkpointed, "JANUS_CHECKPOINT_TEST_CRASH=2");
  EXPECT_EQ(cut.status, 75) << cut.err;  // the test hook's _exit, during epoch 2's write
  EXPECT_TRUE(std::filesystem::exists(dir / "epoch-0001" / "checkpoint.json"));
  EXPECT_FALSE(std::filesystem::exists(dir / "epoch-0002"));

  const Result resumed =
      janus(fmt::format("{} --resume --log-json '{}'", checkpointed, resumed_log.string()));
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_THAT(resumed.out, HasSubstr("after epoch 1\n"));
  EXPECT_THAT(resumed.out, Not(HasSubstr("epoch  1/3")));
  EXPECT_TRUE(std::filesystem::exists(dir / "epoch-0003" / "params.safetensors"));
  const std::vector<double> whole = losses_in(whole_log), again = losses_in(resumed_log);
  ASSERT_EQ(whole.size(), 3u);
  EXPECT_EQ(again, whole);
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    EXPECT_FALSE(e.path().filename().string().starts_with(".")) << "left over: " << e.path();
  }
}

// The same across processes: `janus train --kvstore dist_sync` on 2 workers and a server, cut
// short by worker 0's exit during epoch 2's checkpoint (the launcher then stops the others), and
// resumed from epoch 1 by a new job, gives the loss curve of an uninterrupted job bit for bit.
// The servers only sum (the optimizer and its momentum run on the workers, whose trainer state
// the checkpoint holds), so a new job with new servers continues exactly.
TEST(TrainCheckpoint, AResumedDistSyncJobGivesTheCurveOfAnUninterruptedOne) {
  const auto dir = scratch() / "dist-checkpoints";
  std::filesystem::remove_all(dir);
  const std::string job = fmt::format(
      "launch -n 2 -s 1 -- '{}' train --kvstore dist_sync --limit 600 --epochs 3 --batch-size 128 "
      "--momentum 0.9 --lr-schedule cosine",
      JANUS_CLI);
  const auto whole_log = scratch() / "dist-whole.json",
             resumed_log = scratch() / "dist-resumed.json";
  const Result whole =
      janus(fmt::format("{} --log-json '{}'", job, whole_log.string()), "JANUS_DIST_TIMEOUT=20");
  ASSERT_EQ(whole.status, 0) << whole.err;

  const std::string checkpointed = fmt::format("{} --checkpoint-dir '{}'", job, dir.string());
  const Result cut = janus(checkpointed, "JANUS_DIST_TIMEOUT=20 JANUS_CHECKPOINT_TEST_CRASH=2");
  EXPECT_EQ(cut.status, 1) << cut.err;
  EXPECT_THAT(cut.err, HasSubstr("janus launch: worker 0 (pid "));
  EXPECT_THAT(cut.err, HasSubstr("exited with status 75"));
  EXPECT_TRUE(std::filesystem::exists(dir / "epoch-0001" / "checkpoint.json"));
  EXPECT_FALSE(std::filesystem::exists(dir / "epoch-0002"));

  const Result resumed =
      janus(fmt::format("{} --resume --log-json '{}'", checkpointed, resumed_log.string()),
            "JANUS_DIST_TIMEOUT=20");
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_THAT(resumed.out, HasSubstr("after epoch 1\n"));
  const std::vector<double> want = losses_in(whole_log), got = losses_in(resumed_log);
  ASSERT_EQ(want.size(), 3u);
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace janus::tools

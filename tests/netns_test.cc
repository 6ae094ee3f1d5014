// Several machines on this one: three "hosts" as Linux network namespaces, each with an eth0
// (10.211.0.1-3/24) on a veth pair whose other end is on a bridge in a fourth, "hub" namespace.
// No namespace has a route out and none is linked to this machine's own namespace, so nothing
// leaves the machine. `janus launch --hosts` starts the ranks in them through the agent
// `ip netns exec {host} sh -c`, and the ranks find each other over the veths, as on separate
// machines. Needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN) and network namespaces; where it cannot
// create one, every test skips and says why.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

struct Shell {
  int status = -1;
  std::string output;  // stdout and stderr
};

// `command` under sh, its status and output; under `timeout`, so that nothing here can hang.
Shell sh(const std::string& command, int timeout_s = 30) {
  std::string quoted;
  for (const char ch : command) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  const std::string full = fmt::format("timeout -k 5 {} sh -c '{}' 2>&1", timeout_s, quoted);
  Shell r;
  FILE* p = ::popen(full.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), p)) > 0;) r.output.append(buf, n);
  const int raw = ::pclose(p);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  return r;
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream text;
  text << f.rdbuf();
  return text.str();
}

constexpr const char* kPrefix = "janus-netns-";
constexpr int kHosts = 3;

// The namespaces of this run: janus-netns-PID-hub and janus-netns-PID-h0..h2 (unique per run;
// those of a run that was killed before its clean-up are removed by the next one).
class Namespaces {
 public:
  Namespaces() : prefix_(fmt::format("{}{}-", kPrefix, ::getpid())) {}
  ~Namespaces() { remove(); }

  // Creates the hosts; false (and the reason) when this machine cannot.
  bool create(std::string& why_not) {
    if (::geteuid() != 0) {
      why_not = "network namespaces need root (CAP_SYS_ADMIN, CAP_NET_ADMIN)";
      return false;
    }
    remove_stale();
    const Shell probe = sh(fmt::format("ip netns add {}", hub()));
    if (probe.status != 0) {
      why_not = "cannot create a network namespace: ip netns add: " + probe.output;
      return false;
    }
    created_ = true;
    std::vector<std::string> steps = {
        fmt::format("ip -n {} link add br0 type bridge", hub()),
        fmt::format("ip -n {} link set br0 up", hub()),
    };
    for (int i = 0; i < kHosts; ++i) {
      steps.push_back(fmt::format("ip netns add {}", host(i)));
      steps.push_back(fmt::format("ip -n {} link add vh{} type veth peer name eth0 netns {}", hub(),
                                  i, host(i)));
      steps.push_back(fmt::format("ip -n {} link set vh{} master br0 up", hub(), i));
      steps.push_back(fmt::format("ip -n {} addr add {}/24 dev eth0", host(i), address(i)));
      steps.push_back(fmt::format("ip -n {} link set eth0 up", host(i)));
      steps.push_back(fmt::format("ip -n {} link set lo up", host(i)));
    }
    for (const std::string& step : steps) {
      const Shell r = sh(step);
      if (r.status != 0) {
        why_not = fmt::format("cannot set up the hosts: '{}' failed: {}", step, r.output);
        return false;
      }
    }
    // A veth's carrier comes up once both ends are up; the rendezvous retries meanwhile, but
    // a link that never comes up should be a skip with its reason, not a failed test.
    for (int i = 0; i < kHosts; ++i) {
      const Shell up = sh(fmt::format(
          "for t in $(seq 100); do [ \"$(ip netns exec {} cat /sys/class/net/eth0/operstate)\" = "
          "up ] && exit 0; sleep 0.05; done; exit 1",
          host(i)));
      if (up.status != 0) {
        why_not = fmt::format("the link of host h{} does not come up: {}", i, up.output);
        return false;
      }
    }
    return true;
  }

  void remove() {
    if (!created_) return;
    for (int i = 0; i < kHosts; ++i) sh(fmt::format("ip netns del {} 2>/dev/null", host(i)));
    sh(fmt::format("ip netns del {}", hub()));
    created_ = false;
  }

  std::string hub() const { return prefix_ + "hub"; }
  std::string host(int i) const { return fmt::format("{}h{}", prefix_, i); }
  static std::string address(int i) { return fmt::format("10.211.0.{}", i + 1); }

  // A hosts file for `janus launch`: the first `n` hosts with `slots` each.
  std::string hosts_file(const std::filesystem::path& dir, int n, int slots) const {
    const auto path = dir / fmt::format("hosts-{}x{}", n, slots);
    std::ofstream f(path);
    for (int i = 0; i < n; ++i)
      f << host(i) << " slots=" << slots << " addr=" << address(i) << "\n";
    return path.string();
  }

  // Bytes that crossed host i's veth, both ways.
  int64_t bytes_through(int i) const {
    int64_t total = 0;
    for (const char* way : {"rx", "tx"}) {
      const Shell r = sh(fmt::format("ip netns exec {} cat /sys/class/net/vh{}/statistics/{}_bytes",
                                     hub(), i, way));
      total += std::atoll(r.output.c_str());
    }
    return total;
  }

 private:
  // Namespaces of earlier runs whose process is gone (killed before it could clean up).
  static void remove_stale() {
    std::istringstream list(sh("ip netns list").output);
    const std::regex mine(std::string(kPrefix) + "([0-9]+)-[a-z0-9]+");
    for (std::string line; std::getline(list, line);) {
      std::smatch m;
      const std::string name = line.substr(0, line.find(' '));
      if (!std::regex_match(name, m, mine)) continue;
      const pid_t pid = static_cast<pid_t>(std::stol(m[1]));
      if (::kill(pid, 0) != 0 && errno == ESRCH) sh(fmt::format("ip netns del {}", name));
    }
  }

  std::string prefix_;
  bool created_ = false;
};

constexpr const char* kAgent = "ip netns exec {host} sh -c";

class NetnsHosts : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new std::filesystem::path(std::filesystem::temp_directory_path() /
                                         fmt::format("janus_netns_test_{}", ::getpid()));
    std::filesystem::create_directories(*scratch_);
    namespaces_ = new Namespaces;
    why_not_ = new std::string;
    if (!namespaces_->create(*why_not_)) namespaces_->remove();
  }
  static void TearDownTestSuite() {
    delete namespaces_;  // removes the namespaces
    namespaces_ = nullptr;
    std::filesystem::remove_all(*scratch_);
    delete scratch_;
    delete why_not_;
  }
  void SetUp() override {
    if (!why_not_->empty()) GTEST_SKIP() << *why_not_;
  }

  // `janus launch` with the namespace agent on the first `n` hosts, `slots` each.
  static std::string launch(int n, int slots, const std::string& options,
                            const std::string& command) {
    return fmt::format("timeout -k 5 120 {} launch {} --hosts {} --launcher-agent \"{}\" -- {}",
                       JANUS_CLI, options, namespaces_->hosts_file(*scratch_, n, slots), kAgent,
                       command);
  }

  static inline Namespaces* namespaces_ = nullptr;
  static inline std::string* why_not_ = nullptr;
  static inline std::filesystem::path* scratch_ = nullptr;
};

// Allreduce, broadcast, allgather of several sizes and dtypes on 2 hosts of 2 processes each,
// every result checked by each rank against its own computation; the data went over the veths.
TEST_F(NetnsHosts, CollectivesAcrossTwoHostsOfTwoProcessesEach) {
  const int64_t before = namespaces_->bytes_through(1);
  const Shell r = sh(launch(2, 2, "-n 4", fmt::format("{} collectives", JANUS_DIST_WORKER)), 150);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_GT(namespaces_->bytes_through(1) - before, 1'000'000) << "host h1's link carried nothing";
}

// A short data-parallel training on 2 hosts, each worker on its half of every batch: the
// parameters equal those of one process on the whole batch (dist_worker checks, to 1e-5 +
// 1e-4 relative): with the ring (dist_allreduce), and with a parameter server on the third
// host (dist_sync, momentum on the server).
TEST_F(NetnsHosts, AllreduceTrainingEqualsOneProcess) {
  const Shell r = sh(launch(2, 1, "-n 2", fmt::format("{} train", JANUS_DIST_WORKER)), 150);
  EXPECT_EQ(r.status, 0) << r.output;
}

TEST_F(NetnsHosts, SyncTrainingWithAServerOnAThirdHostEqualsOneProcess) {
  const Shell r =
      sh(launch(3, 1, "-n 2 -s 1", fmt::format("{} ps_train_sync", JANUS_DIST_WORKER)), 150);
  EXPECT_EQ(r.status, 0) << r.output;
}

// `janus train --kvstore dist_sync` as a user runs it across the hosts: worker 0's loss of
// each epoch equals one process's on the whole batches.
TEST_F(NetnsHosts, JanusTrainDistSyncEqualsOneProcess) {
  const std::string train = "train --limit 600 --epochs 2 --batch-size 128 --momentum 0.9";
  const auto log2 = *scratch_ / "two.json", log1 = *scratch_ / "one.json";
  const Shell two = sh(fmt::format("JANUS_DIST_TIMEOUT=20 {}",
                                   launch(3, 1, "-n 2 -s 1",
                                          fmt::format("{} {} --kvstore dist_sync --log-json {}",
                                                      JANUS_CLI, train, log2.string()))),
                       150);
  ASSERT_EQ(two.status, 0) << two.output;
  EXPECT_THAT(two.output, HasSubstr("2 workers (dist_sync store)"));
  const Shell one = sh(fmt::format("{} {} --log-json {}", JANUS_CLI, train, log1.string()), 150);
  ASSERT_EQ(one.status, 0) << one.output;
  const std::regex loss("\"loss\": ([-0-9.e+]+)");
  auto losses = [&](const std::filesystem::path& p) {
    const std::string text = read_file(p);
    std::vector<double> out;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), loss);
         it != std::sregex_iterator(); ++it) {
      out.push_back(std::stod((*it)[1]));
    }
    return out;
  };
  const std::vector<double> l2 = losses(log2), l1 = losses(log1);
  ASSERT_EQ(l2.size(), 2u);
  ASSERT_EQ(l1.size(), 2u);
  for (size_t e = 0; e < 2; ++e) EXPECT_NEAR(l2[e], l1[e], 1e-5 * l1[e]) << "epoch " << e + 1;
}

// Host h2's link goes down in the middle of a loop of allreduces (3 ranks, one per host):
// nothing closes a connection, the peers just fall silent, and every rank, the two survivors
// and the cut-off one, gets a DistError naming the allreduce and itself, and the job ends. On
// a quiet machine that takes the timeout (3 s) plus about 1.5 s (the cut-off rank's question to
// the store on host h0, which ranks have gone?, goes unanswered for 1.5 s before it says
// "unreachable"); the bound below is generous because a loaded 2-core machine delays processes
// by seconds, and what it guards against is a hang.
TEST_F(NetnsHosts, AHostWhoseLinkGoesDownFailsEveryRankWithinTheTimeout) {
  constexpr int kTimeout = 3;
  const auto ready = *scratch_ / "partition.ready", out = *scratch_ / "partition.out";
  std::filesystem::remove(ready);
  const std::string command = fmt::format(
      "JANUS_DIST_TIMEOUT={} JANUS_TEST_READY_FILE={} exec {} >{} 2>&1", kTimeout, ready.string(),
      launch(3, 1, "-n 3", fmt::format("{} partition", JANUS_DIST_WORKER)), out.string());
  std::vector<std::string> args = {"/bin/sh", "-c", command};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  ASSERT_EQ(::posix_spawn(&pid, "/bin/sh", nullptr, nullptr, argv.data(), environ), 0);
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (!std::filesystem::exists(ready) && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const bool started = std::filesystem::exists(ready);
  const Shell down = sh(fmt::format("ip -n {} link set eth0 down", namespaces_->host(2)));
  const auto cut = Clock::now();
  int status = 0;
  pid_t ended = 0;
  while ((ended = ::waitpid(pid, &status, WNOHANG)) == 0 &&
         Clock::now() < deadline + std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const double after_cut = std::chrono::duration<double>(Clock::now() - cut).count();
  if (ended == 0) {
    ::kill(pid, SIGKILL);  // the launcher takes its ranks with it (PR_SET_PDEATHSIG)
    ::waitpid(pid, &status, 0);
  }
  sh(fmt::format("ip -n {} link set eth0 up", namespaces_->host(2)));
  const std::string text = read_file(out);
  ASSERT_TRUE(started) << "the allreduces never got going:\n" << text;
  ASSERT_EQ(down.status, 0) << down.output;
  ASSERT_NE(ended, 0) << "the job hung after the cut:\n" << text;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << text;
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_THAT(text, HasSubstr(fmt::format("[worker {0}] [rank {0}] DistError in round", rank)))
        << text;
  }
  EXPECT_THAT(text, HasSubstr("on rank 0 of 3"));
  EXPECT_THAT(text, HasSubstr("no rank has left the job: a peer stalled or is unreachable"));
  EXPECT_LT(after_cut, kTimeout + 20.0) << text;
}

}  // namespace

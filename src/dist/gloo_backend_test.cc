// Gloo's point-to-point transfers after a failure, with three ranks of one process (each its
// own Gloo context, joined through a file store): nothing posted may still write the caller's
// memory once wait() has thrown, and the failure named is the one that caused the others.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "backend.h"

namespace janus::dist {
namespace {

using std::chrono::milliseconds;

// Three ranks joined through a file store in a directory of their own, removed at the end.
class ThreeRanks {
 public:
  explicit ThreeRanks(const std::string& name)
      : store_(std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(store_);
    std::filesystem::create_directories(store_);
    ranks.resize(3);
    std::vector<std::thread> joining;
    for (int r = 0; r < 3; ++r) {
      joining.emplace_back([this, r] {
        ProcessGroupOptions o;
        o.rank = r;
        o.world_size = 3;
        o.file_store = store_.string();
        o.timeout = milliseconds(20000);
        ranks[static_cast<size_t>(r)] = make_gloo_backend(o);
      });
    }
    for (std::thread& t : joining) t.join();
  }
  ~ThreeRanks() {
    ranks.clear();
    std::filesystem::remove_all(store_);
  }

  std::vector<std::unique_ptr<Backend>> ranks;

 private:
  std::filesystem::path store_;
};

// Rank 0 waits on a receive from rank 2, which dies, and on one from rank 1, which sends only
// afterwards. wait() names rank 2, and returns only once rank 1's value has arrived: a wait that
// threw at the first failure left that receive pending, and the value then landed in memory the
// caller had already reused (in the parameter-server worker: a freed reply header, which
// corrupted the heap).
TEST(GlooPointToPoint, AFailedWaitLeavesNoTransferThatCanStillWriteTheCallersMemory) {
  ThreeRanks group("janus_p2p_store");
  std::vector<std::unique_ptr<Backend>>& ranks = group.ranks;

  std::unique_ptr<PointToPoint> p2p = ranks[0]->point_to_point();
  int64_t from_dead = 0;
  int64_t from_live = 0;
  p2p->recv(2, 7, &from_dead, sizeof(from_dead));
  p2p->recv(1, 7, &from_live, sizeof(from_live));
  ranks[2].reset();  // rank 2 dies: its connections close
  std::thread live([&ranks] {
    std::this_thread::sleep_for(milliseconds(300));  // well after rank 0 saw rank 2 go
    const int64_t value = 42;
    std::unique_ptr<PointToPoint> send = ranks[1]->point_to_point();
    send->send(0, 7, &value, sizeof(value));
    send->wait(milliseconds(20000), nullptr);
  });

  int failed = -1;
  EXPECT_ANY_THROW(p2p->wait(milliseconds(20000), &failed));
  EXPECT_EQ(failed, 2);
  EXPECT_EQ(from_live, 42) << "wait() returned with the receive from the live rank pending";
  from_live = -1;  // the caller reuses its memory
  live.join();
  std::this_thread::sleep_for(milliseconds(100));  // time for a late value to land
  EXPECT_EQ(from_live, -1) << "a transfer wrote the caller's memory after wait() threw";

  p2p.reset();
}

// Rank 0 waits first on a receive from rank 1, which is alive but sends nothing, then on one
// from rank 2, which died: the broken connection is what wait() names, not the timeout that
// came first in posting order (a peer that does not answer is often waiting on the dead one).
TEST(GlooPointToPoint, ABrokenConnectionIsNamedBeforeATimeout) {
  ThreeRanks group("janus_p2p_store2");
  std::vector<std::unique_ptr<Backend>>& ranks = group.ranks;

  std::unique_ptr<PointToPoint> p2p = ranks[0]->point_to_point();
  int64_t from_silent = 0;
  int64_t from_dead = 0;
  p2p->recv(1, 7, &from_silent, sizeof(from_silent));
  p2p->recv(2, 7, &from_dead, sizeof(from_dead));
  ranks[2].reset();
  int failed = -1;
  std::string what;
  try {
    p2p->wait(milliseconds(500), &failed);
  } catch (const std::exception& e) {
    what = e.what();
  }
  EXPECT_EQ(failed, 2) << what;
  EXPECT_EQ(what.find("Timed out"), std::string::npos) << what;

  p2p.reset();
}

}  // namespace
}  // namespace janus::dist

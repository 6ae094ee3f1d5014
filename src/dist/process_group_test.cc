// The process group's options from the environment: every missing or malformed variable is
// named, with what was expected; a group of one needs no rendezvous.
#include "janus/dist/process_group.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "janus/base/error.h"
#include "janus/dist/collectives.h"
#include "janus/engine/array.h"
#include "janus/ops/ops.h"

namespace janus::dist {
namespace {

using ::testing::HasSubstr;

class DistEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : kVars) ::unsetenv(v);
    ::setenv("JANUS_RANK", "1", 1);
    ::setenv("JANUS_WORLD_SIZE", "2", 1);
    ::setenv("JANUS_MASTER_ADDR", "127.0.0.1", 1);
    ::setenv("JANUS_MASTER_PORT", "29500", 1);
  }
  void TearDown() override {
    for (const char* v : kVars) ::unsetenv(v);
  }
  static std::string error_of_env() {
    try {
      ProcessGroupOptions::from_env();
    } catch (const ValueError& e) {
      return e.what();
    }
    return "no error";
  }
  static constexpr const char* kVars[] = {
      "JANUS_RANK",           "JANUS_WORLD_SIZE",  "JANUS_MASTER_ADDR",  "JANUS_MASTER_PORT",
      "JANUS_DIST_STORE",     "JANUS_DIST_IFACE",  "JANUS_DIST_TIMEOUT", "OMPI_COMM_WORLD_RANK",
      "OMPI_COMM_WORLD_SIZE", "JANUS_DIST_BACKEND"};
};

TEST_F(DistEnv, ReadsEveryVariable) {
  ::setenv("JANUS_DIST_TIMEOUT", "2.5", 1);
  ::setenv("JANUS_DIST_IFACE", "lo", 1);
  const ProcessGroupOptions o = ProcessGroupOptions::from_env();
  EXPECT_EQ(o.rank, 1);
  EXPECT_EQ(o.world_size, 2);
  EXPECT_EQ(o.master_addr, "127.0.0.1");
  EXPECT_EQ(o.master_port, 29500);
  EXPECT_EQ(o.iface, "lo");
  EXPECT_EQ(o.timeout.count(), 2500);
  EXPECT_TRUE(o.file_store.empty());
}

TEST_F(DistEnv, MissingOrBadVariablesAreNamed) {
  ::unsetenv("JANUS_RANK");
  EXPECT_THAT(error_of_env(), HasSubstr("JANUS_RANK is not set; expected this process's rank"));
  ::setenv("JANUS_RANK", "2", 1);
  EXPECT_THAT(error_of_env(), HasSubstr("JANUS_RANK='2' is not valid; expected this process's "
                                        "rank, an integer in 0..1"));
  ::setenv("JANUS_RANK", "0", 1);
  ::setenv("JANUS_WORLD_SIZE", "two", 1);
  EXPECT_THAT(error_of_env(), HasSubstr("JANUS_WORLD_SIZE='two' is not valid"));
  ::setenv("JANUS_WORLD_SIZE", "2", 1);
  ::unsetenv("JANUS_MASTER_ADDR");
  EXPECT_THAT(error_of_env(), HasSubstr("JANUS_MASTER_ADDR is not set"));
  ::setenv("JANUS_MASTER_ADDR", "127.0.0.1", 1);
  ::setenv("JANUS_MASTER_PORT", "70000", 1);
  EXPECT_THAT(error_of_env(), HasSubstr("JANUS_MASTER_PORT='70000' is not valid; expected the TCP "
                                        "port"));
  ::setenv("JANUS_MASTER_PORT", "29500", 1);
  ::setenv("JANUS_DIST_TIMEOUT", "-1", 1);
  EXPECT_THAT(error_of_env(), HasSubstr("JANUS_DIST_TIMEOUT='-1' is not valid"));
  ::unsetenv("JANUS_DIST_TIMEOUT");
  ::setenv("JANUS_DIST_STORE", "redis://x", 1);
  EXPECT_THAT(error_of_env(), HasSubstr("JANUS_DIST_STORE='redis://x' is not valid"));
}

// Under mpirun: Open MPI's rank and size when JANUS_RANK and JANUS_WORLD_SIZE are not set; the
// JANUS_ ones win when both are.
TEST_F(DistEnv, FallsBackToOpenMpisRankAndSize) {
  ::unsetenv("JANUS_RANK");
  ::unsetenv("JANUS_WORLD_SIZE");
  ::setenv("OMPI_COMM_WORLD_RANK", "2", 1);
  ::setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  ProcessGroupOptions o = ProcessGroupOptions::from_env();
  EXPECT_EQ(o.rank, 2);
  EXPECT_EQ(o.world_size, 4);
  ::setenv("OMPI_COMM_WORLD_RANK", "4", 1);
  EXPECT_THAT(error_of_env(), HasSubstr("OMPI_COMM_WORLD_RANK='4' is not valid"));
  ::setenv("JANUS_RANK", "1", 1);
  ::setenv("JANUS_WORLD_SIZE", "2", 1);
  o = ProcessGroupOptions::from_env();
  EXPECT_EQ(o.rank, 1);
  EXPECT_EQ(o.world_size, 2);
}

TEST_F(DistEnv, FileStoreNeedsNoMaster) {
  ::unsetenv("JANUS_MASTER_ADDR");
  ::unsetenv("JANUS_MASTER_PORT");
  ::setenv("JANUS_DIST_STORE", "file:/tmp/x", 1);
  EXPECT_EQ(ProcessGroupOptions::from_env().file_store, "/tmp/x");
}

// JANUS_DIST_BACKEND picks the library; MPI meets through mpirun and needs no master address.
TEST_F(DistEnv, BackendIsGlooByDefaultOrMpi) {
  EXPECT_EQ(ProcessGroupOptions::from_env().backend, DistBackend::kGloo);
  ::setenv("JANUS_DIST_BACKEND", "gloo", 1);
  EXPECT_EQ(ProcessGroupOptions::from_env().backend, DistBackend::kGloo);
  ::setenv("JANUS_DIST_BACKEND", "mpi", 1);
  ::unsetenv("JANUS_MASTER_ADDR");
  ::unsetenv("JANUS_MASTER_PORT");
  EXPECT_EQ(ProcessGroupOptions::from_env().backend, DistBackend::kMpi);
  ::setenv("JANUS_DIST_BACKEND", "nccl", 1);
  EXPECT_THAT(error_of_env(), HasSubstr("JANUS_DIST_BACKEND='nccl' is not valid; expected 'gloo' "
                                        "(the default"));
}

// The MPI backend outside mpirun would start a job of one process (an MPI "singleton"): refused
// before MPI is initialised, saying how to start the job.
TEST_F(DistEnv, MpiWithoutMpirunIsAValueError) {
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  ProcessGroupOptions o;
  o.backend = DistBackend::kMpi;
  o.rank = 0;
  o.world_size = 2;
  try {
    ProcessGroup pg(o);
    FAIL() << "joined an MPI group without mpirun";
  } catch (const ValueError& e) {
    EXPECT_THAT(e.what(), HasSubstr("JANUS_DIST_BACKEND=mpi needs a job started by mpirun"));
    EXPECT_THAT(e.what(), HasSubstr("mpirun -np 2"));
  }
  // One process needs no MPI at all: its collectives are local.
  o.world_size = 1;
  ProcessGroup one(o);
  NDArray a = full(Shape({2}), 3.0);
  allreduce(one, a);
  EXPECT_EQ(to_vector<float>(a), (std::vector<float>{3, 3}));
  EXPECT_EQ(one.backend(), DistBackend::kMpi);
}

// An absent rank 0 is a DistError after the timeout naming this rank and the store, not a hang.
TEST(ProcessGroup, UnreachableStoreIsADistErrorAfterTheTimeout) {
  ProcessGroupOptions o;
  o.rank = 1;
  o.world_size = 2;
  o.master_port = 1;  // nobody listens there
  o.timeout = std::chrono::milliseconds(300);
  try {
    ProcessGroup pg(o);
    FAIL() << "joined a group without rank 0";
  } catch (const DistError& e) {
    EXPECT_THAT(e.what(), HasSubstr("rank 1 of 2 could not join"));
    EXPECT_THAT(e.what(), HasSubstr("tcp://127.0.0.1:1"));
  }
}

// One process: collectives are local and need no rendezvous.
TEST(ProcessGroup, OfOneRankRunsCollectivesLocally) {
  ProcessGroupOptions o;
  ProcessGroup pg(o);
  NDArray a = full(Shape({3}), 2.0);
  allreduce(pg, a);
  broadcast(pg, a, 0);
  NDArray g = allgather(pg, a);
  barrier(pg);
  pg.wait();
  EXPECT_EQ(g.shape(), Shape({1, 3}));
  EXPECT_EQ(to_vector<float>(g), (std::vector<float>{2, 2, 2}));
  EXPECT_THROW(broadcast(pg, a, 1), ValueError);
  EXPECT_THROW(allreduce(pg, full(Shape({2}), 1.0, DType::kBool)), TypeError);
}

}  // namespace
}  // namespace janus::dist

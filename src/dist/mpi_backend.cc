// The MPI backend (JANUS_DIST_BACKEND=mpi): a job started by `mpirun`, the group is
// MPI_COMM_WORLD. Every operation is a nonblocking MPI call (MPI_Iallreduce, MPI_Ibcast,
// MPI_Iallgather, MPI_Ibarrier, MPI_Isend/Irecv) polled with MPI_Test against the group's
// deadline, so nothing waits longer than the timeout: MPI's blocking calls cannot be
// interrupted, and MPI itself has no per-operation timeout.
//
// Which ranks did not take part: MPI does not say who is missing from a collective. When a
// rank gives up on one (its deadline passed), it sends a small notice ("rank r gave up waiting
// in collective #k") to every other rank on a communicator of its own. A rank waiting in a
// collective checks for notices between its tests and gives up too when one comes, sending its
// own. So within a moment every rank that was waiting has sent a notice; each failing rank
// gathers notices for a short grace period and names the ranks it did not hear from: those did
// not take part (stalled, busy elsewhere, or called another operation). A rank that reaches the
// collective later finds the notices already there and fails at once instead of waiting for
// ranks that have left it.
//
// A dead rank: Open MPI's mpirun ends the whole job when one of its processes dies (it kills
// the others and exits non-zero naming the rank), so the survivors are not left waiting.
//
// Threads: collectives run on the engine's comm-lane workers (one per device) and a parameter
// server serves each worker from a thread of its own, all calling MPI at once:
// MPI_THREAD_MULTIPLE is required.
#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "janus/base/error.h"
#include "janus/engine/engine.h"

#include "backend.h"

namespace janus::dist {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kNoticeTag = 1;
// Largest piece of one MPI call (counts are ints): messages and reductions above it are split.
constexpr size_t kMaxBytes = size_t{1} << 30;
// How long a failing rank waits for the notices of the ranks that were waiting with it.
constexpr std::chrono::milliseconds kGrace{1000};

std::string mpi_error(int rc) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return std::string(text, static_cast<size_t>(len));
}

void check_mpi(int rc, const char* call) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(fmt::format("{}: {}", call, mpi_error(rc)));
}

// Between two tests of a pending operation: yield for the first 100 ms (a collective of a few
// MB completes within it, and a yielding thread gives the core to a peer process sharing it),
// then sleep 200 us, and 1 ms after a second (a wait for a slow peer, or a server's idle wait
// for its next request, should not hold a core).
class Backoff {
 public:
  void pause() {
    const auto waited = Clock::now() - start_;
    if (waited < std::chrono::milliseconds(100)) {
      sched_yield();
    } else if (waited < std::chrono::seconds(1)) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

 private:
  Clock::time_point start_ = Clock::now();
};

// MPI is initialised once per process, by the first group, and finalized at exit.
std::mutex g_init_mu;
bool g_we_initialized = false;

void finalize_at_exit() {
  // Collectives and transfers still queued on the engine's comm lane call MPI: let them finish
  // (each is bounded by its timeout). Their errors were reported where they happened.
  try {
    engine().wait_all();
  } catch (...) {  // NOLINT(bugprone-empty-catch)
  }
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized == 0) MPI_Finalize();
}

void init_mpi(const ProcessGroupOptions& o) {
  const std::lock_guard lock(g_init_mu);
  int initialized = 0;
  MPI_Initialized(&initialized);
  int provided = MPI_THREAD_SINGLE;
  if (initialized == 0) {
    // Without mpirun, MPI_Init would start a job of one process (a "singleton"), which cannot
    // be the group of world_size processes that the environment announces.
    const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
    JANUS_CHECK(size != nullptr && *size != '\0', ValueError,
                "dist: JANUS_DIST_BACKEND=mpi needs a job started by mpirun (OMPI_COMM_WORLD_SIZE "
                "is not set): start the {} processes with `mpirun -np {} COMMAND`",
                o.world_size, o.world_size);
    // Open MPI's nonblocking allreduce (libnbc) picks a binomial tree for large arrays by
    // default, 1.5-2.5x slower here than the ring its blocking MPI_Allreduce uses; ask for the
    // ring, as the Gloo backend does, unless the user chose (an MCA variable of their own).
    ::setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1", /*overwrite=*/0);
    const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    JANUS_CHECK(rc == MPI_SUCCESS, DistError, "dist: MPI_Init_thread failed: {}", mpi_error(rc));
    g_we_initialized = true;
    std::atexit(finalize_at_exit);
  } else {
    MPI_Query_thread(&provided);
  }
  JANUS_CHECK(provided == MPI_THREAD_MULTIPLE, DistError,
              "dist: the MPI library provides thread level {} (0 single, 1 funneled, 2 serialized, "
              "3 multiple); the MPI backend needs MPI_THREAD_MULTIPLE (3): collectives run on the "
              "engine's comm-lane threads, one per device, and a parameter server serves each "
              "worker from a thread of its own. Use an MPI built with thread support (Open MPI "
              "is, by default)",
              provided);
}

MPI_Datatype mpi_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return MPI_FLOAT;
    case DType::kFloat64:
      return MPI_DOUBLE;
    case DType::kInt32:
      return MPI_INT32_T;
    case DType::kInt64:
      return MPI_INT64_T;
    case DType::kUInt8:
      return MPI_UINT8_T;
    default:
      JANUS_ASSERT(false, "dist: MPI: no MPI type for {}", dtype_name(dtype));
  }
}

class MpiBackend;

// Posted MPI_Isend/MPI_Irecv on the backend's point-to-point communicator; a slot is a tag.
class MpiPointToPoint final : public PointToPoint {
 public:
  explicit MpiPointToPoint(MpiBackend& backend) : backend_(backend) {}
  ~MpiPointToPoint() override { abandon(); }

  void send(int peer, uint64_t slot, const void* data, size_t bytes) override {
    post(peer, slot, const_cast<void*>(data), bytes, /*is_send=*/true);
  }
  void recv(int peer, uint64_t slot, void* data, size_t bytes) override {
    post(peer, slot, data, bytes, /*is_send=*/false);
  }
  void wait(std::chrono::milliseconds timeout, int* failed_peer) override;
  bool completed(size_t transfer) const override {
    return transfer < completed_.size() && completed_[transfer];
  }

 private:
  struct Posted {
    MPI_Request request;
    int peer;
    bool is_send;
    size_t bytes;
    size_t transfer;  // its position in posting order (a transfer is one or more pieces)
  };
  void post(int peer, uint64_t slot, void* data, size_t bytes, bool is_send);
  // Cancels the receives still pending and lets go of the sends (MPI completes them, reading
  // their buffers, in the background).
  void abandon();

  MpiBackend& backend_;
  std::vector<Posted> posted_;
  std::vector<bool> completed_;  // per transfer, in posting order
  std::string failure_;          // of a posting
  int failed_peer_ = -1;
};

class MpiBackend final : public Backend {
 public:
  explicit MpiBackend(const ProcessGroupOptions& o)
      : rank_(o.rank), size_(o.world_size), timeout_(o.timeout) {
    init_mpi(o);
    int rank = -1;
    int size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    JANUS_CHECK(rank == o.rank && size == o.world_size, ValueError,
                "dist: MPI says this process is rank {} of {}, the environment (JANUS_RANK, "
                "JANUS_WORLD_SIZE or OMPI_COMM_WORLD_*) says rank {} of {}; leave JANUS_RANK "
                "and JANUS_WORLD_SIZE unset under mpirun",
                rank, size, o.rank, o.world_size);
    // Communicators of their own: collectives, parameter-server traffic and notices never
    // match each other's messages. Duplicating is collective, this backend's rendezvous: the
    // nonblocking form, so a rank that never creates its group is an error after the timeout.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    std::vector<MPI_Request> requests;
    for (MPI_Comm* c : {&coll_, &p2p_, &notice_}) {
      requests.push_back(MPI_REQUEST_NULL);
      const int rc = MPI_Comm_idup(MPI_COMM_WORLD, c, &requests.back());
      JANUS_CHECK(rc == MPI_SUCCESS, DistError,
                  "dist: rank {} of {} could not join the MPI process group: MPI_Comm_idup: {}",
                  o.rank, o.world_size, mpi_error(rc));
    }
    const auto deadline = Clock::now() + timeout_;
    Backoff backoff;
    for (;;) {
      int done = 0;
      const int rc = MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done,
                                 MPI_STATUSES_IGNORE);
      JANUS_CHECK(rc == MPI_SUCCESS, DistError,
                  "dist: rank {} of {} could not join the MPI process group: MPI_Testall: {}",
                  o.rank, o.world_size, mpi_error(rc));
      if (done != 0) break;
      if (Clock::now() >= deadline) {
        set_failure("joining timed out");
        JANUS_THROW(DistError,
                    "dist: rank {} of {} could not join the MPI process group within {} ms: not "
                    "every rank of the job created it (each must create its groups in the same "
                    "order)",
                    o.rank, o.world_size, timeout_.count());
      }
      backoff.pause();
    }
    for (MPI_Comm* c : {&coll_, &p2p_, &notice_}) MPI_Comm_set_errhandler(*c, MPI_ERRORS_RETURN);
  }

  ~MpiBackend() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    // A failed group may have operations pending on its communicators: keep them.
    if (finalized != 0 || !failure().empty()) return;
    for (MPI_Comm* c : {&coll_, &p2p_, &notice_}) MPI_Comm_free(c);
  }

  void allreduce_sum(void* data, size_t n, DType dtype, uint32_t tag) override {
    const size_t esize = dtype_size(dtype);
    const size_t chunk = kMaxBytes / esize;
    for (size_t begin = 0; begin < n; begin += chunk) {
      const int count = static_cast<int>(std::min(chunk, n - begin));
      char* p = static_cast<char*>(data) + begin * esize;
      run(tag, [&](MPI_Request* r) {
        check_mpi(MPI_Iallreduce(MPI_IN_PLACE, p, count, mpi_type(dtype), MPI_SUM, coll_, r),
                  "MPI_Iallreduce");
      });
    }
  }

  void broadcast(void* data, size_t bytes, int root, uint32_t tag) override {
    for (size_t begin = 0; begin < bytes; begin += kMaxBytes) {
      const int count = static_cast<int>(std::min(kMaxBytes, bytes - begin));
      char* p = static_cast<char*>(data) + begin;
      run(tag, [&](MPI_Request* r) {
        check_mpi(MPI_Ibcast(p, count, MPI_BYTE, root, coll_, r), "MPI_Ibcast");
      });
    }
  }

  void allgather(const void* in, void* out, size_t bytes, uint32_t tag) override {
    JANUS_CHECK(bytes <= static_cast<size_t>(INT_MAX), NotImplementedError,
                "dist: allgather of {} bytes per rank on MPI; at most {} bytes (an int count)",
                bytes, INT_MAX);
    run(tag, [&](MPI_Request* r) {
      check_mpi(MPI_Iallgather(in, static_cast<int>(bytes), MPI_BYTE, out, static_cast<int>(bytes),
                               MPI_BYTE, coll_, r),
                "MPI_Iallgather");
    });
  }

  void barrier(uint32_t tag) override {
    run(tag, [&](MPI_Request* r) { check_mpi(MPI_Ibarrier(coll_, r), "MPI_Ibarrier"); });
  }

  std::unique_ptr<PointToPoint> point_to_point() override {
    return std::make_unique<MpiPointToPoint>(*this);
  }

  // mpirun ends the job when a rank dies: no rank is ever known to be gone while this runs.
  std::string describe_gone_ranks() override { return ""; }

  MPI_Comm p2p() const { return p2p_; }

  // The first failure of this group ("" while it works).
  std::string failure() {
    const std::lock_guard lock(mu_);
    return failure_;
  }
  void set_failure(const std::string& why) {
    const std::lock_guard lock(mu_);
    if (failure_.empty()) failure_ = why;
  }
  // Throws when the group failed earlier: its communicators hold abandoned operations.
  void check_usable() {
    const std::string f = failure();
    if (!f.empty()) {
      throw std::runtime_error(fmt::format(
          "the process group failed earlier and cannot be used again (MPI cannot cancel the "
          "operations it abandoned; start a new job): {}",
          f));
    }
  }

 private:
  // Starts one nonblocking collective and tests it until it completes, the deadline passes or
  // another rank says it gave up on this group.
  template <typename Start>
  void run(uint32_t tag, Start&& start) {
    check_usable();
    const auto deadline = Clock::now() + timeout_;
    MPI_Request request = MPI_REQUEST_NULL;
    start(&request);
    Backoff backoff;
    for (;;) {
      int done = 0;
      check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (done != 0) return;
      drain_notices();
      if (!heard_.empty()) {
        std::vector<int> ranks;
        for (const auto& [r, t] : heard_) ranks.push_back(r);
        fail(tag, fmt::format("rank{} {} gave up waiting for it (their timeout passed)",
                              ranks.size() > 1 ? "s" : "", fmt::join(ranks, ", ")));
      }
      if (Clock::now() >= deadline) fail(tag, "it did not complete within the timeout");
      backoff.pause();
    }
  }

  // Reads every notice that has arrived: heard_[rank] = the collective it gave up in.
  void drain_notices() {
    for (;;) {
      int flag = 0;
      MPI_Message message = MPI_MESSAGE_NULL;
      MPI_Status status;
      check_mpi(MPI_Improbe(MPI_ANY_SOURCE, kNoticeTag, notice_, &flag, &message, &status),
                "MPI_Improbe");
      if (flag == 0) return;
      uint32_t notice[2] = {0, 0};  // rank, tag
      check_mpi(MPI_Mrecv(notice, 2, MPI_UINT32_T, &message, MPI_STATUS_IGNORE), "MPI_Mrecv");
      heard_[static_cast<int>(notice[0])] = notice[1];
    }
  }

  // Gives up on collective `tag`: tells every other rank, listens for a grace period to the
  // ranks that were waiting too, marks the group failed and throws why, naming the ranks that
  // did not take part.
  [[noreturn]] void fail(uint32_t tag, const std::string& why) {
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      sent_.push_back({static_cast<uint32_t>(rank_), tag});
      MPI_Request request = MPI_REQUEST_NULL;
      // Small: MPI sends it at once (eagerly), whether or not the peer ever receives it.
      if (MPI_Isend(sent_.back().data(), 2, MPI_UINT32_T, r, kNoticeTag, notice_, &request) ==
          MPI_SUCCESS) {
        MPI_Request_free(&request);
      }
    }
    const auto until = Clock::now() + std::min(kGrace, timeout_);
    Backoff backoff;
    while (static_cast<int>(heard_.size()) < size_ - 1 && Clock::now() < until) {
      drain_notices();
      backoff.pause();
    }
    std::vector<int> absent;
    std::vector<std::string> elsewhere;
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      auto it = heard_.find(r);
      if (it == heard_.end()) {
        absent.push_back(r);
      } else if (it->second != tag) {
        elsewhere.push_back(fmt::format("rank {} was waiting in collective #{}", r, it->second));
      }
    }
    std::string message = fmt::format("MPI: collective #{}: {}", tag, why);
    if (absent.empty()) {
      message += "; every rank was waiting in it";
    } else {
      message += fmt::format("; rank{} {} did not take part (no word from {} within {} ms)",
                             absent.size() > 1 ? "s" : "", fmt::join(absent, ", "),
                             absent.size() > 1 ? "them" : "it", std::min(kGrace, timeout_).count());
    }
    if (!elsewhere.empty()) message += fmt::format("; {}", fmt::join(elsewhere, "; "));
    set_failure(message);
    throw std::runtime_error(message);
  }

  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
  MPI_Comm coll_ = MPI_COMM_NULL;
  MPI_Comm p2p_ = MPI_COMM_NULL;
  MPI_Comm notice_ = MPI_COMM_NULL;
  // Used by the collectives only, which run one at a time.
  std::map<int, uint32_t> heard_;
  std::deque<std::array<uint32_t, 2>> sent_;  // notices' buffers, alive while MPI sends them
  std::mutex mu_;
  std::string failure_;
};

void MpiPointToPoint::post(int peer, uint64_t slot, void* data, size_t bytes, bool is_send) {
  const size_t transfer = completed_.size();
  completed_.push_back(false);
  if (!failure_.empty()) return;
  try {
    backend_.check_usable();
    const int tag = static_cast<int>(slot & 0x7fff);
    // Pieces of at most kMaxBytes, in order: MPI keeps the order of messages of one pair, tag
    // and communicator.
    size_t begin = 0;
    do {
      const int count = static_cast<int>(std::min(kMaxBytes, bytes - begin));
      char* p = static_cast<char*>(data) + begin;
      MPI_Request request = MPI_REQUEST_NULL;
      if (is_send) {
        check_mpi(MPI_Isend(p, count, MPI_BYTE, peer, tag, backend_.p2p(), &request), "MPI_Isend");
      } else {
        check_mpi(MPI_Irecv(p, count, MPI_BYTE, peer, tag, backend_.p2p(), &request), "MPI_Irecv");
      }
      posted_.push_back(Posted{request, peer, is_send, static_cast<size_t>(count), transfer});
      begin += static_cast<size_t>(count);
    } while (begin < bytes);
  } catch (const std::exception& e) {
    failure_ = e.what();
    failed_peer_ = peer;
  }
}

void MpiPointToPoint::wait(std::chrono::milliseconds timeout, int* failed_peer) {
  if (!failure_.empty()) {
    if (failed_peer != nullptr) *failed_peer = failed_peer_;
    abandon();
    throw std::runtime_error(failure_);
  }
  const auto deadline = Clock::now() + timeout;
  Backoff backoff;
  size_t next = 0;  // posted_[0..next) have completed
  // A transfer completed when all its pieces did.
  auto keep_pending_from = [&](size_t first_pending) {
    for (size_t k = first_pending; k < posted_.size(); ++k) completed_[posted_[k].transfer] = false;
    posted_.erase(posted_.begin(), posted_.begin() + static_cast<std::ptrdiff_t>(first_pending));
  };
  while (next < posted_.size()) {
    Posted& p = posted_[next];
    int done = 0;
    const int rc = MPI_Test(&p.request, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
      if (failed_peer != nullptr) *failed_peer = p.peer;
      keep_pending_from(next);
      abandon();
      throw std::runtime_error(fmt::format("MPI_Test: {}", mpi_error(rc)));
    }
    if (done != 0) {
      completed_[p.transfer] = true;
      ++next;
      continue;
    }
    if (Clock::now() >= deadline) {
      if (failed_peer != nullptr) *failed_peer = p.peer;
      const std::string why = fmt::format(
          "MPI: the {} of {} bytes {} rank {} did not complete within the timeout ({} ms)",
          p.is_send ? "send" : "receive", p.bytes, p.is_send ? "to" : "from", p.peer,
          timeout.count());
      keep_pending_from(next);
      abandon();
      backend_.set_failure(why);
      throw std::runtime_error(why);
    }
    backoff.pause();
  }
  posted_.clear();
}

void MpiPointToPoint::abandon() {
  for (Posted& p : posted_) {
    if (p.request == MPI_REQUEST_NULL) continue;
    if (!p.is_send) {
      MPI_Cancel(&p.request);
      // A receive not yet matched is cancelled at once; one under way completes.
      const auto until = Clock::now() + std::chrono::milliseconds(100);
      int done = 0;
      while (done == 0 && Clock::now() < until) {
        MPI_Test(&p.request, &done, MPI_STATUS_IGNORE);
        if (done == 0) sched_yield();
      }
      if (done != 0) continue;
    }
    MPI_Request_free(&p.request);
  }
  posted_.clear();
}

}  // namespace

std::unique_ptr<Backend> make_mpi_backend(const ProcessGroupOptions& options) {
  return std::make_unique<MpiBackend>(options);
}

}  // namespace janus::dist

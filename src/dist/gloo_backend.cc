// The Gloo backend (the default): rendezvous through the TCP or file store, Gloo's TCP device
// on the chosen interface, the full mesh of pairs; Gloo's ring allreduce, broadcast,
// allgather and barrier with the group's timeout; its unbound buffers for point-to-point.
#include <arpa/inet.h>
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/context.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/pair.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "janus/base/error.h"

#include "backend.h"
#include "tcp_store.h"

namespace janus::dist {
namespace {

// The local address through which this machine reaches `host`: connecting a UDP socket picks
// the route and sends nothing.
std::string local_address_towards(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), "9", &hints, &res);
  JANUS_CHECK(rc == 0, ValueError, "dist: JANUS_MASTER_ADDR='{}' cannot be resolved: {}", host,
              gai_strerror(rc));
  std::string out;
  for (addrinfo* a = res; a != nullptr && out.empty(); a = a->ai_next) {
    const int fd = ::socket(a->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    sockaddr_storage local{};
    socklen_t len = sizeof(local);
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0) {
      char buf[INET6_ADDRSTRLEN] = {};
      const void* addr =
          local.ss_family == AF_INET
              ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&local)->sin_addr)
              : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&local)->sin6_addr);
      if (::inet_ntop(local.ss_family, addr, buf, sizeof(buf)) != nullptr) out = buf;
    }
    ::close(fd);
  }
  ::freeaddrinfo(res);
  JANUS_CHECK(!out.empty(), ValueError,
              "dist: no route from this machine to JANUS_MASTER_ADDR='{}' (set JANUS_DIST_IFACE "
              "to the network interface to use)",
              host);
  return out;
}

gloo::transport::tcp::attr device_attr(const ProcessGroupOptions& o) {
  gloo::transport::tcp::attr attr;
  if (!o.iface.empty()) {
    attr.iface = o.iface;
  } else if (!o.file_store.empty() && o.master_addr.empty()) {
    attr.hostname = "127.0.0.1";
  } else {
    attr.hostname = local_address_towards(o.master_addr);
  }
  return attr;
}

// Posted transfers on Gloo's unbound buffers.
class GlooPointToPoint final : public PointToPoint {
 public:
  explicit GlooPointToPoint(gloo::Context& context) : context_(context) {}

  void send(int peer, uint64_t slot, const void* data, size_t bytes) override {
    // Gloo's buffers take non-const memory; a send only reads it.
    post(peer, slot, const_cast<void*>(data), bytes, /*is_send=*/true);
  }
  bool completed(size_t transfer) const override {
    return transfer < completed_.size() && completed_[transfer];
  }
  void recv(int peer, uint64_t slot, void* data, size_t bytes) override {
    post(peer, slot, data, bytes, /*is_send=*/false);
  }

  // On a failure, the other transfers are still waited for (each until it completes or fails,
  // all within the deadline) before a failure is thrown: one still pending on a live peer's
  // connection would otherwise go on reading or writing the caller's memory after the caller
  // has freed it (a request header on its stack, an array it let go of). When none fails, Gloo
  // keeps the connection open and this waits for the transfer itself; when the deadline
  // passes, Gloo's timeout closes every connection of this rank. So when this returns or
  // throws, nothing posted through it can still touch its memory.
  //
  // The failure thrown is the first broken connection in posting order, else the first
  // timeout: a peer that does not answer in time is often waiting on the one that died.
  void wait(std::chrono::milliseconds timeout, int* failed_peer) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::exception_ptr failure = failure_;  // a posting's failure is a broken connection
    int failed = failed_peer_;
    bool failure_timed_out = false;
    for (Posted& p : posted_) {
      try {
        const auto left = std::max(std::chrono::milliseconds(1),
                                   std::chrono::duration_cast<std::chrono::milliseconds>(
                                       deadline - std::chrono::steady_clock::now()));
        if (p.is_send) {
          p.buffer->waitSend(left);
        } else {
          p.buffer->waitRecv(left);
        }
        completed_[p.transfer] = true;
      } catch (const std::exception& e) {
        const bool timed_out = is_timeout(e);
        if (!failure || (failure_timed_out && !timed_out)) {
          failure = std::current_exception();
          failed = p.peer;
          failure_timed_out = timed_out;
        }
      }
    }
    if (!failure) {
      posted_.clear();
      return;
    }
    if (failed_peer != nullptr) *failed_peer = failed;
    abandon_posted();
    std::rethrow_exception(failure);
  }

  ~GlooPointToPoint() override { abandon_posted(); }

 private:
  struct Posted {
    std::unique_ptr<gloo::transport::UnboundBuffer> buffer;
    int peer;
    bool is_send;
    size_t transfer;  // its position in posting order
  };

  // Gloo says why a transfer failed only in its IoException's text: a wait that ran out of time
  // ("Timed out waiting ..."), or one on a connection that Gloo closed because of such a wait.
  static bool is_timeout(const std::exception& e) {
    const std::string_view what = e.what();
    return what.find("Timed out waiting") != std::string_view::npos ||
           what.find("Application timeout caused pair closure") != std::string_view::npos;
  }

  // After a failure, Gloo's loop thread goes on signalling the error to every buffer still
  // pending on the failed pair, so those buffers must not be freed under it: they are kept,
  // reachable, until the process ends (it is an error path, and the job is ending).
  void abandon_posted() {
    if (posted_.empty()) return;
    static std::mutex mu;
    static auto* kept = new std::vector<std::unique_ptr<gloo::transport::UnboundBuffer>>;
    std::lock_guard lock(mu);
    for (Posted& p : posted_) kept->push_back(std::move(p.buffer));
    posted_.clear();
  }

  void post(int peer, uint64_t slot, void* data, size_t bytes, bool is_send) {
    const size_t transfer = completed_.size();
    completed_.push_back(false);
    if (failure_) return;
    try {
      auto buffer = context_.createUnboundBuffer(data, bytes);
      if (is_send) {
        buffer->send(peer, slot, 0, bytes);
      } else {
        buffer->recv(peer, slot, 0, bytes);
      }
      posted_.push_back(Posted{std::move(buffer), peer, is_send, transfer});
    } catch (...) {
      failure_ = std::current_exception();
      failed_peer_ = peer;
    }
  }

  gloo::Context& context_;
  std::vector<Posted> posted_;
  std::vector<bool> completed_;  // per transfer, in posting order
  std::exception_ptr failure_;   // of a posting
  int failed_peer_ = -1;
};

class GlooBackend final : public Backend {
 public:
  explicit GlooBackend(const ProcessGroupOptions& o) : timeout_(o.timeout) {
    // Gloo writes to sockets without MSG_NOSIGNAL: a peer that dies must give an error, not a
    // SIGPIPE that kills this process too. Only when nobody installed a handler of their own.
    struct sigaction old {};
    if (::sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) {
      std::signal(SIGPIPE, SIG_IGN);
    }
    try {
      if (o.file_store.empty()) {
        store_name_ = fmt::format("tcp://{}:{}", o.master_addr, o.master_port);
        if (o.rank == 0) server_ = std::make_unique<TcpStoreServer>(o.master_addr, o.master_port);
        auto store = std::make_shared<TcpStore>(o.master_addr, o.master_port, o.rank, o.timeout);
        tcp_store_ = store.get();
        store_ = std::move(store);
      } else {
        store_name_ = "file:" + o.file_store;
        store_ = std::make_shared<gloo::rendezvous::FileStore>(o.file_store);
      }
      auto device = gloo::transport::tcp::CreateDevice(device_attr(o));
      auto context = std::make_shared<gloo::rendezvous::Context>(o.rank, o.world_size);
      context->setTimeout(o.timeout);
      context->connectFullMesh(*store_, device);
      context_ = std::move(context);
    } catch (const ValueError&) {
      throw;
    } catch (const std::exception& e) {
      JANUS_THROW(DistError,
                  "dist: rank {} of {} could not join the process group through the store {} "
                  "within {} ms: {}",
                  o.rank, o.world_size, store_name_, o.timeout.count(), e.what());
    }
  }

  ~GlooBackend() override {
    // After a failure, rank 0 keeps its store up until the others have left (at most the
    // timeout): it is often the first to fail (it learns of a death first) and the others,
    // which learn of it from rank 0's closed connections, then ask the store who has gone.
    bool failed = false;
    {
      const std::lock_guard lock(failed_mu_);
      failed = !failed_.empty();
    }
    if (server_ != nullptr && failed) server_->wait_for_clients(timeout_, /*own_clients=*/1);
  }

  void allreduce_sum(void* data, size_t n, DType dtype, uint32_t tag) override {
    switch (dtype) {
      case DType::kFloat32:
        return allreduce_typed<float>(data, n, tag);
      case DType::kFloat64:
        return allreduce_typed<double>(data, n, tag);
      case DType::kInt32:
        return allreduce_typed<int32_t>(data, n, tag);
      case DType::kInt64:
        return allreduce_typed<int64_t>(data, n, tag);
      case DType::kUInt8:
        return allreduce_typed<uint8_t>(data, n, tag);
      default:
        JANUS_ASSERT(false, "dist: allreduce of {}", dtype_name(dtype));
    }
  }

  void broadcast(void* data, size_t bytes, int root, uint32_t tag) override {
    gloo::BroadcastOptions opts(context_);
    opts.setOutput(static_cast<char*>(data), bytes);
    opts.setRoot(root);
    set_common(opts, tag);
    failing_closes_all([&] { gloo::broadcast(opts); });
  }

  void allgather(const void* in, void* out, size_t bytes, uint32_t tag) override {
    gloo::AllgatherOptions opts(context_);
    opts.setInput(static_cast<char*>(const_cast<void*>(in)), bytes);
    opts.setOutput(static_cast<char*>(out), bytes * static_cast<size_t>(context_->size));
    set_common(opts, tag);
    failing_closes_all([&] { gloo::allgather(opts); });
  }

  void barrier(uint32_t tag) override {
    gloo::BarrierOptions opts(context_);
    set_common(opts, tag);
    failing_closes_all([&] { gloo::barrier(opts); });
  }

  std::unique_ptr<PointToPoint> point_to_point() override {
    return std::make_unique<GlooPointToPoint>(*context_);
  }

  std::string describe_gone_ranks() override {
    if (tcp_store_ == nullptr) return "";
    // A dead peer's sockets close at once; the store's server learns it a moment after Gloo does.
    const std::vector<int> gone = tcp_store_->gone_ranks(std::chrono::milliseconds(500));
    if (gone.empty()) return "; no rank has left the job: a peer stalled or is unreachable";
    return fmt::format("; gone from the job (connection to the store closed): rank{} {}",
                       gone.size() > 1 ? "s" : "", fmt::join(gone, ", "));
  }

 private:
  // Runs a collective; when it fails, closes every connection of this rank before rethrowing.
  // A collective needs every rank, so once it failed here the group is done (a later one fails
  // too), and a peer still waiting on this rank must learn it now, not at its own timeout.
  // Gloo closes only the connection that broke (a dead peer's) and, on a timeout, all of them:
  // without this, in a ring of 4 where rank 3 dies, ranks 0 and 2 (its neighbours) failed at
  // once while rank 1, waiting on them, failed only at its timeout. With it, a death reaches
  // every rank in at most world-size hops of "connection closed", each a wake-up of a blocked
  // thread, so the error comes within milliseconds on a quiet machine, whatever the timeout.
  template <typename F>
  void failing_closes_all(F&& collective) {
    {
      const std::lock_guard lock(failed_mu_);
      if (!failed_.empty()) throw std::runtime_error("the group failed earlier: " + failed_);
    }
    try {
      collective();
    } catch (const std::exception& e) {
      close_all(e.what());
      throw;
    }
  }

  // Resets every connection of this rank (Gloo's hard close: SO_LINGER 0, so the peer reads a
  // reset at once), and remembers why: Gloo must not be called on closed pairs again.
  void close_all(const std::string& why) {
    const std::lock_guard lock(failed_mu_);
    if (!failed_.empty()) return;
    failed_ = why;
    for (int peer = 0; peer < context_->size; ++peer) {
      if (peer == context_->rank) continue;
      if (std::unique_ptr<gloo::transport::Pair>& pair = context_->getPair(peer)) pair->close();
    }
  }

  template <typename Options>
  void set_common(Options& opts, uint32_t tag) {
    opts.setTag(tag);
    opts.setTimeout(timeout_);
  }

  template <typename T>
  void allreduce_typed(void* data, size_t n, uint32_t tag) {
    gloo::AllreduceOptions opts(context_);
    opts.setOutput(static_cast<T*>(data), n);  // in place: Gloo reads the outputs when no input
    opts.setReduceFunction(
        static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<T>));
    opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
    set_common(opts, tag);
    failing_closes_all([&] { gloo::allreduce(opts); });
  }

  std::chrono::milliseconds timeout_;
  std::string store_name_;                  // "tcp://host:port" or "file:/path", for messages
  std::unique_ptr<TcpStoreServer> server_;  // rank 0 with the TCP store
  std::shared_ptr<gloo::rendezvous::Store> store_;
  TcpStore* tcp_store_ = nullptr;  // store_, when it is the TCP one (it knows who left)
  std::shared_ptr<gloo::Context> context_;
  std::mutex failed_mu_;
  std::string failed_;  // why a collective failed and every connection was closed; "" while none
};

}  // namespace

std::unique_ptr<Backend> make_gloo_backend(const ProcessGroupOptions& options) {
  return std::make_unique<GlooBackend>(options);
}

}  // namespace janus::dist

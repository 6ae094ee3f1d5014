// Joining a process group: options from the environment, the rendezvous store, Gloo's TCP
// device on the chosen interface, and the full mesh of pairs.
#include "janus/dist/process_group.h"

#include <arpa/inet.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "janus/base/error.h"
#include "janus/engine/engine.h"

#include "process_group_impl.h"

namespace janus::dist {
namespace {

const char* getenv_nonempty(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

int64_t env_integer(const char* name, std::string_view expected, int64_t lo, int64_t hi) {
  const char* v = getenv_nonempty(name);
  JANUS_CHECK(v != nullptr, ValueError, "dist: {} is not set; expected {}", name, expected);
  const std::string_view s(v);
  int64_t out = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  JANUS_CHECK(ec == std::errc() && end == s.data() + s.size() && out >= lo && out <= hi, ValueError,
              "dist: {}='{}' is not valid; expected {}", name, s, expected);
  return out;
}

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

// `janus_name`, or `mpirun`'s variable of the same meaning when only that one is set (a job
// started by Open MPI's mpirun).
const char* rank_variable(const char* janus_name, const char* ompi_name) {
  return getenv_nonempty(janus_name) == nullptr && getenv_nonempty(ompi_name) != nullptr
             ? ompi_name
             : janus_name;
}

}  // namespace

ProcessGroupOptions ProcessGroupOptions::from_env() {
  ProcessGroupOptions o;
  o.world_size = static_cast<int>(
      env_integer(rank_variable("JANUS_WORLD_SIZE", "OMPI_COMM_WORLD_SIZE"),
                  "the number of processes in the job, an integer >= 1", 1, 1 << 20));
  o.rank = static_cast<int>(
      env_integer(rank_variable("JANUS_RANK", "OMPI_COMM_WORLD_RANK"),
                  fmt::format("this process's rank, an integer in 0..{}", o.world_size - 1), 0,
                  o.world_size - 1));
  const char* store = getenv_nonempty("JANUS_DIST_STORE");
  const std::string_view kind = store != nullptr ? store : "tcp";
  if (kind.starts_with("file:") && kind.size() > 5) {
    o.file_store = std::string(kind.substr(5));
  } else {
    JANUS_CHECK(kind == "tcp", ValueError,
                "dist: JANUS_DIST_STORE='{}' is not valid; expected 'tcp' (the default: rank 0 "
                "serves a store at JANUS_MASTER_ADDR:JANUS_MASTER_PORT) or 'file:/path' (a "
                "directory that every rank sees)",
                kind);
  }
  const char* addr = getenv_nonempty("JANUS_MASTER_ADDR");
  const bool tcp = o.file_store.empty();
  JANUS_CHECK(addr != nullptr || !tcp, ValueError,
              "dist: JANUS_MASTER_ADDR is not set; expected the host name or address of rank 0's "
              "machine, where rank 0 serves the rendezvous store (e.g. 127.0.0.1)");
  o.master_addr = addr != nullptr ? addr : "";
  if (tcp) {
    o.master_port = static_cast<int>(
        env_integer("JANUS_MASTER_PORT",
                    "the TCP port of the rendezvous store, an integer in 1..65535", 1, 65535));
  }
  if (const char* iface = getenv_nonempty("JANUS_DIST_IFACE")) o.iface = iface;
  if (const char* t = getenv_nonempty("JANUS_DIST_TIMEOUT")) {
    char* end = nullptr;
    const double seconds = std::strtod(t, &end);
    JANUS_CHECK(end != t && *end == '\0' && seconds > 0 && seconds < 1e6, ValueError,
                "dist: JANUS_DIST_TIMEOUT='{}' is not valid; expected a positive number of "
                "seconds",
                t);
    o.timeout = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  }
  return o;
}

ProcessGroup::Impl::~Impl() {
  // Pending collectives hold the context (and this Impl) themselves: the var goes after them.
  if (sequence != nullptr) engine().delete_var(sequence, nullptr);
}

std::string ProcessGroup::Impl::describe_gone_ranks() {
  if (tcp_store == nullptr) return "";
  // A dead peer's sockets close at once; the store's server learns it a moment after Gloo does.
  const std::vector<int> gone = tcp_store->gone_ranks(std::chrono::milliseconds(500));
  if (gone.empty()) return "; no rank has left the job: a peer stalled or is unreachable";
  return fmt::format("; gone from the job (connection to the store closed): rank{} {}",
                     gone.size() > 1 ? "s" : "", fmt::join(gone, ", "));
}

ProcessGroup::ProcessGroup(const ProcessGroupOptions& o) : impl_(std::make_shared<Impl>()) {
  JANUS_CHECK(o.world_size >= 1 && o.rank >= 0 && o.rank < o.world_size, ValueError,
              "dist: rank {} of {} processes; expected 0 <= rank < world size", o.rank,
              o.world_size);
  Impl& im = *impl_;
  im.rank = o.rank;
  im.size = o.world_size;
  im.timeout = o.timeout;
  im.sequence = engine().new_var();
  if (o.world_size == 1) return;  // nothing to meet: collectives are local
  // Gloo writes to sockets without MSG_NOSIGNAL: a peer that dies must give an error, not a
  // SIGPIPE that kills this process too. Only when nobody installed a handler of their own.
  struct sigaction old {};
  if (::sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) {
    std::signal(SIGPIPE, SIG_IGN);
  }
  try {
    if (o.file_store.empty()) {
      im.store_name = fmt::format("tcp://{}:{}", o.master_addr, o.master_port);
      if (o.rank == 0) im.server = std::make_unique<TcpStoreServer>(o.master_addr, o.master_port);
      auto store = std::make_shared<TcpStore>(o.master_addr, o.master_port, o.rank, o.timeout);
      im.tcp_store = store.get();
      im.store = std::move(store);
    } else {
      im.store_name = "file:" + o.file_store;
      im.store = std::make_shared<gloo::rendezvous::FileStore>(o.file_store);
    }
    auto device = gloo::transport::tcp::CreateDevice(device_attr(o));
    auto context = std::make_shared<gloo::rendezvous::Context>(o.rank, o.world_size);
    context->setTimeout(o.timeout);
    context->connectFullMesh(*im.store, device);
    im.context = std::move(context);
  } catch (const ValueError&) {
    throw;
  } catch (const std::exception& e) {
    JANUS_THROW(DistError,
                "dist: rank {} of {} could not join the process group through the store {} "
                "within {} ms: {}",
                o.rank, o.world_size, im.store_name, o.timeout.count(), e.what());
  }
}

ProcessGroup::~ProcessGroup() = default;

std::shared_ptr<ProcessGroup> ProcessGroup::from_env() {
  return std::make_shared<ProcessGroup>(ProcessGroupOptions::from_env());
}

int ProcessGroup::rank() const { return impl_->rank; }
int ProcessGroup::size() const { return impl_->size; }
std::chrono::milliseconds ProcessGroup::timeout() const { return impl_->timeout; }

void ProcessGroup::wait() { engine().wait_for_var(impl_->sequence); }

ProcessGroup& default_group() {
  // Kept until exit on purpose (never destroyed): collectives still draining at exit hold its
  // context, and rank 0's store must outlive every other rank's use of it.
  static ProcessGroup* group = new ProcessGroup(ProcessGroupOptions::from_env());
  return *group;
}

}  // namespace janus::dist

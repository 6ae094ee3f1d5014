// The TCP rendezvous store: a request-reply protocol over one connection per client. Requests
// and replies are length-prefixed (big-endian u32, as network order); the server answers each
// request on the thread of its connection, so a client waiting for a key holds only that thread.
#include "tcp_store.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "janus/base/error.h"

namespace janus::dist {
namespace {

enum class Op : uint8_t { kHello = 1, kSet, kGet, kWait, kGone };

using Clock = std::chrono::steady_clock;

// Reads exactly n bytes; false on EOF or error (the caller names what failed).
bool read_all(int fd, void* buf, size_t n) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    const ssize_t r = ::recv(fd, p, n, 0);
    if (r == 0) return false;
    if (r < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool write_all(int fd, const void* buf, size_t n) {
  const auto* p = static_cast<const char*>(buf);
  while (n > 0) {
    // MSG_NOSIGNAL: a peer that went away is an error to report, not a SIGPIPE that kills us.
    const ssize_t r = ::send(fd, p, n, MSG_NOSIGNAL);
    if (r < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// A message under construction or being parsed.
struct Buffer {
  std::vector<char> bytes;
  size_t pos = 0;

  void put_u8(uint8_t v) { bytes.push_back(static_cast<char>(v)); }
  void put_u32(uint32_t v) {
    const uint32_t n = htonl(v);
    const auto* p = reinterpret_cast<const char*>(&n);
    bytes.insert(bytes.end(), p, p + 4);
  }
  void put_bytes(const char* p, size_t n) {
    put_u32(static_cast<uint32_t>(n));
    bytes.insert(bytes.end(), p, p + n);
  }
  void put_string(const std::string& s) { put_bytes(s.data(), s.size()); }
};

// Bounds every recv on `fd` (SO_RCVTIMEO): it then fails with EAGAIN.
void set_receive_timeout(int fd, std::chrono::milliseconds limit) {
  timeval tv{static_cast<time_t>(limit.count() / 1000),
             static_cast<suseconds_t>((limit.count() % 1000) * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

bool send_message(int fd, const Buffer& b) {
  Buffer framed;
  framed.put_u32(static_cast<uint32_t>(b.bytes.size()));
  framed.bytes.insert(framed.bytes.end(), b.bytes.begin(), b.bytes.end());
  return write_all(fd, framed.bytes.data(), framed.bytes.size());
}

// One whole message, or false. Messages are small (keys and addresses); a length over 64 MiB
// means a stranger speaks to the port.
bool recv_message(int fd, Buffer& b) {
  uint32_t n = 0;
  if (!read_all(fd, &n, 4)) return false;
  n = ntohl(n);
  if (n > (64u << 20)) return false;
  b.bytes.resize(n);
  b.pos = 0;
  return read_all(fd, b.bytes.data(), n);
}

struct Reader {
  const Buffer& b;
  size_t pos = 0;
  bool ok = true;

  uint8_t u8() {
    if (pos + 1 > b.bytes.size()) return fail();
    return static_cast<uint8_t>(b.bytes[pos++]);
  }
  uint32_t u32() {
    if (pos + 4 > b.bytes.size()) return fail();
    uint32_t n = 0;
    std::memcpy(&n, b.bytes.data() + pos, 4);
    pos += 4;
    return ntohl(n);
  }
  std::vector<char> bytes() {
    const uint32_t n = u32();
    if (!ok || pos + n > b.bytes.size()) {
      fail();
      return {};
    }
    std::vector<char> out(b.bytes.begin() + static_cast<ptrdiff_t>(pos),
                          b.bytes.begin() + static_cast<ptrdiff_t>(pos + n));
    pos += n;
    return out;
  }
  std::string string() {
    const std::vector<char> v = bytes();
    return {v.begin(), v.end()};
  }
  uint8_t fail() {
    ok = false;
    return 0;
  }
};

// The addresses of host:port, for listening (passive) or connecting.
addrinfo* resolve(const std::string& host, int port, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (passive) hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &res);
  JANUS_CHECK(rc == 0, DistError, "dist: store: cannot resolve '{}': {}", host, gai_strerror(rc));
  return res;
}

}  // namespace

TcpStoreServer::TcpStoreServer(const std::string& host, int port) {
  addrinfo* res = resolve(host, port, /*passive=*/true);
  int last_errno = 0;
  for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 128) == 0) {
      listen_fd_ = fd;
      break;
    }
    last_errno = errno;
    ::close(fd);
  }
  ::freeaddrinfo(res);
  JANUS_CHECK(listen_fd_ >= 0, DistError,
              "dist: store: rank 0 cannot listen on {}:{}: {} (is JANUS_MASTER_ADDR an address of "
              "rank 0's machine, and JANUS_MASTER_PORT free?)",
              host, port, std::strerror(last_errno));
  acceptor_ = std::thread([this] { accept_loop(); });
}

TcpStoreServer::~TcpStoreServer() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);  // wakes the connection threads' recv
  }
  cv_.notify_all();
  acceptor_.join();
  {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return fds_.empty(); });  // every connection thread has exited
  }
  ::close(listen_fd_);
}

void TcpStoreServer::wait_for_clients(std::chrono::milliseconds bound, int own_clients) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, bound, [&] { return static_cast<int>(fds_.size()) <= own_clients; });
}

void TcpStoreServer::accept_loop() {
  while (true) {
    pollfd p{listen_fd_, POLLIN, 0};
    const int rc = ::poll(&p, 1, /*timeout_ms=*/100);
    std::lock_guard lock(mu_);
    if (stopping_) return;
    if (rc <= 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    fds_.push_back(fd);
    // Detached: a connection thread that ends is gone at once, also while the server lives on
    // (rank 0's store lives until exit); the destructor waits until fds_ is empty instead.
    std::thread([this, fd] { serve(fd); }).detach();
  }
}

void TcpStoreServer::serve(int fd) {
  int rank = -1;
  Buffer in;
  while (recv_message(fd, in)) {
    Reader r{in};
    const auto op = static_cast<Op>(r.u8());
    Buffer out;
    if (op == Op::kHello) {
      rank = static_cast<int>(r.u32());
      out.put_u8(0);
    } else if (op == Op::kSet) {
      std::string key = r.string();
      std::vector<char> value = r.bytes();
      if (!r.ok) break;
      {
        std::lock_guard lock(mu_);
        data_[std::move(key)] = std::move(value);
      }
      cv_.notify_all();
      out.put_u8(0);
    } else if (op == Op::kGet) {
      const std::string key = r.string();
      std::lock_guard lock(mu_);
      auto it = data_.find(key);
      out.put_u8(it != data_.end() ? 0 : 1);
      if (it != data_.end()) out.put_bytes(it->second.data(), it->second.size());
    } else if (op == Op::kWait || op == Op::kGone) {
      std::vector<std::string> keys(op == Op::kWait ? r.u32() : 0);
      for (std::string& k : keys) k = r.string();
      const auto deadline = Clock::now() + std::chrono::milliseconds(r.u32());
      if (!r.ok) break;
      std::unique_lock lock(mu_);
      auto ready = [&] {
        if (stopping_) return true;
        if (op == Op::kGone) return !gone_.empty();
        return std::all_of(keys.begin(), keys.end(),
                           [&](const auto& k) { return data_.contains(k); });
      };
      const bool met = cv_.wait_until(lock, deadline, ready) && !stopping_;
      if (op == Op::kWait) {
        out.put_u8(met ? 0 : 1);
      } else {
        out.put_u32(static_cast<uint32_t>(gone_.size()));
        for (int g : gone_) out.put_u32(static_cast<uint32_t>(g));
      }
    } else {
      break;  // not our protocol
    }
    if (!send_message(fd, out)) break;
  }
  // Notified under the lock: the destructor, waiting for fds_ to empty, can free the server
  // only after this unlock, and this thread touches no member after it.
  std::lock_guard lock(mu_);
  if (rank >= 0 && !stopping_) gone_.insert(rank);
  std::erase(fds_, fd);
  ::close(fd);
  cv_.notify_all();
}

TcpStore::TcpStore(const std::string& host, int port, int rank, std::chrono::milliseconds timeout)
    : host_(host), port_(port), timeout_(timeout) {
  const auto deadline = Clock::now() + timeout;
  std::string last_error = "timed out";
  while (fd_ < 0) {
    addrinfo* res = resolve(host, port, /*passive=*/false);
    for (addrinfo* a = res; a != nullptr && fd_ < 0; a = a->ai_next) {
      const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
        fd_ = fd;
      } else {
        last_error = std::strerror(errno);
        ::close(fd);
      }
    }
    ::freeaddrinfo(res);
    if (fd_ >= 0) break;
    // Rank 0 may not listen yet: retry until the timeout.
    JANUS_CHECK(Clock::now() < deadline, DistError,
                "dist: rank {} cannot reach the rendezvous store at {} within {} ms ({}); is rank "
                "0 running, with the same JANUS_MASTER_ADDR and JANUS_MASTER_PORT?",
                rank, where(), timeout.count(), last_error);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  // A server that stops answering must not hang us: every reply comes within the timeout (plus
  // slack for the server's own wait).
  set_receive_timeout(fd_, timeout + std::chrono::seconds(2));
  Buffer b;
  b.put_u8(static_cast<uint8_t>(Op::kHello));
  b.put_u32(static_cast<uint32_t>(rank));
  Buffer reply;
  JANUS_CHECK(send_message(fd_, b) && recv_message(fd_, reply), DistError,
              "dist: rank {}: the rendezvous store at {} closed the connection", rank, where());
}

TcpStore::~TcpStore() {
  if (fd_ >= 0) ::close(fd_);
}

std::string TcpStore::where() const { return host_ + ":" + std::to_string(port_); }

void TcpStore::set(const std::string& key, const std::vector<char>& data) {
  Buffer b;
  b.put_u8(static_cast<uint8_t>(Op::kSet));
  b.put_string(key);
  b.put_bytes(data.data(), data.size());
  std::lock_guard lock(mu_);
  Buffer reply;
  JANUS_CHECK(send_message(fd_, b) && recv_message(fd_, reply), DistError,
              "dist: store at {}: set '{}' failed: the connection closed (did rank 0 exit?)",
              where(), key);
}

std::vector<char> TcpStore::get(const std::string& key) {
  wait({key});
  Buffer b;
  b.put_u8(static_cast<uint8_t>(Op::kGet));
  b.put_string(key);
  std::lock_guard lock(mu_);
  Buffer reply;
  JANUS_CHECK(send_message(fd_, b) && recv_message(fd_, reply), DistError,
              "dist: store at {}: get '{}' failed: the connection closed (did rank 0 exit?)",
              where(), key);
  Reader r{reply};
  JANUS_CHECK(r.u8() == 0, DistError, "dist: store at {}: key '{}' vanished", where(), key);
  return r.bytes();
}

void TcpStore::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

void TcpStore::wait(const std::vector<std::string>& keys,
                    const std::chrono::milliseconds& timeout) {
  Buffer b;
  b.put_u8(static_cast<uint8_t>(Op::kWait));
  b.put_u32(static_cast<uint32_t>(keys.size()));
  for (const std::string& k : keys) b.put_string(k);
  b.put_u32(static_cast<uint32_t>(std::min(timeout, timeout_).count()));
  std::lock_guard lock(mu_);
  Buffer reply;
  JANUS_CHECK(send_message(fd_, b) && recv_message(fd_, reply), DistError,
              "dist: store at {}: wait failed: the connection closed (did rank 0 exit?)", where());
  Reader r{reply};
  JANUS_CHECK(r.u8() == 0, DistError,
              "dist: store at {}: timed out after {} ms waiting for {} (a rank has not joined)",
              where(), std::min(timeout, timeout_).count(), fmt::join(keys, ", "));
}

std::vector<int> TcpStore::gone_ranks(std::chrono::milliseconds patience) {
  Buffer b;
  b.put_u8(static_cast<uint8_t>(Op::kGone));
  b.put_u32(static_cast<uint32_t>(patience.count()));
  std::lock_guard lock(mu_);
  if (fd_ < 0) return {};  // an earlier query found the server unreachable
  set_receive_timeout(fd_, patience + std::chrono::seconds(1));
  Buffer reply;
  const bool answered = send_message(fd_, b) && recv_message(fd_, reply);
  const int reason = errno;
  set_receive_timeout(fd_, timeout_ + std::chrono::seconds(2));
  if (!answered && (reason == EAGAIN || reason == EWOULDBLOCK)) {
    // A late answer would come in the place of the next one's: the connection is done for.
    ::close(fd_);
    fd_ = -1;
    return {};
  }
  if (!answered) return {0};  // rank 0 itself is gone
  Reader r{reply};
  std::vector<int> gone(r.u32());
  for (int& g : gone) g = static_cast<int>(r.u32());
  return gone;
}

}  // namespace janus::dist

// The rendezvous store over TCP: rank 0 serves a key-value map (TcpStoreServer), every rank
// is a client (TcpStore, a gloo::rendezvous::Store). Gloo 2022 ships FileStore, HashStore,
// PrefixStore and RedisStore but no TCP store; this is the role of torch.distributed's
// TCPStore. It carries only rendezvous data (each rank's Gloo address, a few bytes), never
// tensors: Gloo's own TCP pairs do. Layer: dist (private).
#pragma once

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace janus::dist {

/// Serves the map on `host`:`port` from a thread per connection until destroyed. Remembers
/// which ranks' clients have disconnected: a rank whose process died has gone.
class TcpStoreServer {
 public:
  TcpStoreServer(const std::string& host, int port);
  ~TcpStoreServer();
  /// Waits until every client but this process's own has disconnected, for at most `bound`.
  void wait_for_clients(std::chrono::milliseconds bound, int own_clients);
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

 private:
  void accept_loop();
  void serve(int fd);

  int listen_fd_ = -1;
  std::thread acceptor_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::map<std::string, std::vector<char>> data_;
  std::set<int> gone_;    // ranks whose connection closed
  std::vector<int> fds_;  // open connections, shut down at stop; one detached thread each
};

/// A client: set, get (waits for the key) and wait, each bounded by `timeout`. Connects to
/// the server, retrying until `timeout` (rank 0's server may start after the others).
/// Thread-safe (one request at a time).
class TcpStore final : public gloo::rendezvous::Store {
 public:
  TcpStore(const std::string& host, int port, int rank, std::chrono::milliseconds timeout);
  ~TcpStore() override;

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

  /// The ranks whose connection to the server has closed, waiting up to `patience` for at
  /// least one (a peer's death reaches the server a moment after it reaches Gloo). {0} when
  /// the server's connection is closed (rank 0 has gone); empty, and the client unusable from
  /// then on, when the server does not answer within `patience` + 1 s (it is unreachable: a
  /// link down), which tells nothing about who has gone.
  std::vector<int> gone_ranks(std::chrono::milliseconds patience);

 private:
  std::string where() const;

  std::string host_;
  int port_;
  std::chrono::milliseconds timeout_;
  int fd_ = -1;
  std::mutex mu_;
};

}  // namespace janus::dist

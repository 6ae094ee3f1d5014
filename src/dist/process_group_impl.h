// What a ProcessGroup holds: Gloo's context (its full mesh of TCP pairs), the store it met
// through, and the var that orders its collectives. Layer: dist (private).
#pragma once

#include <gloo/context.h>
#include <gloo/rendezvous/store.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "janus/dist/process_group.h"

#include "tcp_store.h"

namespace janus {
class Var;
}

namespace janus::dist {

struct ProcessGroup::Impl {
  int rank = 0;
  int size = 1;
  std::chrono::milliseconds timeout{0};
  std::string store_name;                  // "tcp://host:port" or "file:/path", for messages
  std::unique_ptr<TcpStoreServer> server;  // rank 0 with the TCP store
  std::shared_ptr<gloo::rendezvous::Store> store;
  TcpStore* tcp_store = nullptr;           // store, when it is the TCP one (it knows who left)
  std::shared_ptr<gloo::Context> context;  // null with one rank
  // Written by every collective: they run one at a time, in the order they were pushed, which
  // is the same on every rank.
  Var* sequence = nullptr;
  uint32_t next_tag = 0;  // Gloo tag of the next collective (push order)

  ~Impl();
  /// "; rank 2 has gone (its connection to the store closed)" or "" when none is known.
  std::string describe_gone_ranks();
};

}  // namespace janus::dist

// What a ProcessGroup holds: its backend (the communication library, backend.h) and the var
// that orders its collectives. Layer: dist (private).
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "janus/core/ndarray.h"
#include "janus/dist/process_group.h"

#include "backend.h"

namespace janus {
class Var;
}

namespace janus::dist {

struct ProcessGroup::Impl {
  int rank = 0;
  int size = 1;
  DistBackend kind = DistBackend::kGloo;
  std::chrono::milliseconds timeout{0};
  std::unique_ptr<Backend> backend;  // null with one rank
  // Written by every collective: they run one at a time, in the order they were pushed, which
  // is the same on every rank.
  Var* sequence = nullptr;
  uint32_t next_tag = 0;  // tag of the next collective (push order)

  // Arrays of collectives that failed: a library may still write into them after giving up
  // (MPI cannot cancel a nonblocking collective), so they stay allocated while the group lives.
  std::mutex abandoned_mu;
  std::vector<NDArray> abandoned;

  ~Impl();
  /// "; rank 2 has gone (its connection to the store closed)" or "" when none is known.
  std::string describe_gone_ranks();
};

}  // namespace janus::dist

// What workers and servers say to each other (ps_worker.cc, ps_server.cc): fixed-size request
// and reply headers, the slots they travel on, how a key is split across the servers, and the
// blocking send/recv on the group's backend (Gloo's unbound buffers, or MPI) with a timeout.
// Layer: dist (private).
//
// Every exchange is a header on one slot, then (when the header says so) a payload of the
// size the header gives on another: a receive is posted with the size of its message, and the
// backends keep the order of messages per pair and slot.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "janus/core/dtype.h"

#include "backend.h"
#include "process_group_impl.h"

namespace janus::dist::ps {

enum class Op : uint32_t {
  kInit = 1,          // worker 0: payload = the value; other workers: no payload, wait for it
  kPush = 2,          // payload = this worker's sum; no reply
  kPull = 3,          // reply: the value
  kPushPull = 4,      // payload, then reply: the updated value (or the round's sum)
  kSetOptimizer = 5,  // worker 0: payload = JSON description; others: wait for it. Reply: ack
  kGoodbye = 6,       // the worker is done; no reply
  kGetState = 7,      // reply: the part's optimizer state (StateHeader, then its arrays)
  kSetState = 8,      // payload: StateHeader, then the arrays. Reply: ack
};

/// A request, worker to server. Plain bytes on the wire (the job's processes run the same
/// build, so layout and endianness agree).
struct Request {
  Op op = Op::kPush;
  uint32_t dtype = 0;          // janus::DType of the key
  int64_t key = 0;             // the key's wire id (key_id)
  uint64_t bytes = 0;          // of the payload that follows (0: none)
  uint64_t elements = 0;       // of this server's part of the key
  double rescale_grad = 1.0;   // the worker's optimizer settings at this push
  double learning_rate = 0.0;  // (< 0: leave the server's rate as it is)
  int32_t part = 0;            // this part's index and the number of parts
  int32_t num_parts = 1;
  uint32_t has_optimizer = 0;  // rescale_grad and learning_rate are meaningful
  uint32_t sync = 0;           // the worker's store is dist_sync (1) or dist_async (0)
};

/// A reply, server to worker: status 0 and `bytes` of value, or status 1 and `bytes` of error
/// message.
struct Reply {
  int32_t status = 0;
  uint32_t padding = 0;
  uint64_t bytes = 0;
};

/// The optimizer state of one part of a key on the wire: this header, then `num_arrays` arrays
/// of the part's elements and dtype, one after the other.
struct StateHeader {
  int64_t update_count = 0;
  int64_t num_arrays = 0;
};

// Gloo's collectives build their slots from a small prefix and a tag (gloo::Slot); these use a
// prefix of their own, so a job may run collectives and parameter-server traffic side by side.
constexpr uint64_t kSlotPrefix = uint64_t{0x7a} << 56;
constexpr uint64_t kRequestSlot = kSlotPrefix | 1;
constexpr uint64_t kRequestDataSlot = kSlotPrefix | 2;
constexpr uint64_t kReplySlot = kSlotPrefix | 3;
constexpr uint64_t kReplyDataSlot = kSlotPrefix | 4;

/// Arrays of at least this many bytes are split across every server (MXNet's
/// MXNET_KVSTORE_BIGARRAY_BOUND); JANUS_PS_BIGARRAY_BOUND overrides it.
constexpr uint64_t kDefaultBigArrayBound = uint64_t{1} << 20;
uint64_t big_array_bound();

/// One server's contiguous part of a key: elements [begin, begin + count).
struct Part {
  int server = 0;  // 0..S-1 (its rank is W + server)
  int64_t begin = 0;
  int64_t count = 0;
};

/// Where a key lives: a small array wholly on server key_id mod S; an array of at least
/// big_array_bound() bytes in S contiguous parts, part i on server i (parts of nearly equal
/// size), so that its traffic spreads over every server.
std::vector<Part> split_key(int64_t key_id, int64_t elements, size_t element_size, int num_servers);

/// A string key's wire id: its FNV-1a hash with the top bit set, the same in every process
/// (integer keys are their own id and must be >= 0).
int64_t string_key_id(const std::string& key);

/// Element types the servers add and update: float32, float64, int32, int64, uint8.
bool is_summable(DType dtype);
/// dst[i] += src[i] for `n` elements of `dtype`.
void add_into(void* dst, const void* src, size_t n, DType dtype);

/// Waits of the servers for a worker's next request: a worker may compute for long between
/// two requests, and its death shows as a closed connection, not as a timeout.
constexpr std::chrono::milliseconds kIdleWait = std::chrono::hours(24 * 30);

/// A blocking exchange on one pair: send or receive `bytes` at `data` with `peer` on `slot`,
/// within `timeout`. Throws the backend's exception (the caller adds what was being done).
void send_bytes(ProcessGroup::Impl& group, int peer, uint64_t slot, const void* data, size_t bytes,
                std::chrono::milliseconds timeout);
void recv_bytes(ProcessGroup::Impl& group, int peer, uint64_t slot, void* data, size_t bytes,
                std::chrono::milliseconds timeout);

/// Posted sends or receives of several pairs at once (a key's parts go to every server in
/// parallel); wait() completes them all, in order, throwing the first failure (a pair that
/// failed earlier fails the posting itself: that too is thrown by wait()).
class Transfers {
 public:
  explicit Transfers(ProcessGroup::Impl& group) : p2p_(group.backend->point_to_point()) {}
  void send(int peer, uint64_t slot, const void* data, size_t bytes) {
    p2p_->send(peer, slot, data, bytes);
    ++posted_;
  }
  void recv(int peer, uint64_t slot, void* data, size_t bytes) {
    if (slot == kReplySlot) reply_headers_.push_back(posted_);
    p2p_->recv(peer, slot, data, bytes);
    ++posted_;
  }
  /// Completes every posted transfer; on failure sets *failed_peer to the peer of the one that
  /// failed, then rethrows.
  void wait(std::chrono::milliseconds timeout, int* failed_peer) {
    p2p_->wait(timeout, failed_peer);
  }
  /// After wait(): whether the i-th reply header received through this arrived.
  bool reply_arrived(size_t i) const {
    return i < reply_headers_.size() && p2p_->completed(reply_headers_[i]);
  }

 private:
  std::unique_ptr<PointToPoint> p2p_;
  size_t posted_ = 0;
  std::vector<size_t> reply_headers_;  // their transfers' positions in posting order
};

}  // namespace janus::dist::ps

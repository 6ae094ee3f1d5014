// The `dist_sync` and `dist_async` stores: a worker's side of the parameter servers. Each call
// sums this process's devices locally, then pushes one engine operation on the comm lane that
// exchanges the key's parts with their servers (ps_protocol.h) over Gloo's point-to-point.
// The servers are in ps_server.cc.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "janus/autograd/autograd.h"
#include "janus/base/error.h"
#include "janus/dist/parameter_server.h"
#include "janus/dist/process_group.h"
#include "janus/engine/array.h"
#include "janus/engine/engine.h"
#include "janus/ops/ops.h"
#include "janus/ops/transfer.h"
#include "janus/optim/kvstore.h"
#include "janus/parallel/allreduce.h"

#include "process_group_impl.h"
#include "ps_protocol.h"

namespace janus::dist {
namespace {

using Clock = std::chrono::steady_clock;

// What remains until `deadline`, at least 1 ms (a wait of 0 would mean no timeout to Gloo).
std::chrono::milliseconds time_left(Clock::time_point deadline) {
  return std::max(std::chrono::milliseconds(1),
                  std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
}
using kvstore::Key;
using ps::Op;
using ps::Reply;
using ps::Request;

// This worker's connection to the servers, shared by every store of the process: the job's
// group and a var that orders every exchange with the servers (each server serves a worker's
// requests in the order they come). Says goodbye to the servers at exit.
struct Client {
  ProcessGroup* pg = nullptr;
  Roles roles;
  Var* sequence = nullptr;

  static Client& get() {
    static Client* client = [] {
      auto* c = new Client;  // kept until exit, as the default group is
      c->roles = Roles::from_env();
      JANUS_CHECK(c->roles.role == Role::kWorker, ValueError,
                  "kvstore 'dist_sync': this process is a server (JANUS_ROLE=server); a server "
                  "calls dist::run_server() (or dist::maybe_run_server() first thing in main)");
      JANUS_CHECK(c->roles.num_servers > 0, ValueError,
                  "kvstore 'dist_sync'/'dist_async': the job has no parameter servers "
                  "(JANUS_NUM_SERVERS is 0 or unset); start servers (janus launch -s N) or use "
                  "'dist_allreduce'");
      c->pg = &default_group();
      c->sequence = engine().new_var();
      std::atexit([] { client->say_goodbye(); });
      return c;
    }();
    return *client;
  }

  int server_rank(int server) const { return roles.num_workers + server; }

  // Tells every server that this worker is done, once its exchanges have run. Errors (a
  // server already gone, a failed exchange) are ignored: the process is exiting. Sent from this
  // thread, not the engine: a failed exchange has poisoned the sequence var, and the servers
  // should hear the goodbye even then.
  void say_goodbye() {
    try {
      engine().wait_for_var(sequence);
    } catch (...) {  // NOLINT(bugprone-empty-catch): reported where it happened
    }
    try {
      auto im = pg->impl();
      const Request bye{.op = Op::kGoodbye};
      ps::Transfers t(*im);
      for (int s = 0; s < roles.num_servers; ++s) {
        t.send(server_rank(s), ps::kRequestSlot, &bye, sizeof(bye));
      }
      t.wait(im->timeout, nullptr);
    } catch (...) {  // NOLINT(bugprone-empty-catch): nothing left to tell at exit
    }
  }
};

struct Entry {
  Shape shape;
  DType dtype = DType::kFloat32;
  Device device;
  int64_t key_id = 0;
  int index = 0;  // the optimizer's parameter index (update counts, schedules)
  std::vector<ps::Part> parts;
};

class ParameterServerStore final : public kvstore::StoreBase<Entry> {
 public:
  explicit ParameterServerStore(bool sync)
      : StoreBase(sync ? "dist_sync" : "dist_async"), sync_(sync), client_(Client::get()) {}

  int rank() const override { return client_.pg->rank(); }
  int num_workers() const override { return client_.roles.num_workers; }
  bool keeps_optimizer_state_elsewhere() const override { return optimizer_ != nullptr; }

  /// Rank 0's value becomes the servers'; the other workers' init completes once it is there.
  void init(const Key& key, const NDArray& value) override {
    check_new_key(key, value);
    JANUS_CHECK(ps::is_summable(value.dtype()), TypeError,
                "kvstore '{}': init: key {} is {}; the servers hold float32, float64, int32, "
                "int64 or uint8",
                type(), key.to_string(), dtype_name(value.dtype()));
    int64_t id = 0;
    if (key.is_int()) {
      JANUS_CHECK(key.as_int() >= 0, ValueError,
                  "kvstore '{}': init: key {} is negative; integer keys are >= 0", type(),
                  key.to_string());
      id = key.as_int();
    } else {
      id = ps::string_key_id(key.as_string());
    }
    autograd::PauseScope pause;
    const int64_t index = key.is_int() ? key.as_int() : static_cast<int64_t>(entries_.size());
    JANUS_CHECK(index <= INT32_MAX, ValueError,
                "kvstore '{}': init: key {} is too large, expected 0..2^31-1", type(),
                key.to_string());
    Entry e{value.shape(),
            value.dtype(),
            value.device(),
            id,
            static_cast<int>(index),
            ps::split_key(id, value.size(), dtype_size(value.dtype()), client_.roles.num_servers)};
    const NDArray copy = copyto(value, value.device());
    const bool carries = rank() == 0;
    exchange("init", key, e, Op::kInit, carries ? &copy : nullptr, nullptr);
    entries_.emplace(key, std::move(e));
  }

  void push(const Key& key, std::span<const NDArray> values, int priority) override {
    const Entry& e = entry(key, "push");
    check_arrays(key, "push", "value", e.shape, e.dtype, values);
    const ops::ScopedPriority scope(priority);
    autograd::PauseScope pause;
    const NDArray sum = local_sum(e, values);
    exchange("push", key, e, Op::kPush, &sum, nullptr);
  }

  void pull(const Key& key, std::span<const NDArray> outs, int priority) override {
    const Entry& e = entry(key, "pull");
    check_arrays(key, "pull", "output", e.shape, e.dtype, outs);
    const ops::ScopedPriority scope(priority);
    autograd::PauseScope pause;
    const NDArray value = reply_array(e, outs);
    exchange("pull", key, e, Op::kPull, nullptr, &value);
    parallel::broadcast_into(value, outs);
  }

  void pushpull(const Key& key, std::span<const NDArray> values, std::span<const NDArray> outs,
                int priority) override {
    const Entry& e = entry(key, "pushpull");
    check_arrays(key, "pushpull", "value", e.shape, e.dtype, values);
    check_arrays(key, "pushpull", "output", e.shape, e.dtype, outs);
    const ops::ScopedPriority scope(priority);
    autograd::PauseScope pause;
    const NDArray sum = local_sum(e, values);
    // In place (the Trainer's pushpull of its gradients) the request is sent from the array
    // that the reply then overwrites: the servers reply only once they hold all of it.
    const NDArray value = reply_array(e, outs);
    exchange("pushpull", key, e, Op::kPushPull, &sum, &value);
    parallel::broadcast_into(value, outs);
  }

  /// Worker 0 sends the optimizer's description (name and hyperparameters) to every server,
  /// which builds its own with make_optimizer; the other workers wait until it is there. A
  /// learning-rate schedule stays on the workers: each push carries the schedule's rate for
  /// that update (push_rate), which the servers apply.
  void set_optimizer(optim::OptimizerPtr optimizer) override {
    optimizer_ = std::move(optimizer);
    auto text = std::make_shared<std::string>(describe(optimizer_.get()));
    auto im = client_.pg->impl();
    const Roles roles = client_.roles;
    const std::string what = fmt::format("kvstore '{}': set_optimizer on worker rank {} of {}",
                                         type(), rank(), roles.num_workers);
    Var* writes[] = {client_.sequence};
    engine().push(
        [im, roles, text, what](const RunContext&) {
          std::vector<Request> reqs(static_cast<size_t>(roles.num_servers));
          std::vector<Reply> replies(reqs.size());
          ps::Transfers t(*im);
          for (int s = 0; s < roles.num_servers; ++s) {
            reqs[s] = Request{.op = Op::kSetOptimizer, .bytes = text->size()};
            t.send(roles.num_workers + s, ps::kRequestSlot, &reqs[s], sizeof(Request));
            t.send(roles.num_workers + s, ps::kRequestDataSlot, text->data(), text->size());
            t.recv(roles.num_workers + s, ps::kReplySlot, &replies[s], sizeof(Reply));
          }
          complete(*im, t, what, roles, replies, {}, nullptr);
        },
        {}, writes, cpu(0), Lane::kComm, 0, "dist.ps_set_optimizer");
  }

  /// Each part's state from its server (one request per part, in parallel), the parts of a
  /// split key put back together.
  OptimizerState pull_optimizer_state(const Key& key) override {
    const Entry& e = entry(key, "pull_optimizer_state");
    if (!optimizer_) return {};
    auto im = client_.pg->impl();
    const Roles roles = client_.roles;
    const std::string what = state_what("pull_optimizer_state", key, e);
    auto got = std::make_shared<std::vector<std::vector<char>>>(e.parts.size());
    Var* writes[] = {client_.sequence};
    engine().push(
        [im, roles, what, got, reqs = state_requests(e, Op::kGetState, {}),
         parts = e.parts](const RunContext&) {
          ps::Transfers t(*im);
          std::vector<Reply> replies(parts.size());
          for (size_t i = 0; i < parts.size(); ++i) {
            const int server = roles.num_workers + parts[i].server;
            t.send(server, ps::kRequestSlot, &reqs[i], sizeof(Request));
            t.recv(server, ps::kReplySlot, &replies[i], sizeof(Reply));
          }
          complete(*im, t, what, roles, replies, parts, [&got](size_t i, uint64_t bytes) {
            (*got)[i].resize(bytes);
            return (*got)[i].data();
          });
        },
        {}, writes, cpu(0), Lane::kComm, 0, "dist.ps_get_state");
    engine().wait_for_var(client_.sequence);

    // Every part holds as many arrays and the same count (each applies every update).
    OptimizerState state;
    const size_t esize = dtype_size(e.dtype);
    for (size_t i = 0; i < e.parts.size(); ++i) {
      const std::vector<char>& bytes = (*got)[i];
      ps::StateHeader h;
      JANUS_ASSERT(bytes.size() >= sizeof(h), "dist: {}: a reply of {} bytes", what, bytes.size());
      std::memcpy(&h, bytes.data(), sizeof(h));
      const size_t part_bytes = static_cast<size_t>(e.parts[i].count) * esize;
      JANUS_CHECK(bytes.size() == sizeof(h) + static_cast<size_t>(h.num_arrays) * part_bytes &&
                      (i == 0 || (h.num_arrays == static_cast<int64_t>(state.arrays.size()) &&
                                  h.update_count == state.update_count)),
                  DistError,
                  "dist: {}: server rank {} sent {} arrays, update count {} ({} bytes); the "
                  "parts before it: {} arrays, count {}",
                  what, roles.num_workers + e.parts[i].server, h.num_arrays, h.update_count,
                  bytes.size(), state.arrays.size(), state.update_count);
      if (i == 0) {
        state.update_count = h.update_count;
        for (int64_t k = 0; k < h.num_arrays; ++k) state.arrays.push_back(empty(e.shape, e.dtype));
      }
      for (size_t k = 0; k < state.arrays.size(); ++k) {
        std::memcpy(static_cast<char*>(state.arrays[k].raw_data()) + e.parts[i].begin * esize,
                    bytes.data() + sizeof(h) + k * part_bytes, part_bytes);
      }
    }
    return state;
  }

  /// Worker 0 sends each part its slice of `state`; the other workers send nothing.
  void push_optimizer_state(const Key& key, const OptimizerState& state) override {
    const Entry& e = entry(key, "push_optimizer_state");
    JANUS_CHECK(optimizer_ != nullptr, ValueError,
                "kvstore '{}': push_optimizer_state of key {}: no optimizer is set on the store",
                type(), key.to_string());
    if (!state.arrays.empty()) {
      check_arrays(key, "push_optimizer_state", "state", e.shape, e.dtype, state.arrays);
    }
    if (rank() != 0) return;
    const size_t esize = dtype_size(e.dtype);
    auto payloads = std::make_shared<std::vector<std::vector<char>>>();
    std::vector<NDArray> host;
    for (const NDArray& a : state.arrays) host.push_back(copyto(a, cpu(0)));
    for (const NDArray& a : host) wait_to_read(a);
    for (const ps::Part& p : e.parts) {
      const size_t part_bytes = static_cast<size_t>(p.count) * esize;
      const ps::StateHeader h{.update_count = state.update_count,
                              .num_arrays = static_cast<int64_t>(host.size())};
      std::vector<char> bytes(sizeof(h) + host.size() * part_bytes);
      std::memcpy(bytes.data(), &h, sizeof(h));
      for (size_t k = 0; k < host.size(); ++k) {
        std::memcpy(bytes.data() + sizeof(h) + k * part_bytes,
                    static_cast<const char*>(host[k].raw_data()) + p.begin * esize, part_bytes);
      }
      payloads->push_back(std::move(bytes));
    }
    std::vector<uint64_t> sizes;
    for (const auto& b : *payloads) sizes.push_back(b.size());
    auto im = client_.pg->impl();
    const Roles roles = client_.roles;
    Var* writes[] = {client_.sequence};
    engine().push(
        [im, roles, payloads, what = state_what("push_optimizer_state", key, e),
         reqs = state_requests(e, Op::kSetState, sizes), parts = e.parts](const RunContext&) {
          ps::Transfers t(*im);
          std::vector<Reply> replies(parts.size());
          for (size_t i = 0; i < parts.size(); ++i) {
            const int server = roles.num_workers + parts[i].server;
            t.send(server, ps::kRequestSlot, &reqs[i], sizeof(Request));
            t.send(server, ps::kRequestDataSlot, (*payloads)[i].data(), (*payloads)[i].size());
            t.recv(server, ps::kReplySlot, &replies[i], sizeof(Reply));
          }
          complete(*im, t, what, roles, replies, parts, nullptr);
        },
        {}, writes, cpu(0), Lane::kComm, 0, "dist.ps_set_state");
    engine().wait_for_var(client_.sequence);
  }

 private:
  std::string state_what(std::string_view op_name, const Key& key, const Entry& e) const {
    return fmt::format("kvstore '{}': {} of key {} ({} {}, {} part{}) on worker rank {} of {}",
                       type(), op_name, key.to_string(), e.shape, dtype_name(e.dtype),
                       e.parts.size(), e.parts.size() == 1 ? "" : "s", rank(), num_workers());
  }

  // The request of each part of `e` for a state exchange; `bytes[i]`: part i's payload.
  std::vector<Request> state_requests(const Entry& e, Op op,
                                      const std::vector<uint64_t>& bytes) const {
    std::vector<Request> reqs;
    for (size_t i = 0; i < e.parts.size(); ++i) {
      reqs.push_back(Request{.op = op,
                             .dtype = static_cast<uint32_t>(e.dtype),
                             .key = e.key_id,
                             .bytes = bytes.empty() ? 0 : bytes[i],
                             .elements = static_cast<uint64_t>(e.parts[i].count),
                             .part = static_cast<int32_t>(i),
                             .num_parts = static_cast<int32_t>(e.parts.size()),
                             .sync = sync_ ? 1U : 0U});
    }
    return reqs;
  }

  static std::string describe(const optim::Optimizer* o) {
    if (o == nullptr) return "null";
    nlohmann::json j{{"name", std::string(o->name())},
                     {"learning_rate", o->learning_rate()},
                     {"wd", o->wd()},
                     {"rescale_grad", o->rescale_grad()},
                     {"clip_gradient", o->clip_gradient()}};
    if (const auto* sgd = dynamic_cast<const optim::SGD*>(o)) j["momentum"] = sgd->momentum();
    if (const auto* adam = dynamic_cast<const optim::Adam*>(o)) {
      j["beta1"] = adam->beta1();
      j["beta2"] = adam->beta2();
      j["epsilon"] = adam->epsilon();
    }
    return j.dump();
  }

  // Where reply i's value of `bytes` bytes lands (the caller checks the size).
  using ReplyTarget = std::function<char*(size_t i, uint64_t bytes)>;

  // Completes the posted requests and reply headers of `t`, then receives each reply's value
  // (where `target` says; null: no reply carries one) or its error message; throws a DistError
  // naming `what`, the server rank and why. A reply header that arrived is followed by its data
  // even when another transfer failed: its server is sending it, and a send that nobody
  // receives times out and closes every connection of that server (Gloo's timeout), which
  // would fail the other workers' exchanges with a live server too.
  static void complete(ProcessGroup::Impl& im, ps::Transfers& t, const std::string& what,
                       const Roles& roles, std::span<const Reply> replies,
                       std::span<const ps::Part> parts, const ReplyTarget& target,
                       std::chrono::milliseconds extra = std::chrono::milliseconds(0)) {
    const auto start = Clock::now();
    auto fail = [&](int server_rank, const std::string& why) {
      const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
      JANUS_THROW(DistError,
                  "dist: {} with server rank {} failed after {:.1f} s (timeout {} ms): {}", what,
                  server_rank, seconds, im.timeout.count(), why);
    };
    // One deadline for the headers and the data: two waits each of a whole timeout would let
    // a failure take twice the timeout to surface.
    const auto deadline = start + im.timeout + extra;
    int header_peer = -1;
    std::string header_failure;
    try {
      t.wait(im.timeout + extra, &header_peer);
    } catch (const std::exception& e) {
      header_failure = e.what();
    }
    ps::Transfers data(im);
    std::vector<std::string> messages(replies.size());
    for (size_t i = 0; i < replies.size(); ++i) {
      if (!header_failure.empty() && !t.reply_arrived(i)) continue;
      const int rank = roles.num_workers + (parts.empty() ? static_cast<int>(i) : parts[i].server);
      if (replies[i].status != 0) {
        messages[i].resize(replies[i].bytes);
        if (!messages[i].empty()) {
          data.recv(rank, ps::kReplyDataSlot, messages[i].data(), messages[i].size());
        }
        continue;
      }
      if (replies[i].bytes == 0) continue;
      JANUS_ASSERT(target != nullptr, "dist: {}: server rank {} replied {} bytes, expected none",
                   what, rank, replies[i].bytes);
      data.recv(rank, ps::kReplyDataSlot, target(i, replies[i].bytes), replies[i].bytes);
    }
    int data_peer = -1;
    std::string data_failure;
    try {
      data.wait(time_left(deadline), &data_peer);
    } catch (const std::exception& e) {
      data_failure = e.what();
    }
    if (!header_failure.empty()) fail(header_peer, header_failure + im.describe_gone_ranks());
    if (!data_failure.empty()) fail(data_peer, data_failure + im.describe_gone_ranks());
    for (size_t i = 0; i < replies.size(); ++i) {
      if (replies[i].status == 0) continue;
      const int server = parts.empty() ? static_cast<int>(i) : parts[i].server;
      fail(roles.num_workers + server, messages[i]);
    }
  }

  // The learning rate that a request carries. A push (or pushpull) is one update of the key on
  // the servers; the worker's optimizer, which updates nothing itself, counts it as its own
  // update of the key would (Optimizer::update: the count goes up by one, the schedule is read
  // at the largest count of any key), so a schedule runs as it would on the workers, the
  // counts land in Trainer::save_states and a resumed run continues them.
  double push_rate(const Entry& e, Op op) const {
    if (!optimizer_->lr_scheduler() || (op != Op::kPush && op != Op::kPushPull)) {
      return optimizer_->learning_rate();
    }
    const int64_t count = optimizer_->update_count(e.index) + 1;
    optimizer_->set_state(e.index, {}, count);  // also raises num_update to count
    return optimizer_->learning_rate();
  }

  // One exchange with the key's servers as a comm-lane operation: the request of every part,
  // `send` (its part each) as the payload, and for pull and pushpull the reply into `recv`.
  void exchange(std::string_view op_name, const Key& key, const Entry& e, Op op,
                const NDArray* send, const NDArray* recv) {
    auto im = client_.pg->impl();
    const Roles roles = client_.roles;
    const bool replies = op != Op::kPush;
    const bool wants_round = sync_ && (op == Op::kPull || op == Op::kPushPull);
    const double rate = optimizer_ && op != Op::kInit ? push_rate(e, op) : 0.0;
    std::vector<Request> reqs;
    for (const ps::Part& p : e.parts) {
      Request r{.op = op,
                .dtype = static_cast<uint32_t>(e.dtype),
                .key = e.key_id,
                .bytes = send != nullptr ? static_cast<uint64_t>(p.count) * dtype_size(e.dtype) : 0,
                .elements = static_cast<uint64_t>(p.count),
                .part = static_cast<int32_t>(&p - e.parts.data()),
                .num_parts = static_cast<int32_t>(e.parts.size()),
                .sync = sync_ ? 1U : 0U};
      if (optimizer_ && op != Op::kInit) {
        r.has_optimizer = 1;
        r.rescale_grad = optimizer_->rescale_grad();
        r.learning_rate = rate;
      }
      reqs.push_back(r);
    }
    const std::string what =
        fmt::format("kvstore '{}': {} of key {} ({} {}, {} part{}) on worker rank {} of {}", type(),
                    op_name, key.to_string(), e.shape, dtype_name(e.dtype), e.parts.size(),
                    e.parts.size() == 1 ? "" : "s", rank(), roles.num_workers);
    std::vector<Var*> reads;
    std::vector<Var*> writes{client_.sequence};
    if (send != nullptr) reads.push_back(send->var());
    if (recv != nullptr) writes.push_back(recv->var());
    OpDetail detail;
    if (op_listener_installed()) {
      detail.shapes = fmt::format("{}", e.shape);
      detail.bytes = static_cast<int64_t>(e.shape.numel() * dtype_size(e.dtype));
    }
    engine().push(
        [im, roles, what, replies, wants_round, reqs = std::move(reqs), parts = e.parts,
         esize = dtype_size(e.dtype), src = send != nullptr ? send->raw_data() : nullptr,
         dst = recv != nullptr ? recv->raw_data() : nullptr](const RunContext&) {
          ps::Transfers t(*im);
          std::vector<Reply> reply(replies ? parts.size() : 0);
          for (size_t i = 0; i < parts.size(); ++i) {
            const int server = roles.num_workers + parts[i].server;
            t.send(server, ps::kRequestSlot, &reqs[i], sizeof(Request));
            if (reqs[i].bytes > 0) {
              t.send(server, ps::kRequestDataSlot,
                     static_cast<const char*>(src) + parts[i].begin * esize, reqs[i].bytes);
            }
            if (replies) t.recv(server, ps::kReplySlot, &reply[i], sizeof(Reply));
          }
          // A dist_sync pull waits for the round, which the server bounds by the timeout and
          // then explains; the worker's own limit is a little later.
          const auto extra =
              wants_round ? std::chrono::milliseconds(5000) : std::chrono::milliseconds(0);
          auto into = [&](size_t i, uint64_t bytes) {
            JANUS_ASSERT(dst != nullptr && bytes == parts[i].count * esize,
                         "dist: {}: server rank {} replied {} bytes, expected {}", what,
                         roles.num_workers + parts[i].server, bytes, parts[i].count * esize);
            return static_cast<char*>(dst) + parts[i].begin * esize;
          };
          complete(*im, t, what, roles, reply, parts, into, extra);
        },
        reads, writes, e.device, Lane::kComm, 0, engine_name(op), std::move(detail));
  }

  // The engine operation's name (in profiles and errors): a literal, as the engine keeps it.
  static const char* engine_name(Op op) {
    switch (op) {
      case Op::kInit:
        return "dist.ps_init";
      case Op::kPush:
        return "dist.ps_push";
      case Op::kPull:
        return "dist.ps_pull";
      case Op::kPushPull:
        return "dist.ps_pushpull";
      default:
        return "dist.ps_exchange";
    }
  }

  // What a request sends: the sum of this worker's values; a single value on the key's device
  // is sent as it is (the exchange only reads it), not first copied on the copy lane.
  static NDArray local_sum(const Entry& e, std::span<const NDArray> values) {
    if (values.size() == 1 && values[0].device() == e.device) return values[0];
    NDArray sum = empty(e.shape, e.dtype, e.device);
    parallel::reduce_into(sum, values);
    return sum;
  }

  // Where a reply lands: a single output on the key's device receives it directly (no copy on
  // the copy lane, and no hand-off to the copy worker and back); several get a copy each.
  static NDArray reply_array(const Entry& e, std::span<const NDArray> outs) {
    if (outs.size() == 1 && outs[0].device() == e.device) return outs[0];
    return empty(e.shape, e.dtype, e.device);
  }

  bool sync_;
  Client& client_;
};

const bool kRegistered = [] {
  kvstore::register_kind("dist_sync",
                         [] { return std::make_shared<ParameterServerStore>(/*sync=*/true); });
  kvstore::register_kind("dist_async",
                         [] { return std::make_shared<ParameterServerStore>(/*sync=*/false); });
  return true;
}();

}  // namespace
}  // namespace janus::dist

// A parameter server: one thread per worker receives that worker's requests in order (Gloo
// point-to-point on the job's group) and serves them against this server's shards. dist_sync
// applies a shard's update once every worker pushed for the round; dist_async applies each push
// as it comes. The optimizer (set by worker 0 from a description) runs here, on the engine of
// this process.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "janus/base/error.h"
#include "janus/dist/parameter_server.h"
#include "janus/dist/process_group.h"
#include "janus/engine/array.h"
#include "janus/optim/optimizer.h"

#include "process_group_impl.h"
#include "ps_protocol.h"

namespace janus::dist {
namespace {

using Clock = std::chrono::steady_clock;
using ps::Op;
using ps::Reply;
using ps::Request;

const char* getenv_nonempty(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

int env_int(const char* name, int fallback, std::string_view expected) {
  const char* v = getenv_nonempty(name);
  if (v == nullptr) return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  JANUS_CHECK(end != v && *end == '\0' && x >= 0 && x < (1 << 20), ValueError,
              "dist: {}='{}' is not valid; expected {}", name, v, expected);
  return static_cast<int>(x);
}

// A worker's connection failed (it died, or a transfer with it timed out): its thread ends.
struct WorkerGone {
  std::string reason;
};

struct ShardId {
  int64_t key;
  int32_t part;
  friend auto operator<=>(const ShardId&, const ShardId&) = default;
};

struct Shard {
  DType dtype = DType::kFloat32;
  int64_t elements = 0;
  NDArray stored;  // [elements]
  NDArray merged;  // dist_sync: the open round's sum so far
  NDArray result;  // dist_sync: the last round's sum (pushpull without an optimizer)
  int index = 0;   // the optimizer's parameter index
  int64_t rounds_done = 0;
  int pushed = 0;  // pushes in the open round
  bool round_replaces = false;
  std::vector<int64_t> pushes;  // per worker: pushes received
  size_t bytes() const { return static_cast<size_t>(elements) * dtype_size(dtype); }
};

class Server {
 public:
  Server(ProcessGroup& pg, const Roles& roles)
      : im_(*pg.impl()), roles_(roles), server_index_(pg.rank() - roles.num_workers) {
    goodbye_.assign(static_cast<size_t>(roles.num_workers), false);
    optimizer_sets_.assign(static_cast<size_t>(roles.num_workers), 0);
    scratch_.resize(static_cast<size_t>(roles.num_workers));
  }

  void run() {
    std::vector<std::thread> threads;
    for (int w = 0; w < roles_.num_workers; ++w) threads.emplace_back([this, w] { serve(w); });
    for (std::thread& t : threads) t.join();
    wait_all();
    if (!dead_.empty()) {
      JANUS_THROW(DistError, "dist: server rank {}: {}", im_.rank, fmt::join(dead_, "; "));
    }
  }

 private:
  std::string where() const {
    return fmt::format("{} server rank {}", sync_ ? "dist_sync" : "dist_async", im_.rank);
  }

  void serve(int w) {
    for (;;) {
      Request req;
      try {
        ps::recv_bytes(im_, w, ps::kRequestSlot, &req, sizeof(req), ps::kIdleWait);
      } catch (const std::exception& e) {
        return worker_died(w, e.what());
      }
      if (req.op == Op::kGoodbye) {
        const std::lock_guard lock(mu_);
        goodbye_[static_cast<size_t>(w)] = true;
        cv_.notify_all();
        return;
      }
      try {
        handle(w, req);
      } catch (const WorkerGone& g) {
        return worker_died(w, g.reason);
      }
    }
  }

  void worker_died(int w, const std::string& reason) {
    const std::lock_guard lock(mu_);
    dead_.push_back(fmt::format("worker rank {} has gone (its connection failed: {})", w, reason));
    dead_ranks_.push_back(w);
    // dist_sync cannot finish a round without every worker: every wait fails from now on.
    if (sync_ && failure_.empty()) {
      failure_ = fmt::format("worker rank {} has gone (its connection to the server failed)", w);
    }
    cv_.notify_all();
  }

  // Transfers with worker w; a failure ends the worker (WorkerGone).
  void recv_from(int w, uint64_t slot, void* data, size_t bytes) {
    if (bytes == 0) return;
    try {
      ps::recv_bytes(im_, w, slot, data, bytes, im_.timeout);
    } catch (const std::exception& e) {
      throw WorkerGone{e.what()};
    }
  }
  void send_to(int w, uint64_t slot, const void* data, size_t bytes) {
    if (bytes == 0) return;
    try {
      ps::send_bytes(im_, w, slot, data, bytes, im_.timeout);
    } catch (const std::exception& e) {
      throw WorkerGone{e.what()};
    }
  }
  void reply_value(int w, const void* data, size_t bytes) {
    const Reply r{.status = 0, .bytes = bytes};
    send_to(w, ps::kReplySlot, &r, sizeof(r));
    send_to(w, ps::kReplyDataSlot, data, bytes);
  }
  void reply_error(int w, const std::string& message) {
    const Reply r{.status = 1, .bytes = message.size()};
    send_to(w, ps::kReplySlot, &r, sizeof(r));
    send_to(w, ps::kReplyDataSlot, message.data(), message.size());
  }

  void handle(int w, const Request& req) {
    const ShardId id{req.key, req.part};
    switch (req.op) {
      case Op::kInit:
        return init(w, req, id);
      case Op::kSetOptimizer:
        return set_optimizer(w, req);
      case Op::kPush:
      case Op::kPushPull:
        return push(w, req, id);
      case Op::kPull:
        return pull(w, req, id);
      case Op::kGetState:
        return get_state(w, req, id);
      case Op::kSetState:
        return set_state(w, req, id);
      default:
        throw WorkerGone{fmt::format("unknown request {}", static_cast<uint32_t>(req.op))};
    }
  }

  void init(int w, const Request& req, const ShardId& id) {
    NDArray value;
    if (req.bytes > 0) {
      value = empty(Shape({static_cast<int64_t>(req.elements)}), static_cast<DType>(req.dtype));
      recv_from(w, ps::kRequestDataSlot, value.raw_data(), req.bytes);
    }
    std::unique_lock lock(mu_);
    if (shards_.empty() && value.defined()) sync_ = req.sync != 0;
    if (value.defined()) {
      Shard& s = shards_[id];
      s.dtype = value.dtype();
      s.elements = value.size();
      s.stored = value;
      s.index = static_cast<int>(shards_.size() - 1);
      s.pushes.assign(static_cast<size_t>(roles_.num_workers), 0);
      cv_.notify_all();
      lock.unlock();
      return reply_value(w, nullptr, 0);
    }
    // Rank 0's value wins; the others wait for it.
    const bool ok = wait(lock, [&] { return shards_.contains(id) || is_dead(0); });
    const std::string error =
        shards_.contains(id)
            ? ""
            : fmt::format("{}: init of key {} part {}: worker rank 0 never sent the value{}",
                          where(), key_name(req.key), req.part, ok ? " (it has gone)" : "");
    lock.unlock();
    if (error.empty()) return reply_value(w, nullptr, 0);
    reply_error(w, error + timeout_note(ok));
  }

  void set_optimizer(int w, const Request& req) {
    std::string text(req.bytes, '\0');
    recv_from(w, ps::kRequestDataSlot, text.data(), text.size());
    std::unique_lock lock(mu_);
    const int64_t round = ++optimizer_sets_[static_cast<size_t>(w)];
    if (w == 0) {
      try {
        optimizer_ = make_optimizer_from(text);
      } catch (const Error& e) {
        lock.unlock();
        return reply_error(w, fmt::format("{}: set_optimizer: {}", where(), e.what()));
      }
      cv_.notify_all();
      lock.unlock();
      return reply_value(w, nullptr, 0);
    }
    const bool ok = wait(lock, [&] { return optimizer_sets_[0] >= round || is_dead(0); });
    const bool done = optimizer_sets_[0] >= round;
    lock.unlock();
    if (done) return reply_value(w, nullptr, 0);
    reply_error(w, fmt::format("{}: set_optimizer: worker rank 0 never sent the optimizer{}",
                               where(), timeout_note(ok)));
  }

  static optim::OptimizerPtr make_optimizer_from(const std::string& text) {
    const auto j = nlohmann::json::parse(text);
    if (j.is_null()) return nullptr;
    optim::OptimizerOptions o;
    o.momentum = j.value("momentum", 0.0);
    o.wd = j.value("wd", 0.0);
    o.beta1 = j.value("beta1", 0.9);
    o.beta2 = j.value("beta2", 0.999);
    o.epsilon = j.value("epsilon", 1e-8);
    o.clip_gradient = j.value("clip_gradient", -1.0);
    auto opt = optim::make_optimizer(j.at("name").get<std::string>(),
                                     j.at("learning_rate").get<double>(), o);
    opt->set_rescale_grad(j.value("rescale_grad", 1.0));
    return opt;
  }

  // The push's payload, received into this worker's buffer for the shard.
  NDArray& scratch(int w, const ShardId& id, DType dtype, int64_t elements) {
    NDArray& a = scratch_[static_cast<size_t>(w)][id];
    if (!a.defined() || a.size() != elements || a.dtype() != dtype) {
      a = empty(Shape({elements}), dtype);
    }
    return a;
  }

  void push(int w, const Request& req, const ShardId& id) {
    NDArray* in = nullptr;
    {
      const std::lock_guard lock(mu_);
      auto it = shards_.find(id);
      if (it == shards_.end() || it->second.bytes() != req.bytes) {
        in = &scratch(w, ShardId{-1, -1}, DType::kUInt8, static_cast<int64_t>(req.bytes));
      } else {
        in = &scratch(w, id, it->second.dtype, it->second.elements);
      }
    }
    recv_from(w, ps::kRequestDataSlot, in->raw_data(), req.bytes);
    std::unique_lock lock(mu_);
    auto it = shards_.find(id);
    if (it == shards_.end()) {
      const std::string error = fmt::format("{}: push of key {}: the key was never initialised",
                                            where(), key_name(req.key));
      lock.unlock();
      if (req.op == Op::kPushPull) reply_error(w, error);
      return;
    }
    Shard& s = it->second;
    if (!sync_) return push_async(w, req, s, *in, lock);

    const int64_t round = ++s.pushes[static_cast<size_t>(w)];
    // A worker that pushes twice without pulling waits here for the others' pushes of its
    // earlier round.
    const bool ok = wait(lock, [&] { return s.rounds_done >= round - 1 || !failure_.empty(); });
    if (!failure_.empty() || !ok) {
      const std::string error = round_error(req, s, round, ok);
      lock.unlock();
      if (req.op == Op::kPushPull) reply_error(w, error);
      return;
    }
    if (s.pushed == 0) {
      if (!s.merged.defined()) s.merged = empty(Shape({s.elements}), s.dtype);
      std::memcpy(s.merged.raw_data(), in->raw_data(), s.bytes());
      s.round_replaces = req.op == Op::kPush;
    } else {
      ps::add_into(s.merged.raw_data(), in->raw_data(), static_cast<size_t>(s.elements), s.dtype);
    }
    if (++s.pushed == roles_.num_workers) complete_round(req, s);
    if (req.op == Op::kPush) return;
    reply_after_round(w, req, s, round, lock);
  }

  void push_async(int w, const Request& req, Shard& s, const NDArray& in,
                  std::unique_lock<std::mutex>& lock) {
    apply(req, s, in, /*replaces=*/true);
    if (req.op == Op::kPush) return;
    NDArray& out = scratch(w, ShardId{req.key, -2 - req.part}, s.dtype, s.elements);
    std::memcpy(out.raw_data(), s.stored.raw_data(), s.bytes());
    lock.unlock();
    reply_value(w, out.raw_data(), s.bytes());
  }

  // The summed (dist_sync) or single (dist_async) push becomes the new value: the optimizer's
  // update of it, or, without one, the sum itself when `replaces`.
  void apply(const Request& req, Shard& s, const NDArray& sum, bool replaces) {
    if (optimizer_) {
      optimizer_->set_rescale_grad(req.rescale_grad);
      // The worker's rate for this update (a schedule's may be 0 at its end).
      if (req.has_optimizer != 0 && !optimizer_->lr_scheduler()) {
        optimizer_->set_learning_rate(req.learning_rate);
      }
      optimizer_->update(s.index, s.stored, sum);
      wait_to_read(s.stored);
      return;
    }
    if (replaces) std::memcpy(s.stored.raw_data(), sum.raw_data(), s.bytes());
  }

  void complete_round(const Request& req, Shard& s) {
    apply(req, s, s.merged, s.round_replaces);
    if (!optimizer_ && !s.round_replaces) std::swap(s.merged, s.result);
    s.pushed = 0;
    ++s.rounds_done;
    cv_.notify_all();
  }

  void reply_after_round(int w, const Request& req, Shard& s, int64_t round,
                         std::unique_lock<std::mutex>& lock) {
    const bool ok = wait(lock, [&] { return s.rounds_done >= round || !failure_.empty(); });
    if (s.rounds_done < round) {
      const std::string error = round_error(req, s, round, ok);
      lock.unlock();
      return reply_error(w, error);
    }
    // The value cannot change before this worker pushes again (the next round needs its push),
    // so it is sent without the lock and without a copy.
    const bool sum_only = !optimizer_ && req.op == Op::kPushPull && !s.round_replaces;
    const void* data = sum_only ? s.result.raw_data() : s.stored.raw_data();
    lock.unlock();
    reply_value(w, data, s.bytes());
  }

  void pull(int w, const Request& req, const ShardId& id) {
    std::unique_lock lock(mu_);
    auto it = shards_.find(id);
    if (it == shards_.end()) {
      lock.unlock();
      return reply_error(w, fmt::format("{}: pull of key {}: the key was never initialised",
                                        where(), key_name(req.key)));
    }
    Shard& s = it->second;
    if (sync_) return reply_after_round(w, req, s, s.pushes[static_cast<size_t>(w)], lock);
    NDArray& out = scratch(w, ShardId{req.key, -2 - req.part}, s.dtype, s.elements);
    std::memcpy(out.raw_data(), s.stored.raw_data(), s.bytes());
    lock.unlock();
    reply_value(w, out.raw_data(), s.bytes());
  }

  // The shard of a state request, or why there is none (no such shard, no optimizer).
  std::string state_error(const Request& req, const ShardId& id, std::string_view what) const {
    if (!shards_.contains(id)) {
      return fmt::format("{}: {} of key {} part {}: the key was never initialised", where(), what,
                         key_name(req.key), req.part);
    }
    if (!optimizer_) {
      return fmt::format("{}: {} of key {}: no optimizer is set on the servers", where(), what,
                         key_name(req.key));
    }
    return "";
  }

  // The optimizer's state of a shard and its update count (a checkpoint of worker 0), copied
  // under the lock: no update of the shard runs meanwhile, and a dist_sync round cannot
  // complete without this worker's next push, which comes after this request.
  void get_state(int w, const Request& req, const ShardId& id) {
    std::unique_lock lock(mu_);
    const std::string error = state_error(req, id, "get_state");
    if (!error.empty()) {
      lock.unlock();
      return reply_error(w, error);
    }
    const Shard& s = shards_.at(id);
    const std::vector<NDArray>& state = optimizer_->state(s.index);
    const ps::StateHeader header{.update_count = optimizer_->update_count(s.index),
                                 .num_arrays = static_cast<int64_t>(state.size())};
    std::vector<char> out(sizeof(header) + state.size() * s.bytes());
    std::memcpy(out.data(), &header, sizeof(header));
    for (size_t k = 0; k < state.size(); ++k) {
      wait_to_read(state[k]);
      std::memcpy(out.data() + sizeof(header) + k * s.bytes(), state[k].raw_data(), s.bytes());
    }
    lock.unlock();
    reply_value(w, out.data(), out.size());
  }

  // Replaces a shard's optimizer state and update count (resuming from a checkpoint).
  void set_state(int w, const Request& req, const ShardId& id) {
    std::vector<char> in(req.bytes);
    recv_from(w, ps::kRequestDataSlot, in.data(), in.size());
    std::unique_lock lock(mu_);
    std::string error = state_error(req, id, "set_state");
    ps::StateHeader header;
    if (error.empty()) {
      const Shard& s = shards_.at(id);
      if (in.size() >= sizeof(header)) std::memcpy(&header, in.data(), sizeof(header));
      const size_t want = static_cast<size_t>(header.num_arrays) * s.bytes() + sizeof(header);
      const size_t names = optimizer_->state_names().size();
      if (in.size() < sizeof(header) || header.num_arrays < 0 || in.size() != want ||
          (header.num_arrays != 0 && static_cast<size_t>(header.num_arrays) != names) ||
          header.update_count < 0) {
        error = fmt::format(
            "{}: set_state of key {} part {}: {} bytes, {} arrays, update count {}; expected {} "
            "arrays of {} {} and a count >= 0",
            where(), key_name(req.key), req.part, in.size(), header.num_arrays, header.update_count,
            names, s.elements, dtype_name(s.dtype));
      }
    }
    if (!error.empty()) {
      lock.unlock();
      return reply_error(w, error);
    }
    const Shard& s = shards_.at(id);
    std::vector<NDArray> arrays;
    for (int64_t k = 0; k < header.num_arrays; ++k) {
      NDArray a = empty(Shape({s.elements}), s.dtype);
      std::memcpy(a.raw_data(), in.data() + sizeof(header) + k * s.bytes(), s.bytes());
      arrays.push_back(std::move(a));
    }
    optimizer_->set_state(s.index, std::move(arrays), header.update_count);
    lock.unlock();
    reply_value(w, nullptr, 0);
  }

  // Waits for `done` up to the timeout; false when it timed out.
  template <typename Pred>
  bool wait(std::unique_lock<std::mutex>& lock, Pred done) {
    return cv_.wait_for(lock, im_.timeout, done);
  }

  bool is_dead(int w) const {
    return std::find(dead_ranks_.begin(), dead_ranks_.end(), w) != dead_ranks_.end();
  }

  std::string timeout_note(bool ok) const {
    return ok ? "" : fmt::format(" within the timeout ({} ms)", im_.timeout.count());
  }

  static std::string key_name(int64_t key) {
    return key >= 0 ? std::to_string(key) : fmt::format("#{:x}", static_cast<uint64_t>(key));
  }

  // Why round `round` of a shard did not complete: the workers whose push is missing.
  std::string round_error(const Request& req, const Shard& s, int64_t round, bool ok) const {
    std::vector<int> missing;
    for (int x = 0; x < roles_.num_workers; ++x) {
      if (s.pushes[static_cast<size_t>(x)] < round) missing.push_back(x);
    }
    return fmt::format(
        "{}: round {} of key {} (part {} of {}) failed: no push from worker rank{} {}: {}", where(),
        round, key_name(req.key), req.part, req.num_parts, missing.size() == 1 ? "" : "s",
        fmt::join(missing, ", "),
        !failure_.empty()
            ? failure_
            : fmt::format("not within the timeout ({} ms); a worker stalled", im_.timeout.count()));
  }

  ProcessGroup::Impl& im_;
  Roles roles_;
  int server_index_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> sync_ = true;  // from worker 0's first init (read in messages unlocked)
  std::map<ShardId, Shard> shards_;
  optim::OptimizerPtr optimizer_;
  std::vector<int64_t> optimizer_sets_;  // per worker: set_optimizer requests received
  std::vector<bool> goodbye_;
  std::vector<std::string> dead_;
  std::vector<int> dead_ranks_;
  std::string failure_;  // dist_sync: why no round can complete any more
  std::vector<std::map<ShardId, NDArray>> scratch_;  // per worker
};

}  // namespace

Roles Roles::from_env() {
  const int world = env_int("JANUS_WORLD_SIZE", 1, "the number of processes in the job");
  Roles r;
  if (const char* role = getenv_nonempty("JANUS_ROLE")) {
    const std::string_view v(role);
    JANUS_CHECK(v == "worker" || v == "server", ValueError,
                "dist: JANUS_ROLE='{}' is not valid; expected 'worker' or 'server'", v);
    r.role = v == "server" ? Role::kServer : Role::kWorker;
  }
  r.num_servers = env_int("JANUS_NUM_SERVERS", 0, "the number of server processes, >= 0");
  r.num_workers =
      env_int("JANUS_NUM_WORKERS", world - r.num_servers, "the number of worker processes, >= 1");
  JANUS_CHECK(r.num_workers >= 1 && r.num_workers + r.num_servers == world, ValueError,
              "dist: JANUS_NUM_WORKERS={} and JANUS_NUM_SERVERS={} do not add up to "
              "JANUS_WORLD_SIZE={}; expected workers + servers = world size, at least one worker",
              r.num_workers, r.num_servers, world);
  JANUS_CHECK(r.role == Role::kWorker || r.num_servers > 0, ValueError,
              "dist: JANUS_ROLE=server but JANUS_NUM_SERVERS is {}", r.num_servers);
  if (const char* rank_text = getenv_nonempty("JANUS_RANK")) {
    const int rank = std::atoi(rank_text);
    const bool server_rank = rank >= r.num_workers;
    JANUS_CHECK(server_rank == (r.role == Role::kServer), ValueError,
                "dist: JANUS_RANK={} with JANUS_ROLE={}; expected ranks 0..{} to be workers and "
                "{}..{} servers",
                rank, r.role == Role::kServer ? "server" : "worker", r.num_workers - 1,
                r.num_workers, world - 1);
  }
  return r;
}

void run_server() {
  const Roles roles = Roles::from_env();
  JANUS_CHECK(roles.role == Role::kServer, ValueError,
              "dist: run_server: this process is a worker (JANUS_ROLE is not 'server')");
  ProcessGroup& pg = default_group();
  Server(pg, roles).run();
}

bool maybe_run_server() {
  const char* role = getenv_nonempty("JANUS_ROLE");
  if (role == nullptr || std::string_view(role) != "server") return false;
  run_server();
  return true;
}

}  // namespace janus::dist

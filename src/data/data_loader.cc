// DataLoader: plans each epoch's batches (order, last-batch policy) up front, then loads them on
// the caller's thread or on worker threads that run ahead of the consumer by a bounded amount.
#include "janus/data/data_loader.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>
#include <utility>

#include "janus/base/error.h"
#include "janus/base/split_ranges.h"

namespace janus::data {
namespace {

/// SplitMix64: a small, fully specified generator, so that an epoch's order is the same with
/// every standard library (std::shuffle and the std distributions are not specified).
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t state) : state_(state) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, bound), without modulo bias.
  uint64_t below(uint64_t bound) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t x = next();
    while (x >= limit) x = next();
    return x % bound;
  }

 private:
  uint64_t state_;
};

/// The samples 0..n-1 in the order of `epoch`: Fisher-Yates keyed by (seed, epoch).
std::vector<int64_t> epoch_order(int64_t n, bool shuffle, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  if (!shuffle) return order;
  SplitMix64 key(seed);
  SplitMix64 rng(key.next() ^ (static_cast<uint64_t>(epoch) * 0xd1b54a32d192ed03ull));
  for (int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(rng.below(static_cast<uint64_t>(i) + 1));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  return order;
}

int64_t count_batches(int64_t samples, int64_t batch_size, LastBatch policy) {
  const int64_t full = samples / batch_size;
  const bool partial = samples % batch_size != 0;
  return full + (partial && policy == LastBatch::kKeep ? 1 : 0);
}

/// A batch as loaded: its arrays (or its parts), or the exception that loading it threw.
struct Loaded {
  Sample arrays;
  std::vector<Sample> parts;
  std::exception_ptr error;
};

/// One epoch: its plan, and the workers and queue that load it.
struct Epoch {
  int64_t number = 0;
  std::vector<std::vector<int64_t>> plan;  // sample indices of each batch; immutable once built
  std::vector<int64_t> leftover;           // rolled over to the next epoch if this one ends
  int64_t next_take = 0;                   // consumer only

  // Shared with the workers; guarded by mu.
  std::mutex mu;
  std::condition_variable work_cv;   // workers: room in the queue, or stopping
  std::condition_variable ready_cv;  // consumer: a batch arrived
  int64_t next_claim = 0;            // first batch no worker has taken
  int64_t consumed = 0;              // batches the consumer has taken
  std::map<int64_t, Loaded> ready;   // loaded, not yet taken
  bool stopping = false;

  std::vector<std::thread> threads;
};

}  // namespace

struct DataLoader::Impl {
  std::shared_ptr<const Dataset> dataset;
  DataLoaderOptions options;
  int64_t capacity = 0;  // batches loaded or loading ahead of the consumer
  int64_t epochs_started = 0;
  std::vector<int64_t> carried;  // rollover samples that start the next epoch
  std::unique_ptr<Epoch> epoch;  // the running epoch; null when none runs

  ~Impl() { stop_epoch(); }

  Loaded load(const Epoch& e, int64_t k) const {
    Loaded out;
    try {
      const std::vector<int64_t>& rows = e.plan[static_cast<size_t>(k)];
      if (options.devices.size() < 2) {
        out.arrays = dataset->get_batch(rows);
      } else {
        // split_and_load's split, with even_split=false.
        const std::span<const int64_t> all(rows);
        const auto ranges = split_ranges(std::ssize(rows), std::ssize(options.devices),
                                         /*even_split=*/false);
        for (size_t p = 0; p < ranges.size(); ++p) {
          const auto [begin, end] = ranges[p];
          out.parts.push_back(dataset->get_batch_on(
              all.subspan(static_cast<size_t>(begin), static_cast<size_t>(end - begin)),
              options.devices[p]));
        }
      }
    } catch (Error& err) {
      err.add_context(fmt::format("data loader: epoch {}, batch {}", e.number, k));
      out.error = std::current_exception();
    } catch (...) {
      out.error = std::current_exception();
    }
    return out;
  }

  void run_worker(Epoch& e) const {
    const auto batches = static_cast<int64_t>(e.plan.size());
    for (;;) {
      int64_t k = 0;
      {
        std::unique_lock lock(e.mu);
        e.work_cv.wait(lock, [&] {
          return e.stopping || e.next_claim >= batches || e.next_claim < e.consumed + capacity;
        });
        if (e.stopping || e.next_claim >= batches) return;
        k = e.next_claim++;
      }
      Loaded item = load(e, k);
      {
        std::lock_guard lock(e.mu);
        e.ready.emplace(k, std::move(item));
      }
      e.ready_cv.notify_one();
    }
  }

  void start_epoch() {
    stop_epoch();
    auto e = std::make_unique<Epoch>();
    e->number = options.first_epoch + epochs_started++;
    std::vector<int64_t> order = std::exchange(carried, {});
    std::vector<int64_t> fresh =
        epoch_order(dataset->size(), options.shuffle, options.seed, e->number);
    order.insert(order.end(), fresh.begin(), fresh.end());

    const int64_t b = options.batch_size;
    const auto total = static_cast<int64_t>(order.size());
    for (int64_t begin = 0; begin < total; begin += b) {
      const int64_t end = std::min(begin + b, total);
      std::vector<int64_t> batch(order.begin() + begin, order.begin() + end);
      if (end - begin == b || options.last_batch == LastBatch::kKeep) {
        e->plan.push_back(std::move(batch));
      } else if (options.last_batch == LastBatch::kRollover) {
        e->leftover = std::move(batch);
      }
    }

    const int64_t workers = std::min<int64_t>(options.num_workers, std::ssize(e->plan));
    epoch = std::move(e);
    try {
      for (int64_t w = 0; w < workers; ++w) {
        epoch->threads.emplace_back([this, raw = epoch.get()] { run_worker(*raw); });
      }
    } catch (...) {
      stop_epoch();  // joins the threads that did start
      throw;
    }
  }

  void stop_epoch() {
    if (!epoch) return;
    {
      std::lock_guard lock(epoch->mu);
      epoch->stopping = true;
    }
    epoch->work_cv.notify_all();
    for (std::thread& t : epoch->threads) t.join();
    epoch.reset();
  }

  std::optional<Batch> next() {
    if (!epoch) start_epoch();
    Epoch& e = *epoch;
    if (e.next_take == std::ssize(e.plan)) {
      carried = std::move(e.leftover);
      stop_epoch();
      return std::nullopt;
    }
    const int64_t k = e.next_take++;
    Loaded item;
    if (e.threads.empty()) {
      item = load(e, k);
    } else {
      std::unique_lock lock(e.mu);
      e.ready_cv.wait(lock, [&] { return e.ready.contains(k); });
      auto node = e.ready.extract(k);
      item = std::move(node.mapped());
      e.consumed = k + 1;
      lock.unlock();
      e.work_cv.notify_all();
    }
    if (item.error) std::rethrow_exception(item.error);
    return Batch{.arrays = std::move(item.arrays),
                 .parts = std::move(item.parts),
                 .indices = e.plan[static_cast<size_t>(k)],
                 .epoch = e.number,
                 .index = k};
  }
};

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options)
    : impl_(std::make_unique<Impl>()) {
  JANUS_CHECK(dataset != nullptr, ValueError, "DataLoader: the dataset is null");
  JANUS_CHECK(options.batch_size >= 1, ValueError, "DataLoader: batch_size is {}, expected >= 1",
              options.batch_size);
  JANUS_CHECK(options.num_workers >= 0, ValueError, "DataLoader: num_workers is {}, expected >= 0",
              options.num_workers);
  JANUS_CHECK(options.first_epoch >= 0, ValueError, "DataLoader: first_epoch is {}, expected >= 0",
              options.first_epoch);
  JANUS_CHECK(options.prefetch >= 0, ValueError,
              "DataLoader: prefetch is {}, expected >= 0 (0 means 2 * num_workers)",
              options.prefetch);
  for (size_t i = 0; i < options.devices.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      JANUS_CHECK(options.devices[i] != options.devices[j], ValueError,
                  "DataLoader: devices lists {} twice (at {} and {}), expected distinct devices",
                  options.devices[i], j, i);
    }
  }
  impl_->dataset = std::move(dataset);
  impl_->options = options;
  impl_->capacity = options.prefetch > 0 ? options.prefetch : 2 * int64_t{options.num_workers};
}

DataLoader::~DataLoader() = default;
DataLoader::DataLoader(DataLoader&&) noexcept = default;
DataLoader& DataLoader::operator=(DataLoader&&) noexcept = default;

std::optional<Batch> DataLoader::next() { return impl_->next(); }

DataLoader::Iterator DataLoader::begin() {
  impl_->start_epoch();
  return Iterator(this);
}

int64_t DataLoader::num_batches() const {
  if (impl_->epoch) return std::ssize(impl_->epoch->plan);
  return count_batches(std::ssize(impl_->carried) + impl_->dataset->size(),
                       impl_->options.batch_size, impl_->options.last_batch);
}

int64_t DataLoader::epochs_started() const { return impl_->epochs_started; }
const Dataset& DataLoader::dataset() const { return *impl_->dataset; }
const DataLoaderOptions& DataLoader::options() const { return impl_->options; }

}  // namespace janus::data

// DataLoader: batches of a dataset, shuffled by a seed, loaded ahead by background workers so
// that loading overlaps compute. Layer: data.
//
//   auto train = std::make_shared<data::FashionMNIST>();
//   data::DataLoader loader(train, {.batch_size = 256, .shuffle = true, .num_workers = 2});
//   for (int epoch = 0; epoch < 10; ++epoch) {
//     for (const data::Batch& b : loader) {   // each loop over the loader is one epoch
//       NDArray x = b[0], y = b[1];            // [256, 1, 28, 28] float32, [256] int32
//       ...
//     }
//   }
#pragma once

#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <vector>

#include "janus/core/ndarray.h"
#include "janus/data/dataset.h"

namespace janus::data {

/// What happens to the last samples of an epoch when they do not fill a batch.
enum class LastBatch : uint8_t {
  kKeep,      // a smaller last batch
  kDiscard,   // dropped
  kRollover,  // carried over: they start the next epoch (Gluon's 'rollover')
};

struct DataLoaderOptions {
  /// Samples per batch, >= 1.
  int64_t batch_size = 1;
  /// Visit the samples in a new random order each epoch. The order depends only on `seed` and
  /// the epoch number (0 for the first epoch the loader starts), never on threads.
  bool shuffle = false;
  uint64_t seed = 0;
  LastBatch last_batch = LastBatch::kKeep;
  /// Background threads that load batches ahead of the consumer; 0 loads each batch on the
  /// caller's thread when it is asked for.
  int num_workers = 0;
  /// Most batches loaded (or being loaded) ahead of the consumer; 0 means 2 * num_workers.
  /// Ignored without workers.
  int prefetch = 0;
  /// The number of the first epoch this loader starts (its order, and Batch::epoch): a run
  /// resumed after k epochs passes k to visit the samples as the uninterrupted run would.
  int64_t first_epoch = 0;
  /// Data parallelism: with two or more devices, each batch comes as one part per device
  /// (Batch::parts, no whole batch), the rows split as `parallel::split_and_load` splits a
  /// batch with even_split=false (the first size % devices parts one row longer; a batch of
  /// fewer rows than devices gives one part per row), part k gathered on devices[k] by
  /// `Dataset::get_batch_on`. Where the devices read the dataset's memory in place, this
  /// replaces a gather of the whole batch on one device and a copy of each slice to the others
  /// by one gather of its own rows on each device. Empty (or one device): whole batches.
  std::vector<Device> devices;
};

/// One batch: the samples' arrays stacked along a new first axis.
struct Batch {
  /// One array per sample field (e.g. {images, labels}), each [batch_size, ...]; empty when
  /// the loader splits batches over devices.
  std::vector<NDArray> arrays;
  /// With DataLoaderOptions::devices: part k holds, on devices[k], one array per sample field of
  /// the rows of device k, in batch order (the parts one after another are the batch).
  std::vector<Sample> parts;
  /// The dataset indices of the samples, in batch order.
  std::vector<int64_t> indices;
  /// The epoch (from 0) and the position of the batch in it.
  int64_t epoch = 0;
  int64_t index = 0;

  const NDArray& operator[](size_t field) const { return arrays.at(field); }
  int64_t batch_size() const { return static_cast<int64_t>(indices.size()); }
};

/// Iterates over a dataset in batches, as Gluon's `DataLoader`.
///
/// Epochs: each range-for over the loader (each `begin()`) starts a new epoch; `next()` goes on
/// with the current epoch, starts one when none is running, and returns nullopt at its end.
/// Batches come in the same order, with the same contents, whatever `num_workers` is.
///
/// Workers: with `num_workers` > 0, an epoch starts that many threads; each takes the next
/// batch not yet taken and loads it with `Dataset::get_batch`, while at most `prefetch` batches
/// are ahead of the consumer (a bounded queue, so memory stays bounded). An exception thrown
/// while loading a batch is rethrown by `next()` (or the iterator's increment) on the consumer's
/// thread, at that batch, with "data loader: epoch E, batch B" prepended to the message of a
/// janus::Error; that batch is skipped, and `next()` goes on with the following one.
///
/// Starting a new epoch, or destroying the loader, before an epoch ends stops its workers: each
/// finishes the batch it is loading, then the threads are joined (no hang). Rollover samples are
/// carried only from an epoch that ran to its end.
///
/// A loader is used from one thread at a time.
class DataLoader {
 public:
  /// Throws ValueError when `dataset` is null, batch_size < 1, num_workers < 0 or prefetch < 0.
  DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options = {});
  ~DataLoader();
  DataLoader(DataLoader&&) noexcept;
  DataLoader& operator=(DataLoader&&) noexcept;
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  /// The next batch of the current epoch (starting an epoch when none runs), or nullopt when
  /// the epoch has ended; the call after that starts the next epoch.
  std::optional<Batch> next();

  /// Batches in the current epoch, or in the next one when none runs (with rollover, it
  /// depends on the samples carried over).
  int64_t num_batches() const;
  /// Epochs started so far.
  int64_t epochs_started() const;
  const Dataset& dataset() const;
  const DataLoaderOptions& options() const;

  /// An input iterator over the batches of one epoch.
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;
    using pointer = const Batch*;
    using reference = const Batch&;

    Iterator() = default;
    const Batch& operator*() const { return *batch_; }
    const Batch* operator->() const { return &*batch_; }
    Iterator& operator++() {
      batch_ = loader_->next();
      return *this;
    }
    void operator++(int) { ++*this; }
    friend bool operator==(const Iterator& it, std::default_sentinel_t) {
      return !it.batch_.has_value();
    }

   private:
    friend class DataLoader;
    explicit Iterator(DataLoader* loader) : loader_(loader), batch_(loader->next()) {}
    DataLoader* loader_ = nullptr;
    std::optional<Batch> batch_;
  };

  /// Starts a new epoch (stopping the current one, if any) and returns its first batch.
  Iterator begin();
  std::default_sentinel_t end() const { return {}; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace janus::data

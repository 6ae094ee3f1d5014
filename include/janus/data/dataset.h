// Datasets: indexed collections of samples, each a few arrays (e.g. {image, label}).
// Layer: data (uses ops, engine, core).
//
//   auto ds = std::make_shared<data::ArrayDataset>(std::vector<NDArray>{images, labels});
//   data::Sample s = ds->get(3);                        // {images[3], labels[3]} (views)
//   data::Sample b = ds->get_batch(std::vector<int64_t>{0, 5, 2});  // {[3, ...], [3]}
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "janus/core/ndarray.h"

namespace janus::data {

/// One sample: a small vector of arrays, e.g. {image, label}. Every sample of a dataset has the
/// same number of arrays, and array j has the same shape and dtype in every sample.
using Sample = std::vector<NDArray>;

/// An indexed collection of samples, as Gluon's `Dataset` and PyTorch's map-style dataset.
///
/// Thread-safety: a DataLoader with workers calls `get` and `get_batch` from several threads at
/// once, so implementations must allow concurrent calls of these const functions.
class Dataset {
 public:
  virtual ~Dataset() = default;

  /// Number of samples.
  virtual int64_t size() const = 0;

  /// Sample `index`, in [0, size()). Throws IndexError otherwise.
  virtual Sample get(int64_t index) const = 0;

  /// The samples at `indices`, array j of every sample stacked along a new first axis:
  /// result[j] has shape [indices.size(), sample[j].shape...]. The default calls `get` for each
  /// index and pushes one engine operation per array j that copies the rows into the batch
  /// (it returns before the copies run; an error in a sample surfaces at the batch's blocker).
  /// Throws ShapeError when samples do not agree in count, shape or dtype, and ValueError for
  /// an empty `indices`. Datasets with a faster gather (ArrayDataset) override it.
  virtual Sample get_batch(std::span<const int64_t> indices) const;

  /// The samples at `indices` stacked as `get_batch` stacks them, every array of the batch on
  /// `device`. The default gathers with `get_batch` and copies each array that lives elsewhere
  /// (`copyto`); ArrayDataset gathers on `device` itself where it reads the dataset's memory in
  /// place (logical CPU devices share the host's), with no copy. Same errors as `get_batch`.
  virtual Sample get_batch_on(std::span<const int64_t> indices, Device device) const;
};

/// A dataset over whole arrays whose first axis indexes the samples: sample i is
/// {arrays[0][i], arrays[1][i], ...} (views, no copy). A batch is gathered by one engine
/// operation per device on its compute lane, for all the arrays there (one memcpy per run of
/// consecutive rows, over the kernel threads): it returns before the copies run, and they read
/// the arrays after the writes pushed on them before.
///
/// The arrays must be host (CPU) arrays.
class ArrayDataset : public Dataset {
 public:
  /// Throws ValueError when `arrays` is empty or holds an undefined array, ShapeError when an
  /// array is a scalar or the arrays' first extents (their lengths) differ, DeviceError when an
  /// array is not on a CPU device.
  explicit ArrayDataset(std::vector<NDArray> arrays);

  int64_t size() const override { return size_; }
  Sample get(int64_t index) const override;
  Sample get_batch(std::span<const int64_t> indices) const override;
  /// One operation on `device`'s compute lane for all the arrays, where `device` reads each of
  /// them in place; else the default's gather and copies.
  Sample get_batch_on(std::span<const int64_t> indices, Device device) const override;

  /// The arrays, as given.
  const std::vector<NDArray>& arrays() const { return arrays_; }

 private:
  void check_indices(std::span<const int64_t> indices) const;
  // Array j of a batch of `batch` rows, uninitialised, on devices[j].
  Sample empty_batch(int64_t batch, std::span<const Device> devices) const;
  void push_gather(const Sample& out, std::span<const size_t> fields,
                   std::span<const int64_t> indices, Device device) const;

  std::vector<NDArray> arrays_;
  int64_t size_ = 0;
};

/// `base` with `fn` applied to every sample (Gluon's `Dataset.transform`). `fn` runs on the
/// loader's worker threads, possibly several at once, so it must be thread-safe. Batches come
/// from the default `Dataset::get_batch` (one `get` per sample).
class TransformDataset : public Dataset {
 public:
  using Fn = std::function<Sample(Sample)>;

  /// Throws ValueError when `base` or `fn` is null.
  TransformDataset(std::shared_ptr<const Dataset> base, Fn fn);

  int64_t size() const override { return base_->size(); }
  Sample get(int64_t index) const override { return fn_(base_->get(index)); }

 private:
  std::shared_ptr<const Dataset> base_;
  Fn fn_;
};

}  // namespace janus::data

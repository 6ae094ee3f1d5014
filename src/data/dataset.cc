// Dataset's default batch assembly (one engine operation per field), ArrayDataset's row gather
// and TransformDataset.
#include "janus/data/dataset.h"

#include <algorithm>
#include <cstring>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/engine/engine.h"

namespace janus::data {
namespace {

Shape batch_shape(int64_t batch, const Shape& sample) {
  std::vector<int64_t> dims{batch};
  dims.insert(dims.end(), sample.begin(), sample.end());
  return Shape(std::move(dims));
}

void check_sample_matches(const Sample& first, const Sample& sample, size_t position,
                          int64_t index) {
  JANUS_CHECK(sample.size() == first.size(), ShapeError,
              "dataset: sample {} (position {} in the batch) has {} arrays, the first sample of "
              "the batch has {}",
              index, position, sample.size(), first.size());
  for (size_t j = 0; j < sample.size(); ++j) {
    const NDArray& a = sample[j];
    JANUS_CHECK(a.defined(), ValueError, "dataset: sample {} has an undefined array {}", index, j);
    JANUS_CHECK(a.shape() == first[j].shape() && a.dtype() == first[j].dtype(), ShapeError,
                "dataset: array {} of sample {} is {} {}, the first sample of the batch has {} {}; "
                "samples must agree to be stacked",
                j, index, a.dtype(), a.shape(), first[j].dtype(), first[j].shape());
    JANUS_CHECK(a.device().is_cpu(), DeviceError,
                "dataset: array {} of sample {} is on {}; batches are assembled on the host", j,
                index, a.device());
  }
}

}  // namespace

Sample Dataset::get_batch(std::span<const int64_t> indices) const {
  JANUS_CHECK(!indices.empty(), ValueError, "dataset: get_batch needs at least one index");
  std::vector<Sample> samples;
  samples.reserve(indices.size());
  for (size_t i = 0; i < indices.size(); ++i) {
    samples.push_back(get(indices[i]));
    check_sample_matches(samples.front(), samples.back(), i, indices[i]);
  }

  const int64_t batch = static_cast<int64_t>(indices.size());
  Sample out;
  for (size_t j = 0; j < samples.front().size(); ++j) {
    const NDArray& first = samples.front()[j];
    NDArray stacked = empty(batch_shape(batch, first.shape()), first.dtype(), first.device());
    std::vector<const void*> rows;
    std::vector<Var*> reads;
    rows.reserve(samples.size());
    for (const Sample& s : samples) {
      rows.push_back(s[j].raw_data());
      reads.push_back(s[j].var());
    }
    // Views of one array share its var: list each var once.
    std::sort(reads.begin(), reads.end());
    reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
    Var* writes[] = {stacked.var()};
    // The samples' storage outlives the kernel: releasing an array waits for its pending uses.
    engine().push(
        [rows = std::move(rows), dst = static_cast<char*>(stacked.raw_data()),
         row_bytes = first.nbytes()](const RunContext&) {
          if (row_bytes == 0) return;
          for (size_t i = 0; i < rows.size(); ++i)
            std::memcpy(dst + i * row_bytes, rows[i], row_bytes);
        },
        reads, writes, first.device(), Lane::kCopy, 0, "batchify");
    out.push_back(std::move(stacked));
  }
  return out;
}

ArrayDataset::ArrayDataset(std::vector<NDArray> arrays) : arrays_(std::move(arrays)) {
  JANUS_CHECK(!arrays_.empty(), ValueError, "ArrayDataset: needs at least one array");
  for (size_t j = 0; j < arrays_.size(); ++j) {
    const NDArray& a = arrays_[j];
    JANUS_CHECK(a.defined(), ValueError, "ArrayDataset: array {} is undefined", j);
    JANUS_CHECK(a.ndim() >= 1, ShapeError,
                "ArrayDataset: array {} is a scalar; its first axis must index the samples", j);
    JANUS_CHECK(a.device().is_cpu(), DeviceError,
                "ArrayDataset: array {} is on {}; a dataset holds host arrays (copy batches to the "
                "device with copyto)",
                j, a.device());
  }
  size_ = arrays_[0].shape()[0];
  for (size_t j = 1; j < arrays_.size(); ++j) {
    JANUS_CHECK(arrays_[j].shape()[0] == size_, ShapeError,
                "ArrayDataset: arrays have different lengths: array 0 has {} samples (shape {}), "
                "array {} has {} (shape {})",
                size_, arrays_[0].shape(), j, arrays_[j].shape()[0], arrays_[j].shape());
  }
}

Sample ArrayDataset::get(int64_t index) const {
  JANUS_CHECK(0 <= index && index < size_, IndexError,
              "ArrayDataset: index {} is out of range for {} samples", index, size_);
  Sample sample;
  sample.reserve(arrays_.size());
  for (const NDArray& a : arrays_) sample.push_back(a.at(index));
  return sample;
}

void ArrayDataset::wait_for_sources() const {
  // Once for all threads; when a wait throws, the flag stays unset and the next call waits
  // (and throws) again. call_once also orders every gather after the waiting thread's wait.
  std::call_once(sources_ready_, [this] {
    for (const NDArray& a : arrays_) wait_to_read(a);
  });
}

Sample ArrayDataset::get_batch(std::span<const int64_t> indices) const {
  JANUS_CHECK(!indices.empty(), ValueError, "ArrayDataset: get_batch needs at least one index");
  for (int64_t index : indices) {
    JANUS_CHECK(0 <= index && index < size_, IndexError,
                "ArrayDataset: index {} is out of range for {} samples", index, size_);
  }
  wait_for_sources();

  const int64_t batch = static_cast<int64_t>(indices.size());
  Sample out;
  out.reserve(arrays_.size());
  for (const NDArray& a : arrays_) {
    const Shape sample_shape(std::vector<int64_t>(a.shape().begin() + 1, a.shape().end()));
    // A new array: nothing is pending on it and no one else holds it, so the host may fill it
    // before handing it out; later operations on it are ordered after this by their push.
    NDArray stacked = empty(batch_shape(batch, sample_shape), a.dtype(), a.device());
    const size_t row_bytes = static_cast<size_t>(sample_shape.numel()) * dtype_size(a.dtype());
    const char* src = static_cast<const char*>(a.raw_data());
    char* dst = static_cast<char*>(stacked.raw_data());
    // One memcpy per run of consecutive indices (the whole batch when not shuffled).
    for (size_t i = 0; i < indices.size() && row_bytes > 0;) {
      size_t end = i + 1;
      while (end < indices.size() && indices[end] == indices[end - 1] + 1) ++end;
      std::memcpy(dst + i * row_bytes, src + static_cast<size_t>(indices[i]) * row_bytes,
                  (end - i) * row_bytes);
      i = end;
    }
    out.push_back(std::move(stacked));
  }
  return out;
}

TransformDataset::TransformDataset(std::shared_ptr<const Dataset> base, Fn fn)
    : base_(std::move(base)), fn_(std::move(fn)) {
  JANUS_CHECK(base_ != nullptr, ValueError, "TransformDataset: the base dataset is null");
  JANUS_CHECK(static_cast<bool>(fn_), ValueError, "TransformDataset: the transform is empty");
}

}  // namespace janus::data

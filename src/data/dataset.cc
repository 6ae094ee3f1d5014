// Dataset's default batch assembly (one engine operation per field), ArrayDataset's row gather
// (one engine operation per device, on the compute lane) and TransformDataset.
#include "janus/data/dataset.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "janus/base/error.h"
#include "janus/engine/array.h"
#include "janus/engine/engine.h"
#include "janus/ops/ops.h"

namespace janus::data {
namespace {

// A gather of fewer bytes than this per thread runs on one thread: below it, starting the
// team's other threads costs more than they save.
constexpr size_t kParallelGatherBytes = 64 * 1024;

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

// Copies rows `indices` of `src` (rows of `row_bytes`) into consecutive rows of `dst`: one
// memcpy per run of consecutive indices (the whole batch when not shuffled), the batch's rows
// split into equal parts among `threads`.
void gather_rows(const char* src, char* dst, size_t row_bytes, std::span<const int64_t> indices,
                 int threads) {
  const auto n = static_cast<int64_t>(indices.size());
  const auto copy = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end;) {
      int64_t run_end = i + 1;
      while (run_end < end && indices[run_end] == indices[run_end - 1] + 1) ++run_end;
      std::memcpy(dst + static_cast<size_t>(i) * row_bytes,
                  src + static_cast<size_t>(indices[i]) * row_bytes,
                  static_cast<size_t>(run_end - i) * row_bytes);
      i = run_end;
    }
  };
  if (threads <= 1) {
    copy(0, n);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    copy(n * t / nt, n * (t + 1) / nt);
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

Sample Dataset::get_batch_on(std::span<const int64_t> indices, Device device) const {
  Sample out = get_batch(indices);
  for (NDArray& a : out) {
    if (a.device() != device) a = copyto(a, device);
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

void ArrayDataset::check_indices(std::span<const int64_t> indices) const {
  JANUS_CHECK(!indices.empty(), ValueError, "ArrayDataset: get_batch needs at least one index");
  for (int64_t index : indices) {
    JANUS_CHECK(0 <= index && index < size_, IndexError,
                "ArrayDataset: index {} is out of range for {} samples", index, size_);
  }
}

Sample ArrayDataset::empty_batch(int64_t batch, std::span<const Device> devices) const {
  Sample out;
  out.reserve(arrays_.size());
  for (size_t j = 0; j < arrays_.size(); ++j) {
    const NDArray& a = arrays_[j];
    const Shape sample_shape(std::vector<int64_t>(a.shape().begin() + 1, a.shape().end()));
    out.push_back(empty(batch_shape(batch, sample_shape), a.dtype(), devices[j]));
  }
  return out;
}

// One operation on `device`'s compute lane that gathers the rows `indices` of arrays_[j] into
// out[j] for every j in `fields`, in line with the training step's kernels and over their
// threads: the step's OpenMP team holds every core of the device, so a gather on a thread of
// its own (a loader worker) would take a core from the team while it computes, and the team's
// barrier would wait for it. The engine orders the reads after the writes pending on the
// sources.
void ArrayDataset::push_gather(const Sample& out, std::span<const size_t> fields,
                               std::span<const int64_t> indices, Device device) const {
  struct Field {
    const char* src;
    char* dst;
    size_t row_bytes;
  };
  const auto batch = static_cast<int64_t>(indices.size());
  std::vector<Field> copies;
  std::vector<Var*> reads, writes;
  for (size_t j : fields) {
    const NDArray& a = arrays_[j];
    const size_t row_bytes = static_cast<size_t>(out[j].size() / batch) * dtype_size(a.dtype());
    if (row_bytes == 0) continue;
    copies.push_back(
        {static_cast<const char*>(a.raw_data()), static_cast<char*>(out[j].raw_data()), row_bytes});
    reads.push_back(a.var());
    writes.push_back(out[j].var());
  }
  if (copies.empty()) return;
  // Views of one array share its var: list each var once.
  std::sort(reads.begin(), reads.end());
  reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
  engine().push(
      [copies = std::move(copies),
       rows = std::vector<int64_t>(indices.begin(), indices.end())](const RunContext& ctx) {
        for (const Field& f : copies) {
          const size_t bytes = f.row_bytes * rows.size();
          const auto threads = static_cast<int>(
              std::clamp<size_t>(bytes / kParallelGatherBytes, 1, ctx.num_threads));
          gather_rows(f.src, f.dst, f.row_bytes, rows, threads);
        }
      },
      reads, writes, device, Lane::kCompute, 0, "gather_batch");
}

Sample ArrayDataset::get_batch(std::span<const int64_t> indices) const {
  check_indices(indices);
  std::vector<Device> devices;
  for (const NDArray& a : arrays_) devices.push_back(a.device());
  Sample out = empty_batch(std::ssize(indices), devices);
  // One gather per device (the batch's images and labels: one), on the arrays' own devices.
  std::vector<bool> pushed(arrays_.size(), false);
  for (size_t i = 0; i < arrays_.size(); ++i) {
    if (pushed[i]) continue;
    std::vector<size_t> fields;
    for (size_t j = i; j < arrays_.size(); ++j) {
      if (pushed[j] || devices[j] != devices[i]) continue;
      pushed[j] = true;
      fields.push_back(j);
    }
    push_gather(out, fields, indices, devices[i]);
  }
  return out;
}

Sample ArrayDataset::get_batch_on(std::span<const int64_t> indices, Device device) const {
  for (const NDArray& a : arrays_) {
    if (!peer_access(device, a.device())) return Dataset::get_batch_on(indices, device);
  }
  check_indices(indices);
  Sample out = empty_batch(std::ssize(indices), std::vector<Device>(arrays_.size(), device));
  std::vector<size_t> fields(arrays_.size());
  std::iota(fields.begin(), fields.end(), size_t{0});
  push_gather(out, fields, indices, device);
  return out;
}

TransformDataset::TransformDataset(std::shared_ptr<const Dataset> base, Fn fn)
    : base_(std::move(base)), fn_(std::move(fn)) {
  JANUS_CHECK(base_ != nullptr, ValueError, "TransformDataset: the base dataset is null");
  JANUS_CHECK(static_cast<bool>(fn_), ValueError, "TransformDataset: the transform is empty");
}

}  // namespace janus::data
